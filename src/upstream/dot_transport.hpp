#pragma once
// DNS-over-TLS to one upstream (RFC 7858): up to slots_per_entry sessions,
// each pipelining several exchanges. Placement (dot_placement.hpp) pipelines
// deep on an open session while the upstream is not known to be serial, and
// spreads over parallel connections once it is (the field defect's
// staircase); the pipelining detector learns which from the answers. With
// the one-redial recovery of stale reused sessions, the one re-send of
// exchanges a serial session is still holding, and fresh dials for the
// exchanges after an outage (outage_watch.hpp).
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "log/repeat_limiter.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "upstream/budgets.hpp"
#include "upstream/dot_placement.hpp"
#include "upstream/dot_session.hpp"
#include "upstream/exchange_fate.hpp"
#include "upstream/handshake_pacer.hpp"
#include "upstream/outage_watch.hpp"
#include "upstream/pipelining_detector.hpp"
#include "upstream/tls_config.hpp"
#include "upstream/completion_queue.hpp"
#include "upstream/transport.hpp"
#include "upstream/wire_id_batch.hpp"

struct event_base;

namespace nxdns::upstream {

struct DotTransportOptions {
  net::Endpoint address;  // IP literal and port: an upstream is never resolved
  std::string tls_name;   // SNI and certificate name
  std::optional<std::string> ca_file;  // PEM/DER anchors; system trust store when unset
  std::string label;      // redacted URL, for logs
  // How many of the slots may hold a session (1..slots_per_entry). The daemon
  // uses all of them; `nxdns check` probes with 1.
  std::size_t max_sessions = slots_per_entry;
  std::chrono::milliseconds dial_timeout = default_dial_timeout;  // TCP connect + TLS handshake
  std::chrono::milliseconds idle_timeout = default_session_idle_timeout;
};

// An upstream that asked a connection to close (edns-tcp-keepalive 0, RFC
// 7828 §3.3.2) keeps fewer connections: placement may hold at most what was
// left open then, one more per this long without another such request.
inline constexpr auto connection_cap_recovery = std::chrono::seconds(60);

class DotTransport final : public Transport, private DotSession::Listener {
 public:
  // Returns nullptr and a one-line reason (naming the upstream and the CA
  // source) instead of throwing when the TLS configuration cannot be built,
  // e.g. an unreadable ca_file, so startup can fail with that message.
  static std::unique_ptr<DotTransport> create(event_base* base, loop::Scheduler& sched,
                                              const DotTransportOptions& opts, std::string* error);

  DotTransport(event_base* base, loop::Scheduler& sched, const DotTransportOptions& opts,
               std::unique_ptr<TlsClientConfig> tls);
  // The session for slot `index`, reporting to `listener`.
  using SessionMaker = std::function<std::unique_ptr<DotSession>(std::size_t index, DotSession::Listener& listener)>;
  // Over sessions other than TLS ones (the scenario tests' scripted
  // sessions), with wire IDs from `ids`.
  DotTransport(loop::Scheduler& sched, const DotTransportOptions& opts, const SessionMaker& make,
               WireIdBatch::Fill ids);
  // Tears everything down without running a single completion.
  ~DotTransport() override;
  DotTransport(const DotTransport&) = delete;
  DotTransport& operator=(const DotTransport&) = delete;

  ExchangeId start(dns::ByteView query, Completion done) override;
  void cancel(ExchangeId id) override;
  void close_all() override;
  TransportStats stats() const override;
  const char* kind() const override { return "dot"; }

  // Introspection for tests and /api/health.
  std::size_t session_count() const { return sessions_.size(); }
  const DotSession& session(std::size_t i) const { return *sessions_.at(i); }
  std::size_t live_exchanges() const { return live_.size(); }
  // Exchanges placed again because the server closed a connection that was
  // answering, or a session ended before writing them (see settle()); not
  // redials, not failures.
  std::uint64_t requeued() const { return requeued_; }
  // Exchanges sent a second time on another session (at most once each)
  // because theirs proved serial; the first answer wins.
  std::uint64_t resent() const { return resent_; }
  // Exchanges copied onto the first session up of a cold burst while their
  // own were still handshaking, before any verdict (hedge_onto()).
  std::uint64_t hedged() const { return hedged_; }
  PipeliningVerdict verdict() const { return detector_.verdict(sched_.now()); }
  // Dials made because every exchange since the upstream last answered had
  // failed or stalled: the sessions from before were not trusted with the
  // next exchanges (outage_watch.hpp).
  std::uint64_t outage_dials() const { return outage_dials_; }
  bool outage_seen() const { return outage_.seen(); }
  // Handshake steps that waited for a later loop turn (handshake_pacer.hpp).
  std::uint64_t handshake_steps_deferred() const { return pacer_.deferred_total(); }
  // How many sessions placement may have open now (see connection_cap_recovery).
  std::size_t allowed_open() const;
  const DotTransportOptions& options() const { return opts_; }

 private:
  // What both public constructors share: everything but the sessions.
  DotTransport(loop::Scheduler& sched, const DotTransportOptions& opts, std::unique_ptr<TlsClientConfig>&& tls,
               WireIdBatch::Fill ids);
  void make_sessions(const SessionMaker& make);

  struct Exchange {
    Completion done;
    dns::Bytes query;  // the upstream query (prepare_upstream_query); each copy sets its wire ID
    std::uint16_t client_id = 0;
    // Where it is on the wire: one copy, or two on different sessions
    // (exchange_fate.hpp). Whichever answers first wins; the other copy's
    // answer, if it comes, is dropped.
    Copies copies;
    Spent spent;  // its second chances used (redial, re-send, hedge, unwritten re-placements)
    bool stall_counted = false;  // its stall was handed to the outage watch
  };

  void on_session_ready(DotSession& s) override;
  void on_session_response(DotSession& s, ExchangeId id, dns::ByteView response) override;
  void on_session_closed(DotSession& s, SessionEnd&& end) override;

  // Where the next exchange goes (dialling it and any background headroom);
  // nullptr only when `exclude` leaves no session.
  DotSession* choose_session(std::optional<std::size_t> exclude = std::nullopt);
  // Dials the headroom placement asked for since the loop's last turn.
  void dial_headroom();
  // Headroom waits for the first session up when the upstream pipelines.
  bool defer_headroom() const;
  void arm_headroom();
  // Sessions dialled or established and not draining: placement's "open".
  std::size_t sessions_open() const;
  void place(ExchangeId id, Exchange& ex, DotSession& s);
  std::optional<std::uint16_t> enqueue_copy(ExchangeId id, Exchange& ex, DotSession& s, std::string* why);
  void observe_answer(DotSession& s);
  void hedge_onto(DotSession& ready);
  void note_close_request(DotSession& s);
  void resend_serial_tails();
  bool add_duplicate(ExchangeId id, Exchange& ex, std::size_t exclude);
  void ensure_stall_check();
  void check_stalls();
  void resend_stalled(DotSession& s);
  void set_one_at_a_time(bool on);
  // A session other than `except` is up and can take exchanges.
  bool any_session_ready(const DotSession* except = nullptr) const;
  // Asks fate() (exchange_fate.hpp) what becomes of each exchange the
  // ended session carried, and does it.
  void settle(DotSession& s, SessionEnd&& end);
  void fail_carried(ExchangeId id, const CarriedCopy& carried, const SessionEnding& how, const SessionEnd& end);

  // The WAN outage rule (dot_transport_outage.cpp, outage_watch.hpp).
  SlotTrust trust(const DotSession& s) const;
  bool any_session_established() const;
  void note_failure(const char* what);
  void note_life(DotSession& s);
  void end_outage(DotSession& proof, loop::TimePoint since);
  // While an outage is seen: the session for the next exchange (a fresh
  // dial, made here when needed); nullptr when the usual placement applies.
  DotSession* outage_session(std::optional<std::size_t> exclude);
  // Closes a dial that never completed and returns the exchanges left with
  // no copy anywhere (none of its copies was written).
  std::vector<ExchangeId> release_dial(DotSession& s);
  // Moves the exchanges waiting on suspect dials onto `fresh`, and copies
  // there those with no copy on a session still trusted.
  void sweep_onto(DotSession& fresh);
  void schedule_sweep(DotSession& fresh);
  // Enqueues a copy on `to` without counting the exchange again (it was
  // counted where it was first placed): the copy to record, or nullopt
  // with no wire ID.
  std::optional<Copy> rehome(ExchangeId id, Exchange& ex, DotSession& to);
  void rehome_or_fail(ExchangeId id, Exchange& ex, DotSession& to);
  bool rescuable(const Exchange& ex) const;
  void check_outage();
  void finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response = {});
  void report_dial_failure(const SessionEnd& end);

  loop::Scheduler& sched_;
  DotTransportOptions opts_;
  // Declared before the sessions: their ssl contexts point into it. Null
  // under scripted sessions.
  std::unique_ptr<TlsClientConfig> tls_;
  // Wire IDs, drawn from tls_'s generator a batch at a time.
  WireIdBatch wire_ids_;
  // Declared before sessions_: it outlives them (a session leaves its line
  // when it closes, including in its destructor).
  HandshakePacer pacer_;
  // Fixed at construction, never resized: sessions are pinned (their
  // events and ssl contexts point into them) and exchanges point at them.
  std::vector<std::unique_ptr<DotSession>> sessions_;

  ExchangeId next_id_ = 1;
  std::unordered_map<ExchangeId, Exchange> live_;
  // Completions wait here for the loop: never run inside start()/cancel(),
  // nor inside a socket or curl callback.
  CompletionQueue completions_;

  std::uint64_t connections_new_ = 0;
  std::uint64_t exchanges_new_ = 0;
  std::uint64_t exchanges_reused_ = 0;
  std::uint64_t redials_ = 0;
  std::uint64_t reuse_recoveries_ = 0;
  std::uint64_t requeued_ = 0;
  std::uint64_t resent_ = 0;
  std::uint64_t hedged_ = 0;
  std::uint64_t outage_dials_ = 0;
  std::string tls_version_;

  PipeliningDetector detector_;
  // Keepalive-0 handling: the connection cap and when it was last lowered;
  // per slot, the dial whose close request was already counted.
  std::size_t connection_cap_ = slots_per_entry;
  loop::TimePoint cap_lowered_at_{};
  std::vector<std::uint64_t> close_request_seen_;
  // Stall watch (stall_deadline.hpp): runs while exchanges are live.
  loop::Timer stall_timer_;
  // Headroom waits for the loop's next turn: the burst that asked for it is
  // written on its session first, instead of behind a socket, a connect and
  // a TLS set-up (ticket included) per headroom session, all of which would
  // otherwise sit between the burst's last query in and its one write.
  // How many sessions should be open once it is dialled:
  std::size_t headroom_target_ = 0;
  loop::Timer headroom_timer_;
  // The upstream left pipelined queries unanswered: one query on the wire
  // per session until the verdict ages out.
  bool one_at_a_time_ = false;
  // Failures since the upstream last showed life; per slot, the dial whose
  // stall was counted; when the last dial for an outage was made.
  OutageWatch outage_;
  std::vector<std::uint64_t> dial_stall_seen_;
  std::optional<loop::TimePoint> last_outage_dial_;
  loop::Timer sweep_timer_;
  std::size_t sweep_slot_ = 0;
  std::uint64_t sweep_dial_ = 0;

  log::RepeatLimiter dial_warnings_;
};

}  // namespace nxdns::upstream
