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

TEST(AnswerVerdict, OrdinaryQueriesTable) {
  struct Q {
    std::uint8_t opcode;
    std::uint16_t qtype, qclass;
    bool ordinary;
  };
  constexpr Q rows[] = {
      {0, 1, 1, true},       {0, 28, 1, true},     {0, 65, 1, true},  // A, AAAA, HTTPS
      {0, 0, 1, true},       {0, 127, 1, true},    {0, 256, 1, true},  // not meta-types
      {0, 255, 1, false},                                              // ANY (RFC 8482)
      {0, 41, 1, false},     {0, 128, 1, false},   {0, 249, 1, false}, {0, 250, 1, false},
      {0, 251, 1, false},    {0, 252, 1, false},   {0, 253, 1, false}, {0, 254, 1, false},
      {0, 1, 3, false},      {0, 16, 3, false},    {0, 1, 4, false},   {0, 1, 254, false}, {0, 1, 255, false},
      {0, 1, 0, false},      {1, 1, 1, false},     {4, 6, 1, false},   {5, 6, 1, false},  // IQUERY, NOTIFY, UPDATE
  };
  for (const Q& q : rows) {
    const std::string row = nxdns::log::cat("opcode ", unsigned{q.opcode}, " qtype ", q.qtype, " class ", q.qclass);
    CHECK_EQUAL_TEXT(q.ordinary, nxdns::upstream::is_ordinary_query(q.opcode, q.qtype, q.qclass), row.c_str());
  }
}

TEST(AnswerVerdict, OnlyOrdinaryQueriesMakeAnErrorUnhealthy) {
  using nxdns::upstream::answer_verdict;
  for (const Row& r : table) {
    CHECK(answer_verdict(r.rcode, true) == r.verdict);
    const AnswerVerdict other = r.verdict == AnswerVerdict::fail_over_unhealthy ? AnswerVerdict::fail_over : r.verdict;
    CHECK(answer_verdict(r.rcode, false) == other);
  }
}

TEST(AnswerVerdict, OrdinaryQueryReadFromTheWire) {
  using nxdns::upstream::is_ordinary_query;
  nxdns::dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
  CHECK_TRUE(is_ordinary_query(q));
  q[14] = 0xFF;  // ANY
  CHECK_FALSE(is_ordinary_query(q));
  q[14] = 1;
  q[16] = 3;  // CH
  CHECK_FALSE(is_ordinary_query(q));
  q[16] = 1;
  q[2] = 0x29;  // opcode 5 (UPDATE)
  CHECK_FALSE(is_ordinary_query(q));
  CHECK_FALSE(is_ordinary_query(nxdns::dns::Bytes{0x12, 0x34}));
}
