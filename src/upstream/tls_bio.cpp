#include "upstream/tls_bio.hpp"

#include <errno.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509.h>
#include <string.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>

#include "log/log.hpp"

extern "C" int nxdns_tls_bio_send(void* ctx, const unsigned char* buf, size_t len) {
  auto* bio = static_cast<nxdns_tls_bio*>(ctx);
  if (bio->hold_output) return MBEDTLS_ERR_SSL_WANT_WRITE;
  for (;;) {
    // MSG_NOSIGNAL: a peer that reset the connection must show up as EPIPE
    // here, not as a SIGPIPE that kills the daemon.
    const ssize_t n = send(bio->fd, buf, len, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<int>(n);
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return MBEDTLS_ERR_SSL_WANT_WRITE;
    bio->last_errno = err;
    return err == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_SEND_FAILED;
  }
}

extern "C" int nxdns_tls_bio_recv(void* ctx, unsigned char* buf, size_t len) {
  auto* bio = static_cast<nxdns_tls_bio*>(ctx);
  for (;;) {
    const ssize_t n = recv(bio->fd, buf, len, 0);
    if (n > 0) return static_cast<int>(n);
    if (n == 0) {
      bio->peer_eof = 1;
      return 0;  // mbedTLS turns this into MBEDTLS_ERR_SSL_CONN_EOF / a 0 read
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return MBEDTLS_ERR_SSL_WANT_READ;
    bio->last_errno = err;
    return err == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
  }
}

namespace nxdns::upstream {

TlsStep tls_step(int ret) {
  if (ret >= 0) return TlsStep::progress;
  switch (ret) {
    case MBEDTLS_ERR_SSL_WANT_READ: return TlsStep::want_read;
    case MBEDTLS_ERR_SSL_WANT_WRITE: return TlsStep::want_write;
#if defined(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
    case MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET: return TlsStep::again;
#endif
    default: return TlsStep::failed;
  }
}

std::string tls_error_text(int ret) {
  char buf[160];
  mbedtls_strerror(ret, buf, sizeof buf);
  char code[16];
  std::snprintf(code, sizeof code, "-0x%04X", static_cast<unsigned>(-ret));
  return log::cat("mbedtls ", code, ": ", buf);
}

Cause classify_io_errno(int err) {
  switch (err) {
    case EPIPE: return Cause::broken_pipe;
    case ECONNRESET:
    case ECONNABORTED:
    // The kernel gave up on the connection (retransmission or keepalive
    // timeout, route gone): like a reset, the connection is over; nothing
    // about it says the upstream misbehaved.
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case EHOSTDOWN: return Cause::connection_reset;
    default: return Cause::local_resource;  // ENOMEM, ENOBUFS, EBADF, ...
  }
}

Cause classify_connect_errno(int err) {
  switch (err) {
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
    case EADDRNOTAVAIL:  // no ephemeral port left
    case EAFNOSUPPORT:
    case EPERM:          // a local firewall / seccomp said no
    case EACCES: return Cause::local_resource;
    default: return Cause::connect_failed;  // ECONNREFUSED, ETIMEDOUT, unreachable, ...
  }
}

namespace {

std::string errno_text(const char* op, int err) { return log::cat(op, ": ", std::strerror(err)); }

}  // namespace

TlsFailure classify_tls(int ret, const nxdns_tls_bio& bio, TlsPhase phase) {
  TlsFailure f;
  const bool hs = phase == TlsPhase::handshake;
  auto lifecycle = [&](Cause c, std::string detail) {
    // A fresh dial whose connection ends during the handshake never became
    // a session: that is a handshake failure, not a stale-reuse symptom.
    f.cause = hs ? Cause::handshake_failed : c;
    f.detail = hs ? log::cat("during the TLS handshake: ", detail) : std::move(detail);
  };

  if (ret == 0 || ret == MBEDTLS_ERR_SSL_CONN_EOF) {
    lifecycle(Cause::eof, "connection closed by peer (EOF without close_notify)");
    return f;
  }
  switch (ret) {
    case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
      lifecycle(Cause::tls_closed, "peer sent TLS close_notify");
      return f;
    case MBEDTLS_ERR_NET_CONN_RESET:
    case MBEDTLS_ERR_NET_SEND_FAILED:
    case MBEDTLS_ERR_NET_RECV_FAILED: {
      const int err = bio.last_errno != 0 ? bio.last_errno : (ret == MBEDTLS_ERR_NET_CONN_RESET ? ECONNRESET : EIO);
      const char* op = ret == MBEDTLS_ERR_NET_RECV_FAILED ? "recv" : (ret == MBEDTLS_ERR_NET_SEND_FAILED ? "send" : "socket");
      const Cause c = classify_io_errno(err);
      if (c == Cause::local_resource) {
        f.cause = c;
        f.detail = errno_text(op, err);
      } else {
        lifecycle(c, errno_text(op, err));
      }
      return f;
    }
    case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
      f.cause = Cause::certificate;
      f.detail = "certificate verify failed";
      return f;
    case MBEDTLS_ERR_SSL_ALLOC_FAILED:
    case MBEDTLS_ERR_X509_ALLOC_FAILED:
      f.cause = Cause::local_resource;
      f.detail = tls_error_text(ret);
      return f;
    case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
      f.cause = hs ? Cause::handshake_failed : Cause::tls_protocol;
      f.detail = log::cat("peer sent a fatal TLS alert (", tls_error_text(ret), ")");
      return f;
    default:
      f.cause = hs ? Cause::handshake_failed : Cause::tls_protocol;
      f.detail = tls_error_text(ret);
      return f;
  }
}

}  // namespace nxdns::upstream
