#include "upstream/tls_ciphersuites.hpp"

#include <mbedtls/ssl.h>
#include <mbedtls/ssl_ciphersuites.h>

#include <algorithm>

namespace nxdns::upstream {

namespace {

// RFC 8446 §B.4: every TLS 1.3 suite is 0x13XX.
bool is_tls13_suite(int id) { return (id >> 8) == 0x13; }

}  // namespace

bool is_allowed_tls12_suite(int iana_id) {
  return std::any_of(allowed_tls12_suites.begin(), allowed_tls12_suites.end(),
                     [iana_id](const Tls12Suite& s) { return s.iana_id == iana_id; });
}

std::vector<int> dot_ciphersuites() {
  std::vector<int> out;
  for (const int* id = mbedtls_ssl_list_ciphersuites(); *id != 0; ++id) {
    if (is_tls13_suite(*id) || is_allowed_tls12_suite(*id)) out.push_back(*id);
  }
  out.push_back(0);
  return out;
}

bool offers_tls12(const std::vector<int>& ciphersuites) {
  return std::any_of(ciphersuites.begin(), ciphersuites.end(), [](int id) { return is_allowed_tls12_suite(id); });
}

std::string openssl_tls12_cipher_list() {
  std::string s;
  for (const Tls12Suite& suite : allowed_tls12_suites) {
    if (!s.empty()) s += ':';
    s += suite.openssl_name;
  }
  return s;
}

}  // namespace nxdns::upstream
