// TlsDotSession (tls_dot_session.hpp): dialling, the exchanges a session carries
// (queue, RFC 7766 framing, pipelined writes, matching responses), idle
// handling and closing. The TLS handshake is in
// tls_dot_session_handshake.cpp.
#include "upstream/tls_dot_session.hpp"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include "log/log.hpp"

namespace nxdns::upstream {

namespace {

// One TLS record's worth of plaintext: several pipelined queries coalesce
// into one record (one segment with TCP_NODELAY) instead of one each.
constexpr std::size_t max_write_batch = 16384;
// Read granularity; whatever mbedTLS has decrypted is drained in a loop.
constexpr std::size_t read_chunk = 4096;
// Reads in a row that mbedTLS answers WANT_READ while holding unprocessed
// input (read_available()): one per held post-handshake message is enough.
constexpr int max_pending_rounds = 4;

// A close we choose, or a peer/stream fault that left the TLS layer intact,
// ends with our close_notify (RFC 8446 §6.1). A broken stream (EOF, reset,
// alert, bad record) does not: there is nobody to tell, or the record layer
// is no longer trustworthy.
bool polite_close(Cause c) {
  switch (c) {
    case Cause::ok:
    case Cause::tls_closed:
    case Cause::bad_response:
    case Cause::response_too_large:
    case Cause::session_closed:
    case Cause::cancelled:
    case Cause::attempt_timeout: return true;
    default: return false;
  }
}

std::string hex16(std::uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04X", v);
  return buf;
}

}  // namespace

template <class F>
void TlsDotSession::guarded(F&& fn) noexcept {
  // Every entry from the loop (socket events, timers) comes through here:
  // nothing may unwind into libevent's C frames. An exception here is an
  // allocation failure; the session it hit is closed as a local fault.
  const loop::LifeToken::Watch connection = connection_.watch();
  try {
    fn();
    return;
  } catch (const std::exception& e) {
    log::error("dot session ", index_, ": ", e.what());
  } catch (...) {
    log::error("dot session ", index_, ": unknown exception");
  }
  try {
    if (connection.alive() && open()) fail(Cause::local_resource, "internal error (out of memory?)");
  } catch (...) {
    if (connection.alive() && open()) (void)close(Cause::local_resource, {}, false);
  }
}

TlsDotSession::TlsDotSession(event_base* base, loop::Scheduler& sched, TlsClientConfig& tls, const DotSessionParams& params,
                       Listener& listener, std::size_t index)
    : base_(base),
      sched_(sched),
      tls_(tls),
      params_(params),
      listener_(listener),
      index_(index),
      dial_timer_(sched),
      idle_timer_(sched) {}

TlsDotSession::~TlsDotSession() {
  if (open()) (void)close(Cause::cancelled, {}, true);
}

std::chrono::milliseconds TlsDotSession::idle_limit() const {
  // RFC 7828 §3.2.2: the server's advertised idle timeout is when it will
  // close. Closing ourselves at ~80% of it means a reused session is almost
  // never one the server already dropped (the redial is for the rest).
  if (server_keepalive_ && *server_keepalive_ > 0) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(*server_keepalive_) * 100 * 8 / 10);
  }
  return params_.idle_timeout;
}

std::vector<TlsDotSession::Unanswered> TlsDotSession::unanswered() const {
  std::vector<Unanswered> out;
  out.reserve(load());
  std::vector<const Outstanding*> written;
  written.reserve(outstanding_.size());
  for (const auto& [wire_id, o] : outstanding_) written.push_back(&o);
  std::sort(written.begin(), written.end(), [](const Outstanding* a, const Outstanding* b) { return a->seq < b->seq; });
  for (const Outstanding* o : written) out.push_back(Unanswered{o->id, true, o->written_at});
  for (const auto& q : queued_) out.push_back(Unanswered{q.id, false, loop::TimePoint{}});
  return out;
}

bool TlsDotSession::wire_id_in_use(std::uint16_t wire_id) const {
  if (outstanding_.count(wire_id) != 0) return true;
  return std::any_of(queued_.begin(), queued_.end(), [&](const Queued& q) { return q.wire_id == wire_id; });
}

void TlsDotSession::deferred_failure(Cause cause, std::string detail) {
  // dial() never reports synchronously: the caller is in the middle of
  // placing an exchange and must not be re-entered.
  dial_timer_.arm(loop::Duration::zero(), [this, cause, detail = std::move(detail)]() mutable {
    guarded([&]() { fail(cause, std::move(detail)); });
  });
}

void TlsDotSession::dial() {
  if (state_ != SessionState::closed) return;
  state_ = SessionState::connecting;
  bio_ = nxdns_tls_bio{-1, 0, 0, 0};
  tls_version_.clear();
  server_keepalive_.reset();
  responses_ = 0;
  ++dial_count_;
  dialed_at_ = sched_.now();
  established_at_.reset();
  next_write_seq_ = 1;
  newest_answered_written_.reset();
  reordered_ = false;
  last_answer_at_.reset();
  last_answered_written_.reset();

  const int fd = ::socket(params_.address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    const int err = errno;
    deferred_failure(classify_connect_errno(err), log::cat("socket: ", std::strerror(err)));
    return;
  }
  fd_.reset(fd);
  bio_.fd = fd;
  // Queries are small and latency is the point; never wait to coalesce.
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

  read_ev_.reset(event_new(base_, fd, EV_READ | EV_PERSIST, &TlsDotSession::on_event, this));
  write_ev_.reset(event_new(base_, fd, EV_WRITE | EV_PERSIST, &TlsDotSession::on_event, this));
  if (!read_ev_ || !write_ev_) {
    deferred_failure(Cause::local_resource, "event_new failed");
    return;
  }

  mbedtls_ssl_init(&ssl_);
  ssl_live_ = true;
  int ret = mbedtls_ssl_setup(&ssl_, tls_.ssl_config());
  if (ret != 0) {
    deferred_failure(Cause::local_resource, log::cat("mbedtls_ssl_setup: ", tls_error_text(ret)));
    return;
  }
  // SNI and the name the certificate is checked against (RFC 8310 §8.1).
  ret = mbedtls_ssl_set_hostname(&ssl_, params_.tls_name.c_str());
  if (ret != 0) {
    deferred_failure(Cause::local_resource, log::cat("mbedtls_ssl_set_hostname: ", tls_error_text(ret)));
    return;
  }
  mbedtls_ssl_set_bio(&ssl_, &bio_, nxdns_tls_bio_send, nxdns_tls_bio_recv, nullptr);
  offer_ticket();

  if (::connect(fd, params_.address.sa(), params_.address.len) != 0 && errno != EINPROGRESS) {
    const int err = errno;
    deferred_failure(classify_connect_errno(err),
                     log::cat("connect to ", params_.address.to_string(), ": ", std::strerror(err)));
    return;
  }
  // The hello now if this turn's handshake step is free, else on a later
  // turn: a burst that dials several sessions computes their key shares one
  // loop turn apart, not all before the first hello can leave.
  if (handshake_turn(PacedStep::client_hello) && !start_client_hello()) return;
  dial_timer_.arm(params_.dial_timeout, [this]() {
    guarded([this]() {
      const bool tcp = state_ == SessionState::connecting;
      fail(tcp ? Cause::connect_failed : Cause::handshake_failed,
           log::cat(tcp ? "connect to " : "TLS handshake with ", params_.address.to_string(), " timed out after ",
                    params_.dial_timeout.count(), " ms"));
    });
  });
}

void TlsDotSession::enqueue(ExchangeId id, std::uint16_t wire_id, dns::StreamMessage wire_query) {
  queued_.push_back(Queued{id, wire_id, std::move(wire_query)});
  idle_timer_.disarm();
  // Written from the loop when the socket is writable (at once, normally):
  // never inside the caller's start(), so a write failure cannot re-enter it.
  if (established()) set_write_interest(true);
}

TlsDotSession::Withdraw TlsDotSession::withdraw(ExchangeId id) {
  for (auto it = queued_.begin(); it != queued_.end(); ++it) {
    if (it->id != id) continue;
    queued_.erase(it);
    if (load() == 0 && established()) {
      // Idle now. A draining session closes from the loop, not inside the
      // caller's cancel().
      const auto delay = state_ == SessionState::draining ? loop::Duration::zero() : loop::Duration(idle_limit());
      idle_timer_.arm(delay, [this]() { guarded([this]() { on_idle(); }); });
    }
    return Withdraw::removed;
  }
  for (const auto& [wire_id, o] : outstanding_) {
    if (o.id == id) return Withdraw::written;
  }
  return Withdraw::not_here;
}

SessionEnd TlsDotSession::close(Cause cause, std::string detail, bool send_close_notify) {
  SessionEnd end;
  end.cause = cause;
  end.detail = std::move(detail);
  end.was_established = established();
  end.partial_frame_pending = partial_frame_pending();
  end.responses = responses_;
  end.exchanges.reserve(load());
  for (const auto& [wire_id, o] : outstanding_) end.exchanges.push_back({o.id, true});
  for (const auto& q : queued_) end.exchanges.push_back({q.id, false});
  std::sort(end.exchanges.begin(), end.exchanges.end(),
            [](const SessionEnd::Carried& a, const SessionEnd::Carried& b) { return a.id < b.id; });

  if (send_close_notify && end.was_established && ssl_live_) {
    // Non-blocking: if the socket buffer is full the alert is simply lost;
    // the FIN that follows tells the server the same thing less politely.
    (void)mbedtls_ssl_close_notify(&ssl_);
  }
  write_armed_ = false;
  read_ev_.reset();
  write_ev_.reset();
  fd_.reset();
  if (ssl_live_) {
    mbedtls_ssl_free(&ssl_);
    ssl_live_ = false;
  }
  bio_ = nxdns_tls_bio{-1, 0, 0, 0};
  dial_timer_.disarm();
  idle_timer_.disarm();
  if (paced_ != PacedStep::none) params_.pacer->leave(*this);  // set only with a pacer
  paced_ = PacedStep::none;
  queued_.clear();
  outstanding_.clear();
  wbuf_.clear();
  woff_ = 0;
  rbuf_.clear();
  roff_ = 0;
  state_ = SessionState::closed;
  connection_.revoke();
  return end;
}

void TlsDotSession::fail(Cause cause, std::string detail, std::optional<ExchangeId> culprit) {
  SessionEnd end = close(cause, std::move(detail), polite_close(cause));
  end.culprit = culprit;
  listener_.on_session_closed(*this, std::move(end));
}

void TlsDotSession::on_idle() {
  if (!established() || load() != 0) return;
  const bool asked = server_keepalive_ && *server_keepalive_ == 0;
  SessionEnd end = close(Cause::ok,
                         asked ? std::string("server asked to close (edns-tcp-keepalive 0)")
                               : log::cat("idle for ", idle_limit().count(), " ms"),
                         true);
  listener_.on_session_closed(*this, std::move(end));
}

void TlsDotSession::set_write_interest(bool on) {
  if (!write_ev_ || on == write_armed_) return;
  if (on) {
    if (event_add(write_ev_.get(), nullptr) == 0) write_armed_ = true;
  } else {
    event_del(write_ev_.get());
    write_armed_ = false;
  }
}

bool TlsDotSession::handshake_turn(PacedStep step) {
  if (params_.pacer == nullptr || params_.pacer->take_turn(*this)) return true;
  paced_ = step;
  return false;
}

void TlsDotSession::on_handshake_turn() {
  guarded([this]() {
    const PacedStep step = std::exchange(paced_, PacedStep::none);
    if (step == PacedStep::client_hello && state_ == SessionState::connecting) {
      (void)start_client_hello();
    } else if (step == PacedStep::server_flight && state_ == SessionState::handshaking) {
      if (event_add(read_ev_.get(), nullptr) != 0) {
        fail(Cause::local_resource, "event_add failed");
        return;
      }
      (void)step_handshake();
    }
  });
}

void TlsDotSession::on_event(evutil_socket_t, short what, void* arg) {
  auto* self = static_cast<TlsDotSession*>(arg);
  self->guarded([self, what]() { self->handle(what); });
}

void TlsDotSession::handle(short what) {
  switch (state_) {
    case SessionState::connecting:
      if (what & EV_WRITE) finish_connect();
      return;
    case SessionState::handshaking:
      // The server's flight (or the rest of it): key agreement and the
      // certificate checks, the expensive part. Not now if another session's
      // step took this turn: the socket stays quiet until our turn.
      if (!handshake_step_is_cheap() && !handshake_turn(PacedStep::server_flight)) {
        event_del(read_ev_.get());
        set_write_interest(false);
        return;
      }
      (void)step_handshake();
      return;
    case SessionState::ready:
    case SessionState::draining: (void)pump(); return;
    case SessionState::closed: return;
  }
}

bool TlsDotSession::pump() {
  const loop::LifeToken::Watch connection = connection_.watch();
  if (!flush_writes()) return false;
  if (!read_available()) return false;
  // A read can unblock a write that waited on WANT_READ (TLS renegotiation
  // or post-handshake traffic); cheap when there is nothing to write.
  if ((!wbuf_.empty() || !queued_.empty()) && !flush_writes()) return false;
  if (!connection.alive()) return false;
  after_activity();
  return connection.alive();
}

bool TlsDotSession::flush_writes() {
  for (;;) {
    if (wbuf_.empty()) {
      if (queued_.empty() || outstanding_.size() >= max_outstanding_) break;
      woff_ = 0;
      const loop::TimePoint now = sched_.now();
      while (!queued_.empty() && outstanding_.size() < max_outstanding_) {
        Queued& q = queued_.front();
        if (!wbuf_.empty() && wbuf_.size() + 2 + q.query.size() > max_write_batch) break;
        // RFC 7766 §8: two-octet length, then the message.
        const auto prefix = q.query.prefix();
        wbuf_.insert(wbuf_.end(), prefix.begin(), prefix.end());
        wbuf_.insert(wbuf_.end(), q.query.message().begin(), q.query.message().end());
        // From here on the server may have it: withdraw() says `written`.
        outstanding_.emplace(q.wire_id, Outstanding{q.id, std::move(q.query).release(), now, next_write_seq_++});
        queued_.pop_front();
      }
    }
    // On WANT_WRITE mbedTLS has consumed part of the record; it must be
    // called again with the very same bytes, which wbuf_/woff_ preserve.
    const int ret = mbedtls_ssl_write(&ssl_, wbuf_.data() + woff_, wbuf_.size() - woff_);
    switch (tls_step(ret)) {
      case TlsStep::progress:
        if (ret == 0) {  // cannot happen for a non-empty buffer; never spin
          set_write_interest(true);
          return true;
        }
        woff_ += static_cast<std::size_t>(ret);
        if (woff_ >= wbuf_.size()) {
          wbuf_.clear();
          woff_ = 0;
        }
        continue;
      case TlsStep::again: continue;
      case TlsStep::want_write: set_write_interest(true); return true;
      case TlsStep::want_read: set_write_interest(false); return true;
      case TlsStep::failed: fail_tls(ret, TlsPhase::established); return false;
    }
  }
  set_write_interest(false);
  return true;
}

bool TlsDotSession::read_available() {
  std::uint8_t buf[read_chunk];
  int pending_rounds = 0;
  for (;;) {
    const int ret = mbedtls_ssl_read(&ssl_, buf, sizeof buf);
    if (ret > 0) {
      rbuf_.insert(rbuf_.end(), buf, buf + ret);
      if (!take_frames()) return false;
      continue;
    }
    if (ret == 0) {
      // 2.28: the transport closed without close_notify.
      fail_tls(0, TlsPhase::established);
      return false;
    }
    switch (tls_step(ret)) {
      case TlsStep::again:
        // A TLS 1.3 NewSessionTicket was consumed (3.x): export it now, the
        // only moment mbedtls_ssl_get_session() returns it. mbedTLS may
        // already hold the next record, which no readiness event would
        // announce: read again now rather than wait.
        ++tickets_received_;
        keep_ticket();
        continue;
      case TlsStep::want_read:
        // mbedTLS 3.x reads a TLS 1.3 NewSessionTicket, keeps it, and
        // returns WANT_READ before processing it on the next call: the
        // answers right behind it (a new connection's first) would wait a
        // loop turn for a readiness event, or for ever if nothing followed.
        // Whatever it holds unprocessed is taken now; a few rounds at most
        // (a stuck record layer must not spin the loop).
        if (mbedtls_ssl_check_pending(&ssl_) != 0 && ++pending_rounds <= max_pending_rounds) continue;
        return true;
      case TlsStep::want_write: set_write_interest(true); return true;
      case TlsStep::progress:
      case TlsStep::failed: fail_tls(ret, TlsPhase::established); return false;
    }
  }
}

bool TlsDotSession::take_frames() {
  while (rbuf_.size() - roff_ >= 2) {
    const std::size_t len = (static_cast<std::size_t>(rbuf_[roff_]) << 8) | rbuf_[roff_ + 1];
    if (len < dns::header_size) {
      fail(Cause::bad_response, log::cat("response frame of ", len, " bytes is shorter than a DNS header"));
      return false;
    }
    if (rbuf_.size() - roff_ - 2 < len) break;
    const dns::ByteView frame(rbuf_.data() + roff_ + 2, len);
    roff_ += 2 + len;
    if (!handle_frame(frame)) return false;
  }
  if (roff_ == rbuf_.size()) {
    rbuf_.clear();
    roff_ = 0;
  } else if (roff_ > 2 * read_chunk) {
    rbuf_.erase(rbuf_.begin(), rbuf_.begin() + static_cast<std::ptrdiff_t>(roff_));
    roff_ = 0;
  }
  return true;
}

bool TlsDotSession::handle_frame(dns::ByteView frame) {
  const std::uint16_t wire_id = dns::get_id(frame);
  const auto it = outstanding_.find(wire_id);
  if (it == outstanding_.end()) {
    // Nothing is ever cancelled while its session stays open, so no late
    // answer can be in flight: an unknown ID is a broken or hostile server,
    // and nothing it says on this session can be trusted any more.
    fail(Cause::bad_response, log::cat("response ID ", hex16(wire_id), " matches no outstanding query"));
    return false;
  }
  const dns::ResponseError err = dns::validate_response(it->second.query, frame);
  if (err != dns::ResponseError::none) {
    fail(Cause::bad_response, log::cat("response does not answer its query: ", dns::describe(err)), it->second.id);
    return false;
  }
  if (const auto ka = dns::edns_tcp_keepalive(frame)) server_keepalive_ = *ka;
  const ExchangeId id = it->second.id;
  // What the pipelining detector needs: when this query went out, when the
  // previous answer came, and whether an earlier-written one is still waiting.
  const std::uint64_t seq = it->second.seq;
  const loop::TimePoint now = sched_.now();
  last_answer_timing_ = AnswerTiming{it->second.written_at, now, last_answer_at_, false, reordered_, last_answered_written_};
  for (const auto& [other_wire_id, o] : outstanding_) {
    if (o.seq < seq) {
      last_answer_timing_.overtook = true;
      reordered_ = true;
      break;
    }
  }
  last_answer_at_ = now;
  last_answered_written_ = it->second.written_at;
  if (!newest_answered_written_ || it->second.written_at > *newest_answered_written_) {
    newest_answered_written_ = it->second.written_at;
  }
  outstanding_.erase(it);
  ++responses_;
  const loop::LifeToken::Watch connection = connection_.watch();
  listener_.on_session_response(*this, id, frame);
  return connection.alive();
}

void TlsDotSession::after_activity() {
  // RFC 7828 §3.3.2: a keepalive TIMEOUT of 0 asks the client to close the
  // connection as soon as it can; finish what is outstanding, take nothing.
  if (state_ == SessionState::ready && server_keepalive_ && *server_keepalive_ == 0) state_ = SessionState::draining;
  if (load() != 0) {
    idle_timer_.disarm();
    return;
  }
  if (state_ == SessionState::draining) {
    idle_timer_.arm(loop::Duration::zero(), [this]() { guarded([this]() { on_idle(); }); });
  } else if (!idle_timer_.armed()) {
    idle_timer_.arm(idle_limit(), [this]() { guarded([this]() { on_idle(); }); });
  }
}

}  // namespace nxdns::upstream
