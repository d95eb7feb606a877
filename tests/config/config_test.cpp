// Config loading: defaults, every accepted key, and every error class with
// its full one-line message (file, 1-based line and column, key path).
//
// Addresses in these documents are loopback only: nothing here connects,
// but a test config must never name a real resolver.
#include "config/config.hpp"

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
using nxdns::config::LoadOptions;
using nxdns::config::Protocol;
using nxdns::config::load_file;
using nxdns::config::load_string;

namespace {

const char* const kSrc = "test.yaml";

// A minimal valid upstream block, two lines.
const std::string kUp =
    "upstreams:\n"
    "  - url: \"tls://127.0.0.1:853\"\n"
    "    tls_name: \"dot.test\"\n";

std::string error_of(const std::string& yaml, const LoadOptions& opts = {}) {
  try {
    (void)load_string(yaml, kSrc, opts);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL(("expected an error for:\n" + yaml).c_str());
  return {};
}

Config must_load(const std::string& yaml, const LoadOptions& opts = {}) {
  try {
    return load_string(yaml, kSrc, opts);
  } catch (const Error& e) {
    FAIL((std::string("unexpected error: ") + e.what()).c_str());
  }
  return {};
}

// A scratch directory, removed with everything in it after each test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/nxdns-config-test-XXXXXX";
    const char* p = mkdtemp(tmpl);
    if (!p) FAIL("mkdtemp");
    path = p;
  }
  ~TempDir() {
    const std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path.c_str());
  }
  std::string write(const std::string& name, const std::string& body) const {
    const std::string p = path + "/" + name;
    std::ofstream(p) << body;
    return p;
  }
};

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

TEST(ConfigLoad, DohDefaultsAndIpHost) {
  const Config c = must_load(
      "upstreams:\n"
      "  - url: \"https://doh.test/dns-query\"\n"
      "    address: 127.0.0.3\n"
      "  - url: \"HTTPS://[::1]/q\"\n"
      "    tls_name: doh2.test\n"
      "    method: POST\n");
  const auto& a = c.upstreams[0];
  LONGS_EQUAL(443, a.port);
  STRCMP_EQUAL("127.0.0.3:443", a.address.to_string().c_str());
  CHECK(a.method == DohMethod::post);
  const auto& b = c.upstreams[1];
  CHECK(b.protocol == Protocol::doh);
  STRCMP_EQUAL("::1", b.host.c_str());
  STRCMP_EQUAL("[::1]:443", b.address.to_string().c_str());
  STRCMP_EQUAL("doh2.test", b.tls_name.c_str());
  STRCMP_EQUAL("/q", b.path.c_str());
  CHECK(b.method == DohMethod::post);
}

TEST(ConfigLoad, UpstreamsKeepFileOrderWhateverTheirPriority) {
  const Config c = must_load(
      "upstreams:\n"
      "  - {url: \"tls://127.0.0.1\", tls_name: a.test, priority: 9}\n"
      "  - {url: \"tls://127.0.0.2\", tls_name: b.test, priority: 1}\n"
      "  - {url: \"tls://[::1]:8853\", tls_name: c.test, priority: 1}\n");
  LONGS_EQUAL(3, c.upstreams.size());
  STRCMP_EQUAL("a.test", c.upstreams[0].tls_name.c_str());
  STRCMP_EQUAL("b.test", c.upstreams[1].tls_name.c_str());
  STRCMP_EQUAL("c.test", c.upstreams[2].tls_name.c_str());
  STRCMP_EQUAL("[::1]:8853", c.upstreams[2].address.to_string().c_str());
  LONGS_EQUAL(4, c.upstreams[2].line);
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
      "access_control, client_limits)",
      error_of(kUp + "foo: 1\n").c_str());
  STRCMP_EQUAL("test.yaml:5:3: budgets.attempt: unknown key \"attempt\" (allowed here: attempt_ms, total_ms)",
               error_of(kUp + "budgets:\n  attempt: 5\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:5: upstreams[0].tlsname: unknown key \"tlsname\" (allowed here: url, tls_name, priority, "
      "enabled, ca_file, address, method)",
      error_of(kUp + "    tlsname: x\n").c_str());
  STRCMP_EQUAL("test.yaml:5:3: http.\"a b\": unknown key \"a b\" (allowed here: enabled, listen)",
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

TEST(ConfigErrors, TotalBudgetBelowAttempt) {
  STRCMP_EQUAL("test.yaml:4:39: budgets.total_ms: must be at least attempt_ms (3000), got 2500",
               error_of(kUp + "budgets: {attempt_ms: 3000, total_ms: 2500}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:21: budgets.total_ms: must be at least attempt_ms (2000, the default), got 1500",
               error_of(kUp + "budgets: {total_ms: 1500}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:23: budgets.attempt_ms: must not exceed total_ms (5000, the default), got 8000",
               error_of(kUp + "budgets: {attempt_ms: 8000}\n").c_str());
  // Equal is fine: one attempt may use the whole budget.
  LONGS_EQUAL(3000, must_load(kUp + "budgets: {attempt_ms: 3000, total_ms: 3000}\n").budgets.total.count());
}

TEST(ConfigErrors, UpstreamListMustHaveAnEnabledEntry) {
  STRCMP_EQUAL("test.yaml:1:12: upstreams: must list at least one upstream", error_of("upstreams: []\n").c_str());
  STRCMP_EQUAL("test.yaml:2:3: upstreams: every upstream is disabled; enable at least one",
               error_of("upstreams:\n"
                        "  - {url: \"tls://127.0.0.1\", tls_name: a.test, enabled: false}\n"
                        "  - {url: \"tls://127.0.0.2\", tls_name: b.test, enabled: false}\n")
                   .c_str());
}

TEST(ConfigErrors, BadListenAddresses) {
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

TEST(ConfigErrors, DuplicateAndOverlappingListeners) {
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

TEST(ConfigErrors, WebListenerMustNotTakeADnsPort) {
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

TEST(ConfigErrors, BadUrls) {
  auto url_error = [](const std::string& url) {
    return error_of("upstreams:\n  - url: \"" + url + "\"\n    tls_name: dot.test\n");
  };
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: unsupported scheme \"udp\" (use tls:// for DNS over TLS or "
      "https:// for DNS over HTTPS)",
      url_error("udp://127.0.0.1:53").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: plain http:// is not supported; use https://",
               url_error("http://doh.test/dns-query").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: not a URL: expected tls://IP[:port] or https://HOST[:port]/PATH",
      url_error("127.0.0.1:853").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: URL has no host", url_error("tls://:853").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: URL has no host", url_error("https:///dns-query").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: a tls:// URL needs an IP address as host (looking up a name would "
      "need DNS, which may be this daemon); put the name in tls_name",
      url_error("tls://dot.test:853").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: port \"99999\" is not a decimal number from 1 to 65535",
      url_error("tls://127.0.0.1:99999").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: port \"0\" is not a decimal number from 1 to 65535",
               url_error("tls://127.0.0.1:0").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: empty port after ':'",
               url_error("tls://127.0.0.1:").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: an https:// URL needs a path, e.g. https://dns.example/dns-query",
      url_error("https://127.0.0.1").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: a tls:// URL takes no path",
               url_error("tls://127.0.0.1/dns").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: credentials (user:password@) in the URL are not supported",
      url_error("https://user:secret@doh.test/dns-query").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: query strings are not supported in upstream URLs",
               url_error("https://127.0.0.1/dns-query?x=1").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: fragments (#...) are not supported in upstream URLs",
               url_error("https://127.0.0.1/dns-query#x").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: URI templates are not supported; drop the \"{?dns}\" part",
               url_error("https://127.0.0.1/dns-query{?dns}").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: IPv6 addresses need brackets, e.g. "
      "tls://[2001:db8::1]:853",
      url_error("tls://::1").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: not a valid IPv6 address inside [ ]",
               url_error("tls://[127.0.0.1]").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: host \"127.0.0.256\" is not a valid IPv4 address",
               url_error("tls://127.0.0.256").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:10: upstreams[0].url: bad URL: host \"doh_test\" is neither an IP address nor a valid host name",
      url_error("https://doh_test/dns-query").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: path contains a character that must be percent-encoded",
               url_error("https://127.0.0.1/dns<query>").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: bad URL: URL contains a space or control character",
               url_error("https://127.0.0.1/dns query").c_str());
  STRCMP_EQUAL("test.yaml:2:10: upstreams[0].url: must not be empty", url_error("").c_str());
  STRCMP_EQUAL("test.yaml:2:5: upstreams[0].url: required key missing",
               error_of("upstreams:\n  - tls_name: dot.test\n").c_str());
}

TEST(ConfigErrors, TlsNameRules) {
  STRCMP_EQUAL(
      "test.yaml:2:5: upstreams[0].tls_name: required because the URL host is an IP address: give the name the "
      "server's certificate is issued to",
      error_of("upstreams:\n  - url: \"tls://127.0.0.1\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:2:5: upstreams[0].tls_name: required because the URL host is an IP address: give the name the "
      "server's certificate is issued to",
      error_of("upstreams:\n  - url: \"https://127.0.0.1/dns-query\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:3:15: upstreams[0].tls_name: must be a host name: certificates are checked by name, not by IP "
      "address",
      error_of("upstreams:\n  - url: \"tls://127.0.0.1\"\n    tls_name: 127.0.0.1\n").c_str());
  STRCMP_EQUAL("test.yaml:3:15: upstreams[0].tls_name: not a valid host name: \"dot.test.\"",
               error_of("upstreams:\n  - url: \"tls://127.0.0.1\"\n    tls_name: dot.test.\n").c_str());
  STRCMP_EQUAL("test.yaml:3:15: upstreams[0].tls_name: not a valid host name: \"*.test\"",
               error_of("upstreams:\n  - url: \"tls://127.0.0.1\"\n    tls_name: \"*.test\"\n").c_str());
}

TEST(ConfigErrors, DohAddressRules) {
  STRCMP_EQUAL(
      "test.yaml:2:5: upstreams[0].address: required because the URL host \"doh.test\" is a name: give its IP "
      "address (looking it up would need DNS, which may be this daemon)",
      error_of("upstreams:\n  - url: \"https://doh.test/dns-query\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:3:5: upstreams[0].address: the URL host is already an IP address; remove address (or put a host "
      "name in the URL)",
      error_of("upstreams:\n  - url: \"https://127.0.0.1/q\"\n    address: 127.0.0.1\n    tls_name: d.test\n")
          .c_str());
  STRCMP_EQUAL(
      "test.yaml:3:5: upstreams[0].address: only for https:// upstreams (a tls:// URL already holds the IP "
      "address)",
      error_of("upstreams:\n  - url: \"tls://127.0.0.1\"\n    address: 127.0.0.1\n    tls_name: d.test\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:3:14: upstreams[0].address: not an IP address: \"doh.test\" (host names would need DNS to "
      "resolve)",
      error_of("upstreams:\n  - url: \"https://doh.test/q\"\n    address: doh.test\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:3:14: upstreams[0].address: give a bare IP address without brackets or port (the port comes from "
      "the URL), got \"127.0.0.1:443\"",
      error_of("upstreams:\n  - url: \"https://doh.test/q\"\n    address: \"127.0.0.1:443\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:3:14: upstreams[0].address: give a bare IP address without brackets or port (the port comes from "
      "the URL), got \"[::1]\"",
      error_of("upstreams:\n  - url: \"https://doh.test/q\"\n    address: \"[::1]\"\n").c_str());
}

TEST(ConfigErrors, MethodRules) {
  STRCMP_EQUAL("test.yaml:4:5: upstreams[0].method: only for https:// upstreams",
               error_of(kUp + "    method: post\n").c_str());
  STRCMP_EQUAL("test.yaml:4:13: upstreams[0].method: expected post or get, got \"put\"",
               error_of("upstreams:\n  - url: \"https://doh.test/q\"\n    address: 127.0.0.1\n    method: put\n")
                   .c_str());
}

TEST(ConfigErrors, DuplicateUpstreams) {
  STRCMP_EQUAL("test.yaml:4:10: upstreams[1].url: same server as upstreams[0] (line 2)",
               error_of(kUp + "  - url: \"tls://127.0.0.1\"\n    tls_name: other.test\n").c_str());
  STRCMP_EQUAL("test.yaml:3:11: upstreams[1].url: same server as upstreams[0] (line 2)",
               error_of("upstreams:\n"
                        "  - {url: \"https://DoH.test/q\", address: 127.0.0.1}\n"
                        "  - {url: \"https://doh.test:443/q\", address: 127.0.0.2}\n")
                   .c_str());
  STRCMP_EQUAL("test.yaml:3:11: upstreams[1].url: same server as upstreams[0] (line 2)",
               error_of("upstreams:\n"
                        "  - {url: \"tls://[::1]\", tls_name: a.test}\n"
                        "  - {url: \"tls://[0:0::1]:853\", tls_name: a.test, enabled: false}\n")
                   .c_str());
  // Same host, different path or port: different servers.
  LONGS_EQUAL(3, must_load("upstreams:\n"
                           "  - {url: \"https://doh.test/a\", address: 127.0.0.1}\n"
                           "  - {url: \"https://doh.test/b\", address: 127.0.0.1}\n"
                           "  - {url: \"https://doh.test:8443/a\", address: 127.0.0.1}\n")
                     .upstreams.size());
}

TEST(ConfigErrors, CaFileMustBeUsable) {
  TempDir dir;
  const std::string good = dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  const std::string empty = dir.write("empty.pem", "");
  const std::string missing = dir.path + "/missing.pem";
  auto with_ca = [](const std::string& f) { return kUp + "    ca_file: \"" + f + "\"\n"; };

  CHECK(must_load(with_ca(good)).upstreams[0].ca_file.has_value());
  STRCMP_EQUAL(("test.yaml:4:14: upstreams[0].ca_file: cannot read CA file \"" + missing +
                "\": No such file or directory")
                   .c_str(),
               error_of(with_ca(missing)).c_str());
  STRCMP_EQUAL(("test.yaml:4:14: upstreams[0].ca_file: CA file \"" + dir.path + "\" is not a regular file").c_str(),
               error_of(with_ca(dir.path)).c_str());
  STRCMP_EQUAL(("test.yaml:4:14: upstreams[0].ca_file: CA file \"" + empty + "\" is empty").c_str(),
               error_of(with_ca(empty)).c_str());
  STRCMP_EQUAL("test.yaml:4:14: upstreams[0].ca_file: must be an absolute path, got \"certs/ca.pem\"",
               error_of(with_ca("certs/ca.pem")).c_str());
  STRCMP_EQUAL("test.yaml:4:14: upstreams[0].ca_file: must not be empty", error_of(with_ca("")).c_str());
  if (geteuid() != 0) {  // root reads through permission bits
    const std::string locked = dir.write("locked.pem", "x");
    chmod(locked.c_str(), 0);
    STRCMP_EQUAL(("test.yaml:4:14: upstreams[0].ca_file: cannot read CA file \"" + locked +
                  "\": Permission denied")
                     .c_str(),
                 error_of(with_ca(locked)).c_str());
  }
  // Offline validation skips the file checks, not the path rules.
  LoadOptions offline;
  offline.check_files = false;
  CHECK(must_load(with_ca(missing), offline).upstreams[0].ca_file.has_value());
  STRCMP_EQUAL("test.yaml:4:14: upstreams[0].ca_file: must be an absolute path, got \"ca.pem\"",
               error_of(with_ca("ca.pem"), offline).c_str());
}

TEST(ConfigErrors, MessagesStayOnOneLine) {
  const std::string msg = error_of(kUp + "\"evil\\nkey\\x01\": 1\n");
  STRCMP_EQUAL(
      "test.yaml:4:1: \"evil\\nkey\\x01\": unknown key \"evil\\nkey\\x01\" (allowed here: listen, upstreams, "
      "budgets, http, cache, log, access_control, client_limits)",
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
