// validate_response: the gate for upstream answers.
#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

#define CHECK_RESPONSE(expected, actual) STRCMP_EQUAL(describe(expected), describe(actual))

namespace {

Query parsed(const Bytes& b) {
  QueryParse p = parse_query(b);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  return *p.query;
}

}  // namespace

TEST_GROUP(Validate){};

TEST(Validate, MatchingResponseAccepted) {
  const Bytes qb = query(0x5151, "www.example.com", 1, true);
  const Query q = parsed(qb);
  const Bytes r = response(0x5151, "www.example.com", 1, 2);
  CHECK_RESPONSE(ResponseError::none, validate_response(q, r));
  CHECK_RESPONSE(ResponseError::none, validate_response(qb, r));
}

TEST(Validate, NameCaseInsensitive) {
  const Bytes qb = query(1, "www.example.com");
  const Bytes r = response(1, "WwW.ExAmPlE.CoM", 1, 1);
  CHECK_RESPONSE(ResponseError::none, validate_response(parsed(qb), r));
  CHECK_RESPONSE(ResponseError::none, validate_response(qb, r));
}

TEST(Validate, TooShort) {
  const Bytes qb = query(1, "example.com");
  CHECK_RESPONSE(ResponseError::too_short, validate_response(parsed(qb), Bytes(11, 0x80)));
  CHECK_RESPONSE(ResponseError::too_short, validate_response(qb, Bytes{}));
}

TEST(Validate, QrClear) {
  const Bytes qb = query(1, "example.com");
  CHECK_RESPONSE(ResponseError::not_a_response, validate_response(parsed(qb), qb));
  CHECK_RESPONSE(ResponseError::not_a_response, validate_response(qb, qb));
}

TEST(Validate, IdMismatch) {
  const Bytes qb = query(1, "example.com");
  const Bytes r = response(2, "example.com", 1, 1);
  CHECK_RESPONSE(ResponseError::id_mismatch, validate_response(parsed(qb), r));
  CHECK_RESPONSE(ResponseError::id_mismatch, validate_response(qb, r));
}

TEST(Validate, QuestionCount) {
  const Bytes qb = query(1, "example.com");
  Bytes zero = header(1, 0x8181, 0, 0, 0, 0);
  CHECK_RESPONSE(ResponseError::bad_question_count, validate_response(parsed(qb), zero));
  Bytes two = response(1, "example.com", 1, 0);
  set16(two, 4, 2);
  CHECK_RESPONSE(ResponseError::bad_question_count, validate_response(qb, two));
}

TEST(Validate, NameMismatch) {
  const Bytes qb = query(1, "example.com");
  CHECK_RESPONSE(ResponseError::question_mismatch, validate_response(parsed(qb), response(1, "example.org", 1, 1)));
  CHECK_RESPONSE(ResponseError::question_mismatch, validate_response(qb, response(1, "www.example.com", 1, 1)));
}

TEST(Validate, TypeMismatch) {
  const Bytes qb = query(1, "example.com", 1);
  CHECK_RESPONSE(ResponseError::question_mismatch, validate_response(parsed(qb), response(1, "example.com", 28, 0)));
}

TEST(Validate, ClassMismatch) {
  const Bytes qb = query(1, "example.com", 1);
  Bytes r = response(1, "example.com", 1, 0);
  set16(r, r.size() - 2, 3);  // CH
  CHECK_RESPONSE(ResponseError::question_mismatch, validate_response(parsed(qb), r));
  CHECK_RESPONSE(ResponseError::question_mismatch, validate_response(qb, r));
}

TEST(Validate, MalformedQuestion) {
  const Bytes qb = query(1, "example.com");
  Bytes r = header(1, 0x8180, 1, 0, 0, 0);
  raw(r, {7, 'e', 'x'});
  CHECK_RESPONSE(ResponseError::malformed, validate_response(parsed(qb), r));
  Bytes ptr = header(1, 0x8180, 1, 0, 0, 0);
  raw(ptr, {0xC0, 0x0C, 0, 1, 0, 1});
  CHECK_RESPONSE(ResponseError::malformed, validate_response(qb, ptr));
}

TEST(Validate, MalformedRawQueryCannotValidate) {
  const Bytes r = response(1, "example.com", 1, 1);
  CHECK_RESPONSE(ResponseError::malformed, validate_response(Bytes{1, 2, 3}, r));
}

TEST(Validate, ValidatesPreparedUpstreamQuery) {
  // Transports hold the padded upstream query; its question must still match.
  const Bytes client = query(9, "example.com", 1, true);
  UpstreamQueryOptions o;
  o.id = 77;
  const Bytes up = prepare_upstream_query(client, o);
  CHECK_RESPONSE(ResponseError::none, validate_response(up, response(77, "EXAMPLE.com", 1, 1)));
  CHECK_RESPONSE(ResponseError::id_mismatch, validate_response(up, response(9, "example.com", 1, 1)));
}

TEST(Validate, ParseQuestionOf) {
  const auto q = parse_question_of(response(1, "a.example", 16, 3));
  CHECK_TRUE(q.has_value());
  CHECK_EQUAL(16, q->qtype);
  CHECK_EQUAL(1, q->qclass);
  CHECK_BYTES(wname("a.example"), q->name);
  CHECK_FALSE(parse_question_of(header(1, 0, 0, 0, 0, 0)).has_value());
  CHECK_FALSE(parse_question_of(Bytes(5, 0)).has_value());
}
