#include "loop/clock_step.hpp"

namespace nxdns::loop {

std::optional<Duration> clock_step(const ClockSample& before, const ClockSample& after, Duration tolerance) {
  const auto wall = std::chrono::duration_cast<Duration>(after.wall - before.wall);
  const Duration mono = after.mono - before.mono;
  const Duration step = wall - mono;
  const Duration size = step < Duration::zero() ? -step : step;
  if (size < tolerance) return std::nullopt;
  return step;
}

ClockStepWatcher::ClockStepWatcher(Scheduler& sched, OnStep on_step, ReadWall read_wall, Duration period,
                                   Duration tolerance)
    : sched_(sched),
      on_step_(std::move(on_step)),
      read_wall_(std::move(read_wall)),
      period_(period),
      tolerance_(tolerance),
      last_{read_wall_(), sched.now()},
      timer_(sched) {
  timer_.arm(period_, [this] { tick(); });
}

void ClockStepWatcher::tick() {
  const ClockSample now{read_wall_(), sched_.now()};
  const auto step = clock_step(last_, now, tolerance_);
  last_ = now;
  timer_.arm(period_, [this] { tick(); });
  if (step) {
    ++steps_;
    on_step_(*step);
  }
}

}  // namespace nxdns::loop
