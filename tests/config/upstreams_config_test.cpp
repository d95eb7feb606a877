// The `upstreams:` section: DoH defaults, file order, and every rule of an
// entry (URL, tls_name, address, method, ca_file, no server twice) with its
// full one-line message.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::config::Config;
using nxdns::config::DohMethod;
using nxdns::config::LoadOptions;
using nxdns::config::Protocol;
using namespace nxdns::config::test_support;

TEST_GROUP(UpstreamsConfig){};

TEST(UpstreamsConfig, DohDefaultsAndIpHost) {
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

TEST(UpstreamsConfig, UpstreamsKeepFileOrderWhateverTheirPriority) {
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

TEST(UpstreamsConfig, UpstreamListMustHaveAnEnabledEntry) {
  STRCMP_EQUAL("test.yaml:1:12: upstreams: must list at least one upstream", error_of("upstreams: []\n").c_str());
  STRCMP_EQUAL("test.yaml:2:3: upstreams: every upstream is disabled; enable at least one",
               error_of("upstreams:\n"
                        "  - {url: \"tls://127.0.0.1\", tls_name: a.test, enabled: false}\n"
                        "  - {url: \"tls://127.0.0.2\", tls_name: b.test, enabled: false}\n")
                   .c_str());
}

TEST(UpstreamsConfig, BadUrls) {
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

TEST(UpstreamsConfig, TlsNameRules) {
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

TEST(UpstreamsConfig, DohAddressRules) {
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

TEST(UpstreamsConfig, MethodRules) {
  STRCMP_EQUAL("test.yaml:4:5: upstreams[0].method: only for https:// upstreams",
               error_of(kUp + "    method: post\n").c_str());
  STRCMP_EQUAL("test.yaml:4:13: upstreams[0].method: expected post or get, got \"put\"",
               error_of("upstreams:\n  - url: \"https://doh.test/q\"\n    address: 127.0.0.1\n    method: put\n")
                   .c_str());
}

TEST(UpstreamsConfig, DuplicateUpstreams) {
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

TEST(UpstreamsConfig, CaFileMustBeUsable) {
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
