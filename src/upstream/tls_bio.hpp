#pragma once
// The C boundary of a DoT session: the send/recv callbacks mbedTLS calls to
// move ciphertext over a non-blocking socket, and the mapping of what they
// (and mbedTLS) report onto a Cause. Kept small and free of session state so
// that the cmocka suite can wrap send()/recv() with the linker's --wrap and
// inject EAGAIN, EOF, resets and broken pipes without a wire.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// What the callbacks remember about the socket between calls. mbedTLS only
// sees its own error codes; the errno that produced one is kept here so the
// failure can be classified precisely afterwards.
struct nxdns_tls_bio {
  int fd;
  int last_errno;  // errno of the last failed send/recv; 0 when none failed
  int peer_eof;    // recv() returned 0: the peer shut down its sending side
  // Non-zero while the TCP connect is still under way: send reports
  // MBEDTLS_ERR_SSL_WANT_WRITE without a syscall, so mbedTLS builds its
  // ClientHello (the key share's scalar multiplication) during the SYN
  // round trip and keeps it buffered until the connect completes.
  int hold_output;
};

// mbedtls_ssl_send_t: bytes sent, MBEDTLS_ERR_SSL_WANT_WRITE when the socket
// buffer is full or output is held, or MBEDTLS_ERR_NET_CONN_RESET / MBEDTLS_ERR_NET_SEND_FAILED
// (with last_errno set). EINTR is retried here; SIGPIPE is never raised.
int nxdns_tls_bio_send(void* ctx, const unsigned char* buf, size_t len);
// mbedtls_ssl_recv_t: bytes received, 0 at EOF (peer_eof set),
// MBEDTLS_ERR_SSL_WANT_READ when nothing is buffered, or
// MBEDTLS_ERR_NET_CONN_RESET / MBEDTLS_ERR_NET_RECV_FAILED (last_errno set).
int nxdns_tls_bio_recv(void* ctx, unsigned char* buf, size_t len);

#ifdef __cplusplus
}  // extern "C"

#include <string>

#include "upstream/transport.hpp"

namespace nxdns::upstream {

// What to do after an mbedtls_ssl_{handshake,read,write} return value.
enum class TlsStep : unsigned char {
  progress,    // >= 0 (for read: > 0): it did something
  again,       // call again right away (3.x: a TLS 1.3 NewSessionTicket was
               // consumed; the record layer may hold more, so waiting for
               // socket readiness could stall forever)
  want_read,   // wait until the socket is readable
  want_write,  // wait until the socket is writable
  failed,      // classify with classify_tls()
};
TlsStep tls_step(int ret);

enum class TlsPhase : unsigned char { handshake, established };

struct TlsFailure {
  Cause cause = Cause::ok;
  std::string detail;
};

// Maps a failed mbedTLS return (or 0 from mbedtls_ssl_read: EOF without
// close_notify) onto a Cause. During the handshake every transport or
// protocol failure is handshake_failed (a certificate problem stays
// certificate, an allocation failure local_resource); once established, the
// connection-lifecycle causes are kept apart because they decide the redial.
TlsFailure classify_tls(int ret, const nxdns_tls_bio& bio, TlsPhase phase);

// errno of a failed send/recv on an established connection.
Cause classify_io_errno(int err);
// errno of socket()/connect() or SO_ERROR after a non-blocking connect.
Cause classify_connect_errno(int err);

// "mbedtls -0x7880: SSL - The peer notified us that the connection is going
// to be closed".
std::string tls_error_text(int ret);

}  // namespace nxdns::upstream
#endif
