#pragma once
// What a TLS alert from an upstream means, for the operator who reads the
// failure: mbedTLS reports every received fatal alert as one error code
// (MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE), so "no cipher suite in common"
// and "unknown server name" would otherwise read the same.
#include <mbedtls/ssl.h>

#include <optional>
#include <string>

namespace nxdns::upstream {

// "handshake_failure (40): ..." — the alert's RFC 8446 §6 name and number,
// and for the alerts a client's offer provokes, what in the offer to
// suspect. Any other number reads "alert N".
std::string describe_alert(int description);

// The description of the fatal alert `ssl` just received, when its last
// failure was MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE; nullopt when the record
// it holds is not an alert.
std::optional<int> received_alert(const mbedtls_ssl_context& ssl);

}  // namespace nxdns::upstream
