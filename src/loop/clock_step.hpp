#pragma once
// Noticing that the wall clock stepped. Certificate validity is judged by the
// wall clock; on a Pi without RTC it starts wrong and NTP later steps it.
// Verifications that failed under the old clock must be retried at once,
// so the daemon watches for steps: every `period` it compares how
// far the wall clock moved with how far the monotonic clock moved. The two
// advance together except when someone sets the time (NTP's step, `date -s`);
// a late timer delays both samples alike, and slewing (adjtime) moves the
// wall clock by at most 0.5 ms per second, far below the tolerance.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "loop/scheduler.hpp"

namespace nxdns::loop {

using WallClock = std::chrono::system_clock;

struct ClockSample {
  WallClock::time_point wall;
  TimePoint mono;
};

// Pure. The step between two samples (wall elapsed minus monotonic elapsed),
// when its size is at least `tolerance`; nullopt otherwise. Positive: the
// clock was set forward.
std::optional<Duration> clock_step(const ClockSample& before, const ClockSample& after, Duration tolerance);

class ClockStepWatcher {
 public:
  // One second: a step is acted on within a second of NTP setting the clock,
  // for one cheap timer wakeup per second.
  static constexpr Duration default_period = std::chrono::seconds(1);
  // Steps below this are not acted on: NTP slews offsets under 0.4 s
  // (timesyncd's NTP_MAX_ADJUST) instead of stepping, and no certificate
  // check turns on a second.
  static constexpr Duration default_tolerance = std::chrono::seconds(1);

  using OnStep = std::function<void(Duration step)>;
  using ReadWall = std::function<WallClock::time_point()>;

  ClockStepWatcher(Scheduler& sched, OnStep on_step, ReadWall read_wall = &WallClock::now,
                   Duration period = default_period, Duration tolerance = default_tolerance);
  ClockStepWatcher(const ClockStepWatcher&) = delete;
  ClockStepWatcher& operator=(const ClockStepWatcher&) = delete;

  std::uint64_t steps() const { return steps_; }

 private:
  void tick();

  Scheduler& sched_;
  OnStep on_step_;
  ReadWall read_wall_;
  Duration period_;
  Duration tolerance_;
  ClockSample last_;
  std::uint64_t steps_ = 0;
  Timer timer_;
};

}  // namespace nxdns::loop
