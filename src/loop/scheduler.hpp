#pragma once
// Time and timers, as an interface so that the pool, health and query logic
// run under a fake clock in unit tests and on the libevent loop in the daemon.
#include <chrono>
#include <functional>
#include <memory>

namespace nxdns::loop {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Duration = Clock::duration;

// Told when a TimerSlot's deadline passes.
class TimerTarget {
 public:
  virtual void on_deadline() = 0;

 protected:
  ~TimerTarget() = default;
};

// One re-armable deadline. A Timer opens one on its first arm and keeps it
// for its life, so arming it again costs no allocation: a forwarded answer
// arms ~4 deadlines, and a fresh one-shot callback per arm would cost ~4
// heap allocations each.
class TimerSlot {
 public:
  // Sets the deadline `delay` from now, replacing a pending one. Zero means
  // "soon, from the loop", never inside this call.
  virtual void arm(Duration delay) = 0;
  // No call back after this returns, even if the deadline already passed in
  // the loop iteration that is running now.
  virtual void disarm() = 0;
  // Disarms and hands the slot back to its scheduler (TimerSlotPtr's job).
  virtual void release() noexcept = 0;

 protected:
  ~TimerSlot() = default;
};

struct TimerSlotRelease {
  void operator()(TimerSlot* s) const noexcept { s->release(); }
};
using TimerSlotPtr = std::unique_ptr<TimerSlot, TimerSlotRelease>;

// Time and re-armable deadlines: all the pool, health, query and transport
// logic asks of a clock. (One-shot callbacks are a Timer armed once.)
class Scheduler {
 public:
  virtual ~Scheduler() = default;

  virtual TimePoint now() const = 0;
  // A re-armable deadline that calls `target` (which outlives the slot).
  // Arming it with zero delay means "soon, from the loop": never inside the
  // call, which callers rely on to avoid re-entrancy.
  virtual TimerSlotPtr open_slot(TimerTarget& target) = 0;
};

// Owns one re-armable callback; disarms on destruction or re-arm, so an
// object that dies never gets called back. The callback may re-arm, disarm
// or destroy this Timer or any other.
class Timer final : private TimerTarget {
 public:
  explicit Timer(Scheduler& s) : sched_(&s) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  // slot_ is declared last, so it is released (disarmed) before fn_ dies.
  ~Timer() = default;

  void arm(Duration delay, std::function<void()> fn) {
    if (!slot_) slot_ = sched_->open_slot(*this);
    fn_ = std::move(fn);
    armed_ = true;
    slot_->arm(delay);
  }
  void disarm() {
    if (!armed_) return;
    slot_->disarm();
    armed_ = false;
    fn_ = nullptr;  // what the callback captured is released here, not at the next arm
  }
  bool armed() const { return armed_; }

 private:
  void on_deadline() override {
    armed_ = false;
    // Moved out first: the callback may re-arm this Timer (assigning fn_) or
    // destroy it; either way the running function must stay alive, and
    // nothing here touches `this` after the call.
    std::function<void()> fn = std::move(fn_);
    fn();
  }

  Scheduler* sched_;
  std::function<void()> fn_;
  bool armed_ = false;
  TimerSlotPtr slot_;
};

}  // namespace nxdns::loop
