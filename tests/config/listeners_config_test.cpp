// The `listen:` and `http:` sections: bad, duplicate and overlapping
// addresses, the web listener never taking a DNS port, and the extra Host
// names the web surface may answer to (http.allowed_hosts).
#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::config::test_support;

TEST_GROUP(ListenersConfig){};

TEST(ListenersConfig, BadListenAddresses) {
  STRCMP_EQUAL(
      "test.yaml:6:5: listen[1]: bad address \"localhost:53\": not an IP address (host names are not accepted "
      "here; use an IP literal)",
      error_of(kUp + "listen:\n  - \"127.0.0.1:53\"\n  - \"localhost:53\"\n").c_str());
  STRCMP_EQUAL("test.yaml:4:10: listen[0]: bad address \"::1\": IPv6 addresses need brackets, e.g. [::1]:53",
               error_of(kUp + "listen: [\"::1\"]\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:10: listen[0]: bad address \"127.0.0.1:0\": port must be a decimal number from 1 to 65535",
      error_of(kUp + "listen: [\"127.0.0.1:0\"]\n").c_str());
  STRCMP_EQUAL("test.yaml:4:9: listen: must list at least one address", error_of(kUp + "listen: []\n").c_str());
  STRCMP_EQUAL("test.yaml:5:11: http.listen: bad address \"[::1\": missing ']' after IPv6 address",
               error_of(kUp + "http:\n  listen: \"[::1\"\n").c_str());
}

TEST(ListenersConfig, DuplicateAndOverlappingListeners) {
  STRCMP_EQUAL("test.yaml:4:23: listen[1]: 127.0.0.1:53 is listed twice (first as listen[0])",
               error_of(kUp + "listen: [\"127.0.0.1\", \"127.0.0.1:53\"]\n").c_str());
  STRCMP_EQUAL("test.yaml:4:22: listen[1]: [::1]:53 is listed twice (first as listen[0])",
               error_of(kUp + "listen: [\"[::1]:53\", \"[0::1]\"]\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:24: listen[1]: 127.0.0.1:53 overlaps listen[0] 0.0.0.0:53 (a wildcard address takes the port "
      "on every address of its family)",
      error_of(kUp + "listen: [\"0.0.0.0:53\", \"127.0.0.1:53\"]\n").c_str());
  // Different ports, or different families, do not overlap.
  LONGS_EQUAL(3, must_load(kUp + "listen: [\"0.0.0.0:53\", \"127.0.0.1:5353\", \"[::1]:53\"]\n").listen.size());
}

TEST(ListenersConfig, WebListenerMustNotTakeADnsPort) {
  STRCMP_EQUAL(
      "test.yaml:6:11: http.listen: 127.0.0.1:5300 conflicts with listen[0] 0.0.0.0:5300 (both need TCP on that "
      "port)",
      error_of(kUp + "listen: [\"0.0.0.0:5300\"]\nhttp:\n  listen: \"127.0.0.1:5300\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:10: listen[0]: 127.0.0.1:8053 conflicts with the web listener's default http.listen "
      "127.0.0.1:8053 (both need TCP on that port); move one of them",
      error_of(kUp + "listen: [\"127.0.0.1:8053\"]\n").c_str());
  // A disabled web listener binds nothing.
  CHECK_FALSE(must_load(kUp + "listen: [\"127.0.0.1:8053\"]\nhttp: {enabled: false}\n").http.enabled);
}

TEST(ListenersConfig, AllowedHostsAreNamesAndAddresses) {
  CHECK_TRUE(must_load(kUp).http.allowed_hosts.empty());
  const auto c = must_load(kUp + "http:\n  allowed_hosts: [\"Pi.Home.Arpa.\", \"nxdns\", \"192.0.2.7\", \"[2001:db8::7]\"]\n");
  const auto& h = c.http.allowed_hosts;
  LONGS_EQUAL(2, h.names.size());
  STRCMP_EQUAL("pi.home.arpa", h.names[0].c_str());
  STRCMP_EQUAL("nxdns", h.names[1].c_str());
  LONGS_EQUAL(2, h.addresses.size());
  STRCMP_EQUAL("192.0.2.7", h.addresses[0].host_string().c_str());
  STRCMP_EQUAL("2001:db8::7", h.addresses[1].host_string().c_str());
  CHECK_TRUE(must_load(kUp + "http:\n  allowed_hosts: []\n").http.allowed_hosts.empty());
}

TEST(ListenersConfig, AllowedHostsRefuseWildcardsPortsAndNonNames) {
  const std::string h = kUp + "http:\n  allowed_hosts:\n";
  STRCMP_EQUAL(
      "test.yaml:6:7: http.allowed_hosts[0]: \"*.home.arpa\": wildcards are not accepted: a pattern would let names "
      "no one listed through, and with them DNS rebinding; list each name",
      error_of(h + "    - \"*.home.arpa\"\n").c_str());
  STRCMP_EQUAL("test.yaml:6:7: http.allowed_hosts[0]: \"pi.lan:8053\": no port here: the Host check accepts any port",
               error_of(h + "    - \"pi.lan:8053\"\n").c_str());
  STRCMP_EQUAL("test.yaml:6:7: http.allowed_hosts[0]: \"[::1]:8053\": no port here: the Host check accepts any port",
               error_of(h + "    - \"[::1]:8053\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:6:7: http.allowed_hosts[0]: \"2001:db8::7\": IPv6 addresses need brackets, e.g. [2001:db8::1]",
      error_of(h + "    - \"2001:db8::7\"\n").c_str());
  STRCMP_EQUAL("test.yaml:6:7: http.allowed_hosts[0]: \"http://pi.lan\": expected a host name or IP address, not a URL",
               error_of(h + "    - \"http://pi.lan\"\n").c_str());
  STRCMP_EQUAL("test.yaml:6:7: http.allowed_hosts[0]: \"[192.0.2.7]\": not a valid IPv6 address",
               error_of(h + "    - \"[192.0.2.7]\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:6:7: http.allowed_hosts[0]: \"192.168.1.256\": not a host name (letters, digits and hyphens in "
      "dot-separated labels, not digits alone) or IP address",
      error_of(h + "    - \"192.168.1.256\"\n").c_str());
  STRCMP_EQUAL("test.yaml:6:7: http.allowed_hosts[0]: must not be empty", error_of(h + "    - \"\"\n").c_str());
  STRCMP_EQUAL("test.yaml:7:7: http.allowed_hosts[1]: \"PI.lan\" is listed twice (first as http.allowed_hosts[0])",
               error_of(h + "    - pi.lan\n    - PI.lan\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:5:18: http.allowed_hosts: expected a list of host names or IP addresses, got \"pi.lan\"",
      error_of(kUp + "http:\n  allowed_hosts: pi.lan\n").c_str());
}
