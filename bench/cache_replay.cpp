// Replays a household trace (household_trace.py) through the real cache
// (cache::CachingPool over a real upstream::Pool) under a fake clock, with a
// simulated upstream that answers every name as the trace says after a fixed
// round trip. No network, no real time: the figures are deterministic.
//
// Prints, per eviction policy and cache size: client-seen hit ratio
// (answered from the cache, fresh or stale, over all queries), upstream
// exchanges per 1,000 client queries, evictions, and the cache's own bytes.
//
// usage: cache_replay TRACE [--rtt-ms N] [--prefetch on|off|both]
//                           [--max-bytes N[,N...]] [--policy lru|sieve|both]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/caching_pool.hpp"
#include "loop/scheduler.hpp"
#include "support/fake_scheduler.hpp"
#include "upstream/pool.hpp"
#include "upstream/transport.hpp"
#include "trace_upstream.hpp"

using namespace nxdns;
using namespace std::chrono_literals;
using bench::Line;
using bench::TraceUpstream;
using bench::Truth;

namespace {

struct Result {
  std::uint64_t queries = 0, answered_locally = 0, exchanges = 0, evictions = 0, bytes = 0, entries = 0, prefetches = 0;
};

Result replay(const std::vector<Line>& trace, const std::unordered_map<std::string, Truth>& truth,
              cache::Eviction policy, std::size_t max_bytes, bool prefetch, loop::Duration rtt) {
  test::FakeScheduler sched;
  auto t = std::make_unique<TraceUpstream>(sched, truth, rtt);
  TraceUpstream* up = t.get();
  std::vector<upstream::EntrySpec> specs;
  specs.push_back({0, "tls://127.0.0.1:853", 0, std::move(t)});
  upstream::Pool pool(sched, std::move(specs), upstream::PoolOptions{});
  cache::CacheOptions o;
  o.max_bytes = max_bytes;
  o.eviction = policy;
  o.prefetch = prefetch;
  cache::CachingPool c(sched, pool, o);
  const loop::TimePoint start = sched.now();
  std::uint16_t id = 0;
  Result r;
  for (const Line& l : trace) {
    const loop::TimePoint at = start + std::chrono::milliseconds(l.t_ms);
    if (at > sched.now()) sched.advance(at - sched.now());
    dns::Bytes q = dns::make_query(++id, *dns::name_from_text(l.name), l.qtype, 1232);
    auto p = dns::parse_query(q);
    c.submit(*p.query, q, [](upstream::PoolOutcome&&) {});
    ++r.queries;
  }
  sched.advance(10s);
  const cache::CacheStats s = c.stats();
  r.answered_locally = s.hits + s.stale_served;
  r.exchanges = up->exchanges;
  r.evictions = s.evictions;
  r.bytes = s.bytes;
  r.entries = s.entries;
  r.prefetches = s.prefetches;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE [--rtt-ms N] [--prefetch on|off|both] [--max-bytes N,N] [--policy lru|sieve|both]\n", argv[0]);
    return 2;
  }
  std::string policy = "both", prefetch = "both", sizes = "65536,262144,1048576,16777216";
  long rtt_ms = 30;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--rtt-ms") rtt_ms = std::atol(v.c_str());
    else if (k == "--prefetch") prefetch = v;
    else if (k == "--max-bytes") sizes = v;
    else if (k == "--policy") policy = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  std::unordered_map<std::string, Truth> truth;
  const std::vector<Line> trace = bench::read_trace(in, truth);
  std::string line;
  std::vector<std::size_t> size_list;
  for (std::istringstream ss(sizes); std::getline(ss, line, ',');) size_list.push_back(std::stoull(line));
  std::vector<cache::Eviction> policies;
  if (policy != "sieve") policies.push_back(cache::Eviction::lru);
  if (policy != "lru") policies.push_back(cache::Eviction::sieve);
  std::vector<bool> prefetches;
  if (prefetch != "on") prefetches.push_back(false);
  if (prefetch != "off") prefetches.push_back(true);

  std::printf("%-6s %-9s %10s %9s %12s %10s %9s %10s %8s\n", "policy", "prefetch", "max_bytes", "hit_ratio",
              "upstream/1k", "prefetches", "evictions", "bytes", "entries");
  for (std::size_t mb : size_list) {
    for (bool pf : prefetches) {
      for (cache::Eviction e : policies) {
        const Result r = replay(trace, truth, e, mb, pf, std::chrono::milliseconds(rtt_ms));
        std::printf("%-6s %-9s %10zu %9.4f %12.1f %10llu %9llu %10llu %8llu\n", cache::describe(e), pf ? "on" : "off", mb,
                    static_cast<double>(r.answered_locally) / static_cast<double>(r.queries),
                    1000.0 * static_cast<double>(r.exchanges) / static_cast<double>(r.queries),
                    static_cast<unsigned long long>(r.prefetches), static_cast<unsigned long long>(r.evictions),
                    static_cast<unsigned long long>(r.bytes), static_cast<unsigned long long>(r.entries));
      }
    }
  }
  return 0;
}
