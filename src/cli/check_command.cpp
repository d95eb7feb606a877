// `nxdns check -c FILE [--offline]`: validate the configuration, then probe
// each enabled upstream exactly once, one after the other, and print a
// table. Exit 0 when every probe answered, 1 when any failed, 2 when the
// configuration is invalid. --offline stops after validation (and does not
// open ca_file paths, which may not exist where the config is built).
//
// Each probe runs on its own short-lived event loop with a one-slot
// transport (one session) and sends one query ("." NS). Its
// session is closed at the end of the iteration whatever happened: the
// transport lives in a scope of its own, a guard calls close_all() on every
// exit from that scope, and the success path calls it explicitly too. The
// predecessor leaked a live session into the next iteration; a probe that
// leaves a connection open on a production resolver is rude at best.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/transport_factory.hpp"
#include "cli/commands.hpp"
#include "config/config.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "upstream/dot_transport.hpp"

namespace nxdns::cli {

namespace {

constexpr std::uint16_t type_ns = 2;

struct Row {
  std::string upstream;
  std::string url;
  std::string transport;
  std::string tls = "-";
  std::string latency_ms = "-";
  std::string result;
  std::string reason;
  bool failed = false;
};

// Closes every session of a transport when the probe's scope ends, on every
// path out of it (early returns included).
class SessionCloser {
 public:
  explicit SessionCloser(upstream::Transport& t) : t_(t) {}
  ~SessionCloser() { t_.close_all(); }
  SessionCloser(const SessionCloser&) = delete;
  SessionCloser& operator=(const SessionCloser&) = delete;

 private:
  upstream::Transport& t_;
};

std::unique_ptr<upstream::Transport> probe_transport(const config::Upstream& u, event_base* base,
                                                     loop::Scheduler& sched, std::chrono::milliseconds budget,
                                                     std::string* why) {
  // As the daemon builds it, but with one session: a probe is one exchange.
  app::TransportLimits limits;
  limits.max_sessions = 1;
  limits.dial_timeout = budget;
  return app::default_transport_factory(limits)(u, base, sched, why);
}

std::string format_ms(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::chrono::duration<double, std::milli>(d).count());
  return buf;
}

Row probe(const config::Upstream& u, std::size_t index, std::chrono::milliseconds budget, std::uint16_t id) {
  Row row;
  row.upstream = std::to_string(index);
  row.url = config::redact_url(u.url);
  row.transport = u.protocol == config::Protocol::dot ? "dot" : "doh";
  auto fail = [&row](std::string reason) {
    row.result = "FAIL";
    row.reason = std::move(reason);
    row.failed = true;
    return row;
  };

  loop::EventBasePtr base(event_base_new());
  if (!base) return fail("cannot create an event loop");
  loop::LoopScheduler sched(base.get());
  // The completion writes these: declared before the transport so they
  // outlive it (a transport never runs a completion after it is gone, but
  // the order makes that obvious).
  bool done = false;
  upstream::ExchangeResult result;

  std::string why;
  std::unique_ptr<upstream::Transport> t = probe_transport(u, base.get(), sched, budget, &why);
  if (!t) return fail("cannot build the transport: " + why);
  SessionCloser closer(*t);

  const auto root = dns::name_from_text(".");
  const dns::Bytes query = dns::make_query(id, *root, type_ns, std::uint16_t{1232});
  bool timed_out = false;
  loop::Timer deadline(sched);
  deadline.arm(budget, [&timed_out] { timed_out = true; });
  const auto t0 = std::chrono::steady_clock::now();
  const auto xid = t->start(query, [&](upstream::ExchangeResult&& r) {
    result = std::move(r);
    done = true;
  });
  while (!done && !timed_out) {
    if (event_base_loop(base.get(), EVLOOP_ONCE) < 0) break;
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  deadline.disarm();
  row.tls = t->stats().tls_version.empty() ? "-" : t->stats().tls_version;

  if (!done) {
    // Cancelling a sent exchange closes its session (its stream position is
    // unknown); the guard's close_all() covers one still dialing.
    t->cancel(xid);
    return fail(log::cat(upstream::describe(upstream::Cause::attempt_timeout), ": no answer within ", budget.count(),
                         " ms"));
  }
  if (!result.ok()) {
    return fail(log::cat(upstream::describe(result.cause), result.detail.empty() ? "" : ": ", result.detail));
  }
  row.latency_ms = format_ms(took);
  const auto hdr = dns::parse_header(result.response);
  const unsigned rcode = hdr ? hdr->rcode() : 0xff;
  // NOERROR and NXDOMAIN both prove a working resolver; SERVFAIL or
  // REFUSED for the root zone mean it will not serve us.
  t->close_all();
  if (rcode != 0 && rcode != 3) {
    return fail(log::cat("answered with rcode ", rcode, rcode == 2 ? " (SERVFAIL)" : rcode == 5 ? " (REFUSED)" : ""));
  }
  row.result = "ok";
  row.reason = rcode == 0 ? "NOERROR" : "NXDOMAIN";
  return row;
}

void print_table(const std::vector<Row>& rows) {
  const char* heads[] = {"upstream", "url", "transport", "tls", "latency_ms", "result", "reason"};
  auto cells = [](const Row& r) {
    return std::vector<const std::string*>{&r.upstream, &r.url, &r.transport, &r.tls, &r.latency_ms, &r.result, &r.reason};
  };
  std::vector<std::size_t> w;
  for (const char* h : heads) w.push_back(std::string(h).size());
  for (const auto& r : rows) {
    const auto c = cells(r);
    for (std::size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i]->size());
  }
  std::string line;
  for (std::size_t i = 0; i < 7; ++i) {
    std::string h = heads[i];
    line += i + 1 < 7 ? h + std::string(w[i] - h.size() + 2, ' ') : h;
  }
  std::printf("%s\n", line.c_str());
  for (const auto& r : rows) {
    const auto c = cells(r);
    line.clear();
    for (std::size_t i = 0; i < c.size(); ++i) {
      line += i + 1 < c.size() ? *c[i] + std::string(w[i] - c[i]->size() + 2, ' ') : *c[i];
    }
    std::printf("%s\n", line.c_str());
  }
}

int check_command(const Parsed& p) {
  if (!p.has("config")) {
    std::fprintf(stderr, "nxdns check: --config FILE is required\n");
    return exit_usage;
  }
  const bool offline = p.has("offline");
  config::Config cfg;
  try {
    config::LoadOptions lo;
    lo.check_files = !offline;
    cfg = config::load_file(p.get("config"), lo);
  } catch (const config::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return exit_usage;
  }
  std::size_t enabled = 0;
  for (const auto& u : cfg.upstreams) enabled += u.enabled;
  std::printf("%s: configuration ok (%zu listen address(es), %zu upstream(s), %zu enabled)\n", cfg.source.c_str(),
              cfg.listen.size(), cfg.upstreams.size(), enabled);
  std::fflush(stdout);
  if (offline) return exit_ok;

  // The table carries each failure's reason; the transports' own warnings
  // would only repeat it on stderr.
  log::set_level(log::Level::error);
  std::mt19937 rng(std::random_device{}());
  std::vector<Row> rows;
  std::size_t failed = 0;
  for (std::size_t i = 0; i < cfg.upstreams.size(); ++i) {
    const auto& u = cfg.upstreams[i];
    if (!u.enabled) {
      Row r;
      r.upstream = std::to_string(i);
      r.url = config::redact_url(u.url);
      r.transport = u.protocol == config::Protocol::dot ? "dot" : "doh";
      r.result = "skipped";
      r.reason = "disabled";
      rows.push_back(std::move(r));
      continue;
    }
    // One probe, one scope: everything it opened is closed when probe()
    // returns, before the next upstream is dialed.
    rows.push_back(probe(u, i, cfg.budgets.attempt, static_cast<std::uint16_t>(rng())));
    failed += rows.back().failed;
  }
  print_table(rows);
  std::printf("%zu of %zu enabled upstream(s) answered\n", enabled - failed, enabled);
  return failed == 0 ? exit_ok : exit_failure;
}

constexpr OptionSpec check_options[] = {{"config", 'c', "FILE", "configuration file (YAML)"},
                                        {"offline", '\0', "", "validate only; no network"}};
}  // namespace

constinit const CommandSpec check_spec{"check",
                                       "validate the configuration, then probe each enabled upstream once",
                                       "nxdns check --config FILE [--offline]",
                                       check_options,
                                       "nxdns check -c /etc/nxdns/nxdns.yaml\n"
                                       "nxdns check --offline -c ./nxdns.yaml",
                                       0,
                                       check_command};

}  // namespace nxdns::cli
