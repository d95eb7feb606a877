#pragma once
#include <map>
#include <memory>
#include <vector>

#include "loop/event_handles.hpp"
#include "loop/event_timer_slot.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::loop {

// Scheduler on a libevent event_base. schedule() makes one one-shot timer
// event per pending callback, owned here and freed when it fires or is
// cancelled. Timers use open_slot(): slots are kept here for the scheduler's
// life and reused, so a daemon in steady state arms timers without
// allocating (at most one spare per Timer alive at the busiest moment).
// Every Timer on this scheduler must be destroyed before it.
class LoopScheduler final : public Scheduler {
 public:
  explicit LoopScheduler(event_base* base) : base_(base) {}
  LoopScheduler(const LoopScheduler&) = delete;
  LoopScheduler& operator=(const LoopScheduler&) = delete;

  TimePoint now() const override { return Clock::now(); }
  TimerId schedule(Duration delay, std::function<void()> fn) override;
  void cancel(TimerId id) override;
  TimerSlotPtr open_slot(TimerTarget& target) override;

  // One-shot callbacks from schedule() not yet run.
  std::size_t pending() const { return timers_.size(); }
  // libevent events made for slots, ever: stays at the peak number of Timers
  // alive at once however often they are armed.
  std::size_t slot_events() const { return slots_.size(); }

 private:
  friend class EventTimerSlot;
  struct Pending {
    LoopScheduler* owner;
    TimerId id;
    EventPtr ev;
    std::function<void()> fn;
  };
  static void on_timer(evutil_socket_t, short, void* arg);
  void recycle(EventTimerSlot& slot) noexcept;

  event_base* base_;
  TimerId next_id_ = 1;
  std::map<TimerId, std::unique_ptr<Pending>> timers_;
  std::vector<std::unique_ptr<EventTimerSlot>> slots_;
  std::vector<EventTimerSlot*> spare_;
};

}  // namespace nxdns::loop
