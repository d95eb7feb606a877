#include "app/daemon.hpp"

#include <time.h>

#include <csignal>

#include "app/list_resolver.hpp"
#include "app/route_inputs.hpp"
#include "app/sd_notify.hpp"
#include "log/log.hpp"
#include "nxdns/version.hpp"
#include "web/json.hpp"
#include "web/status.hpp"
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

query::LanOptions lan_options(const config::Config& cfg) {
  query::LanOptions o;
  o.cache = cache_options(cfg);
  // Off with the cache: a LAN server is asked every time.
  o.cache.max_bytes = cfg.cache.enabled ? query::lan_cache_bytes : 0;
  o.cache.clamp.max_negative = query::lan_max_negative_ttl;
  return o;
}

// systemd's reload protocol (Type=notify-reload, systemd 253): RELOADING=1
// with the CLOCK_MONOTONIC time the reload began, then READY=1 when done.
void notify_reloading() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const auto usec = static_cast<std::uint64_t>(ts.tv_sec) * 1000000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
  sd_notify(log::cat("RELOADING=1\nMONOTONIC_USEC=", usec));
}

// Binds a UDP and a TCP listener on each address, or none at all.
bool open_listeners(Daemon& d, event_base* base, const std::vector<net::Endpoint>& eps, query::Engine& engine,
                    server::ListenerState& state, std::vector<std::unique_ptr<server::UdpListener>>& udp,
                    std::vector<std::unique_ptr<server::TcpListener>>& tcp, std::string* why) {
  for (const auto& ep : eps) {
    auto u = server::UdpListener::open(base, ep, engine, state, why);
    if (!u) return false;
    udp.push_back(std::move(u));
    auto t = server::TcpListener::open(base, d.scheduler(), ep, engine, state, why);
    if (!t) return false;
    tcp.push_back(std::move(t));
  }
  return true;
}

// access_control has changed: it applies to connections already open too,
// so an address taken off the list is not served on for as long as its
// client keeps a connection alive (TcpListener::apply_access).
void apply_access_to_open_connections(const std::vector<std::unique_ptr<server::TcpListener>>& serving,
                                      const std::vector<std::unique_ptr<server::TcpListener>>& retiring) {
  for (const auto& l : serving) l->apply_access();
  for (const auto& l : retiring) l->apply_access();
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
  retire_timer_.reset();
  retiring_tcp_.clear();
  retiring_udp_.clear();
  tcp_.clear();
  udp_.clear();
  clock_watch_.reset();  // its timer lives on the scheduler
  home_watch_.reset();
  blocking_.reset();
  engine_.reset();
  lan_.reset();
  persist_.reset();
  cache_.reset();
  pool_.reset();
  diag_.reset();
  sched_.reset();
  base_.reset();
}

std::unique_ptr<Daemon> Daemon::create(const config::Config& cfg, const TransportFactory& factory, std::string* why) {
  auto d = std::make_unique<Daemon>(Key{});
  d->cfg_ = cfg;
  d->factory_ = factory;
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
  if (d->cache_ && !cfg.cache.persist_file.empty()) {
    // Before any listener exists: the first query already finds what the
    // last run knew (a boot without WAN answers known names).
    d->persist_ = std::make_unique<cache::CachePersistence>(
        *d->sched_, *d->cache_, cache::PersistOptions{cfg.cache.persist_file, cfg.cache.persist_interval});
    d->persist_->load();
    d->persist_->start();
  }
  d->engine_ =
      std::make_unique<query::Engine>(*d->sched_, *d->pool_, query::EngineOptions{cfg.budgets.total}, d->cache_.get());
  d->lan_ = std::make_unique<query::LanForwarders>(d->base_.get(), *d->sched_, lan_options(cfg));
  if (cfg.local.home_router.mode == config::HomeRouter::Mode::automatic) {
    d->home_ = route::discover_home_network();
    d->home_watch_ = std::make_unique<route::HomeNetworkWatcher>(
        d->base_.get(), *d->sched_, *d->home_,
        [daemon = d.get()](const route::HomeNetwork& home) { daemon->home_network_changed(home); });
  }
  if (!d->apply_routes(cfg, cfg.budgets.total, why)) return nullptr;
  // A list's host is resolved the household's way, through the engine.
  d->blocking_ = std::make_unique<BlockingService>(*d->sched_, *d->engine_, engine_resolver(*d->engine_));
  d->blocking_->apply(cfg.blocking);
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
  if (!open_listeners(*d, d->base_.get(), cfg.listen, *d->engine_, d->listener_state_, d->udp_, d->tcp_, why))
    return nullptr;

  if (cfg.http.enabled) {
    web::Sources src;
    src.pool = d->pool_.get();
    src.engine = d->engine_.get();
    src.listeners = &d->listener_state_;
    src.diagnostics = d->diag_.get();
    src.cache = d->cache_.get();
    src.persist = d->persist_.get();
    src.sched = d->sched_.get();
    src.started_at = d->started_at_;
    src.udp_now = [daemon = d.get()] { return daemon->udp_endpoints(); };
    src.tcp_now = [daemon = d.get()] { return daemon->tcp_endpoints(); };
    src.local_now = [daemon = d.get()] { return daemon->local_names_status(); };
    src.blocking_now = [daemon = d.get()] { return daemon->blocking().status(); };
    web::HttpServerOptions ho;
    ho.listen = cfg.http.listen;
    ho.allowed_hosts = cfg.http.allowed_hosts;
    std::string err;
    // The LAN servers' caches go with the main one.
    web::PostRoutes post = web::daemon_post_routes(d->cache_.get(), [lan = d->lan_.get()](const std::string* name) {
      return name ? lan->flush_name(*name) : lan->flush_all();
    });
    // `nxdns reload`: the answer says whether the file applied, and why not.
    post["/api/reload"] = [daemon = d.get()](const std::map<std::string, std::string>&) {
      const ReloadResult r = daemon->reload("nxdns reload");
      web::Response resp;
      resp.status = r.ok ? 200 : 422;
      resp.content_type = web::json_content_type;
      web::JsonWriter w;
      w.begin_object();
      w.key("reloaded").value(r.ok);
      w.key(r.ok ? "applied" : "error").value(r.message);
      if (r.ok) {
        w.key("needs_restart").begin_array();
        for (const auto& k : r.needs_restart) w.value(k);
        w.end_array();
      }
      w.end_object();
      resp.body = w.take();
      return resp;
    };
    d->http_ = web::HttpServer::start(d->base_.get(), ho, web::daemon_routes(std::move(src)), &err, std::move(post));
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
      // SIGHUP's default action is to terminate; here it reloads (`kill
      // -HUP`, `nxdns reload --pid`, or a unit with Type=notify-reload).
      {SIGHUP, [](Daemon& d) { d.reload("SIGHUP"); }},
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

bool Daemon::apply_routes(const config::Config& cfg, loop::Duration retire_after, std::string* why) {
  auto table = route::RouteTable::build(route_inputs(cfg, home_), why);
  if (!table) return false;
  lan_->adopt(*table, retire_after);
  engine_->set_routes(std::move(table), lan_.get());
  const std::string text = describe_home_router(cfg, home_);
  if (text != home_router_text_) log::info("route: home router ", text);
  home_router_text_ = text;
  return true;
}

web::LocalNamesStatus Daemon::local_names_status() const {
  web::LocalNamesStatus st;
  st.home_router = home_router_text_;
  const auto& table = engine_->routes();
  if (!table) return st;
  st.records = table->records().size();
  for (const auto& z : table->zones()) {
    if (z.kind != route::ZoneRoute::Kind::lan) ++st.zones_answered_here;
  }
  const auto& groups = lan_->groups();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    web::LanGroupStatus g;
    g.home_router = groups[i]->spec.home_router;
    for (const auto& z : table->zones()) {
      if (z.kind == route::ZoneRoute::Kind::lan && z.lan_group == i) g.zones.push_back(z.name);
    }
    g.servers = groups[i]->pool->snapshot();
    st.lan.push_back(std::move(g));
  }
  return st;
}

void Daemon::home_network_changed(const route::HomeNetwork& home) {
  home_ = home;
  std::string why;
  if (!apply_routes(cfg_, cfg_.budgets.total, &why)) log::error("route: the home network changed but ", why);
}

void Daemon::check_drained() {
  std::size_t conns = 0;
  for (auto& l : tcp_) conns += l->connections();
  for (auto& l : retiring_tcp_) conns += l->connections();
  if (engine_->in_flight() == 0 && conns == 0) {
    finish_shutdown();
    return;
  }
  drain_poll_->arm(std::chrono::milliseconds(20), [this] { check_drained(); });
}

void Daemon::finish_shutdown() {
  drain_poll_->disarm();
  drain_deadline_->disarm();
  // Nothing is served any more: the file is written on this thread, after
  // the last answer the drain let in was stored.
  if (persist_) persist_->save_before_exit();
  pool_->close_all();
  lan_->close_all();
  // Give close_notify alerts a turn of the loop to leave, then stop.
  event_base_loopexit(base_.get(), nullptr);
}

Daemon::ReloadResult Daemon::reload(const char* trigger) {
  ReloadResult res;
  if (shutting_down_) {
    res.message = "the daemon is shutting down";
    log::warn("reload (", trigger, ") refused: ", res.message);
    return res;
  }
  notify_reloading();
  // Reading a config file of a few hundred bytes on the loop: the same
  // validation as at start, including that every ca_file opens.
  auto reject = [&](std::string why) {
    res.message = std::move(why);
    log::error("reload (", trigger, "): configuration NOT applied, the daemon runs unchanged: ", res.message);
    sd_notify("READY=1");
    return res;
  };
  config::Config next;
  try {
    next = config::load_file(cfg_.source);
  } catch (const config::Error& e) {
    return reject(e.what());
  }
  const ReloadPlan plan = plan_reload(cfg_, next);
  // Everything that can fail happens before anything changes.
  std::vector<upstream::EntrySpec> started;
  for (const std::size_t i : plan.start) {
    const auto& u = next.upstreams[i];
    std::string err;
    auto t = factory_(u, base_.get(), *sched_, &err);
    if (!t) return reject(log::cat("upstream ", i, " (", config::redact_url(u.url), "): ", err));
    started.push_back(upstream::EntrySpec{i, config::redact_url(u.url), u.priority, std::move(t)});
  }
  // The records were checked by the loader; the table is built here so a
  // failure still changes nothing.
  {
    std::string err;
    if (!route::RouteTable::build(route_inputs(next, home_), &err)) return reject(err);
  }
  std::vector<std::unique_ptr<server::UdpListener>> udp;
  std::vector<std::unique_ptr<server::TcpListener>> tcp;
  std::string why;
  if (!open_listeners(*this, base_.get(), plan.open_listen, *engine_, listener_state_, udp, tcp, &why))
    return reject(why);
  res.ok = true;
  res.needs_restart = plan.needs_restart;
  res.message = apply_reload(std::move(next), plan, std::move(started), std::move(udp), std::move(tcp));
  log::info("reload (", trigger, "): applied ", cfg_.source, ": ", res.message);
  sd_notify("READY=1");
  return res;
}

std::string Daemon::apply_reload(config::Config next, const ReloadPlan& plan,
                                 std::vector<upstream::EntrySpec> started,
                                 std::vector<std::unique_ptr<server::UdpListener>> udp,
                                 std::vector<std::unique_ptr<server::TcpListener>> tcp) {
  // What cannot change in place stays as it runs, so the next reload
  // compares against the truth.
  for (const auto& k : plan.needs_restart) {
    // http.allowed_hosts is not among them: it applies in place below.
    if (k == "http.enabled" || k == "http.listen") {
      next.http.enabled = cfg_.http.enabled;
      next.http.listen = cfg_.http.listen;
    }
    if (k == "cache.enabled") next.cache = cfg_.cache;
    if (k == "cache.persist_file") next.cache.persist_file = cfg_.cache.persist_file;
    if (k == "cache.persist_interval") next.cache.persist_interval = cfg_.cache.persist_interval;
  }
  upstream::PoolChange change;
  for (const auto& k : plan.keep) change.keep.push_back({k.old_index, k.new_index, k.priority});
  change.drain = plan.drain;
  change.start = std::move(started);
  change.attempt_budget = next.budgets.attempt;
  change.on_drained = [](std::size_t index, const std::string& label) {
    log::info("reload: upstream ", index, " (", label, ") drained; its sessions are closed");
  };
  pool_->apply(std::move(change));
  engine_->set_total_budget(next.budgets.total);
  // Local names: zones, router, hosts files and records as the file says
  // now. The mode of home_router may change too: the watcher follows.
  if (next.local.home_router.mode == config::HomeRouter::Mode::automatic && !home_watch_) {
    home_ = route::discover_home_network();
    home_watch_ = std::make_unique<route::HomeNetworkWatcher>(
        base_.get(), *sched_, *home_, [this](const route::HomeNetwork& home) { home_network_changed(home); });
  } else if (next.local.home_router.mode != config::HomeRouter::Mode::automatic) {
    home_watch_.reset();
    home_.reset();
  }
  lan_->apply_options(lan_options(next));
  // Lists are read again (file lists re-read, URL lists from their copies).
  blocking_->apply(next.blocking);
  {
    std::string err;
    // Queries in flight keep the budget they started with.
    if (!apply_routes(next, std::max(cfg_.budgets.total, next.budgets.total), &err))
      log::error("reload: local names not applied: ", err);
  }
  // Admission rules apply to the next datagram or connection (and
  // access_control to open connections, below).
  listener_state_.access = server::AccessControl(next.access_rules);
  listener_state_.clients.set_rate(next.client_rate);
  // The Host names the web surface answers to apply to its next request.
  if (http_) http_->set_allowed_hosts(next.http.allowed_hosts);
  // The cache's flight budget follows budgets.total too.
  if (cache_ && (plan.cache_changed || plan.budgets_changed)) cache_->apply_options(cache_options(next));
  if (!log_level_override_) log::set_level(next.log_level);

  // Unchanged listeners are not touched: their sockets never stop reading.
  for (const auto& ep : plan.close_listen) {
    for (auto it = udp_.begin(); it != udp_.end(); ++it) {
      if (!((*it)->local() == ep)) continue;
      (*it)->stop_accepting();
      retiring_udp_.push_back(std::move(*it));
      udp_.erase(it);
      break;
    }
    for (auto it = tcp_.begin(); it != tcp_.end(); ++it) {
      if (!((*it)->local() == ep)) continue;
      (*it)->stop_accepting();
      retiring_tcp_.push_back(std::move(*it));
      tcp_.erase(it);
      break;
    }
  }
  for (auto& l : udp) udp_.push_back(std::move(l));
  for (auto& l : tcp) tcp_.push_back(std::move(l));
  apply_access_to_open_connections(tcp_, retiring_tcp_);
  if (!retiring_udp_.empty() || !retiring_tcp_.empty()) {
    if (!retire_timer_) retire_timer_ = std::make_unique<loop::Timer>(*sched_);
    // Every query that arrived on them has its answer (or SERVFAIL) by then.
    retire_timer_->arm(next.budgets.total + std::chrono::milliseconds(500), [this] { retire_listeners(); });
  }
  cfg_ = std::move(next);
  std::string said = describe(plan);
  for (const auto& ep : plan.open_listen) said += "; listening on " + ep.to_string();
  for (const auto& ep : plan.close_listen) said += "; stopped listening on " + ep.to_string();
  return said;
}

void Daemon::retire_listeners() {
  retiring_udp_.clear();
  for (auto it = retiring_tcp_.begin(); it != retiring_tcp_.end();) {
    if ((*it)->connections() == 0) it = retiring_tcp_.erase(it);
    else ++it;
  }
  // A TCP client still connected is served until it leaves (or its idle
  // timeout closes it).
  if (!retiring_tcp_.empty()) retire_timer_->arm(std::chrono::milliseconds(500), [this] { retire_listeners(); });
}

}  // namespace nxdns::app
