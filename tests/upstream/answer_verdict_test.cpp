#include "upstream/answer_verdict.hpp"

#include <string>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::upstream::AnswerVerdict;

namespace {

struct Row {
  std::uint8_t rcode;
  const char* name;
  AnswerVerdict verdict;
  int rank;  // error_answer_rank, for the ones that fail over
};

// Every 4-bit RCODE, on purpose (RFC 6895 §2.3).
constexpr Row table[] = {
    {0, "NOERROR", AnswerVerdict::relay, 0},
    {1, "FORMERR", AnswerVerdict::fail_over_unhealthy, 1},
    {2, "SERVFAIL", AnswerVerdict::fail_over, 4},
    {3, "NXDOMAIN", AnswerVerdict::relay, 0},
    {4, "NOTIMP", AnswerVerdict::fail_over_unhealthy, 2},
    {5, "REFUSED", AnswerVerdict::fail_over_unhealthy, 3},
    {6, "YXDOMAIN", AnswerVerdict::fail_over_unhealthy, 0},
    {7, "YXRRSET", AnswerVerdict::fail_over_unhealthy, 0},
    {8, "NXRRSET", AnswerVerdict::fail_over_unhealthy, 0},
    {9, "NOTAUTH", AnswerVerdict::fail_over_unhealthy, 0},
    {10, "NOTZONE", AnswerVerdict::fail_over_unhealthy, 0},
    {11, "DSOTYPENI", AnswerVerdict::fail_over_unhealthy, 0},
    {12, "unassigned", AnswerVerdict::fail_over_unhealthy, 0},
    {13, "unassigned", AnswerVerdict::fail_over_unhealthy, 0},
    {14, "unassigned", AnswerVerdict::fail_over_unhealthy, 0},
    {15, "unassigned", AnswerVerdict::fail_over_unhealthy, 0},
};

}  // namespace

TEST_GROUP(AnswerVerdict){};

TEST(AnswerVerdict, EveryRcodeIsClassifiedOnPurpose) {
  LONGS_EQUAL(16, sizeof table / sizeof table[0]);
  for (const Row& r : table) {
    const AnswerVerdict got = nxdns::upstream::answer_verdict(r.rcode);
    if (got != r.verdict) {
      FAIL(nxdns::log::cat("RCODE ", static_cast<unsigned>(r.rcode), " (", r.name, ") gave ",
                           nxdns::upstream::describe(got), ", want ", nxdns::upstream::describe(r.verdict))
               .c_str());
    }
    if (r.verdict != AnswerVerdict::relay) LONGS_EQUAL(r.rank, nxdns::upstream::error_answer_rank(r.rcode));
  }
}

TEST(AnswerVerdict, OnlyTheLowFourBitsCount) {
  // The byte after the flags' high octet also carries RA/Z/AD/CD.
  CHECK(nxdns::upstream::answer_verdict(0x80 | 5) == AnswerVerdict::fail_over_unhealthy);
  CHECK(nxdns::upstream::answer_verdict(0xA0 | 3) == AnswerVerdict::relay);
}

TEST(AnswerVerdict, ServfailRanksAboveTheRefusals) {
  using nxdns::upstream::error_answer_rank;
  CHECK(error_answer_rank(2) > error_answer_rank(5));
  CHECK(error_answer_rank(5) > error_answer_rank(4));
  CHECK(error_answer_rank(4) > error_answer_rank(1));
  CHECK(error_answer_rank(1) > error_answer_rank(9));
}
