#pragma once
// Per-entry health: consecutive failures and an exponential backoff with a
// cap. An entry in backoff is skipped on the pool's first pass but remains a
// last resort, so a lone upstream that comes back is used at once.
#include <cstdint>

#include "loop/scheduler.hpp"

namespace nxdns::upstream {

struct HealthPolicy {
  // Failures in a row before an entry backs off. One failure is often a
  // single lost packet; two in a row is a pattern worth routing around.
  std::uint32_t failure_threshold = 2;
  loop::Duration initial_backoff = std::chrono::seconds(1);
  // Bounds how long a recovered primary stays unused while a secondary
  // serves (the WAN-flap case).
  loop::Duration max_backoff = std::chrono::seconds(16);
};

enum class HealthState { healthy, failing, backoff };
const char* describe(HealthState s);

class Health {
 public:
  explicit Health(HealthPolicy p = {}) : policy_(p) {}

  void record_success();
  void record_failure(loop::TimePoint now);
  // The failures so far are no evidence about the upstream any more (the
  // clock they were judged by has stepped): healthy again, no backoff. Not
  // a success: nothing else is counted.
  void forget_failures();

  HealthState state(loop::TimePoint now) const;
  bool in_backoff(loop::TimePoint now) const { return state(now) == HealthState::backoff; }
  loop::TimePoint backoff_until() const { return backoff_until_; }
  std::uint32_t consecutive_failures() const { return consecutive_failures_; }
  std::uint64_t backoffs_total() const { return backoffs_total_; }

 private:
  HealthPolicy policy_;
  std::uint32_t consecutive_failures_ = 0;
  std::uint32_t backoff_steps_ = 0;
  loop::TimePoint backoff_until_{};
  std::uint64_t backoffs_total_ = 0;
};

}  // namespace nxdns::upstream
