#include "upstream/stall_deadline.hpp"

#include <algorithm>

namespace nxdns::upstream {

namespace {

constexpr loop::Duration left_behind_min = std::chrono::milliseconds(100);
constexpr loop::Duration silent_min = std::chrono::milliseconds(250);
constexpr loop::Duration stall_max = std::chrono::seconds(1);
constexpr int left_behind_rtts = 4;
constexpr int silent_rtts = 8;

loop::Duration scaled(std::optional<loop::Duration> floor, int times, loop::Duration lo) {
  if (!floor) return lo;
  return std::clamp(*floor * times, lo, stall_max);
}

}  // namespace

std::optional<Stall> stall_deadline(const StallInputs& in) {
  std::optional<Stall> at;
  // Outstanding when the connection last answered: the server may have read
  // it in the same read as the answered query (a burst goes out in several
  // writes, one per loop turn, that the server's TCP read joins), so it was
  // "written with" the answered sibling from the server's side. A serial
  // server's line does not trip this: each answer moves last_answer on.
  const bool outstanding_at_answer = in.last_answer && in.written <= *in.last_answer;
  const bool overtaken = in.newest_answered_written && *in.newest_answered_written >= in.written;
  if (in.last_answer && (overtaken || outstanding_at_answer)) {
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
