// The cache key: case-folded name (RFC 4343: ASCII letters only), type,
// class, DO and CD.
#include "cache/key.hpp"
#include "cache/answers.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;

namespace {
dns::Query parse(std::string_view name, std::uint16_t qtype = 1, std::optional<std::uint16_t> edns = {},
                 bool dnssec_ok = false, bool cd = false) {
  dns::Bytes q = dns::make_query(7, packets::wname(name), qtype, edns);
  if (cd) q[3] |= 0x10;
  if (dnssec_ok) q[q.size() - 4] |= 0x80;  // OPT TTL: ext-rcode, version, then DO in the flags
  auto p = dns::parse_query(q);
  CHECK_TRUE(p.query.has_value());
  return *p.query;
}
}  // namespace

TEST_GROUP(CacheKey){};

TEST(CacheKey, FoldsAsciiCaseOnly) {
  CHECK(make_key(parse("WwW.ExAmPlE.TeSt")) == make_key(parse("www.example.test")));
  // 0xC9 is not an ASCII letter: it must not fold onto 0xE9.
  const dns::Bytes upper{1, 0xC9, 0}, lower{1, 0xE9, 0};
  CHECK_FALSE(fold_name(upper) == fold_name(lower));
  STRCMP_EQUAL("\x03www", fold_name(packets::wname("WWW")).substr(0, 4).c_str());
}

TEST(CacheKey, TypeClassDoCdSeparate) {
  const Key base = make_key(parse("a.test"));
  CHECK_FALSE(base == make_key(parse("a.test", 28)));
  CHECK_FALSE(base == make_key(parse("a.test", 1, 1232, true)));
  CHECK_FALSE(base == make_key(parse("a.test", 1, {}, false, true)));
  CHECK(base == make_key(parse("a.test", 1, 1232, false)));  // EDNS without DO: same answer
  CHECK_FALSE(make_key(packets::wname("a.test"), 1, 1, false, false) == make_key(packets::wname("a.test"), 1, 3, false, false));
}

TEST(CacheKey, NameMatchForFlush) {
  const std::string folded = fold_name(packets::wname("a.test"));
  CHECK_TRUE(key_has_name(make_key(parse("A.test", 28)), folded));
  CHECK_FALSE(key_has_name(make_key(parse("b.a.test")), folded));
  CHECK_FALSE(key_has_name(make_key(parse("a.testx")), folded));
}
