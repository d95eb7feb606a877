// The watcher's decisions under a fake clock and source, and its netlink
// following against a real kernel: in a network namespace the test creates
// on a thread of its own, so every interface, address and route it adds
// lives and dies there and the host's own network is never touched.
#include "route/home_network.hpp"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/fake_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "support/skipped_cases.hpp"

#include <CppUTest/TestHarness.h>

using namespace std::chrono_literals;
using nxdns::route::discover_home_network;
using nxdns::route::HomeNetwork;
using nxdns::route::HomeNetworkWatcher;

extern char** environ;

namespace {

HomeNetwork lan(const char* router, std::vector<std::string> zones) {
  HomeNetwork n;
  n.router = nxdns::net::make_endpoint(router, 53);
  n.interface = "eth0";
  n.reverse_zones = std::move(zones);
  return n;
}

bool has_zone(const HomeNetwork& n, const std::string& z) {
  for (const auto& s : n.reverse_zones)
    if (s == z) return true;
  return false;
}

std::string router_of(const HomeNetwork& n) { return n.router ? n.router->to_string() : "none"; }

// Runs a program and waits for it: its exit status, or -1 when it could
// not be started or did not exit.
int run(const std::vector<std::string>& args, const char* stdin_path = nullptr) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (stdin_path) posix_spawn_file_actions_addopen(&fa, 0, stdin_path, O_RDONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// What a scenario on the namespace's thread saw; checked on the test's
// own thread, since CppUTest's checks must not run on another.
struct Scenario {
  std::vector<std::string> failures;

  // Runs `ip` with `args`; a failure is recorded.
  void ip(const std::vector<std::string>& args, const char* stdin_path = nullptr) {
    std::vector<std::string> full{"ip"};
    full.insert(full.end(), args.begin(), args.end());
    if (run(full, stdin_path) == 0) return;
    std::string line;
    for (const auto& a : full) line += a + " ";
    failures.push_back("failed: " + line);
  }
  void expect(bool ok, const std::string& what) {
    if (!ok) failures.push_back(what);
  }
};

// Runs `body` on a thread that first enters a new network namespace; the
// namespace ends with the thread. Returns why it could not, or "". A thread
// and not the test's own: unshare moves only the calling thread, and the
// `ip` commands it starts inherit its namespace.
std::string in_own_network_namespace(Scenario& s, const std::function<void(Scenario&)>& body) {
  std::string why;
  std::thread t([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      why = nxdns::log::cat("cannot create a network namespace (unshare: ", std::strerror(errno), ")");
      return;
    }
    if (run({"ip", "link", "set", "lo", "up"}) != 0) {
      why = "ip (iproute2) does not run here";
      return;
    }
    body(s);
  });
  t.join();
  return why;
}

// A veth pair with both ends up (carrier on), the watched end without
// IPv6 autoconfiguration, so that no link-local address or its duplicate
// address detection announces itself in the middle of a scenario.
void add_link(Scenario& s) {
  s.ip({"link", "add", "nx0", "type", "veth", "peer", "name", "nx1"});
  s.ip({"link", "set", "nx0", "addrgenmode", "none"});
  s.ip({"link", "set", "nx1", "addrgenmode", "none"});
  s.ip({"link", "set", "nx0", "up"});
  s.ip({"link", "set", "nx1", "up"});
}

void report(const Scenario& s) {
  if (s.failures.empty()) return;
  std::string all;
  for (const auto& f : s.failures) all += f + "\n";
  FAIL(all.c_str());
}

}  // namespace

TEST_GROUP(HomeNetworkWatcher){};

TEST(HomeNetworkWatcher, PollingReReadsEveryMinuteAndReportsOnlyChanges) {
  nxdns::test::FakeScheduler sched;
  const HomeNetwork home = lan("192.168.1.1", {"1.168.192.in-addr.arpa"});
  HomeNetwork source = home;
  int looks = 0;
  std::vector<HomeNetwork> seen;
  HomeNetworkWatcher w(
      nullptr, sched, home, [&](const HomeNetwork& n) { seen.push_back(n); },
      [&] {
        ++looks;
        return source;
      },
      HomeNetworkWatcher::Follow::polling);
  CHECK_FALSE(w.follows_netlink());
  sched.advance(HomeNetworkWatcher::poll_period - 1s);
  CHECK_EQUAL(0, looks);
  sched.advance(1s);
  CHECK_EQUAL(1, looks);
  CHECK_EQUAL(0u, seen.size());  // the same network: nothing to tell
  // The lease moved to another router.
  source = lan("10.0.0.1", {"10.in-addr.arpa"});
  sched.advance(HomeNetworkWatcher::poll_period);
  CHECK_EQUAL(2, looks);
  CHECK_EQUAL(1u, seen.size());
  CHECK(seen[0] == source);
  CHECK(w.current() == source);
  // Unchanged again, for several minutes.
  sched.advance(3 * HomeNetworkWatcher::poll_period);
  CHECK_EQUAL(5, looks);
  CHECK_EQUAL(1u, seen.size());
  // The router gone (the cable pulled): a change like any other.
  source = HomeNetwork{};
  sched.advance(HomeNetworkWatcher::poll_period);
  CHECK_EQUAL(2u, seen.size());
  CHECK_FALSE(seen[1].router.has_value());
}

// A change between the caller's discovery and the subscription announced
// itself to nobody: the watcher looks once, a settling delay after it
// starts, and not every minute after.
TEST(HomeNetworkWatcher, NetlinkLooksOnceAfterSubscribing) {
  nxdns::loop::EventBasePtr base(event_base_new());
  nxdns::test::FakeScheduler sched;
  const HomeNetwork before = lan("192.168.1.1", {"1.168.192.in-addr.arpa"});
  const HomeNetwork after = lan("192.168.2.1", {"2.168.192.in-addr.arpa"});
  int looks = 0;
  std::vector<HomeNetwork> seen;
  HomeNetworkWatcher w(
      base.get(), sched, before, [&](const HomeNetwork& n) { seen.push_back(n); },
      [&] {
        ++looks;
        return after;
      });
  if (!w.follows_netlink()) SKIP_CASE("no rtnetlink socket here");
  sched.advance(HomeNetworkWatcher::settle_delay);
  CHECK_EQUAL(1, looks);
  CHECK_EQUAL(1u, seen.size());
  CHECK(seen[0] == after);
  // Following netlink, it does not poll.
  sched.advance(10 * HomeNetworkWatcher::poll_period);
  CHECK_EQUAL(1, looks);
}

TEST(HomeNetworkWatcher, NetlinkFollowsGatewayAndSubnetInOwnNamespace) {
  Scenario s;
  const std::string why = in_own_network_namespace(s, [](Scenario& s) {
    nxdns::loop::EventBasePtr base(event_base_new());
    nxdns::loop::LoopScheduler sched(base.get());
    nxdns::test::LoopDriver drive(base.get());
    int looks = 0;
    std::vector<HomeNetwork> seen;
    HomeNetworkWatcher w(
        base.get(), sched, discover_home_network(), [&](const HomeNetwork& n) { seen.push_back(n); },
        [&] {
          ++looks;
          return discover_home_network();
        });
    s.expect(w.follows_netlink(), "the watcher did not open its netlink socket");
    s.expect(!w.current().router, "a fresh namespace has a router: " + router_of(w.current()));
    add_link(s);
    // Let the look after subscribing, and what the link's setup announced,
    // pass before counting.
    s.expect(drive.until([&] { return looks >= 1; }, 5000), "no look after subscribing");
    drive.run_for(1500);

    // A lease in four commands, the loop running between them: without
    // settling, each would be a look of its own.
    const int looks_before = looks;
    const std::size_t seen_before = seen.size();
    s.ip({"addr", "add", "192.168.77.2/24", "dev", "nx0"});
    drive.run_for(20);
    s.ip({"addr", "add", "192.168.77.3/24", "dev", "nx0"});
    drive.run_for(20);
    s.ip({"route", "add", "default", "via", "192.168.77.1", "dev", "nx0"});
    drive.run_for(20);
    s.ip({"addr", "add", "192.168.77.4/24", "dev", "nx0"});
    s.expect(drive.until([&] { return !seen.empty() && seen.back().router; }, 5000),
             "the default route via 192.168.77.1 was not reported");
    drive.run_for(100);
    if (!seen.empty()) {
      const HomeNetwork& n = seen.back();
      s.expect(router_of(n) == "192.168.77.1:53", "router " + router_of(n));
      s.expect(n.interface == "nx0", "interface " + n.interface);
      s.expect(n.reverse_zones == std::vector<std::string>{"77.168.192.in-addr.arpa"},
               "zones after the lease: " + std::to_string(n.reverse_zones.size()));
      s.expect(w.current() == n, "current() is not the last network reported");
    }
    s.expect(looks - looks_before < 4, nxdns::log::cat("the burst of four changes took ", looks - looks_before,
                                                       " looks: settling did not gather them"));
    s.expect(seen.size() - seen_before >= 1, "nothing reported for the lease");

    // A ULA prefix: the IPv6 address group.
    const std::size_t seen_v6 = seen.size();
    s.ip({"-6", "addr", "add", "fd12:3456:789a:1::2/64", "dev", "nx0", "nodad"});
    s.expect(drive.until([&] { return seen.size() > seen_v6; }, 5000), "the ULA address was not reported");
    if (seen.size() > seen_v6)
      s.expect(has_zone(seen.back(), "1.0.0.0.a.9.8.7.6.5.4.3.2.1.d.f.ip6.arpa"), "no ULA zone");

    // A change that changes nothing here: looked at, not reported.
    const int looks_quiet = looks;
    const std::size_t seen_quiet = seen.size();
    s.ip({"addr", "add", "169.254.7.7/16", "dev", "nx0"});
    s.expect(drive.until([&] { return looks > looks_quiet; }, 5000), "no look after a link-local address");
    drive.run_for(50);
    s.expect(seen.size() == seen_quiet, "a link-local address was reported as a change");

    // The default route deleted: the router is gone, the subnets stay.
    s.ip({"route", "del", "default"});
    s.expect(drive.until([&] { return !seen.empty() && !seen.back().router; }, 5000),
             "the deleted default route was not reported");
    if (!seen.empty()) {
      s.expect(seen.back().interface.empty(), "an interface without a router");
      s.expect(has_zone(seen.back(), "77.168.192.in-addr.arpa"), "the subnet's zone went with the route");
    }

    // The interface set down: the kernel drops its IPv4 routes without a
    // route message, and its addresses no longer count. (Without the IPv6
    // address, whose removal would announce itself.)
    s.ip({"-6", "addr", "del", "fd12:3456:789a:1::2/64", "dev", "nx0"});
    s.ip({"route", "add", "default", "via", "192.168.77.1", "dev", "nx0"});
    s.expect(drive.until([&] { return !seen.empty() && seen.back().router && seen.back().reverse_zones.size() == 1; },
                         5000),
             "the default route added again was not reported");
    s.ip({"link", "set", "nx0", "down"});
    s.expect(drive.until([&] { return !seen.empty() && !seen.back().router; }, 5000),
             "the router on an interface set down was not reported gone");
    if (!seen.empty() && !seen.back().reverse_zones.empty())
      s.expect(false, "zones of an interface that is down: " + seen.back().reverse_zones.front());
  });
  if (!why.empty()) SKIP_CASE(why.c_str());
  report(s);
}

// A thousand addresses at once overflow the socket's receive buffer while
// the loop is not reading: the kernel drops messages and says ENOBUFS. The
// watcher looks again and goes on following.
TEST(HomeNetworkWatcher, NetlinkKeepsFollowingAfterOverflowInOwnNamespace) {
  char batch[] = "/tmp/nxdns-route-batch-XXXXXX";
  const int fd = mkstemp(batch);
  CHECK(fd >= 0);
  std::string text;
  for (int i = 0; i < 1000; ++i) text += nxdns::log::cat("addr add 10.77.", i / 250, '.', i % 250 + 1, "/16 dev nx0\n");
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    unlink(batch);
    FAIL("cannot write the batch file");
  }
  Scenario s;
  const std::string why = in_own_network_namespace(s, [&](Scenario& s) {
    nxdns::loop::EventBasePtr base(event_base_new());
    nxdns::loop::LoopScheduler sched(base.get());
    nxdns::test::LoopDriver drive(base.get());
    add_link(s);
    s.ip({"addr", "add", "192.168.77.2/24", "dev", "nx0"});
    s.ip({"route", "add", "default", "via", "192.168.77.1", "dev", "nx0"});
    std::vector<HomeNetwork> seen;
    HomeNetworkWatcher w(base.get(), sched, discover_home_network(), [&](const HomeNetwork& n) { seen.push_back(n); });
    s.expect(router_of(w.current()) == "192.168.77.1:53", "set-up router " + router_of(w.current()));
    drive.run_for(1200);  // the look after subscribing
    s.ip({"-batch", "-"}, batch);
    s.expect(drive.until([&] { return !seen.empty() && has_zone(seen.back(), "77.10.in-addr.arpa"); }, 5000),
             "the thousand addresses were not reported");
    s.expect(w.overflows() > 0, "the receive buffer did not overflow: the case did not test what it says");
    s.expect(w.follows_netlink(), "the watcher gave up netlink after an overflow");
    s.ip({"route", "del", "default"});
    s.expect(drive.until([&] { return !seen.empty() && !seen.back().router; }, 5000),
             "after the overflow, the deleted default route was not reported");
  });
  unlink(batch);
  if (!why.empty()) SKIP_CASE(why.c_str());
  report(s);
}
