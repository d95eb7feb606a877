#pragma once
#include <memory>
#include <vector>

#include "loop/event_handles.hpp"
#include "loop/event_timer_slot.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::loop {

// Scheduler on a libevent event_base: one libevent timer event per slot.
// Slots are kept here for the scheduler's life and reused, so a daemon in
// steady state arms timers without allocating (at most one spare per Timer
// alive at the busiest moment). Every Timer on this scheduler must be
// destroyed before it.
class LoopScheduler final : public Scheduler {
 public:
  explicit LoopScheduler(event_base* base) : base_(base) {}
  LoopScheduler(const LoopScheduler&) = delete;
  LoopScheduler& operator=(const LoopScheduler&) = delete;

  TimePoint now() const override { return Clock::now(); }
  TimerSlotPtr open_slot(TimerTarget& target) override;

  // libevent events made for slots, ever: stays at the peak number of Timers
  // alive at once however often they are armed.
  std::size_t slot_events() const { return slots_.size(); }

 private:
  friend class EventTimerSlot;
  void recycle(EventTimerSlot& slot) noexcept;

  event_base* base_;
  std::vector<std::unique_ptr<EventTimerSlot>> slots_;
  std::vector<EventTimerSlot*> spare_;
};

}  // namespace nxdns::loop
