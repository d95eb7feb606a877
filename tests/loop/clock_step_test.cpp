#include "loop/clock_step.hpp"

#include <vector>

#include "support/fake_scheduler.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using loop::ClockSample;
using loop::clock_step;

namespace {

ClockSample at(std::chrono::seconds wall, std::chrono::seconds mono) {
  return ClockSample{loop::WallClock::time_point(wall), loop::TimePoint(mono)};
}

}  // namespace

TEST_GROUP(ClockStep){};

// The decision as a table: (wall before, mono before) -> (wall after, mono
// after), tolerance 1 s.
TEST(ClockStep, Table) {
  struct Row {
    ClockSample before, after;
    std::optional<loop::Duration> step;
  };
  const Row rows[] = {
      {at(100s, 10s), at(101s, 11s), std::nullopt},   // both moved 1 s
      {at(100s, 10s), at(130s, 40s), std::nullopt},   // a late tick: both moved 30 s
      {at(100s, 10s), at(100s, 10s), std::nullopt},   // no time at all
      // NTP at boot: the clock floor was a month behind.
      {at(100s, 10s), at(100s + 2'592'000s, 11s), loop::Duration(2'592'000s - 1s)},
      {at(100s, 10s), at(50s, 11s), loop::Duration(-51s)},  // set back (an RTC that ran fast)
      {at(100s, 10s), at(102s, 11s), loop::Duration(1s)},   // exactly the tolerance
  };
  for (const auto& r : rows) {
    const auto got = clock_step(r.before, r.after, 1s);
    CHECK_EQUAL(r.step.has_value(), got.has_value());
    if (r.step) CHECK(*r.step == *got);
  }
}

TEST(ClockStep, SlewBelowToleranceIsNotAStep) {
  // adjtime slews at most 0.5 ms per second: 999 ms of drift is not a step.
  const auto got = clock_step(at(100s, 10s), ClockSample{loop::WallClock::time_point(101s) + 999ms,
                                                          loop::TimePoint(11s)}, 1s);
  CHECK_FALSE(got.has_value());
}

TEST(ClockStep, WatcherReportsAStepOnceWithinAPeriod) {
  test::FakeScheduler sched;
  auto wall = loop::WallClock::time_point(1'750'000'000s);
  std::vector<loop::Duration> steps;
  loop::ClockStepWatcher w(
      sched, [&](loop::Duration d) { steps.push_back(d); }, [&] { return wall; });
  // Ordinary seconds: wall and monotonic move together.
  for (int i = 0; i < 5; ++i) {
    wall += 1s;
    sched.advance(1s);
  }
  CHECK_EQUAL(0u, steps.size());
  // NTP steps the clock forward by a day between two ticks.
  wall += 24h;
  wall += 1s;
  sched.advance(1s);
  CHECK_EQUAL(1u, steps.size());
  CHECK(steps[0] == loop::Duration(24h));
  // Afterwards nothing more is reported.
  for (int i = 0; i < 5; ++i) {
    wall += 1s;
    sched.advance(1s);
  }
  CHECK_EQUAL(1u, steps.size());
  CHECK_EQUAL(1u, w.steps());
}
