#include "upstream/certificate_time.hpp"

#include <mbedtls/x509.h>

namespace nxdns::upstream {

namespace {

// X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CRL_NOT_YET_VALID (openssl/x509_vfy.h;
// stable values, spelled out so this file needs no OpenSSL headers).
constexpr long openssl_cert_not_yet_valid = 9;
constexpr long openssl_crl_not_yet_valid = 11;

}  // namespace

Cause certificate_cause_from_mbedtls_flags(std::uint32_t flags) {
  constexpr std::uint32_t clock = MBEDTLS_X509_BADCERT_FUTURE | MBEDTLS_X509_BADCRL_FUTURE;
  // -1 is mbedTLS's "no verification result" (handshake never got there).
  if (flags == static_cast<std::uint32_t>(-1)) return Cause::certificate;
  if ((flags & clock) != 0 && (flags & ~clock) == 0) return Cause::certificate_clock_behind;
  return Cause::certificate;
}

Cause certificate_cause_from_openssl_result(long verify_result) {
  if (verify_result == openssl_cert_not_yet_valid || verify_result == openssl_crl_not_yet_valid)
    return Cause::certificate_clock_behind;
  return Cause::certificate;
}

std::string not_yet_valid_detail() {
  return "certificate not yet valid: this host's clock is behind its notBefore (is the clock set? no RTC and no NTP"
         " yet; verification is retried when the clock steps)";
}

}  // namespace nxdns::upstream
