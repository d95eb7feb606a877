#pragma once
// The status page's ten minutes of memory: one sample per second in a fixed
// ring (history_capacity samples, allocated once, never grown), so the chart
// is full the moment the page opens. A sample is what happened during one
// second, derived from two readings of the daemon's cumulative counters by
// a pure function; the ring is owned by the loop (HistorySampler fills it).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "loop/scheduler.hpp"

namespace nxdns::web {

inline constexpr std::size_t history_capacity = 600;  // 10 minutes at 1 s
inline constexpr loop::Duration history_interval = std::chrono::seconds(1);

// Cumulative counters and gauges, read at one instant.
struct HistoryReading {
  loop::TimePoint at{};
  std::uint64_t replies = 0;             // replies sent to clients (all protocols, rcodes)
  std::uint64_t exchanges = 0;           // upstream exchanges finished (latency observations)
  double exchange_seconds = 0.0;         // their summed latency
  std::uint64_t queued = 0;              // callers that have left an upstream FIFO (queued_total)
  std::uint32_t queue_depth = 0;         // callers waiting now, all upstreams
  std::uint32_t in_flight = 0;           // upstream exchanges running now, all upstreams
};

struct HistorySample {
  double queries_per_second = 0.0;
  // Mean latency of the upstream exchanges that finished in the interval;
  // nullopt when none did (a gap in the line, not a zero).
  std::optional<double> latency_seconds;
  std::uint64_t queued = 0;  // callers that left a FIFO in the interval
  std::uint32_t queue_depth = 0;
  std::uint32_t in_flight = 0;
};

// What happened between two readings. Counters that went backwards (they
// never do; a reload that rebuilt the pool could) count as zero rather than
// as a huge wrapped delta.
HistorySample sample_between(const HistoryReading& before, const HistoryReading& after);

class HistoryRing {
 public:
  void push(const HistorySample& s);
  std::size_t size() const { return size_; }
  // i = 0 is the oldest sample held.
  const HistorySample& at(std::size_t i) const { return ring_[(next_ + history_capacity - size_ + i) % history_capacity]; }

 private:
  std::array<HistorySample, history_capacity> ring_{};
  std::size_t next_ = 0;
  std::size_t size_ = 0;
};

}  // namespace nxdns::web
