#include "upstream/tls_config.hpp"

#include <mbedtls/pk.h>
#include <mbedtls/version.h>

#include "log/log.hpp"
#include "upstream/tls_bio.hpp"
#include "upstream/tls_ciphersuites.hpp"

#if MBEDTLS_VERSION_MAJOR >= 3
#include <psa/crypto.h>
#endif

namespace nxdns::upstream {

namespace {

// mbedTLS 3.x routes TLS 1.3 (and, with MBEDTLS_USE_PSA_CRYPTO, all of its
// crypto) through PSA, which must be initialised once per process before any
// handshake. It is idempotent, but is called once on the loop thread anyway.
bool ensure_psa(std::string* error) {
#if MBEDTLS_VERSION_MAJOR >= 3 && defined(MBEDTLS_PSA_CRYPTO_C)
  static bool done = false;
  if (done) return true;
  const psa_status_t st = psa_crypto_init();
  if (st != PSA_SUCCESS) {
    if (error) *error = log::cat("psa_crypto_init failed (status ", static_cast<int>(st), ")");
    return false;
  }
  done = true;
#else
  (void)error;
#endif
  return true;
}

std::size_t count_certs(const mbedtls_x509_crt* c) {
  std::size_t n = 0;
  // An empty chain is one zeroed element whose raw buffer is empty.
  for (; c != nullptr; c = c->next) {
    if (c->raw.len > 0) ++n;
  }
  return n;
}

}  // namespace

TlsClientConfig::TlsClientConfig(Key) {
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
  mbedtls_x509_crt_init(&ca_);
  mbedtls_ssl_config_init(&conf_);
}

TlsClientConfig::~TlsClientConfig() {
  mbedtls_ssl_config_free(&conf_);
  mbedtls_x509_crt_free(&ca_);
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
}

std::unique_ptr<TlsClientConfig> TlsClientConfig::create(const std::optional<std::string>& ca_file,
                                                         std::string* error) {
  std::string why;
  auto fail = [&](std::string msg) -> std::unique_ptr<TlsClientConfig> {
    if (error) *error = std::move(msg);
    return nullptr;
  };
  if (!ensure_psa(&why)) return fail(why);

  auto cfg = std::make_unique<TlsClientConfig>(Key{});
  static constexpr unsigned char personalization[] = "nxdns-dot-client";
  int ret = mbedtls_ctr_drbg_seed(&cfg->drbg_, mbedtls_entropy_func, &cfg->entropy_, personalization,
                                  sizeof personalization - 1);
  if (ret != 0) return fail(log::cat("cannot seed the TLS random generator: ", tls_error_text(ret)));

  const std::string path = ca_file ? *ca_file : std::string(system_ca_bundle);
  cfg->ca_source_ = ca_file ? log::cat("ca_file ", path) : log::cat("system trust store ", path);
  ret = mbedtls_x509_crt_parse_file(&cfg->ca_, path.c_str());
  // A positive return counts certificates that failed to parse while others
  // loaded (system bundles carry a few the library cannot use); only "none
  // usable" is fatal.
  cfg->ca_count_ = count_certs(&cfg->ca_);
  if (ret < 0) {
    const char* hint = ret == MBEDTLS_ERR_PK_FILE_IO_ERROR ? " (missing or unreadable)" : "";
    return fail(log::cat("cannot load CA certificates from ", cfg->ca_source_, hint, ": ", tls_error_text(ret)));
  }
  if (cfg->ca_count_ == 0) return fail(log::cat("no usable CA certificate in ", cfg->ca_source_));

  ret = mbedtls_ssl_config_defaults(&cfg->conf_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT);
  if (ret != 0) return fail(log::cat("mbedtls_ssl_config_defaults: ", tls_error_text(ret)));
  // REQUIRED: the handshake fails unless the chain verifies against our
  // anchors and the name matches tls_name (set per session).
  mbedtls_ssl_conf_authmode(&cfg->conf_, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&cfg->conf_, &cfg->ca_, nullptr);
  mbedtls_ssl_conf_rng(&cfg->conf_, mbedtls_ctr_drbg_random, &cfg->drbg_);
  // RFC 8310 §8.2 / RFC 7525: nothing older than TLS 1.2.
#if MBEDTLS_VERSION_MAJOR >= 3
  mbedtls_ssl_conf_min_tls_version(&cfg->conf_, MBEDTLS_SSL_VERSION_TLS1_2);
#if defined(MBEDTLS_SSL_PROTO_TLS1_3)
  mbedtls_ssl_conf_max_tls_version(&cfg->conf_, MBEDTLS_SSL_VERSION_TLS1_3);
#if defined(MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED)
  // 3.6.0 always reports a TLS 1.3 NewSessionTicket from mbedtls_ssl_read
  // (MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET); 3.6.1+ drops tickets
  // silently unless asked. Asking makes every 3.6.x take the same path, the
  // one the session handles (read again at once) and the tests exercise.
  mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(&cfg->conf_,
                                                           MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED);
#endif
#else
  mbedtls_ssl_conf_max_tls_version(&cfg->conf_, MBEDTLS_SSL_VERSION_TLS1_2);
#endif
#else
  mbedtls_ssl_conf_min_version(&cfg->conf_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
  // RFC 8310 §9 / RFC 9325 §4.1: on TLS 1.2 only ECDHE with an AEAD cipher
  // (tls_ciphersuites.hpp). A server that insists on static RSA, CBC or
  // CCM-8 fails the handshake with a handshake_failure alert, which
  // dot_session_handshake.cpp names.
  cfg->ciphersuites_ = dot_ciphersuites();
  if (!offers_tls12(cfg->ciphersuites_)) {
    return fail(log::cat("this mbedTLS build (", tls_library_version(),
                         ") has none of the TLS 1.2 cipher suites nxdns offers (ECDHE with AES-GCM or "
                         "ChaCha20-Poly1305)"));
  }
  mbedtls_ssl_conf_ciphersuites(&cfg->conf_, cfg->ciphersuites_.data());
  // Session resumption (tls_session_cache.hpp): RFC 5077 tickets on TLS
  // 1.2 (the default on 2.28 and 3.x clients, asked for here so the intent
  // is explicit); TLS 1.3 tickets arrive through the signal enabled above.
  // Early data is never configured: no 0-RTT.
#if defined(MBEDTLS_SSL_SESSION_TICKETS)
  mbedtls_ssl_conf_session_tickets(&cfg->conf_, MBEDTLS_SSL_SESSION_TICKETS_ENABLED);
#endif
  // Key-exchange groups, cheapest first. mbedTLS 2.28's default list is
  // strongest-first (P-521 leads), so a server honouring our order would run
  // ECDHE on P-521: several times the CPU of X25519 for no gain at this
  // security level, paid on every one of a cold burst's parallel dials.
  // mbedTLS 3.x's TLS 1.3 client sends one key share, for the first group,
  // so the lead is whichever ECDHE this build computes cheaper. Stock
  // mbedTLS: P-256 (a key on the fixed base point, then one scalar
  // multiplication), cheaper than X25519's two Montgomery ladders in
  // mbedTLS's generic code; every TLS 1.3 server must implement it (RFC 8446
  // section 9.1). Built with Everest (scripts/mbedtls-fast-ecc.sh), whose
  // X25519 shared secret costs a fraction of the ladder: X25519, then
  // cheaper than P-256. Full and resumed (psk_dhe_ke) handshakes alike
  // (docs/performance.md, "Handshake CPU").
#if MBEDTLS_VERSION_MAJOR >= 3
#if defined(MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED)
  static const std::uint16_t groups[] = {MBEDTLS_SSL_IANA_TLS_GROUP_X25519, MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1,
                                         MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1, MBEDTLS_SSL_IANA_TLS_GROUP_NONE};
#else
  static const std::uint16_t groups[] = {MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, MBEDTLS_SSL_IANA_TLS_GROUP_X25519,
                                         MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1, MBEDTLS_SSL_IANA_TLS_GROUP_NONE};
#endif
  mbedtls_ssl_conf_groups(&cfg->conf_, groups);
#else
  static const mbedtls_ecp_group_id curves[] = {MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1,
                                                MBEDTLS_ECP_DP_SECP384R1, MBEDTLS_ECP_DP_NONE};
  mbedtls_ssl_conf_curves(&cfg->conf_, curves);
#endif
  return cfg;
}

bool TlsClientConfig::random(void* out, std::size_t n) {
  return mbedtls_ctr_drbg_random(&drbg_, static_cast<unsigned char*>(out), n) == 0;
}

std::string tls_library_version() {
  char buf[32] = {};
  mbedtls_version_get_string_full(buf);
  return buf;
}

bool tls13_available() {
#if MBEDTLS_VERSION_MAJOR >= 3 && defined(MBEDTLS_SSL_PROTO_TLS1_3)
  return true;
#else
  return false;
#endif
}

}  // namespace nxdns::upstream
