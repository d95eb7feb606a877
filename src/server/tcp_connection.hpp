#pragma once
// One client TCP connection (RFC 7766): 2-byte framed queries, several in
// flight at once and answered in completion order, bounded everywhere so a
// slow or hostile client costs only its own connection.
#include <functional>
#include <memory>
#include <optional>
#include <unordered_set>

#include "loop/event_handles.hpp"
#include "loop/life_token.hpp"
#include "loop/scheduler.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"

namespace nxdns::server {

class TcpConnection {
 public:
  using Closed = std::function<void(TcpConnection*)>;

  // Takes ownership of `fd`. `on_closed` runs once, from the loop, after the
  // socket is gone; the owner then destroys this object.
  // `outside_access`: the client is outside access_control; its first
  // query is answered REFUSED (nothing is forwarded) and the connection then
  // closes. It holds a place in the refused clients' budget, not a share of
  // its own (the owner releases what this says).
  TcpConnection(event_base* base, loop::Scheduler& sched, loop::UniqueFd fd, query::Engine& engine, ListenerState& state,
                const ClientKey& client, bool outside_access, Closed on_closed);
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  bool ok() const { return static_cast<bool>(bev_); }
  std::size_t pending() const { return pending_.size(); }
  const ClientKey& client() const { return client_; }
  bool outside_access() const { return outside_access_; }
  // access_control, reloaded, no longer allows this client: from its next
  // query on it is served as one accepted outside it (one REFUSED, then
  // closed); queries admitted before are still answered. What it holds
  // (its client share) it keeps until it closes.
  void refuse_from_now() { refusing_ = true; }
  bool refusing() const { return refusing_; }
  // Shutdown drain: read no more queries; close once answers are out.
  void stop_reading() { finish("drained"); }

 private:
  void on_read();
  void on_write();
  void on_event(short what);
  void answer(query::Engine::QueryId id, dns::Bytes&& reply);
  void write_frame(dns::Bytes&& reply);
  void update_reading();
  void arm_idle();
  void close(const char* why);
  // Read no more queries; close once every answer owed is written.
  void finish(const char* why);
  // After the client's EOF: close once nothing is owed to it.
  void close_when_answered(const char* why);
  bool has_complete_frame() const;
  // Why this query must be answered REFUSED (access, rate), if it must.
  std::optional<Rejection> refusal();

  loop::Scheduler& sched_;
  query::Engine& engine_;
  ListenerState& state_;
  Closed on_closed_;
  ClientKey client_;
  bool outside_access_;
  bool refusing_;
  loop::BuffereventPtr bev_;
  loop::Timer idle_;
  loop::Timer closing_;
  std::unordered_set<query::Engine::QueryId> pending_;
  bool reading_stopped_ = false;
  bool draining_ = false;
  // The client half-closed (EOF): no more input, answers still owed.
  bool peer_done_writing_ = false;
  // Replies capture a watch of it; revoked when the connection closes, so a
  // reply after that (or after this object is gone) drops its answer.
  loop::LifeToken life_;
};

}  // namespace nxdns::server
