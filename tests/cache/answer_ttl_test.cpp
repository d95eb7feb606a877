// What is cached and for how long: RFC 2308 §5 negative TTLs, the
// never-cached cases, min TTL of the records, the clamps.
#include "cache/answer_ttl.hpp"
#include "cache/answers.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::cache;
using namespace nxdns::cache::packets;

namespace {
struct Row {
  const char* what;
  Answer answer;
  TtlClamp clamp;
  Verdict verdict;
  std::uint32_t ttl;
};
}  // namespace

TEST_GROUP(AnswerTtl){};

TEST(AnswerTtl, Table) {
  const TtlClamp none{0, 86400};
  const Row rows[] = {
      {"one A record", {.answer = {{t_a, 300}}}, none, Verdict::positive, 300},
      {"min of the records", {.answer = {{t_cname, 3600}, {t_a, 120}}}, none, Verdict::positive, 120},
      {"authority counts too", {.answer = {{t_a, 600}}, .authority = {{t_ns, 200}}}, none, Verdict::positive, 200},
      {"OPT TTL is not a TTL", {.answer = {{t_a, 300}}, .opt = true}, none, Verdict::positive, 300},
      {"max_ttl clamps", {.answer = {{t_a, 7 * 86400}}}, {0, 86400}, Verdict::positive, 86400},
      {"min_ttl raises", {.answer = {{t_a, 5}}}, {60, 86400}, Verdict::positive, 60},
      {"TTL 0 never cached, even with min_ttl", {.answer = {{t_a, 0}}}, {60, 86400}, Verdict::ttl_zero, 0},
      {"one record of TTL 0 spoils it", {.answer = {{t_a, 300}, {t_a, 0}}}, none, Verdict::ttl_zero, 0},
      {"top bit set counts as 0 (RFC 2181 §8)", {.answer = {{t_a, 0x80000000u}}}, none, Verdict::ttl_zero, 0},
      {"NXDOMAIN: SOA TTL smaller", {.flags = 0x8183, .authority = {{t_soa, 300, 900}}}, none, Verdict::negative, 300},
      {"NXDOMAIN: MINIMUM smaller", {.flags = 0x8183, .authority = {{t_soa, 3600, 60}}}, none, Verdict::negative, 60},
      {"NODATA with SOA", {.authority = {{t_soa, 600, 600}}}, none, Verdict::negative, 600},
      {"negative capped at 3 h", {.flags = 0x8183, .authority = {{t_soa, 86400, 86400}}}, none, Verdict::negative,
       10800},
      {"NXDOMAIN without SOA", {.flags = 0x8183}, none, Verdict::no_soa, 0},
      {"NODATA without SOA (referral)", {.authority = {{t_ns, 600}}}, none, Verdict::no_soa, 0},
      {"negative SOA MINIMUM 0", {.flags = 0x8183, .authority = {{t_soa, 300, 0}}}, none, Verdict::ttl_zero, 0},
      {"TC", {.flags = 0x8380, .answer = {{t_a, 300}}}, none, Verdict::truncated, 0},
      {"SERVFAIL", {.flags = 0x8182}, none, Verdict::error_rcode, 0},
      {"REFUSED", {.flags = 0x8185}, none, Verdict::error_rcode, 0},
      {"FORMERR", {.flags = 0x8181}, none, Verdict::error_rcode, 0},
      {"extended RCODE (BADVERS)", {.answer = {{t_a, 300}}, .opt = true, .ext_rcode = 1}, none, Verdict::error_rcode,
       0},
      {"not a response", {.flags = 0x0100, .answer = {{t_a, 300}}}, none, Verdict::malformed, 0},
  };
  for (const Row& r : rows) {
    const AnswerTtl got = answer_ttl(build(r.answer), r.clamp);
    STRCMP_EQUAL_TEXT(describe(r.verdict), describe(got.verdict), r.what);
    UNSIGNED_LONGS_EQUAL_TEXT(r.ttl, got.ttl, r.what);
  }
}

TEST(AnswerTtl, TruncatedPacketIsMalformed) {
  nxdns::dns::Bytes b = build({.answer = {{t_a, 300}}});
  b.resize(b.size() - 2);
  CHECK(answer_ttl(b, {}).verdict == Verdict::malformed);
  CHECK(answer_ttl({}, {}).verdict == Verdict::malformed);
}
