#include "upstream/tls_alert.hpp"

#include <mbedtls/ssl.h>
#include <mbedtls/version.h>

#include "log/log.hpp"

namespace nxdns::upstream {

std::string describe_alert(int description) {
  switch (description) {
    case MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE:
    case MBEDTLS_SSL_ALERT_MSG_INSUFFICIENT_SECURITY:
      // What a server says when nothing in the ClientHello suits it; on TLS
      // 1.2 the usual culprit is a server limited to static RSA or CBC
      // suites, which nxdns never offers (tls_ciphersuites.hpp).
      return log::cat(description == MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE ? "handshake_failure"
                                                                             : "insufficient_security",
                      " (", description,
                      "): the server accepts none of the offered cipher suites, groups or signature algorithms "
                      "(on TLS 1.2 nxdns offers only ECDHE with AES-GCM or ChaCha20-Poly1305)");
    case MBEDTLS_SSL_ALERT_MSG_PROTOCOL_VERSION:
      return log::cat("protocol_version (", description, "): the server speaks neither TLS 1.2 nor TLS 1.3");
    case MBEDTLS_SSL_ALERT_MSG_UNRECOGNIZED_NAME:
      return log::cat("unrecognized_name (", description, "): the server serves no certificate for tls_name");
    case MBEDTLS_SSL_ALERT_MSG_UNEXPECTED_MESSAGE: return log::cat("unexpected_message (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_BAD_RECORD_MAC: return log::cat("bad_record_mac (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_ILLEGAL_PARAMETER: return log::cat("illegal_parameter (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_DECODE_ERROR: return log::cat("decode_error (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_DECRYPT_ERROR: return log::cat("decrypt_error (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_INTERNAL_ERROR: return log::cat("internal_error (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_EXT: return log::cat("unsupported_extension (", description, ")");
    case MBEDTLS_SSL_ALERT_MSG_NO_APPLICATION_PROTOCOL:
      return log::cat("no_application_protocol (", description, ")");
    default: return log::cat("alert ", description);
  }
}

std::optional<int> received_alert(const mbedtls_ssl_context& ssl) {
  // mbedTLS leaves the alert record it refused in the input buffer and has
  // no accessor for it on any version; 3.x marks the fields private, and
  // MBEDTLS_PRIVATE names them on every 3.x.
#if MBEDTLS_VERSION_MAJOR >= 3
  const int type = ssl.MBEDTLS_PRIVATE(in_msgtype);
  const std::size_t len = ssl.MBEDTLS_PRIVATE(in_msglen);
  const unsigned char* msg = ssl.MBEDTLS_PRIVATE(in_msg);
#else
  const int type = ssl.in_msgtype;
  const std::size_t len = ssl.in_msglen;
  const unsigned char* msg = ssl.in_msg;
#endif
  // RFC 8446 §6: level, description.
  if (type != MBEDTLS_SSL_MSG_ALERT || len != 2 || msg == nullptr) return std::nullopt;
  return msg[1];
}

}  // namespace nxdns::upstream
