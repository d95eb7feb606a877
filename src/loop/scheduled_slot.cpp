// The default TimerSlot: a deadline kept as one scheduled callback, for
// schedulers (the unit tests' fake clock) that only have schedule/cancel.
#include "loop/scheduler.hpp"

namespace nxdns::loop {

namespace {

class ScheduledSlot final : public TimerSlot {
 public:
  ScheduledSlot(Scheduler& sched, TimerTarget& target) : sched_(sched), target_(target) {}

  void arm(Duration delay) override {
    disarm();
    pending_ = true;
    // Captures one pointer: std::function keeps it without allocating.
    id_ = sched_.schedule(delay, [this] {
      pending_ = false;
      target_.on_deadline();
    });
  }
  void disarm() override {
    if (pending_) sched_.cancel(id_);
    pending_ = false;
  }
  void release() noexcept override {
    disarm();
    // Made by open_slot below and owned by exactly one TimerSlotPtr.
    delete this;
  }

 private:
  ~ScheduledSlot() = default;

  Scheduler& sched_;
  TimerTarget& target_;
  Scheduler::TimerId id_ = 0;
  bool pending_ = false;
};

}  // namespace

TimerSlotPtr Scheduler::open_slot(TimerTarget& target) { return TimerSlotPtr(new ScheduledSlot(*this, target)); }

}  // namespace nxdns::loop
