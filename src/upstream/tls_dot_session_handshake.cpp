// TlsDotSession's TLS handshake: from the finished TCP connect to a ready
// session — stepping mbedTLS one state at a time so a resumed handshake can
// be told from a full one, offering and keeping session tickets, and turning
// a failed handshake or certificate check into a cause and a detail an
// operator can act on. The exchanges a ready session carries are in
// tls_dot_session.cpp.
#include "upstream/tls_dot_session.hpp"

#include <errno.h>
#include <mbedtls/version.h>
#include <mbedtls/x509.h>
#include <mbedtls/x509_crt.h>
#include <string.h>
#include <sys/socket.h>

#include <cstring>

#include "log/log.hpp"
#include "upstream/certificate_time.hpp"
#include "upstream/tls_alert.hpp"

namespace nxdns::upstream {

namespace {


bool handshake_over(mbedtls_ssl_context& ssl) {  // 3.x takes it non-const
#if MBEDTLS_VERSION_MAJOR >= 3
  return mbedtls_ssl_is_handshake_over(&ssl) != 0;
#else
  return ssl.state == MBEDTLS_SSL_HANDSHAKE_OVER;
#endif
}

// mbedTLS has no public "was this handshake resumed" query. Its client state
// machine is the witness: a full handshake enters SERVER_CERTIFICATE (the
// chain is received and verified there); a resumed one never does — TLS 1.2
// jumps from ServerHello to ChangeCipherSpec (RFC 5077 §3.1), a TLS 1.3 PSK
// handshake from EncryptedExtensions to Finished (RFC 8446 §2.2). 3.x keeps
// the state private; MBEDTLS_PRIVATE names it on every 3.x.
bool certificate_expected(const mbedtls_ssl_context& ssl) {
#if MBEDTLS_VERSION_MAJOR >= 3
  return ssl.MBEDTLS_PRIVATE(state) == MBEDTLS_SSL_SERVER_CERTIFICATE;
#else
  return ssl.state == MBEDTLS_SSL_SERVER_CERTIFICATE;
#endif
}

// The client has sent its key exchange and Finished and waits only for the
// server's ChangeCipherSpec and Finished (a full TLS 1.2 handshake's second
// flight): a few hashes, no public-key arithmetic. Such a step is not paced:
// behind the other sessions' certificate checks it would hold back the one
// session nearest to carrying the burst. (A TLS 1.3 client reaches
// SERVER_FINISHED only after its certificate checks, also cheap from there.)
bool only_server_finished_left(const mbedtls_ssl_context& ssl) {
#if MBEDTLS_VERSION_MAJOR >= 3
  const int state = ssl.MBEDTLS_PRIVATE(state);
#else
  const int state = ssl.state;
#endif
  return state == MBEDTLS_SSL_SERVER_CHANGE_CIPHER_SPEC || state == MBEDTLS_SSL_SERVER_FINISHED;
}

}  // namespace

bool TlsDotSession::handshake_step_is_cheap() const { return only_server_finished_left(ssl_); }

TlsPeerIdentity TlsDotSession::peer_identity() const { return {params_.address.to_string(), params_.tls_name}; }

void TlsDotSession::offer_ticket() {
  ticket_offered_ = false;
  saw_certificate_ = false;
  handshake_kind_ = HandshakeKind::full;
  const TicketVerdict v = tls_.session_cache().offer(ssl_, peer_identity(), sched_.now());
  ticket_offered_ = v == TicketVerdict::offer;
}

void TlsDotSession::handshake_done() {
  // Offered and no certificate: the server took the ticket. Offered and a
  // certificate: it refused and ran a full handshake in the same attempt
  // (counted, not a failure).
  handshake_kind_ = ticket_offered_ && !saw_certificate_ ? HandshakeKind::resumed : HandshakeKind::full;
  tls_.handshake_stats().record(handshake_kind_, ticket_offered_, sched_.now() - tls_started_);
  // TLS 1.2 can be resumed from what the handshake itself agreed on (a
  // ticket or a session ID); TLS 1.3 tickets come later, from reads.
  //
  // Resuming a TLS 1.2 session offers TLS 1.2 only (mbedTLS 3.x, as RFC
  // 5246 §7.4.1.2 has it), and a server renews the ticket on every
  // resumption: kept, the renewed ticket would pin a TLS 1.3-capable build
  // to TLS 1.2 with an upstream that has since moved on. So on such a build
  // the session keeps the lifetime of its full handshake, after which a full
  // handshake offers TLS 1.3 again.
  if (tls_version_ == "TLSv1.3") return;
  if (tls13_available() && handshake_kind_ == HandshakeKind::resumed) return;
  keep_ticket();
}

void TlsDotSession::keep_ticket() { (void)tls_.session_cache().store(ssl_, peer_identity(), sched_.now()); }

bool TlsDotSession::build_client_hello() {
  // The SYN is out; its round trip is dead time on the loop. Building the
  // ClientHello now moves its cost (on TLS 1.3 the key share's X25519
  // scalar multiplication, several ms on a Pi) off the path between connect
  // and handshake, where the sessions of a cold burst would otherwise
  // compute theirs one after another once their connects completed
  // together. mbedTLS keeps the record buffered while the bio holds output,
  // and its next step flushes it first (finish_connect()).
  bio_.hold_output = 1;
  while (!handshake_over(ssl_)) {
    const int ret = mbedtls_ssl_handshake_step(&ssl_);
    switch (tls_step(ret)) {
      case TlsStep::progress:
      case TlsStep::again: continue;
      case TlsStep::want_write: return true;  // the hello, held
      case TlsStep::want_read: return true;   // nothing to hold: read once connected
      case TlsStep::failed: {
        // Nothing crossed the wire: this is local (the DRBG, memory), and
        // dial() reports only from the loop.
        const TlsFailure f = classify_tls(ret, bio_, TlsPhase::handshake);
        deferred_failure(f.cause, log::cat("TLS handshake with ", params_.address.to_string(), " (",
                                           params_.tls_name, "): ", f.detail));
        return false;
      }
    }
  }
  return true;
}

bool TlsDotSession::start_client_hello() {
  if (!build_client_hello()) return false;
  // Writable means the connect finished, one way or the other (SO_ERROR).
  set_write_interest(true);
  return true;
}

void TlsDotSession::finish_connect() {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    fail(classify_connect_errno(err), log::cat("connect to ", params_.address.to_string(), ": ", std::strerror(err)));
    return;
  }
  state_ = SessionState::handshaking;
  tls_started_ = sched_.now();
  bio_.hold_output = 0;  // the first step flushes the ClientHello built in dial()
  if (event_add(read_ev_.get(), nullptr) != 0) {
    fail(Cause::local_resource, "event_add failed");
    return;
  }
  set_write_interest(false);
  (void)step_handshake();
}

bool TlsDotSession::step_handshake() {
  // One state at a time (what mbedtls_ssl_handshake does in a loop), so that
  // the states the client passes through can be seen: see
  // certificate_expected().
  while (!handshake_over(ssl_)) {
    const int ret = mbedtls_ssl_handshake_step(&ssl_);
    if (certificate_expected(ssl_)) saw_certificate_ = true;
    switch (tls_step(ret)) {
      case TlsStep::progress:
      case TlsStep::again: continue;
      case TlsStep::want_read: set_write_interest(false); return true;
      case TlsStep::want_write: set_write_interest(true); return true;
      case TlsStep::failed: fail_tls(ret, TlsPhase::handshake); return false;
    }
  }
  dial_timer_.disarm();
  state_ = SessionState::ready;
  established_at_ = sched_.now();
  tls_version_ = mbedtls_ssl_get_version(&ssl_);
  handshake_done();
  const loop::LifeToken::Watch connection = connection_.watch();
  listener_.on_session_ready(*this);
  if (!connection.alive()) return false;
  return pump();
}

std::string TlsDotSession::certificate_detail() const {
  const std::uint32_t flags = mbedtls_ssl_get_verify_result(&ssl_);
  if (flags == 0 || flags == static_cast<std::uint32_t>(-1)) return "certificate verify failed";
  std::string named;
  auto add = [&](const std::string& s) {
    if (!named.empty()) named += ", ";
    named += s;
  };
  if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) add(log::cat("name mismatch (expected ", params_.tls_name, ")"));
  if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED) add(log::cat("chain not trusted by ", tls_.ca_source()));
  if (flags & MBEDTLS_X509_BADCERT_EXPIRED) add("certificate expired");
  if (flags & MBEDTLS_X509_BADCERT_FUTURE) add(not_yet_valid_detail());
  if (flags & MBEDTLS_X509_BADCERT_REVOKED) add("certificate revoked");

  char info[512] = {};
  const int n = mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
  std::string lines;
  if (n > 0) {
    // One line per flag; fold them into one log line.
    std::string raw(info, static_cast<std::size_t>(n));
    std::size_t pos = 0;
    while (pos < raw.size()) {
      std::size_t nl = raw.find('\n', pos);
      if (nl == std::string::npos) nl = raw.size();
      if (nl > pos) {
        if (!lines.empty()) lines += "; ";
        lines.append(raw, pos, nl - pos);
      }
      pos = nl + 1;
    }
  }
  if (named.empty()) return log::cat("certificate verify failed: ", lines);
  if (lines.empty()) return log::cat("certificate verify failed: ", named);
  return log::cat("certificate verify failed: ", named, " [", lines, "]");
}

void TlsDotSession::fail_tls(int ret, TlsPhase phase) {
  // A server that fails the handshake we offered its ticket in may be one
  // that chokes on tickets: the next dial must not offer it again.
  if (phase == TlsPhase::handshake && ticket_offered_) tls_.session_cache().forget();
  TlsFailure f = classify_tls(ret, bio_, phase);
  if (ret == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
    if (const auto alert = received_alert(ssl_)) {
      f.detail = log::cat("peer sent fatal TLS alert ", describe_alert(*alert), " [", tls_error_text(ret), "]");
    }
  }
  if (f.cause == Cause::certificate) {
    f.cause = certificate_cause_from_mbedtls_flags(mbedtls_ssl_get_verify_result(&ssl_));
    f.detail = certificate_detail();
  }
  if (phase == TlsPhase::handshake && f.cause != Cause::certificate && f.cause != Cause::certificate_clock_behind) {
    f.detail = log::cat("TLS handshake with ", params_.address.to_string(), " (", params_.tls_name, "): ", f.detail);
  }
  fail(f.cause, std::move(f.detail));
}

}  // namespace nxdns::upstream
