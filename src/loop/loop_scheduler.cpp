#include "loop/loop_scheduler.hpp"

#include <chrono>
#include <cstdlib>

#include "log/log.hpp"

namespace nxdns::loop {

Scheduler::TimerId LoopScheduler::schedule(Duration delay, std::function<void()> fn) {
  const TimerId id = next_id_++;
  auto p = std::make_unique<Pending>();
  p->owner = this;
  p->id = id;
  p->fn = std::move(fn);
  p->ev.reset(evtimer_new(base_, &LoopScheduler::on_timer, p.get()));
  if (!p->ev) {
    // Out of memory inside libevent: nothing sane can continue.
    log::error("loop: evtimer_new failed");
    std::abort();
  }
  if (delay < Duration::zero()) delay = Duration::zero();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(delay).count();
  timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
  evtimer_add(p->ev.get(), &tv);
  timers_.emplace(id, std::move(p));
  return id;
}

void LoopScheduler::cancel(TimerId id) { timers_.erase(id); }

TimerSlotPtr LoopScheduler::open_slot(TimerTarget& target) {
  if (spare_.empty()) {
    slots_.push_back(std::make_unique<EventTimerSlot>(base_, *this));
    // Capacity for every slot to come back, so recycle() never allocates;
    // doubled, so growing to N slots copies the spare list O(log N) times.
    if (spare_.capacity() < slots_.size()) spare_.reserve(2 * slots_.size());
    spare_.push_back(slots_.back().get());
  }
  EventTimerSlot* slot = spare_.back();
  spare_.pop_back();
  slot->bind(target);
  return TimerSlotPtr(slot);
}

void LoopScheduler::recycle(EventTimerSlot& slot) noexcept { spare_.push_back(&slot); }

void LoopScheduler::on_timer(evutil_socket_t, short, void* arg) {
  auto* p = static_cast<Pending*>(arg);
  LoopScheduler* self = p->owner;
  auto it = self->timers_.find(p->id);
  if (it == self->timers_.end()) return;
  // Detach before running: the callback may schedule or cancel timers.
  std::unique_ptr<Pending> owned = std::move(it->second);
  self->timers_.erase(it);
  owned->fn();
}

}  // namespace nxdns::loop
