// The pool and error answers: which RCODEs fail over, which
// are answers, and which answer is relayed when every entry errs.
#include "upstream/pool_harness.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using test::Harness;
using upstream::Cause;
using upstream::max_in_flight_per_entry;

TEST_GROUP(PoolErrorAnswers){};

namespace {

// An answer to the query with header RCODE `rcode` and QR set.
auto with_rcode(std::uint8_t rcode) {
  return [rcode](const dns::Bytes& q) {
    dns::Bytes r = q;
    r[2] |= 0x80;
    r[3] = static_cast<std::uint8_t>((r[3] & 0xF0) | rcode);
    return r;
  };
}
std::uint8_t rcode_of(const dns::Bytes& r) { return r.size() > 3 ? r[3] & 0x0F : 0xFF; }

constexpr std::uint8_t formerr = 1, servfail = 2, nxdomain = 3, notimp = 4, refused = 5;

}  // namespace

TEST(PoolErrorAnswers, EveryErrorRcodeFailsOverToTheNextEntry) {
  struct Row {
    std::uint8_t rcode;
    std::uint32_t health_failures;  // what the answer costs the entry's health
  };
  // SERVFAIL is neutral for health (a name's broken DNSSEC is not the
  // upstream's fault); the others say the upstream will not serve us.
  for (const Row& row : {Row{servfail, 0}, Row{refused, 1}, Row{notimp, 1}, Row{formerr, 1}, Row{12, 1}}) {
    Harness h({0, 1});
    h.submit();
    CHECK_TRUE(h.fakes[0]->respond_oldest(with_rcode(row.rcode)));
    CHECK_EQUAL(1u, h.fakes[1]->live());  // the query moved on at once
    h.fakes[1]->answer_oldest();
    h.sched.run_ready();
    const auto& out = *h.outcomes[0];
    CHECK_TRUE(out.ok);
    CHECK_FALSE(out.error_answer);
    CHECK_EQUAL(1u, out.entry_index);
    CHECK_EQUAL(2u, out.attempts);
    CHECK_EQUAL(0, rcode_of(out.response));
    const auto s0 = h.snap(0);
    CHECK_EQUAL(1u, s0.error_answers[row.rcode]);
    CHECK_EQUAL(1u, s0.outcomes[static_cast<std::size_t>(Cause::error_answer)]);
    CHECK_EQUAL(0u, s0.outcomes[static_cast<std::size_t>(Cause::ok)]);
    CHECK_EQUAL(row.health_failures, s0.consecutive_failures);
  }
}

TEST(PoolErrorAnswers, NxdomainIsAnAnswerNotAFailover) {
  Harness h({0, 1});
  h.submit();
  h.fakes[0]->respond_oldest(with_rcode(nxdomain));
  h.sched.run_ready();
  CHECK_EQUAL(0u, h.fakes[1]->started());
  CHECK_TRUE(h.outcomes[0]->ok);
  CHECK_EQUAL(nxdomain, rcode_of(h.outcomes[0]->response));
  CHECK(h.snap(0).health == upstream::HealthState::healthy);
}

TEST(PoolErrorAnswers, WhenEveryEntryAnswersWithAnErrorTheBestAnswerIsRelayed) {
  struct Row {
    std::uint8_t first, second;   // rcodes from the primary, then the secondary
    std::uint8_t want;            // rcode relayed
    std::size_t want_entry;
  };
  for (const Row& row : {Row{refused, servfail, servfail, 1},  // a statement about the name wins
                         Row{servfail, refused, servfail, 0},
                         Row{notimp, refused, refused, 1}, Row{refused, notimp, refused, 0},
                         Row{formerr, notimp, notimp, 1}, Row{refused, refused, refused, 0},  // tie: priority
                         Row{12, formerr, formerr, 1}}) {
    Harness h({0, 1});
    h.submit();
    h.fakes[0]->respond_oldest(with_rcode(row.first));
    h.fakes[1]->respond_oldest(with_rcode(row.second));
    h.sched.run_ready();
    const auto& out = *h.outcomes[0];
    CHECK_TRUE(out.ok);  // an upstream's answer, relayed, not a made-up SERVFAIL
    CHECK_TRUE(out.error_answer);
    CHECK_EQUAL(row.want, rcode_of(out.response));
    CHECK_EQUAL(row.want_entry, out.entry_index);
    CHECK_EQUAL(2u, out.attempts);
  }
}

TEST(PoolErrorAnswers, AnErrorAnswerBeatsAFailureElsewhere) {
  Harness h({0, 1});
  h.submit();
  h.fakes[0]->respond_oldest(with_rcode(refused));
  h.fakes[1]->fail_oldest(Cause::connect_failed);
  h.sched.run_ready();
  CHECK_TRUE(h.outcomes[0]->ok);
  CHECK_TRUE(h.outcomes[0]->error_answer);
  CHECK_EQUAL(refused, rcode_of(h.outcomes[0]->response));
  CHECK_EQUAL(0u, h.outcomes[0]->entry_index);
}

TEST(PoolErrorAnswers, AnUpstreamThatRefusesEverythingBacksOffOneThatServfailsDoesNot) {
  Harness h({0, 1});
  for (int i = 0; i < 2; ++i) {
    h.submit();
    h.fakes[0]->respond_oldest(with_rcode(refused));
    h.fakes[1]->answer_oldest();
  }
  CHECK(h.snap(0).health == upstream::HealthState::backoff);
  h.submit();
  CHECK_EQUAL(0u, h.fakes[0]->live());  // the household now asks the secondary first
  CHECK_EQUAL(1u, h.fakes[1]->live());

  Harness g({0, 1});
  for (int i = 0; i < 5; ++i) {
    g.submit();
    g.fakes[0]->respond_oldest(with_rcode(servfail));
    g.fakes[1]->answer_oldest();
  }
  CHECK(g.snap(0).health == upstream::HealthState::healthy);
  CHECK_EQUAL(5u, g.snap(0).error_answers[servfail]);
}

TEST(PoolErrorAnswers, ErrorsToQueriesResolversDeclineByPolicyCostNoHealth) {
  // ANY answered NOTIMP or REFUSED (RFC 8482 lets a resolver decline it),
  // and whatever else is not an ordinary query: they fail over, but an
  // upstream that answers ordinary queries stays healthy however many come.
  struct Row {
    std::uint16_t qtype, qclass;
    std::uint8_t rcode;
  };
  for (const Row& row : {Row{dns::type_any, 1, notimp}, Row{dns::type_any, 1, refused}, Row{16, 3, refused},
                         Row{250, 1, formerr}, Row{1, 255, refused}}) {
    Harness h({0, 1});
    for (int i = 0; i < 4; ++i) {
      h.submit(row.qtype, row.qclass);
      CHECK_TRUE(h.fakes[0]->respond_oldest(with_rcode(row.rcode)));
      CHECK_EQUAL(1u, h.fakes[1]->live());  // still failed over
      h.fakes[1]->answer_oldest();
    }
    h.sched.run_ready();
    CHECK_EQUAL(4u, h.delivered());
    const auto s0 = h.snap(0);
    CHECK(s0.health == upstream::HealthState::healthy);
    CHECK_EQUAL(0u, s0.consecutive_failures);
    CHECK_EQUAL(4u, s0.error_answers[row.rcode]);
    // An ordinary query is still answered there first.
    h.submit();
    CHECK_EQUAL(1u, h.fakes[0]->live());
  }
  // The same rcode to an ordinary query counts, as before.
  Harness h({0, 1});
  h.submit(28, 1);
  h.fakes[0]->respond_oldest(with_rcode(notimp));
  CHECK_EQUAL(1u, h.snap(0).consecutive_failures);
}

TEST(PoolErrorAnswers, ServfailIsNotReportedAsAnAttemptFailureRefusedIs) {
  std::vector<Cause> seen;
  upstream::PoolOptions o;
  o.on_attempt = [&seen](const upstream::AttemptReport& r) { seen.push_back(r.cause); };
  Harness h({0, 1, 2}, o);
  h.submit();
  h.fakes[0]->respond_oldest(with_rcode(servfail));
  h.fakes[1]->respond_oldest(with_rcode(refused));
  h.fakes[2]->answer_oldest();
  CHECK_EQUAL(2u, seen.size());
  CHECK(seen[0] == Cause::error_answer);
  CHECK(seen[1] == Cause::ok);
}
