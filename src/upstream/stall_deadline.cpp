#include "upstream/stall_deadline.hpp"

#include <algorithm>

namespace nxdns::upstream {

namespace {

constexpr loop::Duration left_behind_min = std::chrono::milliseconds(100);
constexpr loop::Duration stall_max = std::chrono::seconds(1);
constexpr int left_behind_rtts = 4;
// Writes this close count as one batch at the server however fast the
// upstream: a few loop turns on a loaded Pi.
constexpr loop::Duration written_together_span = std::chrono::milliseconds(5);

loop::Duration scaled(std::optional<loop::Duration> floor, int times, loop::Duration lo) {
  if (!floor) return lo;
  return std::clamp(*floor * times, lo, stall_max);
}

}  // namespace

std::optional<Stall> stall_deadline(const StallInputs& in) {
  std::optional<Stall> at;
  // Written with the answered query: at or before it, or in the moments
  // after it (a later write of the same burst, one loop turn on) and before
  // its answer came, which the server may have read in the same read as the
  // answered one. Not a query written long after an earlier one that is
  // answered first: that is the earlier one's turn (a line, or a concurrent
  // server's slow query), whatever happens to the later one.
  const loop::Duration together = std::max(in.latency_floor.value_or(loop::Duration::zero()), written_together_span);
  const bool written_with = in.newest_answered_written && in.last_answer && in.written <= *in.last_answer &&
                            in.written - *in.newest_answered_written <= together;
  if (written_with) {
    at = Stall{*in.last_answer + scaled(in.latency_floor, left_behind_rtts, left_behind_min), StallKind::left_behind};
  }
  if (in.latency_floor) {
    const loop::TimePoint silent = in.written + scaled(in.latency_floor, silent_rtts, silent_min);
    if (!at || silent < at->at) at = Stall{silent, StallKind::silent};
  }
  return at;
}

StallAction stall_action(bool proven_pipelining, std::size_t left_behind_due, std::size_t silent_due) {
  if (left_behind_due > (proven_pipelining ? 1U : 0U)) return StallAction::close_and_resend;
  if (left_behind_due + silent_due > 0) return StallAction::duplicate;
  return StallAction::none;
}

}  // namespace nxdns::upstream
