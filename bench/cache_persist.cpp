// What the cache file (cache.persist_file) costs, through the real
// cache::CachingPool and cache::CachePersistence under the fake clock, with
// real files and real fsyncs in --dir:
//
//  1. a full cache (cache.max_bytes, 16 MiB by default), filled through the
//     pool with household-shaped answers: the file's size; the loop's part
//     of a save (copying the entries) and the writer's part (checksum,
//     write, fsync, rename, fsync of the directory); how long a start takes
//     to read, check and load it. Medians of --repeat runs.
//  2. with a trace (household_trace.py), the trace replayed with the
//     periodic save on (--interval-s, 900 by default): how many saves, how
//     many octets written, scaled to a day.
//
// Figures, not assertions: docs/how-to/restarts.md quotes them.
//
// usage: nxdns-cache-persist [--dir DIR] [--max-bytes N] [--repeat N] [--trace FILE] [--interval-s N]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/caching_pool.hpp"
#include "cache/persistence.hpp"
#include "log/log.hpp"
#include "support/fake_scheduler.hpp"
#include "trace_upstream.hpp"
#include "upstream/pool.hpp"

using namespace nxdns;
using namespace std::chrono_literals;

namespace {

const loop::WallClock::time_point epoch{std::chrono::seconds(1796000000)};

// One daemon's cache, its upstream and its file.
struct Daemon {
  test::FakeScheduler sched;
  bench::TraceUpstream* up = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::unique_ptr<cache::CachingPool> cache;
  std::unique_ptr<cache::CachePersistence> persist;
  loop::WallClock::time_point wall = epoch;
  std::uint16_t id = 0;

  Daemon(const std::unordered_map<std::string, bench::Truth>& truth, std::size_t max_bytes, const std::string& file,
         loop::Duration interval) {
    auto t = std::make_unique<bench::TraceUpstream>(sched, truth, 30ms);
    up = t.get();
    std::vector<upstream::EntrySpec> specs;
    specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), upstream::PoolOptions{});
    cache::CacheOptions o;
    o.max_bytes = max_bytes;
    cache = std::make_unique<cache::CachingPool>(sched, *pool, o);
    persist = std::make_unique<cache::CachePersistence>(sched, *cache, cache::PersistOptions{file, interval},
                                                        [this] { return wall; });
  }
  ~Daemon() {
    persist.reset();
    cache.reset();
    pool.reset();
  }
  void ask(const std::string& name, std::uint16_t qtype) {
    dns::Bytes q = dns::make_query(++id, *dns::name_from_text(name), qtype, 1232);
    auto p = dns::parse_query(q);
    cache->submit(*p.query, q, [](upstream::PoolOutcome&&) {});
  }
  void advance(loop::Duration d) {
    wall += std::chrono::duration_cast<loop::WallClock::duration>(d);
    sched.advance(d);
  }
};

double thread_cpu() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Names of household length (25-35 characters, as CDN and API names are),
// the trace's type mix, 8 % negative; TTL a day so that nothing expires.
std::string full_name(std::size_t i) {
  return "n" + std::to_string(i) + ".edge-" + std::to_string(i % 97) + ".svc.example-cdn.test";
}
std::uint16_t full_qtype(std::size_t i) { return i % 20 < 11 ? 1 : i % 20 < 18 ? 28 : 65; }

void full_cache(const std::string& dir, std::size_t max_bytes, int repeat) {
  std::unordered_map<std::string, bench::Truth> truth;
  const std::size_t names = max_bytes / 200;  // more than fit
  for (std::size_t i = 0; i < names; ++i) {
    truth[full_name(i) + "."] = bench::Truth{86400, i % 25 == 0, i % 25 == 1};
  }
  const std::string file = dir + "/full.cache";
  Daemon d(truth, max_bytes, file, 15min);
  std::size_t i = 0;
  // Filled through the pool, 32 at a time: stored as the daemon stores them.
  while (d.cache->stats().evictions == 0 && i < names) {
    for (int k = 0; k < 32 && i < names; ++k, ++i) d.ask(full_name(i), full_qtype(i));
    d.advance(40ms);
  }
  const cache::CacheStats full = d.cache->stats();
  std::printf("full cache: %zu entries, %zu of %zu bytes (max_bytes)\n", full.entries, full.bytes, full.max_bytes);

  // The periodic save, as the daemon runs it: the tick copies the entries
  // on the loop (this thread: its CPU time is the loop's) and a worker
  // thread writes them.
  std::vector<double> copy, copy_cpu, write;
  cache::PersistStats s;
  d.persist->start();
  for (int r = 0; r < repeat; ++r) {
    d.ask(full_name(i), full_qtype(i));  // one change, so that the save is due
    ++i;
    d.advance(40ms);
    const double c0 = thread_cpu();
    d.advance(15min - 40ms);  // the tick
    copy_cpu.push_back(thread_cpu() - c0);
    d.persist->finish_write();
    s = d.persist->stats();
    copy.push_back(s.last_save_copy_seconds);
    write.push_back(s.last_save_write_seconds);
  }
  std::printf("save: file %llu bytes (%llu entries, %.1f bytes per entry); on the loop (copy) %.1f ms (CPU %.1f ms), "
              "writer thread (checksum + write + fsync + rename + dir fsync) %.1f ms; medians of %d\n",
              static_cast<unsigned long long>(s.last_save_bytes), static_cast<unsigned long long>(s.last_save_entries),
              static_cast<double>(s.last_save_bytes) / static_cast<double>(std::max<std::uint64_t>(1, s.last_save_entries)),
              median(copy) * 1e3, median(copy_cpu) * 1e3, median(write) * 1e3, repeat);
  {
    std::ifstream f(file, std::ios::binary);
    const dns::Bytes bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<double> sum;
    std::uint64_t h = 0;
    for (int r = 0; r < repeat; ++r) {
      const double c0 = thread_cpu();
      h ^= cache::fnv1a64(bytes);
      sum.push_back(thread_cpu() - c0);
    }
    std::printf("checksum alone (FNV-1a 64 over the file): %.1f ms CPU (%llx)\n", median(sum) * 1e3,
                static_cast<unsigned long long>(h & 0xF));
  }

  std::vector<double> load, load_cpu;
  std::uint64_t loaded = 0;
  for (int r = 0; r < repeat; ++r) {
    Daemon b(truth, max_bytes, file, 15min);
    b.wall = d.wall + 60s;
    const double c0 = thread_cpu();
    b.persist->load();
    load_cpu.push_back(thread_cpu() - c0);
    load.push_back(b.persist->stats().load_seconds);
    loaded = b.persist->stats().loaded_entries;
  }
  std::printf("load: %llu entries in %.1f ms, CPU time %.1f ms (read, checksum, every answer checked and stored; "
              "file in the page cache); medians of %d\n",
              static_cast<unsigned long long>(loaded), median(load) * 1e3, median(load_cpu) * 1e3, repeat);
}

void household(const std::string& dir, const std::string& trace_file, std::size_t max_bytes, loop::Duration interval) {
  std::ifstream in(trace_file);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", trace_file.c_str());
    std::exit(1);
  }
  std::unordered_map<std::string, bench::Truth> truth;
  const std::vector<bench::Line> trace = bench::read_trace(in, truth);
  if (trace.empty()) return;
  Daemon d(truth, max_bytes, dir + "/household.cache", interval);
  d.persist->load();
  d.persist->start();
  std::uint64_t saves = 0, written = 0, largest = 0;
  const auto account = [&] {
    d.persist->finish_write();
    const cache::PersistStats s = d.persist->stats();
    if (s.saves != saves) {
      saves = s.saves;
      written += s.last_save_bytes;
      largest = std::max(largest, s.last_save_bytes);
    }
  };
  const loop::TimePoint start = d.sched.now();
  for (const bench::Line& l : trace) {
    const loop::TimePoint at = start + std::chrono::milliseconds(l.t_ms);
    if (at > d.sched.now()) d.advance(at - d.sched.now());
    account();
    d.ask(l.name, l.qtype);
  }
  // To the end of the interval the last query fell in: that save counts too.
  d.advance(interval);
  account();
  const double hours = std::chrono::duration<double>(d.sched.now() - start).count() / 3600.0;
  const cache::CacheStats c = d.cache->stats();
  std::printf("household trace: %zu queries over %.1f h, interval %.0f s: %llu saves, %llu bytes written "
              "(largest file %llu bytes, cache %zu entries / %zu bytes at the end): %.0f bytes per day\n",
              trace.size(), hours, std::chrono::duration<double>(interval).count(),
              static_cast<unsigned long long>(saves), static_cast<unsigned long long>(written),
              static_cast<unsigned long long>(largest), c.entries, c.bytes,
              static_cast<double>(written) * 24.0 / hours);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp", trace;
  std::size_t max_bytes = 16u << 20;
  int repeat = 5;
  long interval_s = 900;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir") dir = v;
    else if (k == "--max-bytes") max_bytes = std::stoull(v);
    else if (k == "--repeat") repeat = std::max(1, std::atoi(v.c_str()));
    else if (k == "--trace") trace = v;
    else if (k == "--interval-s") interval_s = std::atol(v.c_str());
    else {
      std::fprintf(stderr, "usage: %s [--dir DIR] [--max-bytes N] [--repeat N] [--trace FILE] [--interval-s N]\n",
                   argv[0]);
      return 2;
    }
  }
  log::set_level(log::Level::warn);  // one info line per save and load otherwise
  const std::string work = dir + "/nxdns-cache-persist." + std::to_string(::getpid());
  std::filesystem::create_directories(work);
  full_cache(work, max_bytes, repeat);
  if (!trace.empty()) household(work, trace, max_bytes, std::chrono::seconds(interval_s));
  std::filesystem::remove_all(work);
  return 0;
}
