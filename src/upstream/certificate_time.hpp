#pragma once
// Certificates rejected because this host's clock is behind them. A Pi has no
// RTC: until NTP sets the clock, an upstream certificate issued after the
// clock's floor is "not yet valid", and that failure must say so (log,
// /api/health, metrics) and be retried once the clock moves, instead of
// looking like a bad upstream for ever (hardware/clock.nix).
#include <cstdint>
#include <string>

#include "upstream/transport.hpp"

namespace nxdns::upstream {

// Pure. The Cause of a failed mbedTLS verification, from its flags
// (mbedtls_ssl_get_verify_result): certificate_clock_behind when "not yet
// valid" (MBEDTLS_X509_BADCERT_FUTURE, or a CRL's BADCRL_FUTURE) is the ONLY
// problem -- a clock that moves on would make it verify; certificate
// otherwise (with a name mismatch or an untrusted chain too, setting the
// clock would not help).
Cause certificate_cause_from_mbedtls_flags(std::uint32_t flags);

// Pure. The same for DoH, from curl's CURLINFO_SSL_VERIFYRESULT (OpenSSL's
// X509_V_ERR_* code of the failed check): X509_V_ERR_CERT_NOT_YET_VALID (9)
// and X509_V_ERR_CRL_NOT_YET_VALID (11) are the clock; 0 (unknown, or a TLS
// backend that does not report it) and everything else stay `certificate`.
Cause certificate_cause_from_openssl_result(long verify_result);

// "certificate not yet valid: this host's clock is behind its notBefore (is
// the clock set? ...)". No dates: the transports warn once per distinct
// line, and a line with the time in it would never repeat. (The
// certificate's own date is not at hand either: after a failed handshake
// mbedTLS keeps no peer certificate to read it from.)
std::string not_yet_valid_detail();

}  // namespace nxdns::upstream
