// When a pipelined exchange counts as left behind, as a table.
#include "upstream/stall_deadline.hpp"

#include <optional>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using namespace std::chrono_literals;
using nxdns::loop::Duration;
using nxdns::loop::TimePoint;
using nxdns::upstream::stall_action;
using nxdns::upstream::stall_deadline;
using nxdns::upstream::StallAction;
using nxdns::upstream::StallInputs;

namespace {

const TimePoint t0{std::chrono::seconds(1000)};

struct Row {
  const char* situation;
  Duration written;                                // after t0
  std::optional<Duration> newest_answered_written;  // after t0
  std::optional<Duration> last_answer;              // after t0
  std::optional<Duration> floor;
  std::optional<Duration> expected;  // after t0
  nxdns::upstream::StallKind kind = nxdns::upstream::StallKind::left_behind;
};
constexpr auto silent = nxdns::upstream::StallKind::silent;

}  // namespace

TEST_GROUP(StallDeadline){};

TEST(StallDeadline, Table) {
  const Row rows[] = {
      {"nothing answered, latency unknown: nothing can say", 0ms, std::nullopt, std::nullopt, std::nullopt,
       std::nullopt},
      {"a sibling of the same write answered at 40 ms: left behind 4 RTTs later", 0ms, 0ms, 40ms, 40ms, 200ms},
      {"a later write answered: left behind too", 0ms, 10ms, 50ms, 40ms, 210ms},
      {"written in a later write, before the answer came: the server may have read it with the answered one",
       10ms, 0ms, 40ms, 40ms, 200ms},
      {"written after the last answer: not with any answered query; silent limit only", 50ms, 0ms, 40ms, 40ms, 370ms,
       silent},
      {"written long after an answered one, before its answer: its turn, not a stall; silent only", 750ms, 0ms,
       1200ms, 1ms, 1000ms, silent},
      {"written 3 ms after the answered one on a 1 ms upstream: one batch at the server", 3ms, 0ms, 4ms, 1ms, 104ms},
      {"fast upstream: at least 100 ms after the answer", 0ms, 0ms, 1ms, 1ms, 101ms},
      {"fast upstream, silent: at least 250 ms", 0ms, std::nullopt, std::nullopt, 1ms, 250ms, silent},
      {"slow upstream: at most 1 s after the answer, silent at most 1 s", 0ms, 0ms, 400ms, 400ms, 1000ms, silent},
      {"no latency known, a sibling answered: 100 ms after it", 0ms, 0ms, 30ms, std::nullopt, 130ms},
      {"silent limit earlier than the left-behind one", 0ms, 0ms, 300ms, 30ms, 250ms, silent},
  };
  for (const Row& r : rows) {
    StallInputs in;
    in.written = t0 + r.written;
    if (r.newest_answered_written) in.newest_answered_written = t0 + *r.newest_answered_written;
    if (r.last_answer) in.last_answer = t0 + *r.last_answer;
    in.latency_floor = r.floor;
    const auto got = stall_deadline(in);
    const bool same = got.has_value() == r.expected.has_value() &&
                      (!got || (got->at == t0 + *r.expected && got->kind == r.kind));
    if (!same) {
      const auto ms = [](std::optional<TimePoint> t) {
        return t ? std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(*t - t0).count()) : "none";
      };
      FAIL(nxdns::log::cat(r.situation, ": got ", ms(got ? std::optional<TimePoint>(got->at) : std::nullopt),
                           got && got->kind == silent ? " (silent)" : "", ", want ",
                           ms(r.expected ? std::optional<TimePoint>(t0 + *r.expected) : std::nullopt),
                           r.kind == silent ? " (silent)" : "")
               .c_str());
    }
  }
}

TEST(StallDeadline, ActionTable) {
  struct ActionRow {
    const char* situation;
    bool proven;
    std::size_t left_behind, silent;
    StallAction expected;
  };
  const ActionRow rows[] = {
      {"nothing due", false, 0, 0, StallAction::none},
      {"nothing due, proven", true, 0, 0, StallAction::none},
      {"one silent: duplicate", false, 0, 1, StallAction::duplicate},
      {"silent ones on a proven upstream: duplicates", true, 0, 3, StallAction::duplicate},
      {"one left behind, not proven: a dropping frontend", false, 1, 0, StallAction::close_and_resend},
      {"one left behind on a proven upstream: a cache miss, duplicate", true, 1, 0, StallAction::duplicate},
      {"one left behind and silent ones, proven: still one straggler", true, 1, 2, StallAction::duplicate},
      {"several left behind on a proven upstream: its overtaking was dropping", true, 2, 0,
       StallAction::close_and_resend},
      {"many left behind, proven (a burst on dnsdist 1.7)", true, 19, 0, StallAction::close_and_resend},
  };
  for (const ActionRow& r : rows) {
    const StallAction got = stall_action(r.proven, r.left_behind, r.silent);
    if (got != r.expected) FAIL(r.situation);
  }
}
