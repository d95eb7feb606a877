#pragma once
// The composition root: one event loop, the pool built from the config
// (slots_per_entry per enabled upstream, in priority order), the query
// engine, a UDP and a TCP listener per configured address, diagnostics fed
// by the pool's attempt reports, the HTTP surface (/metrics, /api/...) when
// http.enabled, signals.
//
// create() either returns a daemon with every listener bound and every
// transport built, or nothing at all: a bad config or a busy port never
// leaves half a daemon serving.
//
// reload() (SIGHUP, POST /api/reload from `nxdns reload`) has the same
// all-or-nothing shape: the file is read and fully validated, new
// transports are built and new listeners bound, and only then is anything
// changed (app/reload_plan.hpp says what). A bad file, or a port that will
// not bind, leaves the running daemon exactly as it was.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/blocking_service.hpp"
#include "app/reload_plan.hpp"
#include "app/transport_factory.hpp"
#include "cache/caching_pool.hpp"
#include "cache/persistence.hpp"
#include "config/config.hpp"
#include "diag/diagnostics.hpp"
#include "loop/clock_step.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "query/engine.hpp"
#include "query/lan_forwarders.hpp"
#include "route/home_network.hpp"
#include "server/limits.hpp"
#include "server/tcp_listener.hpp"
#include "server/udp_listener.hpp"
#include "upstream/pool.hpp"
#include "web/http_server.hpp"
#include "web/local_names.hpp"

namespace nxdns::app {

class Daemon {
  struct Key {};

 public:
  static std::unique_ptr<Daemon> create(const config::Config& cfg, const TransportFactory& factory, std::string* why);
  explicit Daemon(Key);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs the loop until a stop completes. Returns the process exit code.
  int run();
  // SIGTERM/SIGINT: stop accepting, drain in-flight queries up to the drain
  // deadline (answering SERVFAIL to any left), close every TLS session, and
  // leave the loop.
  void begin_shutdown(const char* why);

  struct ReloadResult {
    bool ok = false;
    // ok: the plan applied (app::describe). Otherwise the one-line reason,
    // for a config error "FILE:LINE:COL: KEY.PATH: MESSAGE".
    std::string message;
    std::vector<std::string> needs_restart;  // settings left as they were
  };
  // Re-reads the configuration it was started from (Config::source) and
  // applies it in place. `trigger` names the caller in the log ("SIGHUP",
  // "nxdns reload").
  ReloadResult reload(const char* trigger);
  // `nxdns run --log-level` wins over log.level, also after a reload.
  void keep_log_level(log::Level l) { log_level_override_ = l; }

  event_base* base() const { return base_.get(); }
  loop::Scheduler& scheduler() { return *sched_; }
  upstream::Pool& pool() { return *pool_; }
  // nullptr when http.enabled is false.
  const web::HttpServer* http() const { return http_.get(); }
  std::vector<net::Endpoint> udp_endpoints() const;
  std::vector<net::Endpoint> tcp_endpoints() const;
  web::LocalNamesStatus local_names_status() const;
  const BlockingService& blocking() const { return *blocking_; }

 private:
  void check_drained();
  void finish_shutdown();
  std::string apply_reload(config::Config next, const ReloadPlan& plan,
                           std::vector<upstream::EntrySpec> started,
                           std::vector<std::unique_ptr<server::UdpListener>> udp,
                           std::vector<std::unique_ptr<server::TcpListener>> tcp);
  void retire_listeners();
  // Builds the route table from `cfg` and the home network found, and
  // hands it to the engine (LAN groups started or kept). False, with `why`,
  // when the table cannot be built; nothing changes then.
  bool apply_routes(const config::Config& cfg, loop::Duration retire_after, std::string* why);
  void home_network_changed(const route::HomeNetwork& home);

  config::Config cfg_;
  TransportFactory factory_;
  std::optional<log::Level> log_level_override_;
  loop::EventBasePtr base_;
  std::unique_ptr<loop::LoopScheduler> sched_;
  // Before the pool: the pool reports every attempt to it.
  std::unique_ptr<diag::Diagnostics> diag_;
  std::unique_ptr<upstream::Pool> pool_;
  // Between the engine and the pool: destroyed after the engine, before the pool.
  std::unique_ptr<cache::CachingPool> cache_;
  // Reads and fills cache_: destroyed before it (its writer thread joined).
  std::unique_ptr<cache::CachePersistence> persist_;
  // Before the engine (its queries point into the LAN groups).
  std::unique_ptr<query::LanForwarders> lan_;
  std::unique_ptr<query::Engine> engine_;
  // home_router: auto only.
  std::optional<route::HomeNetwork> home_;
  std::unique_ptr<route::HomeNetworkWatcher> home_watch_;
  std::string home_router_text_;
  // Hands blocklist tables to the engine: destroyed before it (its builder
  // thread joined).
  std::unique_ptr<BlockingService> blocking_;
  // After the pool it resets (clock steps retry certificate checks).
  std::unique_ptr<loop::ClockStepWatcher> clock_watch_;
  server::ListenerState listener_state_;
  std::vector<std::unique_ptr<server::UdpListener>> udp_;
  std::vector<std::unique_ptr<server::TcpListener>> tcp_;
  // Listeners a reload removed: not reading, closed once their queries are
  // answered (after a total budget) and their TCP connections are gone.
  std::vector<std::unique_ptr<server::UdpListener>> retiring_udp_;
  std::vector<std::unique_ptr<server::TcpListener>> retiring_tcp_;
  std::unique_ptr<loop::Timer> retire_timer_;
  // Reads the pool, engine, listeners and diagnostics: torn down first.
  std::unique_ptr<web::HttpServer> http_;
  std::vector<loop::EventPtr> signals_;
  std::unique_ptr<loop::Timer> drain_deadline_;
  std::unique_ptr<loop::Timer> drain_poll_;
  bool shutting_down_ = false;
  loop::TimePoint started_at_{};
};

}  // namespace nxdns::app
