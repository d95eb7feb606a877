#pragma once
// Diagnostics episodes: what an operator needs to see when an upstream goes
// bad, without a log line per failed query.
//
// An episode is a run of failed attempts against one upstream. The first
// failure opens it (one warn line: upstream index, redacted URL, the
// concrete cause and detail); further failures only count; the next success
// closes it (one info line: duration and failure count). Closed episodes
// stay in a small ring for /api/diagnostics.
//
// Fed from PoolOptions::on_attempt, i.e. with what the pool saw. A stale
// reused DoT session recovered by its one redial reaches the pool as a
// success (the transport hides the recovery), so it never opens an episode:
// that churn is normal and is counted as reuse_recoveries instead.
// Cancellations (shutdown, the caller giving up) are not the upstream's
// fault and are ignored.
//
// Nothing here ever carries a query name: causes and details come from the
// transports, which keep names out of them.
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loop/scheduler.hpp"
#include "upstream/pool.hpp"
#include "upstream/transport.hpp"

namespace nxdns::diag {

using WallClock = std::chrono::system_clock;

struct Episode {
  std::uint64_t id = 0;     // 1, 2, ... in opening order, per daemon
  std::size_t upstream = 0;  // configuration index
  std::string url;          // redacted
  bool open = true;
  loop::TimePoint started{};
  loop::TimePoint last_failure{};
  loop::TimePoint ended{};  // when closed
  // Wall clock at the same instants, for humans. A Pi without an RTC may
  // boot with a wrong clock; the steady times above stay right.
  WallClock::time_point started_wall{};
  WallClock::time_point ended_wall{};
  std::uint32_t failures = 0;
  upstream::Cause first_cause = upstream::Cause::ok;
  std::string first_detail;
  upstream::Cause last_cause = upstream::Cause::ok;
  std::string last_detail;
  std::array<std::uint32_t, upstream::cause_count> by_cause{};
};

struct DiagnosticsOptions {
  // Closed episodes kept for the API. Open ones are kept besides these (at
  // most one per upstream), so a flapping upstream cannot push the episode
  // that is still going on out of view.
  std::size_t capacity = 32;
};

class Diagnostics {
 public:
  explicit Diagnostics(loop::Scheduler& sched, DiagnosticsOptions opts = {},
                       std::function<WallClock::time_point()> wall = &WallClock::now);
  Diagnostics(const Diagnostics&) = delete;
  Diagnostics& operator=(const Diagnostics&) = delete;

  // One finished attempt, as the pool reports it.
  void on_attempt(const upstream::AttemptReport& r);

  // Open episodes first (newest first), then closed ones (newest first).
  std::vector<Episode> episodes() const;
  std::size_t open_count() const { return open_.size(); }
  std::uint64_t opened_total() const { return next_id_ - 1; }
  std::size_t capacity() const { return opts_.capacity; }

 private:
  loop::Scheduler& sched_;
  DiagnosticsOptions opts_;
  std::function<WallClock::time_point()> wall_;
  std::map<std::size_t, Episode> open_;  // by upstream index
  std::deque<Episode> closed_;           // oldest first
  std::uint64_t next_id_ = 1;
};

// "1.234 s" style for logs: milliseconds resolution, no locale surprises.
std::string format_seconds(loop::Duration d);
// RFC 3339 UTC with milliseconds, e.g. "2024-05-01T12:00:00.123Z".
std::string format_utc(WallClock::time_point t);

}  // namespace nxdns::diag
