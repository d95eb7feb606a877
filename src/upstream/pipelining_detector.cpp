#include "upstream/pipelining_detector.hpp"

#include <algorithm>

namespace nxdns::upstream {

namespace {

// Answers produced together leave the server within microseconds and reach
// us within one scheduling slice; a one-at-a-time server spaces them by its
// service time. A tenth of the fastest round trip separates the two at any
// distance (40 ms RTT: 4 ms; a serial server's 10 ms per query is far
// beyond it) and never less than a millisecond, below which loop jitter on
// a loaded Pi would be read as spacing.
constexpr loop::Duration min_together_window = std::chrono::milliseconds(1);
constexpr int together_divisor = 10;

}  // namespace

const char* describe(PipeliningVerdict v) {
  switch (v) {
    case PipeliningVerdict::unknown: return "unknown";
    case PipeliningVerdict::pipelining: return "pipelining";
    case PipeliningVerdict::serial: return "serial";
  }
  return "unknown";
}

const char* describe(AnswerEvidence e) {
  switch (e) {
    case AnswerEvidence::none: return "none";
    case AnswerEvidence::together: return "together";
    case AnswerEvidence::overtook: return "overtook";
    case AnswerEvidence::apart: return "apart";
  }
  return "none";
}

AnswerEvidence classify_answer(const AnswerTiming& a, loop::Duration together_window,
                               std::optional<loop::Duration> latency_floor) {
  // A one-at-a-time server answers in the order it read: overtaking is the
  // one observation a serial server can never produce.
  if (a.overtook) return AnswerEvidence::overtook;
  if (!a.previous_answer) return AnswerEvidence::none;
  // Written after the previous answer arrived: the two were never
  // outstanding together, so their spacing is the client's, not the server's.
  if (a.written > *a.previous_answer) return AnswerEvidence::none;
  const loop::Duration gap = a.answered - *a.previous_answer;
  if (gap <= together_window) return AnswerEvidence::together;
  if (a.connection_reordered) return AnswerEvidence::none;
  // Only queries that left together can show a line. A client pacing its
  // queries (one at its rate limit, a device polling) gets paced answers
  // from a concurrent server, each with its own jitter: on a loaded machine
  // two such answers a few ms late in a row read as "one at a time" (a
  // serial verdict from one client's steady 50 queries/s beside a burst,
  // which then spread the next burst over fresh dials). So queries written
  // more than a window apart say nothing, and for the rest only spacing
  // beyond the writes' own is the server's. What this gives up: a serial
  // server seen only through paced queries (its line grows by its service
  // time minus the pacing, slowly); the next burst shows it at once, and
  // the stall watch meanwhile.
  if (a.previous_written) {
    const loop::Duration spacing = a.written - *a.previous_written;
    if (spacing > together_window) return AnswerEvidence::none;
    if (spacing > loop::Duration::zero() && gap - spacing <= together_window) return AnswerEvidence::none;
  }
  // Later than the previous answer, in order. It says "one at a time" only
  // if this query had been outstanding long enough that a concurrent server
  // would already have answered it when the previous answer came.
  const loop::Duration waited = *a.previous_answer - a.written;
  if (latency_floor && waited + together_window < *latency_floor) return AnswerEvidence::none;
  return AnswerEvidence::apart;
}

loop::Duration PipeliningDetector::together_window() const {
  if (!latency_floor_) return min_together_window;
  return std::max(min_together_window, *latency_floor_ / together_divisor);
}

void PipeliningDetector::expire(loop::TimePoint now) {
  if (verdict_ == PipeliningVerdict::unknown || now - confirmed_at_ < verdict_lifetime) return;
  verdict_ = PipeliningVerdict::unknown;
  latency_floor_.reset();
  last_apart_.reset();
  together_ = apart_ = 0;
}

void PipeliningDetector::decide(PipeliningVerdict v, loop::TimePoint now) {
  verdict_ = v;
  confirmed_at_ = now;
}

void PipeliningDetector::observe(const AnswerTiming& a) {
  expire(a.answered);
  const loop::Duration latency = a.answered - a.written;
  // Classified against what was known before this answer: its own latency
  // must not widen the window it is judged by.
  const AnswerEvidence e = classify_answer(a, together_window(), latency_floor_);
  if (!latency_floor_ || latency < *latency_floor_) latency_floor_ = latency;
  switch (e) {
    case AnswerEvidence::none: return;
    case AnswerEvidence::overtook:
      apart_ = 0;
      together_ = verdict_evidence;
      decide(PipeliningVerdict::pipelining, a.answered);
      return;
    case AnswerEvidence::together:
      apart_ = 0;
      ++together_;
      // Answers of a one-at-a-time server also arrive "together" when this
      // loop was too busy to read them as they came (they queue in the
      // socket): that cannot undo a serial verdict, only overtaking can (or
      // ageing). Being wrongly serial costs a spread (the placement of a
      // burst with no verdict); being wrongly pipelining costs a staircase.
      if (verdict_ == PipeliningVerdict::serial) return;
      if (together_ >= verdict_evidence) decide(PipeliningVerdict::pipelining, a.answered);
      return;
    case AnswerEvidence::apart:
      // Late answers of several connections read in one instant are one
      // event (this loop or the path stalled), not a line on each: a
      // server's line is per connection, its answers a service time apart.
      if (last_apart_ && a.answered - *last_apart_ <= together_window()) return;
      last_apart_ = a.answered;
      together_ = 0;
      if (++apart_ >= verdict_evidence) decide(PipeliningVerdict::serial, a.answered);
      return;
  }
}

void PipeliningDetector::observe_stall(loop::TimePoint now) {
  expire(now);
  together_ = 0;
  apart_ = verdict_evidence;
  decide(PipeliningVerdict::serial, now);
}

PipeliningVerdict PipeliningDetector::verdict(loop::TimePoint now) const {
  if (verdict_ != PipeliningVerdict::unknown && now - confirmed_at_ >= verdict_lifetime) {
    return PipeliningVerdict::unknown;
  }
  return verdict_;
}

}  // namespace nxdns::upstream
