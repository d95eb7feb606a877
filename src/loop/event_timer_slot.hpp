#pragma once
// A TimerSlot on the libevent loop: one timer event, created once and then
// re-armed with evtimer_add and disarmed with evtimer_del, so arming costs no
// allocation. LoopScheduler owns every slot and lends it to one Timer at a time.
#include "loop/event_handles.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::loop {

class LoopScheduler;

class EventTimerSlot final : public TimerSlot {
 public:
  EventTimerSlot(event_base* base, LoopScheduler& owner);
  EventTimerSlot(const EventTimerSlot&) = delete;
  EventTimerSlot& operator=(const EventTimerSlot&) = delete;
  ~EventTimerSlot() = default;

  // Lends the slot to `target` until release().
  void bind(TimerTarget& target) { target_ = &target; }

  void arm(Duration delay) override;
  void disarm() override;
  void release() noexcept override;

 private:
  static void on_timer(evutil_socket_t, short, void* arg);

  LoopScheduler& owner_;
  TimerTarget* target_ = nullptr;
  EventPtr ev_;
};

}  // namespace nxdns::loop
