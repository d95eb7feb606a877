#include "upstream/health.hpp"

#include <algorithm>

namespace nxdns::upstream {

const char* describe(HealthState s) {
  switch (s) {
    case HealthState::healthy: return "healthy";
    case HealthState::failing: return "failing";
    case HealthState::backoff: return "backoff";
    case HealthState::probing: return "probing";
  }
  return "unknown";
}

HealthState Health::state(loop::TimePoint now) const {
  if (backoff_steps_ > 0) return now < backoff_until_ ? HealthState::backoff : HealthState::probing;
  return consecutive_failures_ == 0 ? HealthState::healthy : HealthState::failing;
}

bool Health::admits(loop::TimePoint now) const {
  switch (state(now)) {
    case HealthState::healthy:
    case HealthState::failing: return true;
    case HealthState::backoff: return false;
    case HealthState::probing: return probe_ == 0;
  }
  return false;
}

Health::ProbeToken Health::exchange_started(loop::TimePoint now) {
  if (state(now) != HealthState::probing || probe_ != 0) return 0;
  probe_ = next_probe_++;
  return probe_;
}

void Health::exchange_abandoned(ProbeToken probe) {
  if (probe != 0 && probe == probe_) probe_ = 0;
}

void Health::record_success() {
  consecutive_failures_ = 0;
  backoff_steps_ = 0;
  backoff_until_ = {};
  probe_ = 0;
}

void Health::forget_failures() {
  consecutive_failures_ = 0;
  backoff_steps_ = 0;
  backoff_until_ = {};
  probe_ = 0;
}

void Health::record_failure(loop::TimePoint now, ProbeToken probe) {
  ++consecutive_failures_;
  if (backoff_steps_ == 0) {
    // Not backed off yet: the threshold decides. Failures arriving together
    // reach it once; the ones after it find backoff_steps_ > 0.
    if (consecutive_failures_ >= policy_.failure_threshold) back_off(now);
    return;
  }
  // Backed off: only the half-open probe is evidence about the upstream as
  // it is now. Exchanges started before or during the backoff (a burst, last
  // resorts) failing later say nothing new and must not escalate, or 30
  // concurrent failures would jump straight to the cap.
  if (probe != 0 && probe == probe_) {
    probe_ = 0;
    back_off(now);
  }
}

void Health::back_off(loop::TimePoint now) {
  loop::Duration wait = policy_.initial_backoff;
  for (std::uint32_t i = 0; i < backoff_steps_ && wait < policy_.max_backoff; ++i) wait *= 2;
  wait = std::min(wait, policy_.max_backoff);
  ++backoff_steps_;
  ++backoffs_total_;
  backoff_until_ = now + wait;
}

}  // namespace nxdns::upstream
