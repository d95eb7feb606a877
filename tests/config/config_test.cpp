// Config loading as a whole: defaults, every accepted key, the file, and
// every error class of the YAML walk (syntax, types, ranges, unknown,
// duplicate and null keys) with its full one-line message (file, 1-based
// line and column, key path). Each section's own rules are in
// <section>_config_test.cpp.
//
// Addresses in these documents are loopback only: nothing here connects,
// but a test config must never name a real resolver.
#include "config/config.hpp"
#include "config_test_support.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <CppUTest/TestHarness.h>

using nxdns::config::Config;
using nxdns::config::DohMethod;
using nxdns::config::Error;
using nxdns::config::Protocol;
using nxdns::config::load_file;
using nxdns::config::load_string;
using namespace nxdns::config::test_support;

namespace {

// yaml-cpp builds its scanner's regular expressions as function-local
// statics on first use: anchors, tags, escapes, block scalars and directives
// each allocate once, inside whichever test first parses them, and the leak
// detector would blame that test. Parse every construct once, before main.
// (tests/support/cpputest_main.cpp warms up only the basics.)
[[maybe_unused]] const bool kYamlWarmedUp = [] {
  const char* const docs[] = {
      "%YAML 1.2\n%TAG !e! tag:example.com,2000:\n---\n"
      "a: &x {b: \"q\\x41\\u0041\\n\", 'c': 'it''s', d: !!int 1, e: !e!t 2, f: !<tag:x> 3}\n"
      "g: *x\n? [k]\n: v\nh: |\n  lit\ni: >-\n  fold\n# comment\n...\n",
      "- [a, {b: c}]\n- ? d\n- !local e\n- 'f'\n- ~\n",
      "a: [\n", "a: \"x\n", "a: b: c", "\t- a", "a: %x", "&a [*b]", "{a: 1, a: 2}", "---\n---\n",
  };
  for (const char* d : docs) {
    try {
      (void)load_string(d, "warm-up");
    } catch (const Error&) {
    }
  }
  return true;
}();

}  // namespace

TEST_GROUP(ConfigLoad){};

TEST(ConfigLoad, MinimalFileGetsDocumentedDefaults) {
  const Config c = must_load(kUp);
  STRCMP_EQUAL(kSrc, c.source.c_str());
  LONGS_EQUAL(2, c.listen.size());
  STRCMP_EQUAL("0.0.0.0:53", c.listen[0].to_string().c_str());
  STRCMP_EQUAL("[::]:53", c.listen[1].to_string().c_str());
  LONGS_EQUAL(2000, c.budgets.attempt.count());
  LONGS_EQUAL(5000, c.budgets.total.count());
  CHECK(c.http.enabled);
  STRCMP_EQUAL("127.0.0.1:8053", c.http.listen.to_string().c_str());
  CHECK(c.log_level == nxdns::log::Level::info);

  LONGS_EQUAL(1, c.upstreams.size());
  const auto& u = c.upstreams[0];
  STRCMP_EQUAL("tls://127.0.0.1:853", u.url.c_str());
  CHECK(u.protocol == Protocol::dot);
  STRCMP_EQUAL("127.0.0.1", u.host.c_str());
  LONGS_EQUAL(853, u.port);
  STRCMP_EQUAL("", u.path.c_str());
  STRCMP_EQUAL("127.0.0.1:853", u.address.to_string().c_str());
  STRCMP_EQUAL("dot.test", u.tls_name.c_str());
  LONGS_EQUAL(0, u.priority);
  CHECK(u.enabled);
  CHECK_FALSE(u.ca_file.has_value());
  LONGS_EQUAL(2, u.line);
}

TEST(ConfigLoad, EveryKeyIsRead) {
  TempDir dir;
  const std::string ca = dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  const Config c = must_load(
      "listen:\n"
      "  - \"127.0.0.1:5300\"\n"
      "  - \"[::1]\"\n"
      "upstreams:\n"
      "  - url: \"tls://127.0.0.2\"\n"
      "    tls_name: dot.test\n"
      "    priority: 5\n"
      "    enabled: false\n"
      "    ca_file: \"" + ca + "\"\n"
      "  - url: \"https://doh.test:8443/dns-query\"\n"
      "    address: \"::1\"\n"
      "    method: get\n"
      "    priority: -1\n"
      "budgets:\n"
      "  attempt_ms: 100\n"
      "  total_ms: 60000\n"
      "http:\n"
      "  enabled: false\n"
      "  listen: \"[::1]:9000\"\n"
      "log:\n"
      "  level: debug\n");
  LONGS_EQUAL(2, c.listen.size());
  STRCMP_EQUAL("127.0.0.1:5300", c.listen[0].to_string().c_str());
  STRCMP_EQUAL("[::1]:53", c.listen[1].to_string().c_str());

  LONGS_EQUAL(2, c.upstreams.size());
  const auto& dot = c.upstreams[0];
  LONGS_EQUAL(853, dot.port);
  STRCMP_EQUAL("127.0.0.2:853", dot.address.to_string().c_str());
  LONGS_EQUAL(5, dot.priority);
  CHECK_FALSE(dot.enabled);
  CHECK(dot.ca_file.has_value());
  STRCMP_EQUAL(ca.c_str(), dot.ca_file->c_str());
  LONGS_EQUAL(5, dot.line);

  const auto& doh = c.upstreams[1];
  CHECK(doh.protocol == Protocol::doh);
  STRCMP_EQUAL("doh.test", doh.host.c_str());
  LONGS_EQUAL(8443, doh.port);
  STRCMP_EQUAL("/dns-query", doh.path.c_str());
  STRCMP_EQUAL("[::1]:8443", doh.address.to_string().c_str());  // port from the URL
  STRCMP_EQUAL("doh.test", doh.tls_name.c_str());                 // defaults to the URL host
  CHECK(doh.method == DohMethod::get);
  LONGS_EQUAL(-1, doh.priority);
  CHECK(doh.enabled);
  LONGS_EQUAL(10, doh.line);

  LONGS_EQUAL(100, c.budgets.attempt.count());
  LONGS_EQUAL(60000, c.budgets.total.count());
  CHECK_FALSE(c.http.enabled);
  STRCMP_EQUAL("[::1]:9000", c.http.listen.to_string().c_str());
  CHECK(c.log_level == nxdns::log::Level::debug);
}

TEST(ConfigLoad, YamlNicetiesAreAccepted) {
  // Anchors, explicit core tags, comments, a document start marker.
  const Config c = must_load(
      "---\n"
      "# comment\n"
      "upstreams:\n"
      "  - url: &u \"tls://127.0.0.1\"\n"
      "    tls_name: !!str dot.test\n"
      "    priority: !!int 3\n"
      "    enabled: !!bool true\n"
      "budgets: {attempt_ms: +150, total_ms: 0200}\n");
  LONGS_EQUAL(3, c.upstreams[0].priority);
  LONGS_EQUAL(150, c.budgets.attempt.count());
  LONGS_EQUAL(200, c.budgets.total.count());
}

TEST_GROUP(ConfigErrors){};

TEST(ConfigErrors, ErrorCarriesItsParts) {
  try {
    (void)load_string(kUp + "budgets:\n  total_ms: 1\n", kSrc);
    FAIL("expected an error");
  } catch (const Error& e) {
    STRCMP_EQUAL(kSrc, e.file().c_str());
    STRCMP_EQUAL("budgets.total_ms", e.key_path().c_str());
    LONGS_EQUAL(5, e.line());
    LONGS_EQUAL(13, e.column());
    STRCMP_EQUAL("must be between 200 and 60000, got \"1\"", e.message().c_str());
    STRCMP_EQUAL("test.yaml:5:13: budgets.total_ms: must be between 200 and 60000, got \"1\"", e.what());
  }
}

TEST(ConfigErrors, YamlSyntaxErrorUsesParserMark) {
  STRCMP_EQUAL("test.yaml:3:1: <document>: YAML syntax error: end of sequence flow not found",
               error_of("log:\n  level: [info\n").c_str());
  STRCMP_EQUAL("test.yaml:2:11: <document>: YAML syntax error: illegal map value",
               error_of(kUp.substr(0, 11) + "  - url: a: b\n").c_str());
}

TEST(ConfigErrors, StrayCommaIsASyntaxErrorNotAnEndlessStream) {
  // yaml-cpp 0.7 yields empty documents forever here (jbeder/yaml-cpp#1040);
  // YAML::LoadAll would allocate until the OOM killer came.
  STRCMP_EQUAL("test.yaml:1:1: <document>: YAML syntax error: unexpected \",\"", error_of(",").c_str());
  STRCMP_EQUAL("test.yaml:1:7: <document>: YAML syntax error: unexpected \",\"", error_of("{a: 1},\n").c_str());
  STRCMP_EQUAL("test.yaml:4:1: <document>: YAML syntax error: end of map not found", error_of(kUp + ",\n").c_str());
}

TEST(ConfigErrors, TopLevelMustBeAMapping) {
  STRCMP_EQUAL("test.yaml:1:1: <document>: expected a mapping of settings at the top level, got a list",
               error_of("- upstreams\n").c_str());
  STRCMP_EQUAL("test.yaml:2:1: <document>: expected a mapping of settings at the top level, got \"upstreams\"",
               error_of("# just a word\nupstreams\n").c_str());
  STRCMP_EQUAL("test.yaml:1:1: <document>: the file holds no settings; at least \"upstreams\" is required",
               error_of("").c_str());
  STRCMP_EQUAL("test.yaml:1:1: <document>: the file holds no settings; at least \"upstreams\" is required",
               error_of("# nothing\n").c_str());
  STRCMP_EQUAL("test.yaml:4:1: <document>: only one YAML document is allowed (found a second \"---\")",
               error_of(kUp + "---\nlog: {level: info}\n").c_str());
}

TEST(ConfigErrors, MissingUpstreams) {
  STRCMP_EQUAL("test.yaml:1:1: upstreams: required key missing: list at least one upstream",
               error_of("log:\n  level: info\n").c_str());
}

TEST(ConfigErrors, UnknownKeys) {
  STRCMP_EQUAL(
      "test.yaml:4:1: foo: unknown key \"foo\" (allowed here: listen, upstreams, budgets, http, cache, log, "
      "access_control, client_limits, local_zones, home_router, hosts_files, records, forward_special_zones, blocking)",
      error_of(kUp + "foo: 1\n").c_str());
  STRCMP_EQUAL("test.yaml:5:3: budgets.attempt: unknown key \"attempt\" (allowed here: attempt_ms, total_ms)",
               error_of(kUp + "budgets:\n  attempt: 5\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:5: upstreams[0].tlsname: unknown key \"tlsname\" (allowed here: url, tls_name, priority, "
      "enabled, ca_file, address, method)",
      error_of(kUp + "    tlsname: x\n").c_str());
  STRCMP_EQUAL("test.yaml:5:3: http.\"a b\": unknown key \"a b\" (allowed here: enabled, listen, allowed_hosts)",
               error_of(kUp + "http:\n  a b: 1\n").c_str());
  // Merge keys are not YAML 1.2 and yaml-cpp 0.7 does not expand them.
  STRCMP_EQUAL("test.yaml:5:3: log.\"<<\": unknown key \"<<\" (allowed here: level)",
               error_of(kUp + "log:\n  <<: {level: info}\n").c_str());
}

TEST(ConfigErrors, KeysMustBeScalars) {
  STRCMP_EQUAL("test.yaml:4:3: <document>: keys must be plain strings, got a list",
               error_of(kUp + "? [a, b]\n: 1\n").c_str());
}

TEST(ConfigErrors, DuplicateKeys) {
  STRCMP_EQUAL("test.yaml:4:1: upstreams: duplicate key \"upstreams\" (first given on line 1)",
               error_of(kUp + "upstreams: []\n").c_str());
  STRCMP_EQUAL("test.yaml:4:5: upstreams[0].tls_name: duplicate key \"tls_name\" (first given on line 3)",
               error_of(kUp + "    tls_name: other.test\n").c_str());
  STRCMP_EQUAL("test.yaml:4:26: budgets.total_ms: duplicate key \"total_ms\" (first given on line 4)",
               error_of(kUp + "budgets: {total_ms: 300, total_ms: 400}\n").c_str());
}

TEST(ConfigErrors, NullValues) {
  STRCMP_EQUAL(
      "test.yaml:4:1: budgets: no value given (null); give a value or remove the key to use the default",
      error_of(kUp + "budgets:\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:5: upstreams[0].ca_file: no value given (null); give a value or remove the key to use the "
      "default",
      error_of(kUp + "    ca_file: ~\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:1:1: upstreams: no value given (null); give a value or remove the key to use the default",
      error_of("upstreams:\nlog: {level: info}\n").c_str());
  // yaml-cpp marks an empty entry at the token after it (here: end of input).
  STRCMP_EQUAL("test.yaml:7:1: listen[1]: empty list entry",
               error_of(kUp + "listen:\n  - \"127.0.0.1:53\"\n  -\n").c_str());
  STRCMP_EQUAL("test.yaml:5:1: upstreams[1]: empty list entry", error_of(kUp + "  -\n").c_str());
}

TEST(ConfigErrors, WrongTypes) {
  STRCMP_EQUAL("test.yaml:5:15: budgets.attempt_ms: expected a decimal integer, got \"fast\"",
               error_of(kUp + "budgets:\n  attempt_ms: fast\n").c_str());
  STRCMP_EQUAL("test.yaml:5:15: budgets.attempt_ms: expected a decimal integer, got \"2000.5\"",
               error_of(kUp + "budgets:\n  attempt_ms: 2000.5\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:5:15: budgets.attempt_ms: expected an integer, got the quoted string \"2000\" (drop the quotes)",
      error_of(kUp + "budgets:\n  attempt_ms: \"2000\"\n").c_str());
  STRCMP_EQUAL("test.yaml:5:15: budgets.attempt_ms: expected an integer, got a list",
               error_of(kUp + "budgets:\n  attempt_ms: [1]\n").c_str());
  STRCMP_EQUAL("test.yaml:4:9: listen: expected a list of addresses, got a mapping",
               error_of(kUp + "listen: {a: 1}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:9: listen: expected a list of addresses, got \"127.0.0.1:53\"",
               error_of(kUp + "listen: \"127.0.0.1:53\"\n").c_str());
  STRCMP_EQUAL("test.yaml:1:12: upstreams: expected a list of upstreams, got \"tls://127.0.0.1\"",
               error_of("upstreams: tls://127.0.0.1\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:5: upstreams[0]: expected a mapping with at least a url key, got \"tls://127.0.0.1\"",
      error_of("upstreams:\n  - tls://127.0.0.1\n").c_str());
  STRCMP_EQUAL("test.yaml:2:5: upstreams[0]: expected a mapping with at least a url key, got \"https://doh.test/q\"",
               error_of("upstreams:\n  - https://user:pw@doh.test/q/SECRET\n").c_str());
  STRCMP_EQUAL("test.yaml:4:14: upstreams[0].enabled: expected true or false, got \"yes\"",
               error_of(kUp + "    enabled: yes\n").c_str());
  STRCMP_EQUAL("test.yaml:4:14: upstreams[0].enabled: expected true or false, got the quoted string \"true\"",
               error_of(kUp + "    enabled: \"true\"\n").c_str());
  STRCMP_EQUAL("test.yaml:4:7: http: expected a mapping, got a list", error_of(kUp + "http: [1]\n").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: expected a string, got a mapping",
               error_of("upstreams:\n  - url: {a: b}\n").c_str());
  STRCMP_EQUAL("test.yaml:3:15: upstreams[0].tls_name: expected a string, got a value tagged \"tag:yaml.org,2002:int\"",
               error_of("upstreams:\n  - url: \"tls://127.0.0.1\"\n    tls_name: !!int 5\n").c_str());
  STRCMP_EQUAL("test.yaml:5:10: log.level: expected debug, info, warn or error, got \"verbose\"",
               error_of(kUp + "log:\n  level: verbose\n").c_str());
}

TEST(ConfigErrors, OutOfRangeNumbers) {
  STRCMP_EQUAL("test.yaml:4:23: budgets.attempt_ms: must be between 100 and 30000, got \"99\"",
               error_of(kUp + "budgets: {attempt_ms: 99}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:23: budgets.attempt_ms: must be between 100 and 30000, got \"30001\"",
               error_of(kUp + "budgets: {attempt_ms: 30001, total_ms: 40000}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:21: budgets.total_ms: must be between 200 and 60000, got \"60001\"",
               error_of(kUp + "budgets: {total_ms: 60001}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:21: budgets.total_ms: must be between 200 and 60000, got \"-5000\"",
               error_of(kUp + "budgets: {total_ms: -5000}\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:15: upstreams[0].priority: must be between -1000000 and 1000000, got "
      "\"99999999999999999999999\"",
      error_of(kUp + "    priority: 99999999999999999999999\n").c_str());
}

TEST(ConfigErrors, MessagesStayOnOneLine) {
  const std::string msg = error_of(kUp + "\"evil\\nkey\\x01\": 1\n");
  STRCMP_EQUAL(
      "test.yaml:4:1: \"evil\\nkey\\x01\": unknown key \"evil\\nkey\\x01\" (allowed here: listen, upstreams, "
      "budgets, http, cache, log, access_control, client_limits, local_zones, home_router, hosts_files, records, "
      "forward_special_zones, blocking)",
      msg.c_str());
  try {
    (void)load_string(kUp + "foo: 1\n", "bad\nname.yaml");
    FAIL("expected an error");
  } catch (const Error& e) {
    STRCMP_EQUAL("bad\nname.yaml", e.file().c_str());
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

TEST(ConfigErrors, SelfReferentialAliasIsRejectedNotFollowed) {
  // yaml-cpp builds a cyclic node graph for this; the loader must not walk it.
  STRCMP_EQUAL("test.yaml:4:29: budgets.budgets: unknown key \"budgets\" (allowed here: attempt_ms, total_ms)",
               error_of(kUp + "budgets: &b {total_ms: 300, budgets: *b}\n").c_str());
}

TEST_GROUP(ConfigFile){};

TEST(ConfigFile, MissingFileIsNamed) {
  try {
    (void)load_file("/nonexistent/nxdns.yaml");
    FAIL("expected an error");
  } catch (const Error& e) {
    STRCMP_EQUAL("/nonexistent/nxdns.yaml: cannot read: No such file or directory", e.what());
    LONGS_EQUAL(0, e.line());
    LONGS_EQUAL(0, e.column());
    STRCMP_EQUAL("/nonexistent/nxdns.yaml", e.file().c_str());
  }
}

TEST(ConfigFile, DirectoryIsNotAConfig) {
  TempDir dir;
  try {
    (void)load_file(dir.path);
    FAIL("expected an error");
  } catch (const Error& e) {
    STRCMP_EQUAL((dir.path + ": cannot read: Is a directory").c_str(), e.what());
  }
}

TEST(ConfigFile, LoadsFromDiskAndNamesTheFileInErrors) {
  TempDir dir;
  const std::string good = dir.write("good.yaml", kUp);
  const Config c = load_file(good);
  STRCMP_EQUAL(good.c_str(), c.source.c_str());
  LONGS_EQUAL(1, c.upstreams.size());

  const std::string bad = dir.write("bad.yaml", kUp + "log: {level: loud}\n");
  try {
    (void)load_file(bad);
    FAIL("expected an error");
  } catch (const Error& e) {
    STRCMP_EQUAL((bad + ":4:14: log.level: expected debug, info, warn or error, got \"loud\"").c_str(), e.what());
  }
}

TEST(ConfigFile, ShippedExampleLoads) {
  const Config c = load_file(std::string(NXDNS_SOURCE_DIR) + "/examples/nxdns.yaml");
  CHECK(c.upstreams.size() >= 2);
  bool dot = false, doh = false;
  for (const auto& u : c.upstreams) {
    dot = dot || u.protocol == Protocol::dot;
    doh = doh || u.protocol == Protocol::doh;
  }
  CHECK(dot);
  CHECK(doh);
}
