#pragma once
// Which TLS 1.2 cipher suites the DoT and DoH clients offer: ECDHE key
// exchange (forward secrecy) with an AEAD cipher (AES-GCM or
// ChaCha20-Poly1305) and nothing else. RFC 8310 §9 defers to BCP 195, whose
// RFC 9325 §4.1-4.2 asks for exactly these on TLS 1.2: no static RSA key
// exchange, no CBC, no truncated-tag CCM-8. TLS 1.3 suites are all AEAD
// with (EC)DHE and stay the library's own. Both transports read the one
// table below, so they cannot drift apart.
#include <array>
#include <string>
#include <vector>

namespace nxdns::upstream {

struct Tls12Suite {
  int iana_id;              // the wire value, e.g. 0xC02B
  const char* openssl_name;  // OpenSSL's name for it (libcurl's backend)
};

inline constexpr std::array<Tls12Suite, 6> allowed_tls12_suites = {{
    {0xC02B, "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {0xC02C, "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {0xCCA9, "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {0xC02F, "ECDHE-RSA-AES128-GCM-SHA256"},
    {0xC030, "ECDHE-RSA-AES256-GCM-SHA384"},
    {0xCCA8, "ECDHE-RSA-CHACHA20-POLY1305"},
}};

bool is_allowed_tls12_suite(int iana_id);

// The list handed to mbedtls_ssl_conf_ciphersuites, 0-terminated: the
// library's default preference order, TLS 1.3 suites (mbedTLS 3.x) kept,
// TLS 1.2 ones only when in allowed_tls12_suites. A default mbedTLS build
// has all six; one trimmed (MBEDTLS_SSL_CIPHERSUITES) to none of them gets a
// list without a TLS 1.2 suite, which TlsClientConfig::create refuses.
std::vector<int> dot_ciphersuites();
// True when `ciphersuites` (as above) holds a TLS 1.2 suite.
bool offers_tls12(const std::vector<int>& ciphersuites);

// CURLOPT_SSL_CIPHER_LIST for a libcurl built on OpenSSL ("A:B:..."). It
// governs TLS 1.2 and below only; TLS 1.3 suites are OpenSSL's defaults.
std::string openssl_tls12_cipher_list();

}  // namespace nxdns::upstream
