#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/help.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::cli;

TEST_GROUP(Args){};

TEST(Args, RunWithShortAndLongConfig) {
  auto a = parse({"run", "-c", "/etc/nxdns.yaml"});
  CHECK_TRUE(a.parsed.has_value());
  STRCMP_EQUAL("run", a.parsed->command.c_str());
  STRCMP_EQUAL("/etc/nxdns.yaml", a.parsed->get("config").c_str());
  auto b = parse({"run", "--config=/x.yaml", "--log-level", "debug"});
  STRCMP_EQUAL("/x.yaml", b.parsed->get("config").c_str());
  STRCMP_EQUAL("debug", b.parsed->get("log-level").c_str());
}

TEST(Args, FlagsTakeNoValue) {
  auto a = parse({"check", "--offline", "-c", "f.yaml"});
  CHECK_TRUE(a.parsed->has("offline"));
  auto b = parse({"check", "--offline=yes"});
  CHECK_FALSE(b.parsed.has_value());
  STRCMP_CONTAINS("takes no value", b.error.c_str());
}

TEST(Args, UnknownCommandAndOptionAreNamed) {
  auto a = parse({"serve"});
  STRCMP_CONTAINS("unknown command 'serve'", a.error.c_str());
  auto b = parse({"run", "--port", "53"});
  STRCMP_CONTAINS("unknown option '--port' for 'run'", b.error.c_str());
  auto c = parse({"burst", "extra"});
  STRCMP_CONTAINS("unexpected argument 'extra'", c.error.c_str());
}

TEST(Args, MissingValueIsAnError) {
  auto a = parse({"run", "-c"});
  CHECK_FALSE(a.parsed.has_value());
  STRCMP_CONTAINS("needs a value", a.error.c_str());
}

TEST(Args, VersionAndHelpAliases) {
  STRCMP_EQUAL("version", parse({"--version"}).parsed->command.c_str());
  STRCMP_EQUAL("help", parse({"-h"}).parsed->command.c_str());
  CHECK_FALSE(parse({}).parsed.has_value());
}

TEST(Args, IntOptionBoundsAndDefaults) {
  std::string err;
  auto p = *parse({"burst", "--names", "31"}).parsed;
  CHECK_EQUAL(31, *int_option(p, "names", 30, 1, 1000, &err));
  CHECK_EQUAL(6000, *int_option(p, "timeout-ms", 6000, 100, 120000, &err));
  auto q = *parse({"burst", "--names", "0"}).parsed;
  CHECK_FALSE(int_option(q, "names", 30, 1, 1000, &err).has_value());
  STRCMP_CONTAINS("'--names' wants a whole number from 1 to 1000, got '0'", err.c_str());
  auto r = *parse({"burst", "--names", "3x"}).parsed;
  CHECK_FALSE(int_option(r, "names", 30, 1, 1000, &err).has_value());
}

TEST(Args, UsageListsEveryCommand) {
  const std::string u = usage();
  for (const CommandSpec* c : commands()) STRCMP_CONTAINS(std::string(c->name).c_str(), u.c_str());
}

TEST(Args, BurstTakesAGateAndReportOnly) {
  auto a = parse({"burst", "--gate", "cold", "--report-only", "--server", "127.0.0.1:53"});
  CHECK_TRUE(a.parsed.has_value());
  STRCMP_EQUAL("cold", a.parsed->get("gate").c_str());
  CHECK_TRUE(a.parsed->has("report-only"));
  auto b = parse({"burst", "--report-only=yes"});
  STRCMP_CONTAINS("takes no value", b.error.c_str());
  auto c = parse({"burst", "--gate"});
  STRCMP_CONTAINS("needs a value", c.error.c_str());
  STRCMP_CONTAINS("--gate NAME", command_usage(*find_command("burst")).c_str());
}
