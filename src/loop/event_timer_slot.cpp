#include "loop/event_timer_slot.hpp"

#include <chrono>
#include <cstdlib>

#include "log/log.hpp"
#include "loop/loop_scheduler.hpp"

namespace nxdns::loop {

EventTimerSlot::EventTimerSlot(event_base* base, LoopScheduler& owner)
    : owner_(owner), ev_(evtimer_new(base, &EventTimerSlot::on_timer, this)) {
  if (!ev_) {
    // Out of memory inside libevent: nothing sane can continue.
    log::error("loop: evtimer_new failed");
    std::abort();
  }
}

void EventTimerSlot::arm(Duration delay) {
  if (delay < Duration::zero()) delay = Duration::zero();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(delay).count();
  const timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
  // Re-adding a pending event moves its deadline; if it already expired in
  // this loop iteration, libevent also takes it off the active queue, so the
  // old deadline never fires. A zero timeout is queued, never run here.
  evtimer_add(ev_.get(), &tv);
}

// evtimer_del also takes an expired-but-not-yet-run event off the active
// queue: a Timer disarmed or destroyed by another callback in the same loop
// iteration is not called back.
void EventTimerSlot::disarm() { evtimer_del(ev_.get()); }

void EventTimerSlot::release() noexcept {
  evtimer_del(ev_.get());
  target_ = nullptr;
  owner_.recycle(*this);
}

void EventTimerSlot::on_timer(evutil_socket_t, short, void* arg) {
  // The target may destroy its Timer, which recycles this slot, which another
  // Timer may then open and arm: nothing here runs after the call.
  static_cast<EventTimerSlot*>(arg)->target_->on_deadline();
}

}  // namespace nxdns::loop
