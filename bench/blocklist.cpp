// What a million-name blocklist costs nxdns (bench/blocklist.sh compares
// it with dnsmasq loading the same file):
//
//   nxdns-blocklist generate FILE N [hosts|domains]
//       writes N deterministic names, as a hosts list (with the header
//       entries published lists carry) or as a domain list;
//   nxdns-blocklist measure HOSTS_FILE [DOMAINS_FILE]
//       prints "key value" lines: the table's RSS added and the build's
//       peak (VmRSS/VmHWM of this process), build wall and CPU time,
//       ns per lookup (hits and misses; subtree lookups too with a domain
//       list), then the same list built again by block::TableBuilder on a
//       real libevent loop while the table is in use: the worst lateness
//       of a 10 ms loop::Timer during that build against the same timer
//       with nothing building, the time from request to the new table in
//       use, and the peak RSS of that swap over one table.
//
// Figures, not assertions: docs/how-to/blocking.md quotes them.
#include <event2/event.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "block/table_builder.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"

using namespace nxdns;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t splitmix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Words and suffixes of the shape ad and tracker names have: 2 to 5
// labels, 20 to 40 characters (a published hosts list averages ~25).
constexpr const char* words[] = {"ads",     "track",   "metrics", "pixel",   "stats",   "analytics", "beacon",
                                 "tag",     "cdn",     "click",   "banner",  "promo",   "adserver",  "telemetry",
                                 "collect", "events",  "log",     "measure", "insight", "sync",      "rtb",
                                 "bid",     "media",   "static",  "img",     "api",     "edge",      "counter"};
constexpr const char* suffixes[] = {"com", "net", "org", "io", "info", "de", "co.uk", "ru", "xyz", "top", "com.br",
                                    "fr",  "jp",  "cn",  "biz"};

std::string base36(std::uint64_t v) {
  std::string s;
  do {
    s += "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
    v /= 36;
  } while (v);
  return s;
}

template <std::size_t N>
const char* pick(const char* const (&a)[N], std::uint64_t r) {
  return a[r % N];
}

// Name i: unique for every i (its first label carries i after a '-' that
// no word contains).
std::string name_of(std::uint64_t i) {
  const std::uint64_t r = splitmix(i);
  std::string n;
  if (r % 3 == 0) n += std::string(pick(words, r >> 8)) + ".";
  n += std::string(pick(words, r >> 16)) + "-" + base36(i) + ".";
  n += std::string(pick(words, r >> 24)) + (r % 5 == 0 ? "-" + std::string(pick(words, r >> 32)) : "") + ".";
  n += pick(suffixes, r >> 40);
  return n;
}

int generate(const char* path, std::uint64_t n, bool hosts) {
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::perror(path);
    return 1;
  }
  if (hosts) {
    std::fputs("# A generated blocklist (bench/blocklist.cpp): deterministic names.\n"
               "127.0.0.1 localhost\n127.0.0.1 localhost.localdomain\n127.0.0.1 local\n"
               "255.255.255.255 broadcasthost\n::1 localhost\n::1 ip6-localhost ip6-loopback\n"
               "fe80::1%lo0 localhost\nff00::0 ip6-localnet\nff00::0 ip6-mcastprefix\nff02::1 ip6-allnodes\n"
               "ff02::2 ip6-allrouters\nff02::3 ip6-allhosts\n0.0.0.0 0.0.0.0\n\n# Start\n",
               f);
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    std::fprintf(f, hosts ? "0.0.0.0 %s\n" : "%s\n", name_of(i).c_str());
  }
  return std::fclose(f) == 0 ? 0 : 1;
}

struct Memory {
  long rss_kib = 0;
  long hwm_kib = 0;
};

Memory memory() {
  Memory m;
  std::ifstream in("/proc/self/status");
  std::string key;
  long v = 0;
  while (in >> key) {
    if (key == "VmRSS:" && in >> v) m.rss_kib = v;
    else if (key == "VmHWM:" && in >> v) m.hwm_kib = v;
  }
  return m;
}

// Linux 4.0+: "5" resets VmHWM to the current RSS, so each phase's peak is
// its own.
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

void put(const char* key, double v) { std::printf("%s %.3f\n", key, v); }

// Wire names, one after the other.
struct Queries {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint32_t> start;
  void add(const std::string& text) {
    const std::optional<dns::Bytes> w = dns::name_from_text(text);
    start.push_back(static_cast<std::uint32_t>(bytes.size()));
    bytes.insert(bytes.end(), w->begin(), w->end());
  }
  std::size_t size() const { return start.size(); }
  dns::ByteView operator[](std::size_t i) const {
    const std::size_t end = i + 1 < start.size() ? start[i + 1] : bytes.size();
    return dns::ByteView(bytes.data() + start[i], end - start[i]);
  }
};

double thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct LookupTime {
  double wall_ns = 0.0;  // per decide()
  double cpu_ns = 0.0;   // per decide(): this thread's CPU time, which other processes on the machine do not inflate
  std::size_t blocked = 0;
};

LookupTime time_lookups(const block::BlockTable& t, const Queries& q) {
  LookupTime out;
  const auto t0 = Clock::now();
  const double c0 = thread_cpu_ns();
  for (std::size_t i = 0; i < q.size(); ++i) out.blocked += t.decide(q[i]).verdict == block::Verdict::blocked;
  out.cpu_ns = (thread_cpu_ns() - c0) / static_cast<double>(q.size());
  out.wall_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(q.size());
  return out;
}

void put_lookups(const std::string& prefix, const LookupTime& hit, const LookupTime& miss) {
  put((prefix + "lookup_hit_ns").c_str(), hit.wall_ns);
  put((prefix + "lookup_hit_cpu_ns").c_str(), hit.cpu_ns);
  put((prefix + "lookup_miss_ns").c_str(), miss.wall_ns);
  put((prefix + "lookup_miss_cpu_ns").c_str(), miss.cpu_ns);
  put((prefix + "lookup_hit_blocked").c_str(), static_cast<double>(hit.blocked));
  put((prefix + "lookup_miss_blocked").c_str(), static_cast<double>(miss.blocked));
}

// Hits: listed names in a shuffled order (as queries come, unlike the
// file's). Misses: other names of the same shape; with `deeper`, one more
// label in front, as a subtree lookup sees www.<listed>.
Queries make_queries(std::uint64_t listed, std::size_t n, bool hits, bool deeper) {
  Queries q;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t r = splitmix(k + (hits ? 7 : 11));
    const std::uint64_t i = hits ? r % listed : listed + (r % listed);
    q.add((deeper ? "www." : "") + name_of(i));
  }
  return q;
}

std::shared_ptr<const block::BlockTable> build_once(const std::string& path, const char* prefix) {
  reset_peak();
  const Memory before = memory();
  block::BuildResult r = block::build_table({block::ListSource{path, false, nullptr, {}}});
  if (!r.table) {
    std::fprintf(stderr, "build failed: %s\n", r.error.value_or("?").c_str());
    std::exit(1);
  }
  const Memory after = memory();
  const std::string p = prefix;
  put((p + "rules").c_str(), static_cast<double>(r.table->rules()));
  put((p + "table_bytes").c_str(), static_cast<double>(r.table->memory_bytes()));
  put((p + "rss_added_kib").c_str(), static_cast<double>(after.rss_kib - before.rss_kib));
  put((p + "build_peak_kib").c_str(), static_cast<double>(after.hwm_kib - before.rss_kib));
  put((p + "build_wall_ms").c_str(), r.wall_seconds * 1e3);
  put((p + "build_cpu_ms").c_str(), r.cpu_seconds * 1e3);
  return std::move(r.table);
}

// A 10 ms timer on a real loop, re-armed from its own callback: the worst
// lateness it saw.
struct LatenessProbe {
  explicit LatenessProbe(loop::Scheduler& sched) : timer(sched) {}
  loop::Timer timer;
  Clock::time_point due{};
  double worst_ms = 0.0;
  std::uint64_t fired = 0;

  void arm() {
    due = Clock::now() + 10ms;
    timer.arm(10ms, [this] {
      worst_ms = std::max(worst_ms, std::chrono::duration<double, std::milli>(Clock::now() - due).count());
      ++fired;
      arm();
    });
  }
};

// Turns the loop while `busy` holds, and for at least `min`.
void loop_while(event_base* base, const std::function<bool()>& busy, std::chrono::milliseconds min) {
  const auto until = Clock::now() + min;
  while (busy() || Clock::now() < until) event_base_loop(base, EVLOOP_ONCE);
}

int measure(const std::string& hosts, const std::string& domains) {
  log::set_level(log::Level::warn);
  put("rss_start_kib", static_cast<double>(memory().rss_kib));
  std::shared_ptr<const block::BlockTable> table = build_once(hosts, "");
  const std::uint64_t listed = table->rules();
  constexpr std::size_t n = 1'000'000;
  {
    const Queries hit = make_queries(listed, n, true, false), miss = make_queries(listed, n, false, false);
    time_lookups(*table, hit);  // warm: page the table in as the daemon would have
    const LookupTime h = time_lookups(*table, hit);
    put_lookups("", h, time_lookups(*table, miss));
  }
  if (!domains.empty()) {
    std::shared_ptr<const block::BlockTable> sub = build_once(domains, "subtree_");
    const Queries hit = make_queries(listed, n, true, true), miss = make_queries(listed, n, false, true);
    time_lookups(*sub, hit);
    const LookupTime h = time_lookups(*sub, hit);
    put_lookups("subtree_", h, time_lookups(*sub, miss));
  }

  // The reload: the same list built again by the loader thread while
  // `table` is in use, on a real loop with a 10 ms timer beside it.
  loop::EventBasePtr base(event_base_new());
  {
    loop::LoopScheduler sched(base.get());
    LatenessProbe idle(sched);
    idle.arm();
    loop_while(base.get(), [] { return false; }, 1000ms);
    put("idle_timer_worst_late_ms", idle.worst_ms);
    idle.timer.disarm();

    reset_peak();
    const Memory before = memory();
    std::optional<Clock::time_point> in_use;
    std::optional<std::string> error;
    block::TableBuilder builder(sched, [&](const block::BuildResult& r) {
      in_use = Clock::now();
      if (!r.table) error = r.error.value_or("?");
    });
    LatenessProbe busy(sched);
    busy.arm();
    const auto t0 = Clock::now();
    builder.request({block::ListSource{hosts, false, nullptr, {}}});
    loop_while(base.get(), [&] { return !in_use.has_value(); }, 0ms);
    busy.timer.disarm();
    if (error) {
      std::fprintf(stderr, "reload failed: %s\n", error->c_str());
      return 1;
    }
    put("reload_in_use_ms", std::chrono::duration<double, std::milli>(*in_use - t0).count());
    put("reload_timer_worst_late_ms", busy.worst_ms);
    put("reload_timer_fired", static_cast<double>(busy.fired));
    const Memory during = memory();
    put("swap_peak_over_one_table_kib", static_cast<double>(during.hwm_kib - before.rss_kib));
    // The old table's last reference: in the daemon this drops on the loop
    // at the swap, so its cost (unmapping ~12 MiB) is loop time.
    const auto r0 = Clock::now();
    table.reset();
    put("old_table_release_ms", std::chrono::duration<double, std::milli>(Clock::now() - r0).count());
    // One table in use before and after: ~0 when the old table's pages went back.
    put("swap_rss_change_kib", static_cast<double>(memory().rss_kib - before.rss_kib));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "generate" && (argc == 4 || argc == 5)) {
    const std::string format = argc == 5 ? argv[4] : "hosts";
    return generate(argv[2], std::strtoull(argv[3], nullptr, 10), format == "hosts");
  }
  if (mode == "measure" && (argc == 3 || argc == 4)) return measure(argv[2], argc == 4 ? argv[3] : "");
  std::fprintf(stderr,
               "usage: %s generate FILE N [hosts|domains]\n"
               "       %s measure HOSTS_FILE [DOMAINS_FILE]\n",
               argv[0], argv[0]);
  return 2;
}
