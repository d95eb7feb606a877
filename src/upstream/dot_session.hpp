#pragma once
// What DotTransport sees of one DNS-over-TLS connection slot: dial it, hand
// it exchanges, take them back, close it, and read what it learned. The
// transport decides (placement, hedge, re-send, requeue, redial: see
// exchange_fate.hpp); the session carries bytes and reports to its
// Listener. TlsDotSession (tls_dot_session.hpp) is the one on the wire;
// the transport's scenario tests drive a scripted one on the fake clock.
//
// A session is a slot: it is dialed, lives, closes, and may be dialed
// again; the object itself never moves (the transport points at it by
// index, and the TLS session's ssl context and events point into it).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "dns/stream_message.hpp"
#include "loop/scheduler.hpp"
#include "upstream/pipelining_detector.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

enum class SessionState : std::uint8_t {
  closed,       // no socket
  connecting,   // TCP connect in progress
  handshaking,  // TLS handshake in progress
  ready,        // takes new exchanges
  draining,     // finishes what it carries, takes nothing new, then closes
};
const char* describe(SessionState s);

// How long a session may sit idle before we close it, when the server
// advertised no edns-tcp-keepalive timeout (RFC 7828) to go by.
inline constexpr std::chrono::milliseconds default_session_idle_timeout{30000};

// How a session ended, for the transport to settle what it carried.
struct SessionEnd {
  struct Carried {
    Transport::ExchangeId id;
    bool written;  // handed to TLS (possibly partially): the server may have it
  };
  // Why. Cause::ok for an orderly close we chose (idle timeout, keepalive).
  Cause cause = Cause::ok;
  std::string detail;
  // The session completed its handshake before it ended. When false this was
  // a fresh-dial failure.
  bool was_established = false;
  // Bytes of an incomplete response frame were buffered: some answer had
  // started to arrive, so no outstanding exchange is "untouched".
  bool partial_frame_pending = false;
  // When one exchange's own response was bad, that exchange (the others were
  // torn down with it: Cause::session_closed).
  std::optional<Transport::ExchangeId> culprit;
  // Valid responses this connection delivered before it ended (see
  // DotSession::responses()).
  std::uint64_t responses = 0;
  std::vector<Carried> exchanges;  // in placement order
};

class DotSession {
 public:
  using ExchangeId = Transport::ExchangeId;

  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void on_session_ready(DotSession& s) = 0;
    // A validated response (still carrying the wire ID) for `id`. The view
    // is valid during the call only: the listener copies what it keeps
    // (once, not twice per answer).
    virtual void on_session_response(DotSession& s, ExchangeId id, dns::ByteView response) = 0;
    // The session closed by itself (failure, peer close, idle timeout). It is
    // already `closed` and may be dialed again from inside this call.
    virtual void on_session_closed(DotSession& s, SessionEnd&& end) = 0;
  };

  // Destroying a session closes it quietly: no listener calls.
  virtual ~DotSession() = default;

  // closed -> connecting. Failures, even immediate ones, are reported later
  // from the loop through on_session_closed, never from inside dial().
  virtual void dial() = 0;
  // Queues a wire query (a complete DNS message whose ID is `wire_id`, no
  // length prefix) for writing. Allowed in connecting/handshaking/ready.
  // The type guarantees the length prefix can state its size.
  virtual void enqueue(ExchangeId id, std::uint16_t wire_id, dns::StreamMessage wire_query) = 0;
  // Takes an exchange back. `removed`: it never reached TLS and is gone;
  // `written`: it is (possibly partly) on the wire and was NOT removed — the
  // caller must close the session, since the stream position is unknown.
  enum class Withdraw { not_here, removed, written };
  virtual Withdraw withdraw(ExchangeId id) = 0;
  // Closes now without calling the listener. close_notify is attempted
  // (non-blocking, best effort) when established. Returns what it carried.
  virtual SessionEnd close(Cause cause, std::string detail, bool send_close_notify) = 0;

  virtual SessionState state() const = 0;
  bool open() const { return state() != SessionState::closed; }
  bool established() const { return state() == SessionState::ready || state() == SessionState::draining; }
  // Exchanges queued or outstanding: what placement balances on.
  virtual std::size_t load() const = 0;
  virtual bool wire_id_in_use(std::uint16_t wire_id) const = 0;
  // Part of a response frame has arrived and is waiting for the rest.
  virtual bool partial_frame_pending() const = 0;
  // The TLS version the current connection negotiated ("" before).
  virtual const std::string& tls_version() const = 0;
  // Valid responses delivered over the current connection (0 after dial()).
  // Lets the transport tell a server that closed a working connection from
  // one that never answered on it.
  virtual std::uint64_t responses() const = 0;
  // TLS 1.3 NewSessionTickets seen over this slot's lifetime.
  virtual std::uint64_t tickets_received() const = 0;
  virtual std::size_t index() const = 0;
  // Times this slot was dialled: tells one connection of the slot from the next.
  virtual std::uint64_t dial_count() const = 0;
  // The timing of the answer being delivered, valid inside
  // Listener::on_session_response (what the pipelining detector learns from).
  virtual const AnswerTiming& last_answer_timing() const = 0;
  // Exchanges not answered yet, in the order they were (or will be) written.
  struct Unanswered {
    ExchangeId id;
    bool written;
    loop::TimePoint written_at;  // meaningful when written
  };
  virtual std::vector<Unanswered> unanswered() const = 0;
  // When the current connection last delivered an answer.
  virtual std::optional<loop::TimePoint> last_answer_at() const = 0;
  // When the current connection was dialled, and when its handshake
  // completed (nullopt before).
  virtual loop::TimePoint dialed_at() const = 0;
  virtual std::optional<loop::TimePoint> established_at() const = 0;
  // When the current connection last showed the path works (its handshake
  // completed, or an answer came): with dialed_at(), what the outage rule
  // judges it by (outage_watch.hpp).
  std::optional<loop::TimePoint> alive_at() const {
    const auto up = established_at();
    const auto answered = last_answer_at();
    if (!up) return answered;
    if (!answered) return up;
    return std::max(*up, *answered);
  }
  // When the newest-written exchange this connection answered was written
  // (exchanges written in one batch share the time); nullopt before the first.
  virtual std::optional<loop::TimePoint> newest_answered_written() const = 0;
  // At most this many exchanges on the wire at once (the rest wait queued):
  // 1 for an upstream that leaves pipelined queries unanswered. Kept across
  // dials; unlimited by default.
  virtual void set_max_outstanding(std::size_t n) = 0;
  // Keepalive the server advertised on its last response (units of 100 ms).
  virtual std::optional<std::uint16_t> server_keepalive() const = 0;

 protected:
  DotSession() = default;

 public:
  DotSession(const DotSession&) = delete;
  DotSession& operator=(const DotSession&) = delete;
};

}  // namespace nxdns::upstream
