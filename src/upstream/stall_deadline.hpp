#pragma once
// When a pipelined DoT exchange counts as left behind by its session, as a
// pure function so the rule is table-testable (tests/upstream/stall_deadline_test.cpp).
// Some frontends answer only part of what arrives together (dnsdist 1.7's
// TLS frontend: one answer per coalesced write, then its idle close); the
// rest would wait out the whole attempt budget and end as SERVFAIL. Past this
// deadline the exchange is re-sent on a fresh session (once) and the
// upstream is treated as non-pipelining.
#include <cstddef>
#include <chrono>
#include <cstdint>
#include <optional>

#include "loop/scheduler.hpp"

namespace nxdns::upstream {

// Left behind: the session answered a query written together with this one
// (or later; or at most one fastest round trip, at least 5 ms, earlier and
// still unanswered when this one went out: a later write of the same burst
// that the server may have read with it), and this one is still unanswered
// this long after that last answer.
// Generous against a concurrent server whose answers come out of order (a
// recursive resolver's cache miss): four of the upstream's fastest round
// trips, at least 100 ms, at most 1 s (half the default attempt budget).
// Silent: no answer at all this long after writing it, when the upstream's
// latency is known: eight fastest round trips, 250 ms .. 1 s.
inline constexpr int silent_rtts = 8;
inline constexpr loop::Duration silent_min = std::chrono::milliseconds(250);

struct StallInputs {
  loop::TimePoint written;  // this exchange's query went out
  // The newest write time among the exchanges this connection answered
  // (nullopt before its first answer), and when it last answered.
  std::optional<loop::TimePoint> newest_answered_written;
  std::optional<loop::TimePoint> last_answer;
  std::optional<loop::Duration> latency_floor;  // the upstream's (PipeliningDetector)
};

enum class StallKind : std::uint8_t {
  left_behind,  // the connection answers others written with or after it
  silent,       // nothing for it, far past the upstream's latency
};
struct Stall {
  loop::TimePoint at;
  StallKind kind;
};

// What the stall watch does about a session whose exchanges are past their
// deadlines. On an upstream not proven to pipeline, any left-behind one
// means a frontend that drops part of what it gets: close the session and
// re-send its exchanges on fresh sessions, one query per session. On one
// proven to pipeline (answers out of order), a single straggler is a
// recursive resolver's cache miss and gets only a duplicate; but several
// left behind at once on one session is not one slow answer: the
// "overtaking" that proved pipelining was that frontend answering a later
// write while dropping the earlier ones (dnsdist 1.7's TLS frontend).
enum class StallAction : std::uint8_t { none, duplicate, close_and_resend };
StallAction stall_action(bool proven_pipelining, std::size_t left_behind_due, std::size_t silent_due);

// The earlier of the two deadlines, or nullopt while nothing can say so (no
// answer on the connection and no known latency).
std::optional<Stall> stall_deadline(const StallInputs& in);

}  // namespace nxdns::upstream
