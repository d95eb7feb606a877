#pragma once
// Fills a HistoryRing once a second from a timer on the loop (the libevent
// timer behind loop::Scheduler): reads the cumulative counters, turns the
// difference from the previous reading into a sample. Reading is a few
// snapshots of loop-owned state, so the timer never blocks DNS.
#include <functional>

#include "loop/scheduler.hpp"
#include "web/history_ring.hpp"

namespace nxdns::web {

class HistorySampler {
 public:
  using Read = std::function<HistoryReading()>;
  // Takes the first reading now; the first sample follows one interval later.
  HistorySampler(loop::Scheduler& sched, Read read);
  HistorySampler(const HistorySampler&) = delete;
  HistorySampler& operator=(const HistorySampler&) = delete;

  const HistoryRing& ring() const { return ring_; }
  // When the newest sample was taken (meaningless while the ring is empty).
  loop::TimePoint last_sample_at() const { return last_.at; }

 private:
  void tick();

  Read read_;
  HistoryRing ring_;
  HistoryReading last_;
  loop::Timer timer_;
};

}  // namespace nxdns::web
