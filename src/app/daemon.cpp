#include "app/daemon.hpp"

#include <csignal>

#include "app/sd_notify.hpp"
#include "log/log.hpp"
#include "nxdns/version.hpp"
#include "web/surface.hpp"

namespace nxdns::app {

namespace {
cache::CacheOptions cache_options(const config::Config& cfg) {
  cache::CacheOptions o;
  o.max_bytes = cfg.cache.max_bytes;
  o.clamp = {cfg.cache.min_ttl, cfg.cache.max_ttl};
  o.prefetch = cfg.cache.prefetch;
  o.serve_stale = cfg.cache.serve_stale;
  o.stale_window = cfg.cache.stale_window;
  // No client waits longer than its total budget: neither does a flight.
  o.exchange_budget = cfg.budgets.total;
  return o;
}
}  // namespace

Daemon::Daemon(Key) {}

Daemon::~Daemon() {
  // Reverse of construction, explicitly: the HTTP surface (it reads
  // everything below), queries (no replies), the listeners that fed them,
  // the pool and its sessions, diagnostics, then the loop.
  http_.reset();
  if (engine_) engine_->cancel_all();
  drain_poll_.reset();
  drain_deadline_.reset();
  signals_.clear();
  tcp_.clear();
  udp_.clear();
  clock_watch_.reset();  // its timer lives on the scheduler
  engine_.reset();
  cache_.reset();
  pool_.reset();
  diag_.reset();
  sched_.reset();
  base_.reset();
}

std::unique_ptr<Daemon> Daemon::create(const config::Config& cfg, const TransportFactory& factory, std::string* why) {
  auto d = std::make_unique<Daemon>(Key{});
  d->cfg_ = cfg;
  d->base_.reset(event_base_new());
  if (!d->base_) {
    *why = "cannot create the event loop";
    return nullptr;
  }
  d->sched_ = std::make_unique<loop::LoopScheduler>(d->base_.get());
  d->started_at_ = d->sched_->now();

  std::vector<upstream::EntrySpec> entries;
  for (std::size_t i = 0; i < cfg.upstreams.size(); ++i) {
    const auto& u = cfg.upstreams[i];
    if (!u.enabled) continue;
    std::string err;
    auto t = factory(u, d->base_.get(), *d->sched_, &err);
    if (!t) {
      *why = log::cat("upstream ", i, " (", config::redact_url(u.url), "): ", err);
      return nullptr;
    }
    entries.push_back(upstream::EntrySpec{i, config::redact_url(u.url), u.priority, std::move(t)});
  }
  if (entries.empty()) {
    *why = "no enabled upstream";
    return nullptr;
  }
  d->diag_ = std::make_unique<diag::Diagnostics>(*d->sched_);
  upstream::PoolOptions po;
  po.attempt_budget = cfg.budgets.attempt;
  // Failure runs become episodes (one warn when one opens, one info when it
  // closes). The diagnostics object outlives the pool (member order).
  po.on_attempt = [diag = d->diag_.get()](const upstream::AttemptReport& r) { diag->on_attempt(r); };
  d->pool_ = std::make_unique<upstream::Pool>(*d->sched_, std::move(entries), std::move(po));
  if (cfg.cache.enabled) d->cache_ = std::make_unique<cache::CachingPool>(*d->sched_, *d->pool_, cache_options(cfg));
  d->engine_ =
      std::make_unique<query::Engine>(*d->sched_, *d->pool_, query::EngineOptions{cfg.budgets.total}, d->cache_.get());
  // A certificate check failed under a wrong clock (no RTC, NTP not there
  // yet) is retried as soon as the clock is set, not after the backoff.
  d->clock_watch_ = std::make_unique<loop::ClockStepWatcher>(*d->sched_, [pool = d->pool_.get()](loop::Duration step) {
    const auto reset = pool->clock_stepped();
    const double s = std::chrono::duration<double>(step).count();
    std::string which;
    for (const auto i : reset) which += log::cat(which.empty() ? "" : ", ", i);
    log::info("clock stepped by ", s > 0 ? "+" : "", s, " s; ",
              reset.empty() ? std::string("no upstream was failing a certificate check")
                            : log::cat("certificate checks retried now for upstream(s) ", which));
  });

  d->listener_state_.access = server::AccessControl(cfg.access_rules);
  d->listener_state_.clients = server::ClientLimits(server::default_client_limit_options(cfg.client_rate));
  for (const auto& ep : cfg.listen) {
    std::string err;
    auto u = server::UdpListener::open(d->base_.get(), ep, *d->engine_, d->listener_state_, &err);
    if (!u) {
      *why = err;
      return nullptr;
    }
    d->udp_.push_back(std::move(u));
    auto t = server::TcpListener::open(d->base_.get(), *d->sched_, ep, *d->engine_, d->listener_state_, &err);
    if (!t) {
      *why = err;
      return nullptr;
    }
    d->tcp_.push_back(std::move(t));
  }

  if (cfg.http.enabled) {
    web::Sources src;
    src.pool = d->pool_.get();
    src.engine = d->engine_.get();
    src.listeners = &d->listener_state_;
    src.diagnostics = d->diag_.get();
    src.cache = d->cache_.get();
    src.sched = d->sched_.get();
    src.started_at = d->started_at_;
    src.udp = d->udp_endpoints();
    src.tcp = d->tcp_endpoints();
    web::HttpServerOptions ho;
    ho.listen = cfg.http.listen;
    std::string err;
    d->http_ = web::HttpServer::start(d->base_.get(), ho, web::daemon_routes(std::move(src)), &err,
                                      web::daemon_post_routes(d->cache_.get()));
    if (!d->http_) {
      *why = err;
      return nullptr;
    }
  }

  // A client that vanishes mid-write must not kill the daemon: every write
  // reports EPIPE instead (socket code handles it as a closed peer). Set
  // before any socket can be written.
  std::signal(SIGPIPE, SIG_IGN);
  struct Handler {
    int sig;
    void (*on)(Daemon&);
  };
  static constexpr Handler handlers[] = {
      {SIGTERM, [](Daemon& d) { d.begin_shutdown("SIGTERM"); }},
      {SIGINT, [](Daemon& d) { d.begin_shutdown("SIGINT"); }},
      // SIGHUP's default action is to terminate: an operator (or a unit's
      // ExecReload) asking for a reload would take the household's DNS
      // down. Until reload exists it is said and ignored.
      {SIGHUP, [](Daemon&) { log::warn("SIGHUP: configuration reload is not implemented yet; ignoring SIGHUP "
                                        "(restart nxdns to apply a changed configuration)"); }},
  };
  for (const Handler& h : handlers) {
    loop::EventPtr ev(evsignal_new(
        d->base_.get(), h.sig,
        [](evutil_socket_t s, short, void* arg) {
          for (const Handler& x : handlers)
            if (x.sig == s) x.on(*static_cast<Daemon*>(arg));
        },
        d.get()));
    if (!ev || event_add(ev.get(), nullptr) != 0) {
      *why = "cannot install signal handlers";
      return nullptr;
    }
    d->signals_.push_back(std::move(ev));
  }
  return d;
}

std::vector<net::Endpoint> Daemon::udp_endpoints() const {
  std::vector<net::Endpoint> v;
  for (auto& l : udp_) v.push_back(l->local());
  return v;
}

std::vector<net::Endpoint> Daemon::tcp_endpoints() const {
  std::vector<net::Endpoint> v;
  for (auto& l : tcp_) v.push_back(l->local());
  return v;
}

int Daemon::run() {
  std::string where;
  for (auto& l : udp_) where += (where.empty() ? "" : ", ") + l->local().to_string();
  log::info("nxdns ", nxdns::version, " serving on ", where, " with ", pool_->entry_count(), " upstream(s)",
            http_ ? log::cat("; http on ", http_->local().to_string()) : std::string());
  sd_notify("READY=1");
  event_base_dispatch(base_.get());
  return 0;
}

void Daemon::begin_shutdown(const char* why) {
  if (shutting_down_) return;
  shutting_down_ = true;
  sd_notify("STOPPING=1");
  log::info("shutdown (", why, "): draining ", engine_->in_flight(), " in-flight queries");
  for (auto& l : udp_) l->stop_accepting();
  for (auto& l : tcp_) l->stop_accepting();
  // Every query already has its own total budget; the deadline is a
  // backstop a little past it.
  drain_deadline_ = std::make_unique<loop::Timer>(*sched_);
  drain_deadline_->arm(cfg_.budgets.total + std::chrono::milliseconds(500), [this] {
    log::warn("shutdown: drain deadline reached; answering SERVFAIL to ", engine_->in_flight(), " queries");
    engine_->fail_all();
    finish_shutdown();
  });
  drain_poll_ = std::make_unique<loop::Timer>(*sched_);
  check_drained();
}

void Daemon::check_drained() {
  std::size_t conns = 0;
  for (auto& l : tcp_) conns += l->connections();
  if (engine_->in_flight() == 0 && conns == 0) {
    finish_shutdown();
    return;
  }
  drain_poll_->arm(std::chrono::milliseconds(20), [this] { check_drained(); });
}

void Daemon::finish_shutdown() {
  drain_poll_->disarm();
  drain_deadline_->disarm();
  pool_->close_all();
  // Give close_notify alerts a turn of the loop to leave, then stop.
  event_base_loopexit(base_.get(), nullptr);
}

}  // namespace nxdns::app
