// `nxdns demo`: the embedded default. Everything runs on 127.0.0.1: a
// throwaway PKI, a DoT upstream fixture behind a delay relay that simulates
// the network round trip, the daemon pointed at it, then a cold and a warm
// burst of unique names, their timelines, and a metrics excerpt.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/burst.hpp"
#include "cli/burst_gates.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "cli/http_get.hpp"
#include "loop/event_handles.hpp"
#include "upstream/tls_config.hpp"

namespace nxdns::cli {

namespace {

constexpr const char* tls_name = "dot.demo.test";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/nxdns-demo.XXXXXX";
    if (::mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty() && !std::getenv("NXDNS_DEMO_KEEP")) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::optional<std::uint16_t> wait_port_file(const std::string& path, ChildProcess& proc, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    std::ifstream f(path);
    unsigned port = 0;
    if (f >> port && port > 0 && port < 65536) return static_cast<std::uint16_t>(port);
    if (!proc.running()) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

// A port free for both UDP and TCP on 127.0.0.1, found by binding port 0.
std::optional<std::uint16_t> free_port() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    loop::UniqueFd u(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    auto ep = *net::make_endpoint("127.0.0.1", 0);
    if (::bind(u.get(), ep.sa(), ep.len) != 0) continue;
    sockaddr_in sin{};
    socklen_t len = sizeof sin;
    ::getsockname(u.get(), reinterpret_cast<sockaddr*>(&sin), &len);
    const std::uint16_t port = ntohs(sin.sin_port);
    loop::UniqueFd t(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    auto tep = *net::make_endpoint("127.0.0.1", port);
    if (::bind(t.get(), tep.sa(), tep.len) == 0) return port;
  }
  return std::nullopt;
}

// Ready means the TCP listener accepts: probing with a DNS query would warm
// an upstream session and spoil the cold burst.
bool wait_listening(const net::Endpoint& ep, ChildProcess& proc, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    loop::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (::connect(fd.get(), ep.sa(), ep.len) == 0) return true;
    if (!proc.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

void print_log_tail(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(f, line)) lines.push_back(line);
  const std::size_t from = lines.size() > 20 ? lines.size() - 20 : 0;
  std::fprintf(stderr, "---- %s\n", path.c_str());
  for (std::size_t i = from; i < lines.size(); ++i) std::fprintf(stderr, "%s\n", lines[i].c_str());
}

int fail(const std::string& msg, const std::string& log = "") {
  std::fprintf(stderr, "nxdns demo: %s\n", msg.c_str());
  if (!log.empty()) print_log_tail(log);
  return exit_failure;
}

// Judged by the acceptance gates (cli/burst_gates.cpp), the same ones the
// acceptance test and the VM test apply.
// Off the gates' workload (another --rtt-ms or --names) they are printed,
// not enforced.
bool print_burst(const char* title, const BurstReport& r, const BurstGate& gate, bool enforce) {
  std::printf("\n%s\n%s%s", title, render_timeline(r).c_str(), render_summary(r).c_str());
  const bool tls13 = upstream::tls13_available();
  const GateLimits l = gate_limits(gate, tls13);
  const Verdict v = enforce ? judge(r, l.max_ratio, l.max_staircase) : judge(r, std::nullopt, std::nullopt);
  std::printf("  %s\n  %s\n", describe_ratio(gate, tls13, r.ratio).c_str(),
              describe_staircase(gate, tls13, r.staircase).c_str());
  std::printf("  verdict: %s (gate %.*s: no SERVFAIL, no timeout%s)", v.pass ? "PASS" : "FAIL",
              static_cast<int>(gate.name.size()), gate.name.data(),
              enforce ? ", ratio and staircase as above" : "; ratio and staircase not enforced");
  for (const auto& s : v.reasons) std::printf(" [%s]", s.c_str());
  std::printf("\n");
  return v.pass;
}

int demo_command(const Parsed& p) {
  std::string error;
  auto rtt = int_option(p, "rtt-ms", 40, 0, 1000, &error);
  auto names = int_option(p, "names", 30, 1, 64, &error);
  if (!error.empty()) return fail(error);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  const std::string pki = find_helper_program("nxdns-test-pki");
  const std::string fixture = find_helper_program("nxdns-fixture-dot");
  const std::string relay = find_helper_program("nxdns-delay-relay");
  if (pki.empty() || fixture.empty() || relay.empty())
    return fail("the demo's fixture programs (nxdns-test-pki, nxdns-fixture-dot, nxdns-delay-relay) were not found "
                "next to nxdns; build them (scripts/demo.sh does) or set NXDNS_FIXTURE_DIR");
  TempDir dir;
  if (dir.path().empty()) return fail("cannot create a temporary directory");
  const std::string& d = dir.path();

  std::printf("nxdns demo: everything below runs on 127.0.0.1 (work dir %s)\n", d.c_str());
  std::printf("[1/5] throwaway test CA and a certificate for %s\n", tls_name);
  {
    ChildProcess mk;
    if (!mk.start({pki, "--out", d, "--name", tls_name}, d + "/pki.log", &error)) return fail(error);
    for (int i = 0; i < 500 && mk.running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (::access((d + "/server.key").c_str(), R_OK) != 0) return fail("test PKI was not created", d + "/pki.log");
  }

  ChildProcess fx;
  if (!fx.start({fixture, "--listen", "127.0.0.1:0", "--port-file", d + "/fixture.port", "--cert", d + "/server.pem",
                 "--key", d + "/server.key", "--stats-file", d + "/fixture.stats"},
                d + "/fixture.log", &error))
    return fail(error);
  auto fport = wait_port_file(d + "/fixture.port", fx, 5000);
  if (!fport) return fail("the DoT fixture did not start", d + "/fixture.log");
  ChildProcess rl;
  if (!rl.start({relay, "--listen", "127.0.0.1:0", "--to", "127.0.0.1:" + std::to_string(*fport), "--rtt-ms",
                 std::to_string(*rtt), "--port-file", d + "/relay.port"},
                d + "/relay.log", &error))
    return fail(error);
  auto rport = wait_port_file(d + "/relay.port", rl, 5000);
  if (!rport) return fail("the delay relay did not start", d + "/relay.log");
  std::printf("[2/5] DoT upstream fixture on 127.0.0.1:%u (answers every name), reached through a relay on "
              "127.0.0.1:%u that adds a %ld ms round trip and one more for each new connection\n",
              *fport, *rport, *rtt);

  auto dport = free_port();
  auto hport = free_port();
  if (!dport || !hport) return fail("no free loopback port");
  {
    std::ofstream cfg(d + "/nxdns.yaml");
    cfg << "# written by nxdns demo\n"
        << "listen:\n  - \"127.0.0.1:" << *dport << "\"\n"
        << "upstreams:\n  - url: \"tls://127.0.0.1:" << *rport << "\"\n    tls_name: \"" << tls_name << "\"\n"
        << "    ca_file: \"" << d << "/ca.pem\"\n"
        << "http:\n  listen: \"127.0.0.1:" << *hport << "\"\n"
        << "log:\n  level: info\n"
        // The demo's names live under "test", which RFC 6761 has a caching
        // server answer itself; and nothing of the demo leaves loopback.
        << "forward_special_zones: [test]\n"
        << "home_router: \"off\"\n";
  }
  ChildProcess daemon;
  if (!daemon.start({self_exe(), "run", "-c", d + "/nxdns.yaml"}, d + "/nxdns.log", &error)) return fail(error);
  const auto dns_ep = *net::make_endpoint("127.0.0.1", *dport);
  if (!wait_listening(dns_ep, daemon, 5000)) return fail("the daemon did not start", d + "/nxdns.log");
  if (!upstream::tls13_available())
    std::printf("      (this build's TLS library has no TLS 1.3: a new session costs one more round trip)\n");
  std::printf("[3/5] nxdns serving on 127.0.0.1:%u (UDP and TCP), one DoT upstream, /metrics on 127.0.0.1:%u\n",
              *dport, *hport);

  BurstOptions bo;
  bo.server = dns_ep;
  bo.names = static_cast<int>(*names);
  bo.zone = "demo.test";
  bo.cold = true;
  const bool gated = *rtt == gate_rtt_ms && *names == gate_names;
  if (!gated)
    std::printf("      (the gates were measured at %d ms and %d names: with these options they are shown, not "
                "enforced)\n",
                gate_rtt_ms, gate_names);
  auto cold = run_burst(bo, &error);
  if (!cold) return fail(error, d + "/nxdns.log");
  bool ok = print_burst("[4/5] cold burst: no TLS session exists yet (each new session costs the TCP and TLS round trips)",
                        *cold, *find_burst_gate("cold"), gated);
  bo.cold = false;
  auto warm = run_burst(bo, &error);
  if (!warm) return fail(error, d + "/nxdns.log");
  ok = print_burst("[5/5] warm burst: sessions are open and reused, queries pipelined over them", *warm,
                   *find_burst_gate("warm"), gated) &&
       ok;

  auto metrics = http_get(*net::make_endpoint("127.0.0.1", *hport), "/metrics", 2000);
  if (metrics && metrics->status == 200) {
    std::printf("\nmetrics excerpt (GET /metrics):\n");
    std::istringstream in(metrics->body);
    std::string line;
    // The series that tell the field defect's story: concurrency, the queue,
    // and session reuse.
    static const char* shown[] = {"nxdns_upstream_slots{",          "nxdns_upstream_in_flight{",
                                  "nxdns_upstream_queue_depth{",    "nxdns_upstream_queued_total{",
                                  "nxdns_upstream_queued_seconds_total{", "nxdns_upstream_open_sessions{",
                                  "nxdns_upstream_connections_total{",    "nxdns_upstream_exchanges_total{",
                                  "nxdns_upstream_reuse_recoveries_total{", "nxdns_upstream_tls_info{"};
    while (std::getline(in, line)) {
      for (const char* prefix : shown) {
        if (line.rfind(prefix, 0) == 0) {
          std::printf("  %s\n", line.c_str());
          break;
        }
      }
    }
  } else {
    std::printf("\nmetrics excerpt: /metrics did not answer on 127.0.0.1:%u\n", *hport);
  }
  const int rc = daemon.stop();
  std::printf("\ndaemon stopped with SIGTERM, exit status %d\n", rc);
  std::printf("demo %s\n", ok && rc == 0 ? "PASSED" : "FAILED");
  return ok && rc == 0 ? exit_ok : exit_failure;
}

constexpr OptionSpec demo_options[] = {{"rtt-ms", '\0', "MS", "simulated round trip to the upstream (default 40)"},
                                       {"names", 'n', "N", "names per burst (default 30)"}};
}  // namespace

constinit const CommandSpec demo_spec{
    "demo",
    "run the embedded demo on loopback: fixture upstream, daemon, cold and warm bursts",
    "nxdns demo [--rtt-ms MS] [--names N]",
    demo_options,
    "nxdns demo --rtt-ms 80",
    0,
    demo_command};

}  // namespace nxdns::cli
