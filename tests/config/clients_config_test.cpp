// The `access_control:` and `client_limits:` sections.
#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::config::Config;
using namespace nxdns::config::test_support;

TEST_GROUP(ConfigAccessControl){};

TEST(ConfigAccessControl, AbsentMeansTheCompiledDefaults) {
  const Config c = must_load(kUp);
  CHECK(c.access_rules.empty());
  CHECK_EQUAL(nxdns::server::default_rate_limit.per_second, c.client_rate.per_second);
  CHECK_EQUAL(nxdns::server::default_rate_limit.burst, c.client_rate.burst);
}

TEST(ConfigAccessControl, ReadsAllowAndRefuseLists) {
  const Config c = must_load(kUp +
                             "access_control:\n"
                             "  allow: [0.0.0.0/0, \"2001:db8::/32\"]\n"
                             "  refuse:\n"
                             "    - 10.0.0.0/8\n"
                             "    - 127.0.0.9\n");
  CHECK_EQUAL(4u, c.access_rules.size());
  STRCMP_EQUAL("0.0.0.0/0", c.access_rules[0].net.to_string().c_str());
  CHECK(c.access_rules[0].access == nxdns::server::Access::allow);
  STRCMP_EQUAL("2001:db8::/32", c.access_rules[1].net.to_string().c_str());
  STRCMP_EQUAL("10.0.0.0/8", c.access_rules[2].net.to_string().c_str());
  CHECK(c.access_rules[2].access == nxdns::server::Access::refuse);
  STRCMP_EQUAL("127.0.0.9/32", c.access_rules[3].net.to_string().c_str());
  CHECK(must_load(kUp + "access_control:\n  allow: []\n").access_rules.empty());
}

TEST(ConfigAccessControl, ErrorsNameTheEntry) {
  STRCMP_EQUAL(
      "test.yaml:5:23: access_control.allow[1]: bad prefix \"192.168.1.1/16\": address has bits set past the /16 "
      "prefix (did you mean 192.168.0.0/16?)",
      error_of(kUp + "access_control:\n  allow: [10.0.0.0/8, 192.168.1.1/16]\n").c_str());
  STRCMP_EQUAL("test.yaml:6:7: access_control.refuse[0]: bad prefix \"lan\": not an IPv4 address or prefix",
               error_of(kUp + "access_control:\n  refuse:\n    - lan\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:6:12: access_control.refuse[0]: 10.0.0.0/8 is already given as access_control.allow[0] (line 5); "
      "each prefix may appear once",
      error_of(kUp + "access_control:\n  allow: [10.0.0.0/8]\n  refuse: [10.0.0.0/8]\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:5:10: access_control.allow: expected a list of CIDR prefixes (e.g. [192.168.0.0/16, \"fd00::/8\"]), "
      "got \"10.0.0.0/8\"",
      error_of(kUp + "access_control:\n  allow: 10.0.0.0/8\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:5:3: access_control.permit: unknown key \"permit\" (allowed here: allow, refuse)",
      error_of(kUp + "access_control:\n  permit: [10.0.0.0/8]\n").c_str());
  STRCMP_EQUAL("test.yaml:5:11: access_control.allow[0]: expected a string, got a list",
               error_of(kUp + "access_control:\n  allow: [[10.0.0.0/8]]\n").c_str());
}

TEST(ConfigAccessControl, ClientLimits) {
  Config c = must_load(kUp + "client_limits:\n  queries_per_second: 50\n");
  CHECK_EQUAL(50u, c.client_rate.per_second);
  CHECK_EQUAL(500u, c.client_rate.burst);  // ten seconds' worth unless given
  c = must_load(kUp + "client_limits:\n  queries_per_second: 50\n  burst: 20\n");
  CHECK_EQUAL(20u, c.client_rate.burst);
  c = must_load(kUp + "client_limits:\n  queries_per_second: 0\n");
  CHECK_FALSE(c.client_rate.enabled());
  STRCMP_EQUAL("test.yaml:6:3: client_limits.burst: has no effect when queries_per_second is 0 (no limit); remove it",
               error_of(kUp + "client_limits:\n  queries_per_second: 0\n  burst: 5\n").c_str());
  STRCMP_EQUAL("test.yaml:5:10: client_limits.burst: must be between 1 and 10000000, got \"0\"",
               error_of(kUp + "client_limits:\n  burst: 0\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:5:23: client_limits.queries_per_second: must be between 0 and 1000000, got \"-1\"",
      error_of(kUp + "client_limits:\n  queries_per_second: -1\n").c_str());
}
