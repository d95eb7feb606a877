// loop::Timer on the real LoopScheduler: the guarantees callers rely on
// (zero delay never inline, disarmed or destroyed never called back, a
// callback may re-arm or destroy its own Timer or another) and its cost
// bound: re-arming reuses one libevent event per Timer.
#include <memory>

#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/loop_driver.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;

// Long enough that the loop turns many times (its driver ticks every 5 ms);
// only used where the check is that nothing happens.
constexpr int kQuietMs = 30;
// Generous: a deadline, not a measurement (a slow CI machine just waits).
constexpr int kWithinMs = 5000;

TEST_GROUP(LoopTimer) {
  loop::EventBasePtr base{event_base_new()};
  std::unique_ptr<loop::LoopScheduler> sched = std::make_unique<loop::LoopScheduler>(base.get());
  std::unique_ptr<test::LoopDriver> drive = std::make_unique<test::LoopDriver>(base.get());

  void teardown() override {
    drive.reset();
    sched.reset();
  }
};

TEST(LoopTimer, ZeroDelayRunsFromTheLoopNotInsideArm) {
  loop::Timer t(*sched);
  int calls = 0;
  t.arm(0ms, [&] { ++calls; });
  CHECK_EQUAL(0, calls);
  CHECK_TRUE(t.armed());
  CHECK_TRUE(drive->until([&] { return calls == 1; }, kWithinMs));
  CHECK_FALSE(t.armed());
  drive->run_for(kQuietMs);
  CHECK_EQUAL(1, calls);
}

TEST(LoopTimer, DisarmedIsNeverCalledBack) {
  loop::Timer t(*sched);
  int calls = 0;
  t.arm(0ms, [&] { ++calls; });
  t.disarm();
  CHECK_FALSE(t.armed());
  drive->run_for(kQuietMs);
  CHECK_EQUAL(0, calls);
}

TEST(LoopTimer, ReArmReplacesTheDeadline) {
  loop::Timer t(*sched);
  int soon = 0, late = 0;
  t.arm(0ms, [&] { ++late; });
  t.arm(1h, [&] { ++late; });
  drive->run_for(kQuietMs);
  CHECK_EQUAL(0, late);
  t.arm(0ms, [&] { ++soon; });
  CHECK_TRUE(drive->until([&] { return soon == 1; }, kWithinMs));
  drive->run_for(kQuietMs);
  CHECK_EQUAL(1, soon);
  CHECK_EQUAL(0, late);
}

TEST(LoopTimer, CallbackReArmsItsOwnTimer) {
  loop::Timer t(*sched);
  int calls = 0;
  std::function<void()> again = [&] {
    if (++calls < 5) t.arm(0ms, again);
  };
  t.arm(0ms, again);
  CHECK_TRUE(drive->until([&] { return calls == 5; }, kWithinMs));
  drive->run_for(kQuietMs);
  CHECK_EQUAL(5, calls);
  CHECK_FALSE(t.armed());
}

// The callback's captures must survive its own Timer's destruction (ASan
// would see a use after free otherwise).
TEST(LoopTimer, CallbackDestroysItsOwnTimer) {
  auto t = std::make_unique<loop::Timer>(*sched);
  auto held = std::make_shared<int>(7);
  int seen = 0;
  t->arm(0ms, [&, held] {
    t.reset();
    seen = *held;
  });
  CHECK_TRUE(drive->until([&] { return seen == 7; }, kWithinMs));
  CHECK_TRUE(t == nullptr);
}

// Two timers due in the same loop iteration: whichever runs first destroys
// the other, which then never runs although its deadline had passed.
TEST(LoopTimer, TimerDestroyedByAnotherCallbackIsNotCalled) {
  std::unique_ptr<loop::Timer> a = std::make_unique<loop::Timer>(*sched);
  std::unique_ptr<loop::Timer> b = std::make_unique<loop::Timer>(*sched);
  int calls = 0;
  a->arm(0ms, [&] {
    ++calls;
    b.reset();
  });
  b->arm(0ms, [&] {
    ++calls;
    a.reset();
  });
  CHECK_TRUE(drive->until([&] { return calls >= 1; }, kWithinMs));
  drive->run_for(kQuietMs);
  CHECK_EQUAL(1, calls);
}

TEST(LoopTimer, TimerDisarmedByAnotherCallbackIsNotCalled) {
  loop::Timer a(*sched), b(*sched);
  int calls = 0;
  a.arm(0ms, [&] {
    ++calls;
    b.disarm();
  });
  b.arm(0ms, [&] {
    ++calls;
    a.disarm();
  });
  CHECK_TRUE(drive->until([&] { return calls >= 1; }, kWithinMs));
  drive->run_for(kQuietMs);
  CHECK_EQUAL(1, calls);
}

// A callback that destroys one Timer and starts another in its place (the
// per-query objects do this): the new one fires, the old one does not.
TEST(LoopTimer, CallbackReplacesAnotherTimer) {
  loop::Timer a(*sched);
  auto b = std::make_unique<loop::Timer>(*sched);
  int old_calls = 0, new_calls = 0;
  b->arm(1h, [&] { ++old_calls; });
  a.arm(0ms, [&] {
    b = std::make_unique<loop::Timer>(*sched);
    b->arm(0ms, [&] { ++new_calls; });
  });
  CHECK_TRUE(drive->until([&] { return new_calls == 1; }, kWithinMs));
  CHECK_EQUAL(0, old_calls);
}

// Arming must not make a libevent event each time. One Timer armed
// a thousand times uses one event; Timers that die give theirs back.
TEST(LoopTimer, ManyReArmsUseOneEvent) {
  loop::Timer t(*sched);
  int calls = 0;
  for (int i = 0; i < 1000; ++i) t.arm(i % 2 ? 1h : 0ms, [&] { ++calls; });
  CHECK_EQUAL(1u, sched->slot_events());
  for (int i = 0; i < 100; ++i) {
    loop::Timer short_lived(*sched);
    short_lived.arm(1h, [&] { ++calls; });
  }
  CHECK_EQUAL(2u, sched->slot_events());
  drive->run_for(kQuietMs);
  CHECK_EQUAL(0, calls);
}

// Re-armed from its own callback, round after round, still one event.
TEST(LoopTimer, ReArmFromCallbackUsesOneEvent) {
  loop::Timer t(*sched);
  int calls = 0;
  std::function<void()> again = [&] {
    if (++calls < 50) t.arm(0ms, again);
  };
  t.arm(0ms, again);
  CHECK_TRUE(drive->until([&] { return calls == 50; }, kWithinMs));
  CHECK_EQUAL(1u, sched->slot_events());
}
