#pragma once
// The seam between the pool and the wire. A Transport runs DNS exchanges
// against one upstream (DoT, DoH or plain DNS) on the event loop; the pool
// decides how many, in what order, and with what budget. The words used
// here and in the DoT transport (exchange, attempt, session, slot, copy,
// hedge, re-send, requeue, redial, fate, ...) are defined once, in the
// glossary of docs/architecture.md.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "dns/message.hpp"
#include "upstream/handshake_stats.hpp"
#include "upstream/pipelining_verdict.hpp"

namespace nxdns::upstream {

// Compiled, not configurable (sized against the field defect, README.md):
// a DoT entry keeps up to slots_per_entry TLS sessions open; a DoH entry
// lets curl open up to as many connections. One entry runs up to
// max_in_flight_per_entry exchanges at once (pipelined over its sessions, or
// as HTTP/2 streams); further callers, however many the listeners admit
// (server/limits.hpp), queue in the entry's exact FIFO under their budget.
inline constexpr std::size_t slots_per_entry = 8;
inline constexpr std::size_t max_in_flight_per_entry = 64;

// Why an exchange failed. Transports map their concrete errors onto these;
// the detail string keeps the concrete text for logs and episodes.
enum class Cause : std::uint8_t {
  ok = 0,
  // Connection lifecycle: the connection ended under the exchange. Only these
  // make a reused DoT session eligible for the one redial (retry_decision).
  eof,               // orderly TCP close
  tls_closed,        // TLS close_notify or truncated record stream
  connection_reset,  // ECONNRESET
  broken_pipe,       // EPIPE on send
  session_closed,    // the session was torn down under this exchange because a
                     // pipelined sibling failed validation or was cancelled
  // Dialing.
  connect_failed,    // refused, unreachable, dial timeout
  handshake_failed,  // TLS handshake did not complete (not a cert problem)
  certificate,       // chain, validity period or name check failed
  certificate_clock_behind,  // the only check that failed: the certificate's
                             // notBefore is after this host's clock (no RTC,
                             // no NTP yet); retried when the clock steps
  // The peer said or sent something wrong.
  tls_protocol,      // alert, bad record, unexpected message
  bad_response,      // not a valid answer to this query (QR, ID, question)
  response_too_large,
  http_status,       // DoH: non-2xx
  bad_content_type,  // DoH: not application/dns-message
  error_answer,      // a valid answer whose RCODE sends the query elsewhere
                     // (REFUSED, SERVFAIL, ...: answer_verdict.hpp). Set by
                     // the pool, never by a transport.
  // Ours.
  attempt_timeout,   // the pool's per-attempt budget ran out
  local_resource,    // fd limit, memory, socket() failed
  cancelled,         // the caller gave up (total budget, shutdown)
};
inline constexpr std::size_t cause_count = static_cast<std::size_t>(Cause::cancelled) + 1;

const char* describe(Cause c);  // stable snake_case, used as a metric label
bool is_connection_lifecycle(Cause c);

struct ExchangeResult {
  Cause cause = Cause::ok;
  // When cause == ok: the response, carrying the DNS ID of the query handed
  // to start(), and already validated against that query (the Completion
  // contract below).
  dns::Bytes response;
  // Concrete cause for logs and diagnostics ("mbedtls -0x7780: ...",
  // "HTTP 503"). Never contains query names.
  std::string detail;

  bool ok() const { return cause == Cause::ok; }
};

struct TransportStats {
  std::uint32_t open_sessions = 0;         // DoT sessions ready or draining; DoH live connections
  std::uint64_t connections_new = 0;       // dials that completed a handshake
  std::uint64_t exchanges_new = 0;         // exchanges that ran on a session dialed for them
  std::uint64_t exchanges_reused = 0;      // exchanges that ran on a session that already existed
  std::uint64_t redials = 0;               // one-redial attempts (retry_decision said retry)
  std::uint64_t reuse_recoveries = 0;      // redials whose exchange then succeeded
  std::string tls_version;                 // of the newest session, "" before the first
  // Exchanges placed again, without spending their redial, after a
  // connection that had answered others since they were placed closed
  // (RFC 7766 §6.2.4; servers limiting queries per connection), or after a
  // session ended before writing them (the server never saw them). DoT only.
  std::uint64_t requeued = 0;
  // TLS handshakes by kind (full / resumed) and their durations. DoT only.
  HandshakeStats handshakes{};
  // Exchanges sent a second time, on another session, because theirs proved
  // to answer one query at a time (at most once each). DoT only.
  std::uint64_t resent = 0;
  std::uint64_t hedged = 0;  // DoT: copies on a cold burst's first session up
  // DoT: dials made at once because every exchange since the upstream last
  // answered had failed or stalled (an outage: outage_watch.hpp).
  std::uint64_t outage_dials = 0;
  // Whether the upstream answers pipelined queries concurrently (learned
  // from its answers, forgotten after verdict_lifetime). DoT only.
  PipeliningVerdict pipelining = PipeliningVerdict::unknown;
};

class Transport {
 public:
  using ExchangeId = std::uint64_t;
  // The one validation of a forwarded answer. A completion with Cause::ok
  // delivers only a response that dns::validate_response accepted against
  // the query handed to start(): QR set, one question whose name equals the
  // query's case-insensitively (RFC 4343) and whose type and class are the
  // query's. The transport checked it against the query it put on the wire
  // (that query's question is start()'s, verbatim; its ID is the wire's own)
  // and then restored start()'s ID. Anything else never completes as ok:
  // the exchange fails with Cause::bad_response (a DoT session that carried
  // it closes: its stream is no longer trustworthy), or, for a UDP datagram
  // that is not the answer, the datagram is ignored and the exchange waits
  // for the real one.
  // Everything after the transport (the pool, the cache, the engine) relies
  // on this and does not check again. The records after the question are
  // not checked here: the cache and dns::answer_for_client walk them.
  using Completion = std::function<void(ExchangeResult&&)>;

  virtual ~Transport() = default;

  // Starts one exchange of `query` (a complete DNS message, no length
  // prefix). `done` runs exactly once, later, from the event loop, and never
  // from inside start() (callers rely on that to avoid re-entrancy), unless
  // cancel() comes first, in which case it never runs.
  virtual ExchangeId start(dns::ByteView query, Completion done) = 0;
  // Abandons an exchange. Its completion never runs. The transport treats
  // the connection carrying it as untrustworthy (mid-frame state unknown).
  virtual void cancel(ExchangeId id) = 0;
  // Closes every session (TLS close_notify where possible). Outstanding
  // exchanges complete with Cause::cancelled.
  virtual void close_all() = 0;
  virtual TransportStats stats() const = 0;
  // "dot", "doh" or "dns".
  virtual const char* kind() const = 0;

  // Capacity: how many exchanges this transport can actually run at once
  // (connections x the streams each may carry), the pool's admission cap
  // for the entry. Anything the pool admits beyond it would wait inside the
  // transport (e.g. in curl's pending list), invisible to the queue-depth
  // gauge and to the FIFO's fairness: the field defect's hidden queue. It
  // may shrink when the transport learns a limit (new admissions then wait
  // in the FIFO; exchanges already running are not disturbed) and grow;
  // when it grows the transport calls the listener so the pool pumps its
  // FIFO. Never above max_in_flight_per_entry, never below 1.
  virtual std::size_t capacity() const { return max_in_flight_per_entry; }
  void on_capacity_grew(std::function<void()> listener) { capacity_grew_ = std::move(listener); }

 protected:
  // For transports: call after capacity() increased. Never from inside
  // start() or cancel() (the pool may be in the middle of admitting).
  void capacity_grew() {
    if (capacity_grew_) capacity_grew_();
  }

 private:
  std::function<void()> capacity_grew_;
};

}  // namespace nxdns::upstream
