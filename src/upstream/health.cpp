#include "upstream/health.hpp"

#include <algorithm>

namespace nxdns::upstream {

const char* describe(HealthState s) {
  switch (s) {
    case HealthState::healthy: return "healthy";
    case HealthState::failing: return "failing";
    case HealthState::backoff: return "backoff";
  }
  return "unknown";
}

void Health::record_success() {
  consecutive_failures_ = 0;
  backoff_steps_ = 0;
  backoff_until_ = {};
}

void Health::forget_failures() {
  consecutive_failures_ = 0;
  backoff_steps_ = 0;
  backoff_until_ = {};
}

void Health::record_failure(loop::TimePoint now) {
  ++consecutive_failures_;
  if (consecutive_failures_ < policy_.failure_threshold) return;
  // Each further failure past the threshold (a failed probe after a backoff
  // ended) doubles the wait, up to the cap.
  loop::Duration wait = policy_.initial_backoff;
  for (std::uint32_t i = 0; i < backoff_steps_ && wait < policy_.max_backoff; ++i) wait *= 2;
  wait = std::min(wait, policy_.max_backoff);
  ++backoff_steps_;
  ++backoffs_total_;
  backoff_until_ = now + wait;
}

HealthState Health::state(loop::TimePoint now) const {
  if (consecutive_failures_ == 0) return HealthState::healthy;
  if (consecutive_failures_ >= policy_.failure_threshold && now < backoff_until_) return HealthState::backoff;
  return HealthState::failing;
}

}  // namespace nxdns::upstream
