// Upstream URL parsing and the redaction used for log lines and metric labels.
#include "config/url.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using nxdns::config::Protocol;
using nxdns::config::redact_url;
using nxdns::config::detail::parse_upstream_url;
using nxdns::config::detail::ParsedUrl;
using nxdns::config::detail::quote;

namespace {

ParsedUrl must_parse(const std::string& url) {
  std::string why;
  auto p = parse_upstream_url(url, &why);
  if (!p) FAIL(("expected " + url + " to parse: " + why).c_str());
  return *p;
}

std::string why_not(const std::string& url) {
  std::string why;
  if (parse_upstream_url(url, &why)) FAIL(("expected " + url + " to be rejected").c_str());
  return why;
}

}  // namespace

TEST_GROUP(UpstreamUrl){};

TEST(UpstreamUrl, DotDefaultsToPort853) {
  const ParsedUrl p = must_parse("tls://127.0.0.1");
  CHECK(p.protocol == Protocol::dot);
  STRCMP_EQUAL("127.0.0.1", p.host.c_str());
  LONGS_EQUAL(853, p.port);
  CHECK(p.ip.has_value());
  STRCMP_EQUAL("127.0.0.1:853", p.ip->to_string().c_str());
  STRCMP_EQUAL("", p.path.c_str());
}

TEST(UpstreamUrl, DohWithIpv6HostPortAndPath) {
  const ParsedUrl p = must_parse("https://[::1]:8443/dns-query/a%2Fb");
  CHECK(p.protocol == Protocol::doh);
  STRCMP_EQUAL("::1", p.host.c_str());
  LONGS_EQUAL(8443, p.port);
  STRCMP_EQUAL("[::1]:8443", p.ip->to_string().c_str());
  STRCMP_EQUAL("/dns-query/a%2Fb", p.path.c_str());
}

TEST(UpstreamUrl, DohNameHostHasNoIpAndDefaultsTo443) {
  const ParsedUrl p = must_parse("HTTPS://Doh.Test/");
  STRCMP_EQUAL("Doh.Test", p.host.c_str());
  LONGS_EQUAL(443, p.port);
  CHECK_FALSE(p.ip.has_value());
  STRCMP_EQUAL("/", p.path.c_str());
}

TEST(UpstreamUrl, RejectsWithoutEchoingCredentials) {
  const std::string why = why_not("https://alice:hunter2@doh.test/dns-query");
  CHECK(why.find("hunter2") == std::string::npos);
  CHECK(why.find("alice") == std::string::npos);
}

TEST(UpstreamUrl, PathCharacters) {
  must_parse("https://doh.test/a-b_c.d~e!$&'()*+,;=:@");
  STRCMP_EQUAL("path contains a character that must be percent-encoded", why_not("https://doh.test/%zz").c_str());
  STRCMP_EQUAL("path contains a character that must be percent-encoded", why_not("https://doh.test/%4").c_str());
  STRCMP_EQUAL("path contains a character that must be percent-encoded", why_not("https://doh.test/a\\b").c_str());
}

TEST(UpstreamUrl, ControlCharactersAndNul) {
  STRCMP_EQUAL("URL contains a space or control character", why_not(std::string("tls://127.0.0.1\0x", 17)).c_str());
  STRCMP_EQUAL("URL contains a space or control character", why_not("tls://127.0.0.1\n").c_str());
}

TEST(UpstreamUrl, QuoteEscapesAndTruncates) {
  STRCMP_EQUAL("\"a\\\"b\\\\c\\n\\t\\x01\\xc3\\xa9\"", quote("a\"b\\c\n\t\x01\xc3\xa9").c_str());
  STRCMP_EQUAL("\"abc...\"", quote("abcdef", 3).c_str());
  STRCMP_EQUAL("\"\"", quote("").c_str());
}

TEST_GROUP(RedactUrl){};

TEST(RedactUrl, StripsCredentialsQueryFragmentAndDeepPath) {
  STRCMP_EQUAL("https://dns.example/dns-query",
               redact_url("https://user:pw@dns.example/dns-query/SECRET?x=1").c_str());
  STRCMP_EQUAL("https://dns.example/dns-query", redact_url("https://dns.example/dns-query#frag").c_str());
  STRCMP_EQUAL("https://dns.example:8443/q", redact_url("https://dns.example:8443/q/a/b/c").c_str());
  STRCMP_EQUAL("https://dns.example", redact_url("https://dns.example?token=1").c_str());
}

TEST(RedactUrl, KeepsWhatIsAlreadyClean) {
  STRCMP_EQUAL("tls://192.0.2.1:853", redact_url("tls://192.0.2.1:853").c_str());
  STRCMP_EQUAL("tls://[2001:db8::1]:853", redact_url("tls://[2001:db8::1]:853").c_str());
  STRCMP_EQUAL("https://dns.example/dns-query", redact_url("https://dns.example/dns-query").c_str());
  STRCMP_EQUAL("https://dns.example/", redact_url("https://dns.example/").c_str());
}

TEST(RedactUrl, PasswordsWithDelimitersDoNotLeak) {
  for (const char* url : {"https://u:p#ss@dns.example/q", "https://u:p?ss@dns.example/q",
                          "https://u:p/ss@dns.example/q", "https://u:p@ss@dns.example/q"}) {
    const std::string r = redact_url(url);
    CHECK_TEXT(r.find("ss") == std::string::npos, r.c_str());
    CHECK_TEXT(r.find("u:p") == std::string::npos, r.c_str());
    STRCMP_EQUAL("https://dns.example/q", r.c_str());
  }
}

TEST(RedactUrl, ToleratesNonUrls) {
  STRCMP_EQUAL("", redact_url("").c_str());
  STRCMP_EQUAL("host/a", redact_url("user@host/a/b?c").c_str());
  STRCMP_EQUAL("tls://", redact_url("tls://").c_str());
  // Not a scheme: the "://" sits after userinfo.
  STRCMP_EQUAL("host/x:", redact_url("u:pw@host/x://y").c_str());
}
