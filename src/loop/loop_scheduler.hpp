#pragma once
#include <map>

#include "loop/event_handles.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::loop {

// Scheduler on a libevent event_base: one one-shot timer event per pending
// callback, owned here and freed when it fires or is cancelled.
class LoopScheduler final : public Scheduler {
 public:
  explicit LoopScheduler(event_base* base) : base_(base) {}
  LoopScheduler(const LoopScheduler&) = delete;
  LoopScheduler& operator=(const LoopScheduler&) = delete;

  TimePoint now() const override { return Clock::now(); }
  TimerId schedule(Duration delay, std::function<void()> fn) override;
  void cancel(TimerId id) override;
  std::size_t pending() const { return timers_.size(); }

 private:
  struct Pending {
    LoopScheduler* owner;
    TimerId id;
    EventPtr ev;
    std::function<void()> fn;
  };
  static void on_timer(evutil_socket_t, short, void* arg);

  event_base* base_;
  TimerId next_id_ = 1;
  std::map<TimerId, std::unique_ptr<Pending>> timers_;
};

}  // namespace nxdns::loop
