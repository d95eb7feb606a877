// A cached answer made into an answer for this client: ID, RD, question
// case from the client; TTLs aged, never below 0; stale answers TTL 30.
#include "cache/answer_rewrite.hpp"
#include "cache/answers.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace nxdns::cache::packets;

namespace {
dns::Bytes question_of(std::string_view name, std::uint16_t qtype = t_a) {
  dns::Bytes q = wname(name);
  u16(q, qtype);
  u16(q, 1);
  return q;
}
}  // namespace

TEST_GROUP(AnswerRewrite){};

TEST(AnswerRewrite, ClientIdAndQuestionCaseAndAgedTtls) {
  const dns::Bytes stored = build({.id = 0x1111, .answer = {{t_cname, 3600}, {t_a, 300}}, .opt = true});
  const dns::Bytes q = question_of("WwW.eXample.TEST");
  auto out = rewrite_answer(stored, {0xBEEF, true, q}, 100);
  CHECK_TRUE(out.has_value());
  CHECK_EQUAL(0xBEEF, dns::get_id(*out));
  CHECK_TRUE(std::equal(q.begin(), q.end(), out->begin() + 12));
  UNSIGNED_LONGS_EQUAL(3500, ttl_of(*out, 0));
  UNSIGNED_LONGS_EQUAL(200, ttl_of(*out, 1));
  UNSIGNED_LONGS_EQUAL(0, ttl_of(*out, 2));  // OPT's TTL field (ext-rcode, flags) untouched
  CHECK_EQUAL(stored.size(), out->size());
  // The answer validates as a response to the client's query (what the engine checks).
  dns::Bytes query = dns::make_query(0xBEEF, wname("WwW.eXample.TEST"), t_a, {});
  CHECK(dns::validate_response(query, *out) == dns::ResponseError::none);
}

TEST(AnswerRewrite, TtlNeverBelowZeroAndStaleFixed) {
  const dns::Bytes stored = build({.answer = {{t_a, 30}}});
  const dns::Bytes q = question_of("www.example.test");
  UNSIGNED_LONGS_EQUAL(0, ttl_of(*rewrite_answer(stored, {1, true, q}, 31), 0));
  UNSIGNED_LONGS_EQUAL(0, ttl_of(*rewrite_answer(stored, {1, true, q}, 0xFFFFFFFFu), 0));
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, ttl_of(*rewrite_answer(stored, {1, true, q}, 99999, stale_answer_ttl), 0));
}

TEST(AnswerRewrite, RdFollowsTheClient) {
  const dns::Bytes stored = build({.answer = {{t_a, 30}}});
  const dns::Bytes q = question_of("www.example.test");
  auto no_rd = rewrite_answer(stored, {1, false, q}, 0);
  CHECK_EQUAL(0, (*no_rd)[2] & 0x01);
  CHECK_EQUAL(0x80, (*no_rd)[3] & 0x80);  // RA kept
}

TEST(AnswerRewrite, RefusesAnotherQuestion) {
  const dns::Bytes stored = build({.answer = {{t_a, 30}}});
  CHECK_FALSE(rewrite_answer(stored, {1, true, question_of("www.example.tesu")}, 0).has_value());
  CHECK_FALSE(rewrite_answer(stored, {1, true, question_of("www.example.test", t_aaaa)}, 0).has_value());
  CHECK_FALSE(rewrite_answer(stored, {1, true, question_of("ww.example.test")}, 0).has_value());
  dns::Bytes cut = stored;
  cut.resize(cut.size() - 1);
  CHECK_FALSE(rewrite_answer(cut, {1, true, question_of("www.example.test")}, 0).has_value());
}

TEST(AnswerRewrite, StoredFormClampsEveryRecordButOpt) {
  const dns::Bytes a = build({.answer = {{t_cname, 7 * 86400}, {t_a, 5}}, .opt = true, .ext_rcode = 0});
  auto c = clamp_record_ttls(a, 60, 86400);
  CHECK_TRUE(c.has_value());
  UNSIGNED_LONGS_EQUAL(86400, ttl_of(*c, 0));
  UNSIGNED_LONGS_EQUAL(60, ttl_of(*c, 1));
  UNSIGNED_LONGS_EQUAL(0, ttl_of(*c, 2));  // OPT untouched
  dns::Bytes cut = a;
  cut.resize(cut.size() - 3);
  CHECK_FALSE(clamp_record_ttls(cut, 0, 10).has_value());
}
