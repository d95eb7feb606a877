#include "server/tcp_listener.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "log/log.hpp"
#include "server/bound_socket.hpp"
#include "server/tcp_admission.hpp"

namespace nxdns::server {

std::unique_ptr<TcpListener> TcpListener::open(event_base* base, loop::Scheduler& sched, const net::Endpoint& ep,
                                               query::Engine& engine, ListenerState& state, std::string* why) {
  auto l = std::make_unique<TcpListener>(Key{}, base, sched, engine, state);
  l->fd_ = bind_socket(ep, SOCK_STREAM, why);
  if (!l->fd_) return nullptr;
  l->local_ = local_endpoint(l->fd_.get());
  l->ev_.reset(event_new(
      base, l->fd_.get(), EV_READ | EV_PERSIST,
      [](evutil_socket_t, short, void* arg) { static_cast<TcpListener*>(arg)->on_acceptable(); }, l.get()));
  if (!l->ev_ || event_add(l->ev_.get(), nullptr) != 0) {
    if (why) *why = log::cat("cannot watch tcp ", ep.to_string(), ": libevent failure");
    return nullptr;
  }
  return l;
}

TcpListener::~TcpListener() {
  for (auto& [p, c] : conns_) forget(*c);
  conns_.clear();
}

void TcpListener::forget(const TcpConnection& c) {
  FamilyState& fam = state_.family(local_.family());
  if (fam.tcp_connections > 0) --fam.tcp_connections;
  if (c.outside_access()) {
    if (fam.tcp_refused_connections > 0) --fam.tcp_refused_connections;
  } else {
    state_.clients.release_tcp_connection(c.client());
  }
}

void TcpListener::on_acceptable() {
  // Bounded so one listener cannot monopolise the loop under a SYN flood.
  for (int i = 0; i < 32 && !stopped_; ++i) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    const int cfd =
        ::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      state_.reject(Rejection::accept_failed);
      log::warn("tcp ", local_.to_string(), ": accept: ", std::strerror(errno), "; pausing accepts");
      // EMFILE/ENFILE/ENOMEM leave the connection in the backlog and the
      // socket readable: pause instead of spinning the loop at 100% CPU.
      event_del(ev_.get());
      resume_.arm(accept_pause, [this] {
        if (!stopped_) event_add(ev_.get(), nullptr);
      });
      return;
    }
    loop::UniqueFd fd(cfd);
    FamilyState& fam = state_.family(local_.family());
    const auto* sa = reinterpret_cast<const sockaddr*>(&peer);
    const TcpAdmission admission =
        tcp_connection_admission(fam.tcp_connections, fam.tcp_refused_connections, state_.access.decide(sa));
    // Over the cap or the refused clients' budget: closed at once
    // (documented), so the client learns immediately instead of waiting
    // for a timeout.
    if (admission == TcpAdmission::over_cap) {
      state_.reject(Rejection::tcp_connection_cap);
      continue;
    }
    if (admission == TcpAdmission::over_refused_budget) {
      state_.reject(Rejection::tcp_refused_budget);
      continue;
    }
    // A client outside access_control is kept for its one REFUSED (like
    // over UDP) but never enters the client table.
    const bool outside = admission == TcpAdmission::refuse_once;
    const ClientKey client = client_key(sa);
    if (!outside) {
      const ClientVerdict v = state_.clients.admit_tcp_connection(client, sched_.now());
      if (v != ClientVerdict::admit) {
        // Closed at once, like past the cap: only this client is affected.
        state_.reject(v == ClientVerdict::over_share ? Rejection::tcp_client_share : Rejection::client_table_full);
        continue;
      }
    }
    auto conn = std::make_unique<TcpConnection>(base_, sched_, std::move(fd), engine_, state_, client, outside,
                                                [this](TcpConnection* c) { release(c); });
    if (!conn->ok()) {
      if (!outside) state_.clients.release_tcp_connection(client);
      state_.reject(Rejection::accept_failed);
      continue;
    }
    ++fam.tcp_connections;
    if (outside) ++fam.tcp_refused_connections;
    ++state_.tcp_accepted;
    TcpConnection* key = conn.get();
    conns_.emplace(key, std::move(conn));
  }
}

void TcpListener::release(TcpConnection* c) {
  auto it = conns_.find(c);
  if (it == conns_.end()) return;
  forget(*c);
  conns_.erase(it);
}

void TcpListener::apply_access() {
  for (auto& [p, c] : conns_) {
    const ClientKey& k = c->client();
    if (!c->refusing() && state_.access.decide(k.family, k.addr.data()) == Access::refuse) c->refuse_from_now();
  }
}

void TcpListener::stop_accepting() {
  stopped_ = true;
  resume_.disarm();
  if (ev_) event_del(ev_.get());
  // Safe to iterate: a connection that closes here only schedules its release.
  for (auto& [p, c] : conns_) c->stop_reading();
}

}  // namespace nxdns::server
