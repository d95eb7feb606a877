// The pipelining detector: one answer's classification as a table, then
// whole bursts against modelled upstreams under a fake clock (a concurrent
// one, a serial one, one that answers out of order, one that drops queries)
// and the verdict's ageing.
#include "upstream/pipelining_detector.hpp"

#include <chrono>
#include <optional>
#include <vector>

#include "log/log.hpp"
#include "support/fake_scheduler.hpp"

#include <CppUTest/TestHarness.h>

using namespace std::chrono_literals;
using nxdns::loop::Duration;
using nxdns::loop::TimePoint;
using nxdns::upstream::AnswerEvidence;
using nxdns::upstream::AnswerTiming;
using nxdns::upstream::classify_answer;
using nxdns::upstream::PipeliningDetector;
using nxdns::upstream::PipeliningVerdict;

namespace {

const TimePoint t0{std::chrono::seconds(1000)};

struct Row {
  const char* situation;
  Duration written;                   // after t0
  Duration answered;                  // after t0
  std::optional<Duration> previous;   // previous answer on the connection, after t0
  bool overtook;
  std::optional<Duration> floor;      // latency floor known before
  AnswerEvidence expected;
};

// together window 4 ms throughout (a 40 ms floor / 10).
const Row rows[] = {
    {"first answer on a connection says nothing", 0ms, 40ms, std::nullopt, false, std::nullopt, AnswerEvidence::none},
    {"answered before an earlier query: concurrent", 0ms, 40ms, 39ms, true, 40ms, AnswerEvidence::overtook},
    {"overtaking wins even without a previous answer", 0ms, 40ms, std::nullopt, true, std::nullopt,
     AnswerEvidence::overtook},
    {"same batch, 1 ms after the previous: together", 0ms, 41ms, 40ms, false, 40ms, AnswerEvidence::together},
    {"same read: together", 0ms, 40ms, 40ms, false, 40ms, AnswerEvidence::together},
    {"same batch, 10 ms after the previous, in order: apart", 0ms, 50ms, 40ms, false, 40ms, AnswerEvidence::apart},
    {"written after the previous answer: not outstanding together", 45ms, 90ms, 40ms, false, 40ms,
     AnswerEvidence::none},
    {"written shortly before the previous answer: too young to judge", 30ms, 80ms, 40ms, false, 40ms,
     AnswerEvidence::none},
    {"written a floor before the previous answer, 10 ms later: apart", 0ms, 50ms, 40ms, false, 40ms,
     AnswerEvidence::apart},
    {"no floor yet, spaced: apart", 0ms, 50ms, 40ms, false, std::nullopt, AnswerEvidence::apart},
};

}  // namespace

TEST_GROUP(AnswerClassification){};

TEST(AnswerClassification, SpacingOnAConnectionThatReorderedSaysNothing) {
  AnswerTiming a;
  a.written = t0;
  a.previous_answer = t0 + 40ms;
  a.answered = t0 + 60ms;
  a.connection_reordered = true;
  STRCMP_EQUAL("none", describe(classify_answer(a, 4ms, 40ms)));
  a.answered = t0 + 41ms;  // together still counts
  STRCMP_EQUAL("together", describe(classify_answer(a, 4ms, 40ms)));
}

// Queries written apart, answered in order: a concurrent server spaces its
// answers as the queries were spaced, each with its own jitter. Only
// queries written within the window of each other are judged, and only on
// spacing beyond the writes' own. Together window 4 ms, floor 40 ms.
struct PacedRow {
  const char* situation;
  Duration previous_written, written;  // after t0
  Duration previous, answered;         // after t0
  AnswerEvidence expected;
};
const PacedRow paced_rows[] = {
    {"written 2 ms apart, answered 5 ms apart (3 ms of jitter): none", 0ms, 2ms, 40ms, 45ms, AnswerEvidence::none},
    {"written 20 ms apart, answered 23 ms apart, in order: none", 0ms, 20ms, 58ms, 81ms, AnswerEvidence::none},
    {"written 2 ms apart, answered 10 ms apart (one 10 ms service time): apart", 0ms, 2ms, 50ms, 60ms,
     AnswerEvidence::apart},
    {"written 8 ms apart, answered 14 ms apart (a hiccup on a loaded machine): none", 0ms, 8ms, 40ms, 54ms,
     AnswerEvidence::none},
    {"written 1 ms apart, answered together: together", 0ms, 1ms, 40ms, 41ms, AnswerEvidence::together},
    {"written together, answered 10 ms apart: apart", 0ms, 0ms, 40ms, 50ms, AnswerEvidence::apart},
};

TEST(AnswerClassification, PacedWritesSpaceTheirAnswers) {
  for (const PacedRow& r : paced_rows) {
    AnswerTiming a;
    a.previous_written = t0 + r.previous_written;
    a.written = t0 + r.written;
    a.previous_answer = t0 + r.previous;
    a.answered = t0 + r.answered;
    const AnswerEvidence got = classify_answer(a, 4ms, 40ms);
    if (got != r.expected) {
      FAIL(nxdns::log::cat(r.situation, ": got ", describe(got), ", want ", describe(r.expected)).c_str());
    }
  }
}

TEST(AnswerClassification, Table) {
  for (const Row& r : rows) {
    AnswerTiming a;
    a.written = t0 + r.written;
    a.answered = t0 + r.answered;
    if (r.previous) a.previous_answer = t0 + *r.previous;
    a.overtook = r.overtook;
    const AnswerEvidence got = classify_answer(a, 4ms, r.floor);
    if (got != r.expected) {
      FAIL(nxdns::log::cat(r.situation, ": got ", describe(got), ", want ", describe(r.expected)).c_str());
    }
  }
}

namespace {

// One connection carrying a burst written at once, answered by a modelled
// server; feeds the detector exactly what DotSession would.
struct Connection {
  nxdns::test::FakeScheduler& clock;
  PipeliningDetector& detector;
  std::optional<TimePoint> last_answer;
  bool reordered = false;
  std::optional<TimePoint> last_answered_written;

  // `answer_at[i]`: when (after the write) the i-th written query is
  // answered; nullopt: never. Answers are delivered in time order.
  void burst(const std::vector<std::optional<Duration>>& answer_at) {
    const TimePoint written = clock.now();
    struct Due {
      Duration at;
      std::size_t index;
    };
    std::vector<Due> due;
    for (std::size_t i = 0; i < answer_at.size(); ++i) {
      if (answer_at[i]) due.push_back({*answer_at[i], i});
    }
    std::stable_sort(due.begin(), due.end(), [](const Due& a, const Due& b) { return a.at < b.at; });
    std::vector<bool> answered(answer_at.size(), false);
    for (const Due& d : due) {
      const Duration wait = written + d.at - clock.now();
      clock.advance(wait > Duration::zero() ? wait : Duration::zero());
      AnswerTiming a;
      a.written = written;
      a.answered = clock.now();
      a.previous_answer = last_answer;
      a.previous_written = last_answered_written;
      for (std::size_t k = 0; k < d.index; ++k) a.overtook = a.overtook || !answered[k];
      a.connection_reordered = reordered;
      reordered = reordered || a.overtook;
      answered[d.index] = true;
      last_answer = a.answered;
      last_answered_written = a.written;
      detector.observe(a);
    }
  }

  // A client pacing its queries `every` apart; the i-th is answered
  // `latency[i]` after its own write (in order: the caller keeps it so).
  void paced(Duration every, const std::vector<Duration>& latency) {
    const TimePoint start = clock.now();
    for (std::size_t i = 0; i < latency.size(); ++i) {
      AnswerTiming a;
      a.written = start + every * static_cast<int>(i);
      a.answered = a.written + latency[i];
      a.previous_answer = last_answer;
      a.previous_written = last_answered_written;
      a.connection_reordered = reordered;
      const Duration wait = a.answered - clock.now();
      clock.advance(wait > Duration::zero() ? wait : Duration::zero());
      last_answer = a.answered;
      last_answered_written = a.written;
      detector.observe(a);
    }
  }
};

std::vector<std::optional<Duration>> concurrent(std::size_t n, Duration rtt, Duration jitter_step = 0us) {
  std::vector<std::optional<Duration>> v;
  for (std::size_t i = 0; i < n; ++i) v.emplace_back(rtt + jitter_step * static_cast<int>(i));
  return v;
}

std::vector<std::optional<Duration>> serial(std::size_t n, Duration rtt, Duration per_query) {
  std::vector<std::optional<Duration>> v;
  for (std::size_t i = 0; i < n; ++i) v.emplace_back(rtt + per_query * static_cast<int>(i + 1));
  return v;
}

}  // namespace

TEST_GROUP(PipeliningDetector) {
  nxdns::test::FakeScheduler clock;
  PipeliningDetector detector;
  Connection conn{clock, detector, std::nullopt, false, std::nullopt};

  PipeliningVerdict verdict() { return detector.verdict(clock.now()); }
};

TEST(PipeliningDetector, UnknownUntilAnswersWereOutstandingTogether) {
  CHECK_TRUE(verdict() == PipeliningVerdict::unknown);
  // Sequential single queries, each written after the previous answer:
  // they say nothing about pipelining, however they are spaced.
  for (int i = 0; i < 5; ++i) {
    conn.burst({40ms});
    clock.advance(100ms);
  }
  CHECK_TRUE(verdict() == PipeliningVerdict::unknown);
  CHECK_TRUE(detector.latency_floor() == Duration(40ms));
}

TEST(PipeliningDetector, ConcurrentUpstreamIsPipeliningWithinABurst) {
  conn.burst({40ms});  // the one query before the burst
  conn.burst(concurrent(30, 40ms, 50us));
  STRCMP_EQUAL("pipelining", describe(verdict()));
}

TEST(PipeliningDetector, ConcurrentUpstreamAnsweringOutOfOrderIsPipelining) {
  // A recursive resolver: cache misses take as long as they take.
  conn.burst({60ms, 45ms, 90ms, 41ms});
  STRCMP_EQUAL("pipelining", describe(verdict()));
}

TEST(PipeliningDetector, SerialUpstreamIsSerialByItsThirdAnswer) {
  // 40 ms RTT, 10 ms per query, one at a time: answers at 50, 60, 70 ...
  conn.burst(serial(3, 40ms, 10ms));
  STRCMP_EQUAL("serial", describe(verdict()));
}

TEST(PipeliningDetector, SerialUpstreamWithoutLatencyIsSerialToo) {
  // Loopback, no round trip: the server's 10 ms per query is all there is.
  conn.burst(serial(6, 0ms, 10ms));
  STRCMP_EQUAL("serial", describe(verdict()));
}

TEST(PipeliningDetector, OneLateAnswerIsNotAVerdict) {
  // One straggler (a cache miss), then the rest together.
  conn.burst({40ms, 55ms, 55ms, 55ms});
  STRCMP_EQUAL("pipelining", describe(verdict()));
  PipeliningDetector fresh;
  Connection c2{clock, fresh, std::nullopt, false, std::nullopt};
  c2.burst({40ms, 55ms});
  STRCMP_EQUAL("unknown", describe(fresh.verdict(clock.now())));
}

TEST(PipeliningDetector, PacedQueriesToAConcurrentUpstreamAreNotSerial) {
  // One client at its rate limit, 2 ms apart, while this loop (or the path)
  // falls a little further behind with each answer: 3 ms more latency per
  // answer, answers 5 ms apart. A concurrent upstream all the same; before,
  // this read as a serial line (and the next burst was spread over dials).
  conn.burst(concurrent(4, 40ms));
  STRCMP_EQUAL("pipelining", describe(verdict()));
  clock.advance(1s);
  conn.paced(2ms, {40ms, 43ms, 46ms, 49ms, 52ms, 55ms});
  STRCMP_EQUAL("pipelining", describe(verdict()));
}

TEST(PipeliningDetector, PacedAnswersLateTogetherAfterAHiccupAreNotSerial) {
  // Queries 10 ms apart; this loop (or the path) stalls and the answers come
  // 6 ms later than their spacing, several in a row.
  conn.burst(concurrent(4, 40ms));
  clock.advance(1s);
  conn.paced(10ms, {40ms, 46ms, 52ms, 58ms, 64ms});
  STRCMP_EQUAL("pipelining", describe(verdict()));
}

TEST(PipeliningDetector, LateAnswersOfTwoConnectionsInOneInstantAreOneObservation) {
  // Two connections, each with a query written 3 ms after its previous
  // one; both answers are read in the same instant 8 ms after their
  // connection's previous answer (a stall here): one event, not a line.
  Connection other{clock, detector, std::nullopt, false, std::nullopt};
  conn.burst(concurrent(4, 40ms));
  other.burst(concurrent(4, 40ms));
  STRCMP_EQUAL("pipelining", describe(verdict()));
  clock.advance(1s);
  const TimePoint w = clock.now();
  for (Connection* c : {&conn, &other}) {
    c->last_answer = w + 40ms;
    c->last_answered_written = w;
  }
  clock.advance(48ms);
  for (Connection* c : {&conn, &other}) {
    AnswerTiming a;
    a.written = w + 3ms;
    a.answered = clock.now();
    a.previous_answer = c->last_answer;
    a.previous_written = c->last_answered_written;
    detector.observe(a);
  }
  STRCMP_EQUAL("pipelining", describe(verdict()));
}

TEST(PipeliningDetector, PacedQueriesToASerialUpstreamAreSerial) {
  // 2 ms apart to a server taking 10 ms each, one at a time: the line grows
  // by 8 ms per query beyond the writes' spacing.
  conn.paced(2ms, {50ms, 58ms, 66ms, 74ms});
  STRCMP_EQUAL("serial", describe(verdict()));
}

TEST(PipeliningDetector, AStallIsSerialAtOnce) {
  conn.burst(concurrent(5, 40ms));
  STRCMP_EQUAL("pipelining", describe(verdict()));
  detector.observe_stall(clock.now());
  STRCMP_EQUAL("serial", describe(verdict()));
}

TEST(PipeliningDetector, SerialAnswersReadTogetherDoNotUndoASerialVerdict) {
  conn.burst(serial(4, 40ms, 10ms));
  STRCMP_EQUAL("serial", describe(verdict()));
  // The loop was busy: the next line of serial answers was read in one go.
  clock.advance(1s);
  conn.burst(concurrent(6, 100ms));
  STRCMP_EQUAL("serial", describe(verdict()));
}

TEST(PipeliningDetector, OvertakingUndoesASerialVerdict) {
  conn.burst(serial(4, 40ms, 10ms));
  STRCMP_EQUAL("serial", describe(verdict()));
  clock.advance(1s);
  conn.burst({45ms, 41ms});  // a frontend replaced behind the address
  STRCMP_EQUAL("pipelining", describe(verdict()));
}

TEST(PipeliningDetector, SpacedAnswersTurnAPipeliningVerdictSerial) {
  conn.burst(concurrent(6, 40ms));
  STRCMP_EQUAL("pipelining", describe(verdict()));
  clock.advance(1s);
  conn.burst(serial(4, 40ms, 10ms));  // now one at a time
  STRCMP_EQUAL("serial", describe(verdict()));
}

TEST(PipeliningDetector, VerdictAgesOut) {
  conn.burst(serial(4, 40ms, 10ms));
  STRCMP_EQUAL("serial", describe(verdict()));
  clock.advance(nxdns::upstream::verdict_lifetime - 1s);
  STRCMP_EQUAL("serial", describe(verdict()));
  clock.advance(2s);
  STRCMP_EQUAL("unknown", describe(verdict()));
  // And it is learned afresh, with a fresh latency floor.
  conn.last_answer.reset();
  conn.burst(concurrent(4, 20ms));
  STRCMP_EQUAL("pipelining", describe(verdict()));
  CHECK_TRUE(detector.latency_floor() == Duration(20ms));
}

TEST(PipeliningDetector, ConfirmationKeepsTheVerdictAlive) {
  for (int i = 0; i < 4; ++i) {
    conn.burst(concurrent(4, 40ms));
    clock.advance(nxdns::upstream::verdict_lifetime / 2);
  }
  STRCMP_EQUAL("pipelining", describe(verdict()));
}
