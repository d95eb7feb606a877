#pragma once
// Drives a real libevent loop from a test: until a condition holds (false at
// a deadline, so the test fails with its own message) or for a fixed time.
// A 5 ms persistent timer wakes EVLOOP_ONCE, so the deadline is checked even
// when nothing else happens on the loop.
#include <event2/event.h>

#include <chrono>
#include <functional>

#include "loop/event_handles.hpp"

namespace nxdns::test {

class LoopDriver {
 public:
  explicit LoopDriver(event_base* base) : base_(base), ticker_(event_new(base, -1, EV_PERSIST, &tick, nullptr)) {
    timeval tv{0, 5000};
    event_add(ticker_.get(), &tv);
  }

  // True once `pred` holds; false when `ms` passed first.
  bool until(const std::function<bool()>& pred, int ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      event_base_loop(base_, EVLOOP_ONCE);
    }
    return true;
  }

  void run_for(int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) event_base_loop(base_, EVLOOP_ONCE);
  }

 private:
  static void tick(evutil_socket_t, short, void*) {}

  event_base* base_;
  loop::EventPtr ticker_;
};

}  // namespace nxdns::test
