#pragma once
// Per-entry health: consecutive failures, an exponential backoff with a cap,
// and a half-open probe when a backoff ends.
//
// The rules:
// - Failures in a row up to the threshold put a healthy entry into its first
//   backoff. Failures of exchanges that were already running when it began
//   (a burst that fails together) add nothing: one event, one step.
// - While in backoff the entry is skipped on the pool's first pass but stays
//   a last resort, so a lone upstream that comes back is used at once.
// - When the backoff ends the entry is half-open (`probing`): exactly one
//   exchange at a time is admitted as the probe; every other caller keeps
//   failing over (or uses the entry as a last resort). Only the probe's
//   failure escalates (doubles the wait, up to the cap); its success, or any
//   other success, recovers the entry. A probe that ends without a verdict
//   (cancelled, neutral answer) frees the probe for the next exchange.
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

// healthy: no failure since the last success. failing: failures below the
// threshold, used normally. backoff: skipped on the first pass until the wait
// ends. probing: the wait ended; one probe exchange at a time is admitted.
enum class HealthState { healthy, failing, backoff, probing };
const char* describe(HealthState s);

class Health {
 public:
  // Identifies the probe exchange; 0 for every other exchange.
  using ProbeToken = std::uint64_t;

  explicit Health(HealthPolicy p = {}) : policy_(p) {}

  // Whether a new exchange may use the entry on the pool's first pass:
  // healthy, failing, or half-open with the probe free.
  bool admits(loop::TimePoint now) const;
  // An exchange starts at the entry (first pass or last resort). Returns its
  // probe token when it is the half-open probe, else 0.
  ProbeToken exchange_started(loop::TimePoint now);
  // The exchange carrying `probe` ended without saying anything about the
  // upstream (cancelled by the caller, a neutral answer): the next exchange
  // may probe. Ignored for 0 or a stale token.
  void exchange_abandoned(ProbeToken probe);

  void record_success();
  void record_failure(loop::TimePoint now, ProbeToken probe = 0);
  // The failures so far are no evidence about the upstream any more (the
  // clock they were judged by has stepped): healthy again, no backoff. Not
  // a success: nothing else is counted.
  void forget_failures();

  HealthState state(loop::TimePoint now) const;
  loop::TimePoint backoff_until() const { return backoff_until_; }
  std::uint32_t consecutive_failures() const { return consecutive_failures_; }
  std::uint64_t backoffs_total() const { return backoffs_total_; }

 private:
  void back_off(loop::TimePoint now);

  HealthPolicy policy_;
  std::uint32_t consecutive_failures_ = 0;
  std::uint32_t backoff_steps_ = 0;  // 0: never backed off since the last success
  loop::TimePoint backoff_until_{};
  std::uint64_t backoffs_total_ = 0;
  ProbeToken probe_ = 0;  // the probe in flight, 0 when none
  ProbeToken next_probe_ = 1;
};

}  // namespace nxdns::upstream
