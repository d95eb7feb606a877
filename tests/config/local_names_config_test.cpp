// local_zones, home_router, hosts_files and records: defaults, every key
// read, and errors that name the file, key and line.
#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::config;
using namespace nxdns::config::test_support;

TEST_GROUP(LocalNamesConfig){};

TEST(LocalNamesConfig, DefaultsWhenAbsent) {
  const Config c = must_load(kUp);
  CHECK(c.local.zones.empty());
  CHECK(c.local.home_router.mode == HomeRouter::Mode::automatic);
  CHECK(c.local.hosts_files.empty());
  CHECK(c.local.records.empty());
}

TEST(LocalNamesConfig, ZonesAreReadInFileOrderWithPort53ByDefault) {
  const Config c = must_load(kUp +
                             "local_zones:\n"
                             "  - zone: \"LAN.\"\n"
                             "    servers: [\"192.168.1.1\", \"192.168.1.2:5353\"]\n"
                             "  - zone: 1.168.192.in-addr.arpa\n"
                             "    servers: [\"[fd00::1]\"]\n");
  LONGS_EQUAL(2, c.local.zones.size());
  STRCMP_EQUAL("lan", c.local.zones[0].zone.c_str());  // lower case, no trailing dot
  LONGS_EQUAL(2, c.local.zones[0].servers.size());
  LONGS_EQUAL(53, c.local.zones[0].servers[0].port());
  LONGS_EQUAL(5353, c.local.zones[0].servers[1].port());
  LONGS_EQUAL(5, c.local.zones[0].line);
  STRCMP_EQUAL("1.168.192.in-addr.arpa", c.local.zones[1].zone.c_str());
  STRCMP_EQUAL("[fd00::1]:53", c.local.zones[1].servers[0].to_string().c_str());
}

TEST(LocalNamesConfig, ZoneErrorsNameTheKeyAndLine) {
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: lan\n"), "local_zones[0].servers");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - servers: [192.168.1.1]\n"), "local_zones[0].zone");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: lan\n    servers: []\n"), "non-empty list");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: lan\n    servers: [router.lan]\n"),
                 "test.yaml:6:15: local_zones[0].servers[0]");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: \".\"\n    servers: [192.168.1.1]\n"), "root cannot");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: \"a..b\"\n    servers: [192.168.1.1]\n"), "not a DNS name");
  const std::string twice = error_of(kUp +
                                     "local_zones:\n  - zone: lan\n    servers: [192.168.1.1]\n"
                                     "  - zone: LAN\n    servers: [192.168.1.2]\n");
  CHECK_CONTAINS(twice, "local_zones[1].zone");
  CHECK_CONTAINS(twice, "already given at line 5");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: lan\n    servers: [192.168.1.1, 192.168.1.1]\n"),
                 "listed twice");
  CHECK_CONTAINS(error_of(kUp + "local_zones:\n  - zone: lan\n    servers: [192.168.1.1]\n    port: 53\n"), "port");
}

TEST(LocalNamesConfig, HomeRouterModes) {
  CHECK(must_load(kUp + "home_router: auto\n").local.home_router.mode == HomeRouter::Mode::automatic);
  CHECK(must_load(kUp + "home_router: \"off\"\n").local.home_router.mode == HomeRouter::Mode::off);
  const Config c = must_load(kUp + "home_router: 192.168.1.254\n");
  CHECK(c.local.home_router.mode == HomeRouter::Mode::address);
  STRCMP_EQUAL("192.168.1.254:53", c.local.home_router.address.to_string().c_str());
  CHECK_CONTAINS(error_of(kUp + "home_router: router.lan\n"), "test.yaml:4:14: home_router: expected auto, off");
}

TEST(LocalNamesConfig, RecordsAreParsedWithTheirIndexAsSource) {
  const Config c = must_load(kUp +
                             "records:\n"
                             "  - \"nas.home.arpa. 300 IN A 192.168.1.20\"\n"
                             "  - \"_ipp._tcp.home.arpa. SRV 0 0 631 printer.home.arpa.\"\n");
  LONGS_EQUAL(2, c.local.records.size());
  STRCMP_EQUAL("records[1]", c.local.records[1].source.c_str());
  LONGS_EQUAL(300, c.local.records[0].ttl);
  const std::string e = error_of(kUp + "records:\n  - \"ok.home.arpa. A 192.168.1.1\"\n  - \"bad.home.arpa. A 300.1.1.1\"\n");
  CHECK_CONTAINS(e, "test.yaml:6:5: records[1]: bad record");
}

TEST(LocalNamesConfig, HostsFilesAreReadAtLoadAndABadLineNamesFileAndLine) {
  TempDir d;
  const std::string good = d.write("hosts", "# home\n192.168.1.20 nas nas.home.arpa\n\n192.168.1.30\tprinter.lan\n");
  const Config c = must_load(kUp + "hosts_files: [\"" + good + "\"]\n");
  LONGS_EQUAL(1, c.local.hosts_files.size());
  CHECK(c.local.hosts_files[0].records.size() >= 3);  // A records and the PTRs
  const std::string bad = d.write("bad", "192.168.1.20 nas\n192.168.1.300 broken\n");
  const std::string e = error_of(kUp + "hosts_files: [\"" + bad + "\"]\n");
  CHECK_CONTAINS(e, "hosts_files[0]");
  CHECK_CONTAINS(e, bad + ":2");
  CHECK_CONTAINS(error_of(kUp + "hosts_files: [\"" + d.path + "/missing\"]\n"), "cannot read hosts file");
  CHECK_CONTAINS(error_of(kUp + "hosts_files: [\"relative/hosts\"]\n"), "absolute path");
  CHECK_CONTAINS(error_of(kUp + "hosts_files: [\"" + d.path + "\"]\n"), "not a regular file");
  // Offline checks (a build sandbox) do not open the file.
  LoadOptions offline;
  offline.check_files = false;
  CHECK(must_load(kUp + "hosts_files: [\"" + d.path + "/missing\"]\n", offline).local.hosts_files[0].records.empty());
}

TEST(LocalNamesConfig, ACnameBesideOtherDataAcrossSourcesIsRefused) {
  TempDir d;
  const std::string hosts = d.write("hosts", "192.168.1.20 nas.home.arpa\n");
  const std::string e = error_of(kUp + "hosts_files: [\"" + hosts + "\"]\nrecords:\n  - \"nas.home.arpa. CNAME x.home.arpa.\"\n");
  CHECK_CONTAINS(e, "records");
  CHECK_CONTAINS(e, "CNAME");
}

TEST(LocalNamesConfig, ForwardSpecialZonesNamesBuiltInEmptyZonesOnly) {
  const Config c = must_load(kUp + "forward_special_zones: [TEST., onion]\n");
  LONGS_EQUAL(2, c.local.forward_special_zones.size());
  STRCMP_EQUAL("test", c.local.forward_special_zones[0].c_str());
  CHECK_CONTAINS(error_of(kUp + "forward_special_zones: [localhost]\n"), "forward_special_zones[0]");
  CHECK_CONTAINS(error_of(kUp + "forward_special_zones: [example.com]\n"), "not a built-in zone");
  CHECK_CONTAINS(error_of(kUp + "forward_special_zones: [test, test]\n"), "listed twice");
}
