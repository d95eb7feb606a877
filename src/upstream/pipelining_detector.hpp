#pragma once
// Whether a DoT upstream answers the queries pipelined on one connection
// concurrently or one at a time, learned from the timing and order of its
// answers (RFC 7766 §6.2.1.1 lets a server do either). A pure state machine:
// the caller hands in what it saw and the time; nothing here reads a clock.
#include <cstdint>
#include <optional>

#include "loop/scheduler.hpp"
#include "upstream/pipelining_verdict.hpp"

namespace nxdns::upstream {


// One answer on one connection, as the session saw it.
struct AnswerTiming {
  loop::TimePoint written{};   // when its query was handed to TLS
  loop::TimePoint answered{};  // when its answer was taken off the connection
  // The connection's previous answer, if this connection delivered one.
  std::optional<loop::TimePoint> previous_answer;
  // Some exchange written before this one on the same connection is still
  // unanswered: the server answered out of order, which only a server that
  // works on several queries at once does.
  bool overtook = false;
  // An earlier answer on this connection overtook: the server reorders, so
  // spacing between its answers is its queries' own latency, not a line.
  bool connection_reordered = false;
  // When the previous answer's query was written. Queries written some time
  // apart are answered that far apart by a concurrent server: only spacing
  // beyond the writes' own is the server's.
  std::optional<loop::TimePoint> previous_written;
};

// How many consistent observations decide a verdict. Two, not one: a single
// late answer is noise (a cache miss upstream, a scheduling hiccup here);
// two in a row from one burst are a pattern, and a burst of 30 shows it
// within its first three answers.
inline constexpr int verdict_evidence = 2;
// A verdict not confirmed for this long is forgotten: upstreams change
// (a resolver restarted behind the same address, a frontend put in front).
inline constexpr auto verdict_lifetime = std::chrono::minutes(10);

// Asymmetric on purpose: unknown or pipelining turns serial on two answers
// one service time apart (or a stall); serial turns pipelining only on an
// answer that overtook an earlier query, never on answers that merely
// arrived together (see observe()).
class PipeliningDetector {
 public:
  void observe(const AnswerTiming& a);
  // An exchange was left unanswered while its connection answered others,
  // or stayed silent far past the upstream's latency: whatever the server
  // does with pipelined queries, it does not answer them all. Serial at once.
  void observe_stall(loop::TimePoint now);

  PipeliningVerdict verdict(loop::TimePoint now) const;
  // The fastest answer seen (write to answer) since the verdict was last
  // reset: the upstream's round trip plus its quickest service time.
  std::optional<loop::Duration> latency_floor() const { return latency_floor_; }
  // Answers further apart than this, for queries that were outstanding
  // together, were not produced together.
  loop::Duration together_window() const;

 private:
  void decide(PipeliningVerdict v, loop::TimePoint now);
  void expire(loop::TimePoint now);

  PipeliningVerdict verdict_ = PipeliningVerdict::unknown;
  loop::TimePoint confirmed_at_{};
  std::optional<loop::Duration> latency_floor_;
  int together_ = 0;  // consecutive "came together" observations
  int apart_ = 0;     // consecutive "came one at a time" observations
  std::optional<loop::TimePoint> last_apart_;  // when the last counted "apart" answer came
};

// Pure classification of one answer, exposed for the table test.
enum class AnswerEvidence : std::uint8_t {
  none,      // says nothing (first answer, or not outstanding with the previous one)
  together,  // came with the previous answer
  overtook,  // came before an earlier-written query's answer
  apart,     // came one service time after the previous, in order
};
const char* describe(AnswerEvidence e);
AnswerEvidence classify_answer(const AnswerTiming& a, loop::Duration together_window,
                               std::optional<loop::Duration> latency_floor);

}  // namespace nxdns::upstream
