#pragma once
// Time and timers, as an interface so that the pool, health and query logic
// run under a fake clock in unit tests and on the libevent loop in the daemon.
#include <chrono>
#include <cstdint>
#include <functional>

namespace nxdns::loop {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Duration = Clock::duration;

class Scheduler {
 public:
  using TimerId = std::uint64_t;
  virtual ~Scheduler() = default;

  virtual TimePoint now() const = 0;
  // Runs `fn` once, from the loop, no earlier than `delay` from now. A zero
  // delay means "soon, from the loop" and never runs `fn` inside this call:
  // callers rely on that to avoid re-entrancy.
  virtual TimerId schedule(Duration delay, std::function<void()> fn) = 0;
  // Cancelling an unknown or already-fired timer is a no-op.
  virtual void cancel(TimerId id) = 0;
};

// Owns one scheduled callback; cancels it on destruction or re-arm, so an
// object that dies never gets called back.
class Timer {
 public:
  explicit Timer(Scheduler& s) : sched_(&s) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() { disarm(); }

  void arm(Duration delay, std::function<void()> fn) {
    disarm();
    armed_ = true;
    id_ = sched_->schedule(delay, [this, fn = std::move(fn)]() {
      armed_ = false;
      fn();
    });
  }
  void disarm() {
    if (armed_) sched_->cancel(id_);
    armed_ = false;
  }
  bool armed() const { return armed_; }

 private:
  Scheduler* sched_;
  Scheduler::TimerId id_ = 0;
  bool armed_ = false;
};

}  // namespace nxdns::loop
