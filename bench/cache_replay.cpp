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

using namespace nxdns;
using namespace std::chrono_literals;

namespace {

struct Line {
  std::uint64_t t_ms;
  std::string name;
  std::uint16_t qtype;
  std::uint32_t ttl;
  std::uint8_t rcode;  // 0 or 3
  bool nodata;
};

struct Truth {
  std::uint32_t ttl;
  bool nxdomain;
  bool nodata;
};

void put16(dns::Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v & 0xFF));
}
void put32(dns::Bytes& b, std::uint32_t v) {
  put16(b, static_cast<std::uint16_t>(v >> 16));
  put16(b, static_cast<std::uint16_t>(v & 0xFFFF));
}

// An upstream that knows every name in the trace.
class TraceUpstream final : public upstream::Transport {
 public:
  TraceUpstream(loop::Scheduler& s, const std::unordered_map<std::string, Truth>& truth, loop::Duration rtt)
      : sched_(s), truth_(truth), rtt_(rtt) {}
  ExchangeId start(dns::ByteView query, Completion done) override {
    const ExchangeId id = next_++;
    ++exchanges;
    dns::Bytes q(query.begin(), query.end());
    auto& timer = live_[id];
    timer = std::make_unique<loop::Timer>(sched_);
    // The Timer may be destroyed from its own callback (erase below): Timer
    // moves the callback out before running it.
    timer->arm(rtt_, [this, id, q = std::move(q), done = std::move(done)]() mutable {
      live_.erase(id);
      upstream::ExchangeResult r;
      r.response = answer(q);
      done(std::move(r));
    });
    return id;
  }
  void cancel(ExchangeId id) override {
    live_.erase(id);  // its Timer disarms as it goes
  }
  void close_all() override {}
  upstream::TransportStats stats() const override { return {}; }
  const char* kind() const override { return "dot"; }
  std::uint64_t exchanges = 0;

 private:
  dns::Bytes answer(const dns::Bytes& q) const {
    auto p = dns::parse_query(q);
    const dns::Query& query = *p.query;
    const auto it = truth_.find(dns::name_to_text(query.question.name));
    const Truth t = it == truth_.end() ? Truth{60, true, false} : it->second;
    dns::Bytes b(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(query.question_end));
    b[2] = 0x81;
    b[3] = static_cast<std::uint8_t>(0x80 | (t.nxdomain ? 3 : 0));
    b[10] = b[11] = 0;
    const bool negative = t.nxdomain || t.nodata;
    b[6] = 0, b[7] = negative ? 0 : 2;
    b[8] = 0, b[9] = negative ? 1 : 0;
    if (negative) {
      // zone SOA: owner = the query name (a pointer), MNAME/RNAME ~ 20 + 25 octets
      put16(b, 0xC00C), put16(b, 6), put16(b, 1), put32(b, t.ttl);
      put16(b, 45 + 20);
      for (int i = 0; i < 45; ++i) b.push_back(i % 10 == 0 ? 9 : 'a');
      put32(b, 2026120101), put32(b, 7200), put32(b, 3600), put32(b, 1209600), put32(b, t.ttl);
    } else {
      const std::uint16_t len = query.question.qtype == 1 ? 4 : query.question.qtype == 28 ? 16 : 42;
      for (int r = 0; r < 2; ++r) {
        put16(b, 0xC00C), put16(b, query.question.qtype), put16(b, 1), put32(b, t.ttl), put16(b, len);
        for (int i = 0; i < len; ++i) b.push_back(static_cast<std::uint8_t>(i + r));
      }
    }
    return b;
  }
  loop::Scheduler& sched_;
  const std::unordered_map<std::string, Truth>& truth_;
  loop::Duration rtt_;
  ExchangeId next_ = 1;
  std::unordered_map<ExchangeId, std::unique_ptr<loop::Timer>> live_;
};

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

std::uint16_t qtype_of(const std::string& s) { return s == "A" ? 1 : s == "AAAA" ? 28 : 65; }

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
  std::vector<Line> trace;
  std::unordered_map<std::string, Truth> truth;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Line l;
    std::string qt, kind;
    if (!(ls >> l.t_ms >> l.name >> qt >> l.ttl >> kind)) continue;
    l.qtype = qtype_of(qt);
    l.rcode = kind == "nxdomain" ? 3 : 0;
    l.nodata = kind == "nodata";
    truth[l.name + "."] = Truth{l.ttl, kind == "nxdomain", kind == "nodata"};
    trace.push_back(std::move(l));
  }
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
