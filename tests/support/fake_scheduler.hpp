#pragma once
// A scheduler driven by the test: time stands still until advance().
#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include "loop/scheduler.hpp"

namespace nxdns::test {

class FakeScheduler final : public loop::Scheduler {
 public:
  loop::TimePoint now() const override { return now_; }
  loop::TimerSlotPtr open_slot(loop::TimerTarget& target) override {
    return loop::TimerSlotPtr(new Slot(*this, target));
  }

  // Fires, in deadline order (then scheduling order), every timer due within
  // `d`, including ones scheduled by callbacks while advancing.
  void advance(loop::Duration d) {
    const loop::TimePoint until = now_ + d;
    for (;;) {
      auto next = timers_.end();
      for (auto it = timers_.begin(); it != timers_.end(); ++it) {
        if (it->second.at > until) continue;
        if (next == timers_.end() || it->second.at < next->second.at ||
            (it->second.at == next->second.at && it->second.seq < next->second.seq))
          next = it;
      }
      if (next == timers_.end()) break;
      if (next->second.at > now_) now_ = next->second.at;
      auto fn = std::move(next->second.fn);
      timers_.erase(next);
      fn();
    }
    now_ = until;
  }
  // Runs what is due now (zero-delay work), without moving time.
  void run_ready() { advance(loop::Duration::zero()); }
  // Armed deadlines.
  std::size_t pending() const { return timers_.size(); }

 private:
  using TimerId = std::uint64_t;

  // A deadline kept as one pending entry below. Owned by exactly one
  // TimerSlotPtr; like every slot it must not outlive its scheduler.
  class Slot final : public loop::TimerSlot {
   public:
    Slot(FakeScheduler& sched, loop::TimerTarget& target) : sched_(sched), target_(target) {}
    void arm(loop::Duration delay) override {
      disarm();
      pending_ = true;
      id_ = sched_.schedule(delay, [this] {
        pending_ = false;
        target_.on_deadline();
      });
    }
    void disarm() override {
      if (pending_) sched_.timers_.erase(id_);
      pending_ = false;
    }
    void release() noexcept override {
      disarm();
      delete this;
    }

   private:
    ~Slot() = default;
    FakeScheduler& sched_;
    loop::TimerTarget& target_;
    TimerId id_ = 0;
    bool pending_ = false;
  };

  TimerId schedule(loop::Duration delay, std::function<void()> fn) {
    if (delay < loop::Duration::zero()) delay = loop::Duration::zero();
    const TimerId id = next_++;
    timers_.emplace(id, Pending{now_ + delay, seq_++, std::move(fn)});
    return id;
  }

  struct Pending {
    loop::TimePoint at;
    std::uint64_t seq;
    std::function<void()> fn;
  };
  loop::TimePoint now_{std::chrono::seconds(1000)};
  TimerId next_ = 1;
  std::uint64_t seq_ = 0;
  std::map<TimerId, Pending> timers_;
};

}  // namespace nxdns::test
