#pragma once
// DNS-over-TLS to one upstream (RFC 7858): up to slots_per_entry sessions,
// each pipelining several exchanges, placed so that load spreads over
// parallel connections instead of queueing behind one (the field defect's
// staircase), with the one-redial recovery of stale reused sessions.
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "upstream/dot_session.hpp"
#include "upstream/tls_config.hpp"
#include "upstream/completion_queue.hpp"
#include "upstream/transport.hpp"

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
  std::chrono::milliseconds dial_timeout{5000};   // TCP connect + TLS handshake
  std::chrono::milliseconds idle_timeout{30000};  // without a server keepalive
};

// Placement opens another session (when a slot is free) once every open one
// carries this many exchanges: deep enough that a warm burst pipelines on
// the sessions it has, shallow enough that an upstream answering each
// connection serially never builds a long line on one of them. 30 cold
// queries thus spread as 6 per session over 5 sessions dialed in parallel.
// The depth trades two measured costs (docs/performance.md, "Cold burst"):
// each parallel dial costs the daemon ~3.3 ms of handshake CPU (two ECDSA
// verifies and an X25519 exchange) at the same instant of a cold burst, while a serial
// upstream answers each session's line one query at a time. At 40 ms RTT,
// depth 4 (8 dials) cost a TLS 1.3 cold burst ~0.5 RTT more than depth 6;
// depth 8 (4 dials) left a 10 ms-per-query serial upstream at the limit.
inline constexpr std::size_t dot_spread_depth = 6;

class DotTransport final : public Transport, private DotSession::Listener {
 public:
  // Returns nullptr and a one-line reason (naming the upstream and the CA
  // source) instead of throwing when the TLS configuration cannot be built,
  // e.g. an unreadable ca_file, so startup can fail with that message.
  static std::unique_ptr<DotTransport> create(event_base* base, loop::Scheduler& sched,
                                              const DotTransportOptions& opts, std::string* error);

  DotTransport(event_base* base, loop::Scheduler& sched, const DotTransportOptions& opts,
               std::unique_ptr<TlsClientConfig> tls);
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
  // answering (see settle()); not redials, not failures.
  std::uint64_t requeued() const { return requeued_; }
  const DotTransportOptions& options() const { return opts_; }

 private:
  struct Exchange {
    Completion done;
    dns::Bytes query;  // as handed to start(): re-prepared with a new ID on redial
    std::uint16_t client_id = 0;
    DotSession* session = nullptr;
    bool reused = false;    // its session was established when it was placed
    bool redialed = false;  // its one redial is spent
    std::uint64_t answers_before = 0;  // its session's responses() when it was placed
  };

  void on_session_ready(DotSession& s) override;
  void on_session_response(DotSession& s, ExchangeId id, dns::Bytes&& response) override;
  void on_session_closed(DotSession& s, SessionEnd&& end) override;

  DotSession& choose_session();
  void place(ExchangeId id, Exchange& ex, DotSession& s);
  void settle(DotSession& s, SessionEnd&& end);
  void finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response = {});
  void report_dial_failure(const SessionEnd& end);

  event_base* base_;
  loop::Scheduler& sched_;
  DotTransportOptions opts_;
  // Declared before the sessions: their ssl contexts point into it.
  std::unique_ptr<TlsClientConfig> tls_;
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
  std::string tls_version_;

  std::string last_warn_;
  loop::TimePoint last_warn_at_{};
};

}  // namespace nxdns::upstream
