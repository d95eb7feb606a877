// The `blocking:` section: defaults, every key read, errors that name the
// key and line.
#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::config;
using namespace nxdns::config::test_support;

TEST_GROUP(BlockingConfig){};

TEST(BlockingConfig, DefaultsWhenAbsent) {
  const Config c = must_load(kUp);
  CHECK(c.blocking.lists.empty());
  LONGS_EQUAL(86400, c.blocking.refresh.count());
  CHECK(c.blocking.answer == Blocking::Answer::nxdomain);
  CHECK(c.blocking.groups.empty());
  STRCMP_EQUAL("/var/lib/nxdns/lists", c.blocking.state_dir.c_str());
}

TEST(BlockingConfig, EveryKeyIsRead) {
  TempDir d;
  const std::string list = d.write("local.txt", "0.0.0.0 ads.example\n");
  const std::string ca = d.write("ca.pem", "x");
  const Config c = must_load(kUp + "blocking:\n  lists:\n    - file: \"" + list + "\"\n" +
                             "    - url: \"https://lists.example/hosts.txt?key=1\"\n      ca_file: \"" + ca + "\"\n" +
                             "  refresh: 6h\n  allow: [\"Allowed.Example.\"]\n  answer: \"null\"\n"
                             "  groups:\n    - clients: [\"192.168.1.0/28\", \"fd00::/64\"]\n      blocking: false\n"
                             "  state_dir: /srv/lists\n");
  LONGS_EQUAL(2, c.blocking.lists.size());
  STRCMP_EQUAL(list.c_str(), c.blocking.lists[0].file.c_str());
  STRCMP_EQUAL("https://lists.example/hosts.txt?key=1", c.blocking.lists[1].url.c_str());
  STRCMP_EQUAL(ca.c_str(), c.blocking.lists[1].ca_file->c_str());
  LONGS_EQUAL(6 * 3600, c.blocking.refresh.count());
  STRCMP_EQUAL("allowed.example", c.blocking.allow[0].c_str());
  CHECK(c.blocking.answer == Blocking::Answer::null);
  LONGS_EQUAL(1, c.blocking.groups.size());
  LONGS_EQUAL(2, c.blocking.groups[0].clients.size());
  CHECK_FALSE(c.blocking.groups[0].blocking);
  STRCMP_EQUAL("/srv/lists", c.blocking.state_dir.c_str());
}

TEST(BlockingConfig, DurationsAndAnswers) {
  LONGS_EQUAL(900, must_load(kUp + "blocking:\n  refresh: 15m\n").blocking.refresh.count());
  LONGS_EQUAL(7 * 86400, must_load(kUp + "blocking:\n  refresh: 7d\n").blocking.refresh.count());
  LONGS_EQUAL(3600, must_load(kUp + "blocking:\n  refresh: 3600\n").blocking.refresh.count());
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  refresh: 5m\n"), "blocking.refresh: expected a duration from 15m to 7d");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  refresh: 8d\n"), "blocking.refresh");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  refresh: 1w\n"), "blocking.refresh");
  CHECK(must_load(kUp + "blocking:\n  answer: refused\n").blocking.answer == Blocking::Answer::refused);
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  answer: drop\n"), "expected nxdomain, null or refused");
}

TEST(BlockingConfig, ListErrorsNameTheKeyAndLine) {
  TempDir d;
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - file: relative.txt\n"), "blocking.lists[0].file: must be an absolute path");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - file: \"" + d.path + "/missing.txt\"\n"), "cannot read list");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - file: \"" + d.path + "\"\n"), "is not a regular file");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - url: \"http://lists.example/x\"\n"),
                 "test.yaml:6:12: blocking.lists[0].url: must be an https:// URL");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - {}\n"), "give exactly one of file and url");
  const std::string list = d.write("l.txt", "x.example\n");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - file: \"" + list + "\"\n      url: \"https://a.example/\"\n"),
                 "give exactly one of file and url");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - file: \"" + list + "\"\n      ca_file: /x.pem\n"),
                 "only for url lists");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  lists:\n    - file: \"" + list + "\"\n    - file: \"" + list + "\"\n"),
                 "already given at line 6");
  // Offline checks (a build sandbox) do not open list files.
  LoadOptions offline;
  offline.check_files = false;
  CHECK(must_load(kUp + "blocking:\n  lists:\n    - file: /nonexistent/list.txt\n", offline).blocking.lists.size() == 1);
}

TEST(BlockingConfig, GroupErrors) {
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  groups:\n    - clients: [192.168.1.0/28]\n"), "blocking.groups[0].blocking");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  groups:\n    - blocking: false\n"), "blocking.groups[0].clients");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  groups:\n    - clients: [192.168.1.1/24]\n      blocking: false\n"),
                 "bad prefix");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  groups:\n    - clients: [10.0.0.0/8]\n      blocking: false\n"
                                "    - clients: [10.0.0.0/8]\n      blocking: true\n"),
                 "already in a group");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  allow: [\"a..b\"]\n"), "blocking.allow[0]: not a DNS name");
  CHECK_CONTAINS(error_of(kUp + "blocking:\n  state_dir: lists\n"), "blocking.state_dir: must be an absolute path");
}
