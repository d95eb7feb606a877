// `nxdns reload`: where the request goes (--http, --config, default) or the
// signal (--pid), and nothing else on the line.
#include "cli/args.hpp"
#include "cli/help.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::cli::parse;

TEST_GROUP(ReloadArgs){};

TEST(ReloadArgs, TakesHttpConfigOrPidAndNoWords) {
  auto a = parse({"reload"});
  CHECK_TRUE(a.parsed.has_value());
  STRCMP_EQUAL("reload", a.parsed->command.c_str());
  auto b = parse({"reload", "--http", "127.0.0.1:8053"});
  CHECK_TRUE(b.parsed.has_value());
  STRCMP_EQUAL("127.0.0.1:8053", b.parsed->get("http").c_str());
  auto c = parse({"reload", "-c", "/etc/nxdns/nxdns.yaml"});
  CHECK_TRUE(c.parsed.has_value());
  STRCMP_EQUAL("/etc/nxdns/nxdns.yaml", c.parsed->get("config").c_str());
  auto d = parse({"reload", "--pid", "1234"});
  CHECK_TRUE(d.parsed.has_value());
  STRCMP_EQUAL("1234", d.parsed->get("pid").c_str());
  auto e = parse({"reload", "now"});
  CHECK_FALSE(e.parsed.has_value());
  STRCMP_CONTAINS("unexpected argument 'now'", e.error.c_str());
  STRCMP_CONTAINS("reload", nxdns::cli::usage().c_str());
}
