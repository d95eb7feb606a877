#pragma once
// The TLS client configuration of one DoT upstream: trust anchors, RNG and
// protocol limits (versions, cipher suites: tls_ciphersuites.hpp), shared by
// the upstream's sessions. Certificate
// verification is always required; there is deliberately no switch to turn
// it off (an insecure mode would be one config typo away from shipping).
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "upstream/handshake_stats.hpp"
#include "upstream/tls_session_cache.hpp"

namespace nxdns::upstream {

// Debian/Ubuntu's bundle of the system trust store.
inline constexpr const char* system_ca_bundle = "/etc/ssl/certs/ca-certificates.crt";

class TlsClientConfig {
  struct Key {
    explicit Key() = default;
  };

 public:
  // Loads `ca_file` (PEM or DER; one or more certificates), or the system
  // bundle when none is given, seeds the DRBG and builds the ssl config.
  // Returns nullptr and a one-line reason in *error (naming the file) when
  // the trust anchors cannot be read or contain no usable certificate.
  static std::unique_ptr<TlsClientConfig> create(const std::optional<std::string>& ca_file, std::string* error);

  explicit TlsClientConfig(Key);
  ~TlsClientConfig();
  TlsClientConfig(const TlsClientConfig&) = delete;
  TlsClientConfig& operator=(const TlsClientConfig&) = delete;

  // The ssl contexts of the upstream's sessions point at this (and through
  // it at the DRBG and CA chain), so it never moves: held by unique_ptr.
  const mbedtls_ssl_config* ssl_config() const { return &conf_; }
  // Cryptographically random bytes (DNS IDs on the wire). False only if the
  // DRBG fails, which mbedTLS reports for reseed failures.
  bool random(void* out, std::size_t n);
  // Where the trust anchors came from, for messages ("system trust store
  // /etc/ssl/...", "ca_file /x/ca.pem").
  const std::string& ca_source() const { return ca_source_; }
  std::size_t ca_count() const { return ca_count_; }
  // What the ssl config offers, 0-terminated (dot_ciphersuites()).
  const std::vector<int>& ciphersuites() const { return ciphersuites_; }
  // The upstream's resumable session, shared by its slots (one config per
  // upstream, so never offered to another one).
  TlsSessionCache& session_cache() { return session_cache_; }
  HandshakeStats& handshake_stats() { return handshake_stats_; }
  const HandshakeStats& handshake_stats() const { return handshake_stats_; }

 private:
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_x509_crt ca_;
  // conf_ keeps a pointer into it (mbedtls_ssl_conf_ciphersuites copies
  // nothing), so it lives exactly as long as conf_.
  std::vector<int> ciphersuites_;
  mbedtls_ssl_config conf_;
  std::string ca_source_;
  std::size_t ca_count_ = 0;
  TlsSessionCache session_cache_;
  HandshakeStats handshake_stats_;
};

// "mbed TLS 2.28.3"; the library actually linked, not the headers.
std::string tls_library_version();
// True when this build can negotiate TLS 1.3 (mbedTLS 3.x with
// MBEDTLS_SSL_PROTO_TLS1_3).
bool tls13_available();

}  // namespace nxdns::upstream
