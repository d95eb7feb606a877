// The status page's history: samples from pairs of readings (pure, table
// test), the fixed ring, the one-second sampler under a fake clock, and the
// /api/history document.
#include <chrono>
#include <string>

#include "support/fake_scheduler.hpp"
#include "web/history_ring.hpp"
#include "web/history_sampler.hpp"
#include "web/status.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;

namespace {
web::HistoryReading reading(loop::TimePoint at, std::uint64_t replies, std::uint64_t exchanges, double secs,
                            std::uint64_t queued = 0, std::uint32_t depth = 0, std::uint32_t in_flight = 0) {
  web::HistoryReading r;
  r.at = at;
  r.replies = replies;
  r.exchanges = exchanges;
  r.exchange_seconds = secs;
  r.queued = queued;
  r.queue_depth = depth;
  r.in_flight = in_flight;
  return r;
}
}  // namespace

TEST_GROUP(HistorySample){};

TEST(HistorySample, DifferencesOverTheRealIntervalWidth) {
  const loop::TimePoint t0{};
  struct Row {
    web::HistoryReading before, after;
    double qps;
    bool has_latency;
    double latency;
    std::uint64_t queued;
    std::uint32_t depth, in_flight;
  };
  const Row rows[] = {
      // 30 replies and 30 exchanges of 40 ms each in one second.
      {reading(t0, 100, 10, 0.4), reading(t0 + 1s, 130, 40, 1.6, 5, 3, 7), 30.0, true, 0.04, 5, 3, 7},
      // A late tick: 2 s wide, so 30 replies are 15/s, not 30/s.
      {reading(t0, 0, 0, 0.0), reading(t0 + 2s, 30, 0, 0.0), 15.0, false, 0.0, 0, 0, 0},
      // Nothing finished: no latency (a gap in the chart, not a zero).
      {reading(t0, 5, 5, 0.1), reading(t0 + 1s, 5, 5, 0.1, 0, 2, 2), 0.0, false, 0.0, 0, 2, 2},
      // Counters that went backwards count as nothing, not as a wrap.
      {reading(t0, 50, 50, 1.0, 9), reading(t0 + 1s, 10, 10, 0.5, 1), 0.0, false, 0.0, 0, 0, 0},
  };
  for (const auto& r : rows) {
    const auto s = web::sample_between(r.before, r.after);
    DOUBLES_EQUAL(r.qps, s.queries_per_second, 1e-9);
    CHECK_EQUAL(r.has_latency, s.latency_seconds.has_value());
    if (r.has_latency) DOUBLES_EQUAL(r.latency, *s.latency_seconds, 1e-9);
    LONGS_EQUAL(r.queued, s.queued);
    LONGS_EQUAL(r.depth, s.queue_depth);
    LONGS_EQUAL(r.in_flight, s.in_flight);
  }
}

TEST_GROUP(HistoryRing){};

TEST(HistoryRing, KeepsTheNewest600OldestFirst) {
  web::HistoryRing ring;
  LONGS_EQUAL(0, ring.size());
  for (std::uint32_t i = 0; i < 1000; ++i) {
    web::HistorySample s;
    s.in_flight = i;
    ring.push(s);
    LONGS_EQUAL(std::min<std::size_t>(i + 1, web::history_capacity), ring.size());
  }
  LONGS_EQUAL(400, ring.at(0).in_flight);
  LONGS_EQUAL(999, ring.at(599).in_flight);
  // Bounded memory: the ring is a fixed array, whatever it has seen.
  CHECK_TRUE(sizeof(web::HistoryRing) < 600 * 64);
}

TEST_GROUP(HistorySampler){};

TEST(HistorySampler, OneSamplePerSecondFromTheLoopTimer) {
  test::FakeScheduler sched;
  std::uint64_t replies = 0;
  std::uint32_t depth = 0;
  web::HistorySampler sampler(sched, [&] { return reading(sched.now(), replies, 0, 0.0, 0, depth); });
  LONGS_EQUAL(0, sampler.ring().size());
  replies = 12;
  depth = 4;
  sched.advance(1s);
  LONGS_EQUAL(1, sampler.ring().size());
  DOUBLES_EQUAL(12.0, sampler.ring().at(0).queries_per_second, 1e-9);
  LONGS_EQUAL(4, sampler.ring().at(0).queue_depth);
  sched.advance(650s);
  LONGS_EQUAL(web::history_capacity, sampler.ring().size());
  DOUBLES_EQUAL(0.0, sampler.ring().at(599).queries_per_second, 1e-9);
  CHECK_TRUE(sampler.last_sample_at() == sched.now());
}

TEST(HistorySampler, DestroyedSamplerLeavesNoTimer) {
  test::FakeScheduler sched;
  int reads = 0;
  {
    web::HistorySampler sampler(sched, [&] {
      ++reads;
      return reading(sched.now(), 0, 0, 0.0);
    });
    sched.advance(2s);
  }
  const int before = reads;
  sched.advance(5s);
  LONGS_EQUAL(before, reads);
}

TEST_GROUP(HistoryDocument){};

TEST(HistoryDocument, SeriesOldestFirstWithGapsAsNull) {
  web::HistoryRing ring;
  web::HistorySample a;
  a.queries_per_second = 30;
  a.latency_seconds = 0.0404;
  a.queue_depth = 2;
  a.in_flight = 8;
  a.queued = 3;
  web::HistorySample b;
  b.queries_per_second = 0.5;
  ring.push(a);
  ring.push(b);
  STRCMP_EQUAL(
      "{\"interval_seconds\":1,\"capacity\":600,\"samples\":2,\"newest_seconds_ago\":0.25,"
      "\"queries_per_second\":[30,0.5],\"latency_seconds\":[0.04,null],\"queue_depth\":[2,0],"
      "\"in_flight\":[8,0],\"queued\":[3,0]}",
      web::render_history(ring, 250ms).c_str());
  STRCMP_EQUAL(
      "{\"interval_seconds\":1,\"capacity\":600,\"samples\":0,\"newest_seconds_ago\":null,"
      "\"queries_per_second\":[],\"latency_seconds\":[],\"queue_depth\":[],\"in_flight\":[],\"queued\":[]}",
      web::render_history(web::HistoryRing{}, 0ms).c_str());
}
