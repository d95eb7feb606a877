// The pure DoH rules: request encoding (RFC 8484 §4.1, RFC 4648 §5),
// response header checks and the libcurl error mapping.
#include "upstream/doh_wire.hpp"

#include "upstream/retry_decision.hpp"

#include <string>
#include <vector>

#include "dns/message.hpp"
#include "net/endpoint.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::Cause;

namespace {

std::string enc(const std::string& s) {
  const dns::Bytes b(s.begin(), s.end());
  return upstream::base64url_encode(b);
}

}  // namespace

TEST_GROUP(DohWire){};

TEST(DohWire, Base64UrlMatchesRfc4648VectorsWithoutPadding) {
  STRCMP_EQUAL("", enc("").c_str());
  STRCMP_EQUAL("Zg", enc("f").c_str());
  STRCMP_EQUAL("Zm8", enc("fo").c_str());
  STRCMP_EQUAL("Zm9v", enc("foo").c_str());
  STRCMP_EQUAL("Zm9vYg", enc("foob").c_str());
  STRCMP_EQUAL("Zm9vYmE", enc("fooba").c_str());
  STRCMP_EQUAL("Zm9vYmFy", enc("foobar").c_str());
}

TEST(DohWire, Base64UrlUsesTheUrlSafeAlphabet) {
  // 0xfb 0xff 0xbf: '+' '/' in standard base64, '-' '_' here.
  const dns::Bytes b{0xfb, 0xff, 0xbf};
  STRCMP_EQUAL("-_-_", upstream::base64url_encode(b).c_str());
}

TEST(DohWire, GetUrlOfTheRfc8484ExampleQuery) {
  // RFC 8484 §4.1.1: www.example.com A, ID 0, RD set.
  const dns::Bytes q = dns::make_query(0, *dns::name_from_text("www.example.com"), 1, std::nullopt);
  const std::string url = upstream::doh_get_url("https://dns.example.com:443/dns-query", q);
  STRCMP_EQUAL("https://dns.example.com:443/dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlA2NvbQAAAQAB", url.c_str());
  // A path that already has a query string gets the parameter appended.
  const std::string url2 = upstream::doh_get_url("https://h:1/q?x=1", q);
  CHECK_TRUE(url2.rfind("https://h:1/q?x=1&dns=", 0) == 0);
}

TEST(DohWire, BaseUrlUsesTheTlsNameAndPort) {
  STRCMP_EQUAL("https://doh.test:8443/dns-query", upstream::doh_base_url("doh.test", 8443, "/dns-query").c_str());
  STRCMP_EQUAL("https://doh.test:443/", upstream::doh_base_url("doh.test", 443, "").c_str());
}

TEST(DohWire, ResolveEntryPinsTheConfiguredAddress) {
  STRCMP_EQUAL("doh.test:8443:127.0.0.1",
               upstream::doh_resolve_entry("doh.test", *net::make_endpoint("127.0.0.1", 8443)).c_str());
  STRCMP_EQUAL("doh.test:443:[::1]", upstream::doh_resolve_entry("doh.test", *net::make_endpoint("::1", 443)).c_str());
}

TEST(DohWire, ContentTypeMatchesTheMediaTypeOnly) {
  CHECK_TRUE(upstream::is_dns_message_type("application/dns-message"));
  CHECK_TRUE(upstream::is_dns_message_type("Application/DNS-Message"));
  CHECK_TRUE(upstream::is_dns_message_type("application/dns-message; charset=binary"));
  CHECK_TRUE(upstream::is_dns_message_type("  application/dns-message ;x=y"));
  CHECK_FALSE(upstream::is_dns_message_type(nullptr));
  CHECK_FALSE(upstream::is_dns_message_type(""));
  CHECK_FALSE(upstream::is_dns_message_type("text/html"));
  CHECK_FALSE(upstream::is_dns_message_type("application/dns-message-x"));
  CHECK_FALSE(upstream::is_dns_message_type("application/dns-messag"));
  CHECK_FALSE(upstream::is_dns_message_type("application/dns+json"));
}

TEST(DohWire, HeaderValuesAreSanitizedForLogs) {
  STRCMP_EQUAL("text/html", upstream::sanitize_header_value("text/html").c_str());
  STRCMP_EQUAL("a?b?", upstream::sanitize_header_value(std::string("a\nb\x01", 4)).c_str());
  const std::string longer(100, 'x');
  LONGS_EQUAL(64 + 3, upstream::sanitize_header_value(longer).size());
}

TEST(DohWire, CurlErrorsMapOntoCauses) {
  struct Row {
    CURLcode rc;
    bool connected;
    Cause want;
  };
  const std::vector<Row> rows = {
      {CURLE_COULDNT_CONNECT, false, Cause::connect_failed},
      {CURLE_OPERATION_TIMEDOUT, false, Cause::connect_failed},
      {CURLE_OPERATION_TIMEDOUT, true, Cause::attempt_timeout},
      {CURLE_SSL_CONNECT_ERROR, false, Cause::handshake_failed},
      {CURLE_PEER_FAILED_VERIFICATION, false, Cause::certificate},
      {CURLE_SSL_CACERT_BADFILE, false, Cause::certificate},
      {CURLE_GOT_NOTHING, true, Cause::eof},
      {CURLE_PARTIAL_FILE, true, Cause::eof},
      {CURLE_RECV_ERROR, true, Cause::connection_reset},
      {CURLE_HTTP2_STREAM, true, Cause::connection_reset},
      {CURLE_HTTP2, true, Cause::connection_reset},
      {CURLE_SEND_ERROR, true, Cause::broken_pipe},
      {CURLE_WEIRD_SERVER_REPLY, true, Cause::bad_response},
      {CURLE_FILESIZE_EXCEEDED, true, Cause::response_too_large},
      {CURLE_OUT_OF_MEMORY, true, Cause::local_resource},
      {CURLE_NO_CONNECTION_AVAILABLE, false, Cause::local_resource},
      {CURLE_SEND_FAIL_REWIND, true, Cause::local_resource},
      {CURLE_ABORTED_BY_CALLBACK, true, Cause::cancelled},
      // Unclassified codes are final, never a lifecycle cause (no retry).
      {CURLE_RANGE_ERROR, true, Cause::bad_response},
      {CURLE_LOGIN_DENIED, true, Cause::bad_response},
  };
  for (const auto& r : rows) {
    const Cause got = upstream::cause_of_curl_error(r.rc, r.connected);
    if (got != r.want) {
      FAIL(("CURLcode " + std::to_string(static_cast<int>(r.rc)) + ": got " + upstream::describe(got) + ", want " +
            upstream::describe(r.want))
               .c_str());
    }
  }
}

// The one safe retry: the DoT redial rule applied to curl's results. Only a
// code saying the connection ended under the transfer (EOF, reset, broken
// pipe, HTTP/2 framing or stream failure) on a reused connection before any
// response byte earns the one retry; a response byte, a fresh connection or
// any other code is final.
TEST(DohWire, CurlErrorsEarnTheOneRetryOnlyAsConnectionLifecycle) {
  using upstream::RetryDecision;
  struct Row {
    CURLcode rc;
    bool reused;
    bool response_bytes;
    RetryDecision want;
  };
  constexpr auto retry = RetryDecision::retry;
  constexpr auto final = RetryDecision::final;
  const std::vector<Row> rows = {
      // The field case: a pooled HTTP/2 connection the server closed while idle.
      {CURLE_HTTP2_STREAM, true, false, retry},
      {CURLE_HTTP2, true, false, retry},
      {CURLE_GOT_NOTHING, true, false, retry},
      {CURLE_RECV_ERROR, true, false, retry},
      {CURLE_SEND_ERROR, true, false, retry},
      {CURLE_PARTIAL_FILE, true, false, retry},
      // Response bytes had arrived: the query was processed; resending is a second query.
      {CURLE_HTTP2_STREAM, true, true, final},
      {CURLE_PARTIAL_FILE, true, true, final},
      {CURLE_RECV_ERROR, true, true, final},
      // A connection dialed for this exchange: the failure says something about the upstream.
      {CURLE_HTTP2_STREAM, false, false, final},
      {CURLE_GOT_NOTHING, false, false, final},
      {CURLE_SEND_ERROR, false, false, final},
      // Not lifecycle: never cured by redialing.
      {CURLE_OPERATION_TIMEDOUT, true, false, final},
      {CURLE_PEER_FAILED_VERIFICATION, true, false, final},
      {CURLE_SSL_CONNECT_ERROR, true, false, final},
      {CURLE_COULDNT_CONNECT, true, false, final},
      {CURLE_WEIRD_SERVER_REPLY, true, false, final},
      {CURLE_FILESIZE_EXCEEDED, true, false, final},
      {CURLE_OUT_OF_MEMORY, true, false, final},
      {CURLE_ABORTED_BY_CALLBACK, true, false, final},
      {CURLE_RANGE_ERROR, true, false, final},
  };
  for (const auto& r : rows) {
    const Cause c = upstream::cause_of_curl_error(r.rc, true);
    const RetryDecision got = upstream::retry_decision(r.reused, r.response_bytes, c);
    if (got != r.want) {
      FAIL(("CURLcode " + std::to_string(static_cast<int>(r.rc)) + (r.reused ? " reused" : " fresh") +
            (r.response_bytes ? " after response bytes" : " before any response byte") + ": got " +
            upstream::describe(got) + ", want " + upstream::describe(r.want))
               .c_str());
    }
  }
}
