#pragma once
// One warning per distinct problem. A line that repeats the last one warned
// within `window` is the caller's to log at debug instead: a burst that
// fails one way (every slot of a DoT upstream dialling the same dead
// address, every exchange of a DoH one) warns once, not once per attempt,
// and a problem that persists still warns again each window.
#include <chrono>
#include <string>
#include <string_view>

namespace nxdns::log {

class RepeatLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // A minute: a dead upstream adds one warning a minute to the journal, and
  // an operator following the log still sees that the problem lasts.
  static constexpr Clock::duration window = std::chrono::seconds(60);

  // Whether `line`, happening at `now`, is to be warned: it differs from the
  // last line warned, or that one is at least `window` old. When it is, it
  // becomes the last line warned.
  bool first_in_window(std::string_view line, Clock::time_point now);

 private:
  bool warned_ = false;
  std::string last_;
  Clock::time_point last_at_{};
};

}  // namespace nxdns::log
