#include "loop/loop_scheduler.hpp"

namespace nxdns::loop {

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

}  // namespace nxdns::loop
