#pragma once
// Plain DNS over TCP on one address: accepts connections up to the
// per-family cap and owns them.
#include <map>
#include <memory>
#include <string>

#include "loop/event_handles.hpp"
#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"
#include "server/tcp_connection.hpp"

namespace nxdns::server {

class TcpListener {
  struct Key {};

 public:
  static std::unique_ptr<TcpListener> open(event_base* base, loop::Scheduler& sched, const net::Endpoint& ep,
                                           query::Engine& engine, ListenerState& state, std::string* why);
  TcpListener(Key, event_base* base, loop::Scheduler& sched, query::Engine& engine, ListenerState& state)
      : base_(base), sched_(sched), engine_(engine), state_(state), resume_(sched) {}
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  const net::Endpoint& local() const { return local_; }
  std::size_t connections() const { return conns_.size(); }
  // Shutdown drain: accept nothing more; let open connections finish.
  void stop_accepting();
  // After access_control changed (a reload): open connections from clients
  // it now refuses answer their next query REFUSED and close. Connections
  // accepted from refused clients stay refused (they close after one
  // REFUSED anyway; the client's next connection is judged afresh).
  void apply_access();
  void on_acceptable();

 private:
  void release(TcpConnection* c);
  // Gives back what an accepted connection holds: its place in the family's
  // count, and its client share or its place in the refused budget.
  void forget(const TcpConnection& c);

  event_base* base_;
  loop::Scheduler& sched_;
  query::Engine& engine_;
  ListenerState& state_;
  loop::UniqueFd fd_;
  loop::EventPtr ev_;
  loop::Timer resume_;
  net::Endpoint local_;
  bool stopped_ = false;
  std::map<TcpConnection*, std::unique_ptr<TcpConnection>> conns_;
};

}  // namespace nxdns::server
