// The cipher suites the DoT client's ssl config offers, read back from a
// built TlsClientConfig and checked by their mbedTLS names: on TLS 1.2 only
// ECDHE (ECDSA or RSA) with AES-GCM or ChaCha20-Poly1305, every allowed one
// present, the library's TLS 1.3 suites untouched. The DoH list (OpenSSL's
// names) comes from the same table and is checked against mbedTLS's names
// for the same wire values. Also: what a received TLS alert reads like.
#include <mbedtls/ssl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/tls_alert.hpp"
#include "upstream/tls_ciphersuites.hpp"
#include "upstream/tls_config.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using upstream::allowed_tls12_suites;

namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool is_tls13(int id) { return (id >> 8) == 0x13; }

// Why an mbedTLS TLS 1.2 suite name breaks the policy, or "".
std::string policy_breach(const std::string& name) {
  if (!has(name, "TLS-ECDHE-ECDSA-WITH-") && !has(name, "TLS-ECDHE-RSA-WITH-")) return "not ECDHE with a certificate";
  for (const char* bad : {"CBC", "CCM", "NULL", "RC4", "3DES", "CAMELLIA", "ARIA", "PSK"}) {
    if (has(name, bad)) return std::string("uses ") + bad;
  }
  if (!has(name, "-AES-128-GCM-") && !has(name, "-AES-256-GCM-") && !has(name, "-CHACHA20-POLY1305-")) {
    return "not AES-GCM or ChaCha20-Poly1305";
  }
  return {};
}

std::vector<int> without_terminator(std::vector<int> v) {
  CHECK_FALSE(v.empty());
  LONGS_EQUAL(0, v.back());  // mbedtls_ssl_conf_ciphersuites wants a 0-terminated list
  v.pop_back();
  return v;
}

}  // namespace

TEST_GROUP(TlsCiphersuites){};

TEST(TlsCiphersuites, TheClientConfigOffersOnlyEcdheWithAeadOnTls12) {
  const test::TestPki pki("dot.test");
  const test::TempFile ca(pki.ca_pem);
  std::string err;
  const auto cfg = upstream::TlsClientConfig::create(ca.path(), &err);
  if (!cfg) FAIL(err.c_str());
  const std::vector<int> offered = without_terminator(cfg->ciphersuites());

  std::size_t tls12 = 0;
  for (const int id : offered) {
    const char* name = mbedtls_ssl_get_ciphersuite_name(id);
    if (is_tls13(id)) {
      // RFC 8446 suites are AEAD by construction; only a TLS 1.3 build has them.
      CHECK_TRUE(upstream::tls13_available());
      continue;
    }
    ++tls12;
    const std::string why = policy_breach(name);
    if (!why.empty()) FAIL(log::cat("offered ", name, " (0x", std::hex, id, "): ", why).c_str());
  }
  // Every allowed suite is offered (a default mbedTLS has all six), once.
  LONGS_EQUAL(allowed_tls12_suites.size(), tls12);
  for (const auto& s : allowed_tls12_suites) {
    if (std::count(offered.begin(), offered.end(), s.iana_id) != 1) {
      FAIL(log::cat(mbedtls_ssl_get_ciphersuite_name(s.iana_id), " is not offered exactly once").c_str());
    }
  }
}

TEST(TlsCiphersuites, TheLibraryDefaultWouldOfferWhatThePolicyForbids) {
  // What the filter is for: this library's own list breaks the policy, so
  // the test above passes only because of it.
  std::size_t breaches = 0;
  for (const int* id = mbedtls_ssl_list_ciphersuites(); *id != 0; ++id) {
    if (!is_tls13(*id) && !policy_breach(mbedtls_ssl_get_ciphersuite_name(*id)).empty()) ++breaches;
  }
  CHECK_TRUE(breaches > 0);
}

TEST(TlsCiphersuites, TlsThirteenSuitesStayTheLibrarys) {
  std::vector<int> library13;
  for (const int* id = mbedtls_ssl_list_ciphersuites(); *id != 0; ++id) {
    if (is_tls13(*id)) library13.push_back(*id);
  }
  std::vector<int> ours13;
  for (const int id : without_terminator(upstream::dot_ciphersuites())) {
    if (is_tls13(id)) ours13.push_back(id);
  }
  CHECK_TRUE(library13 == ours13);
  CHECK_EQUAL(upstream::tls13_available(), !ours13.empty());
}

TEST(TlsCiphersuites, TheOpensslListNamesTheSameSuites) {
  // Same wire value, same key exchange and cipher, in each library's words:
  // "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256" / "ECDHE-RSA-AES128-GCM-SHA256".
  struct Words {
    const char* mbedtls;
    const char* openssl;
  };
  const Words words[] = {{"ECDHE-ECDSA-WITH", "ECDHE-ECDSA-"}, {"ECDHE-RSA-WITH", "ECDHE-RSA-"},
                         {"AES-128-GCM-SHA256", "AES128-GCM-SHA256"}, {"AES-256-GCM-SHA384", "AES256-GCM-SHA384"},
                         {"CHACHA20-POLY1305", "CHACHA20-POLY1305"}};
  std::string joined;
  for (const auto& s : allowed_tls12_suites) {
    const std::string m = mbedtls_ssl_get_ciphersuite_name(s.iana_id);
    const std::string o = s.openssl_name;
    CHECK_TRUE(policy_breach(m).empty());
    for (const Words& w : words) {
      if (has(m, w.mbedtls) != has(o, w.openssl)) FAIL(log::cat(m, " and ", o, " disagree on ", w.openssl).c_str());
    }
    joined += (joined.empty() ? "" : ":") + o;
  }
  STRCMP_EQUAL(joined.c_str(), upstream::openssl_tls12_cipher_list().c_str());
}

TEST(TlsCiphersuites, AlertsReadByNameWithWhatToSuspect) {
  struct Row {
    int alert;
    const char* reads;
  };
  const Row rows[] = {
      {40, "handshake_failure (40): the server accepts none of the offered cipher suites"},
      {71, "insufficient_security (71): the server accepts none of the offered cipher suites"},
      {70, "protocol_version (70): the server speaks neither TLS 1.2 nor TLS 1.3"},
      {112, "unrecognized_name (112): the server serves no certificate for tls_name"},
      {80, "internal_error (80)"},
      {200, "alert 200"},
  };
  for (const Row& r : rows) {
    const std::string got = upstream::describe_alert(r.alert);
    if (got.rfind(r.reads, 0) != 0) FAIL(log::cat("alert ", r.alert, " reads '", got, "'").c_str());
  }
  CHECK_TRUE(has(upstream::describe_alert(40), "ECDHE with AES-GCM or ChaCha20-Poly1305"));
}
