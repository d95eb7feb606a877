#include "log/repeat_limiter.hpp"

namespace nxdns::log {

bool RepeatLimiter::first_in_window(std::string_view line, Clock::time_point now) {
  if (warned_ && line == last_ && now - last_at_ < window) return false;
  warned_ = true;
  last_.assign(line);
  last_at_ = now;
  return true;
}

}  // namespace nxdns::log
