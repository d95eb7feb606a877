// An answer from the cache file is checked as an upstream answer is before
// it is stored: one table of what passes and what is refused, and why.
#include "cache/loaded_answer.hpp"
#include "cache/answers.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace nxdns::cache::packets;

namespace {
std::string key_of(std::string_view name, std::uint16_t qtype, bool dnssec_ok = false, bool cd = false) {
  return make_key(wname(name), qtype, 1, dnssec_ok, cd).packed;
}
}  // namespace

TEST_GROUP(LoadedAnswer){};

TEST(LoadedAnswer, Table) {
  const TtlClamp clamp{0, 86400};
  const dns::Bytes pos = build({.qname = "www.example.test", .answer = {{t_a, 300}}});
  const dns::Bytes neg = build({.qname = "nx.example.test", .flags = 0x8183, .authority = {{t_soa, 900, 600}}});
  dns::Bytes cut = pos;
  cut.resize(cut.size() - 3);
  std::string unfolded = key_of("www.example.test", t_a);
  unfolded[1] = 'W';
  dns::Bytes query = pos;
  query[2] &= 0x7F;  // QR clear: a query, not an answer
  struct Row {
    const char* what;
    std::string key;
    dns::Bytes answer;
    std::uint32_t file_ttl;
    LoadRefusal want;
    std::uint32_t want_ttl = 0;
  };
  const Row rows[] = {
      {"a positive answer", key_of("www.example.test", t_a), pos, 300, LoadRefusal::none, 300},
      {"the answer's question keeps the first client's case", key_of("www.example.test", t_a),
       build({.qname = "WwW.Example.TEST", .answer = {{t_a, 300}}}), 300, LoadRefusal::none, 300},
      {"a key that is not case-folded is not a key", unfolded, pos, 300, LoadRefusal::key_mismatch},
      {"DO and CD bits are the key's", key_of("www.example.test", t_a, true, true), pos, 300, LoadRefusal::none, 300},
      {"a negative answer (RFC 2308 TTL)", key_of("nx.example.test", t_a), neg, 600, LoadRefusal::none, 600},
      {"the file never lengthens a TTL", key_of("www.example.test", t_a), pos, 99999, LoadRefusal::none, 300},
      {"a shorter TTL in the file is kept", key_of("www.example.test", t_a), pos, 40, LoadRefusal::none, 40},
      {"another name's key", key_of("other.example.test", t_a), pos, 300, LoadRefusal::key_mismatch},
      {"another type's key", key_of("www.example.test", t_aaaa), pos, 300, LoadRefusal::key_mismatch},
      {"unknown flag bits", key_of("www.example.test", t_a).substr(0, 22) + '\x04', pos, 300, LoadRefusal::key_mismatch},
      {"an empty key", "", pos, 300, LoadRefusal::key_mismatch},
      {"records that do not walk", key_of("www.example.test", t_a), cut, 300, LoadRefusal::malformed},
      {"not even a header", key_of("www.example.test", t_a), dns::Bytes{1, 2, 3}, 300, LoadRefusal::malformed},
      {"a query, not an answer", key_of("www.example.test", t_a), query, 300, LoadRefusal::malformed},
      {"SERVFAIL is never cached", key_of("www.example.test", t_a),
       build({.qname = "www.example.test", .flags = 0x8182}), 300, LoadRefusal::not_cacheable},
      {"TC is never cached", key_of("www.example.test", t_a),
       build({.qname = "www.example.test", .flags = 0x8380, .answer = {{t_a, 300}}}), 300, LoadRefusal::not_cacheable},
      {"TTL 0 is never cached", key_of("www.example.test", t_a),
       build({.qname = "www.example.test", .answer = {{t_a, 0}}}), 300, LoadRefusal::not_cacheable},
  };
  for (const Row& r : rows) {
    const LoadCheck c = check_loaded_answer(r.key, r.answer, r.file_ttl, clamp);
    if (c.refusal != r.want) FAIL((std::string(r.what) + ": " + describe(c.refusal)).c_str());
    CHECK_EQUAL(r.want == LoadRefusal::none, c.answer.has_value());
    if (!c.answer) continue;
    if (c.answer->ttl_seconds != r.want_ttl)
      FAIL((std::string(r.what) + ": ttl " + std::to_string(c.answer->ttl_seconds)).c_str());
    CHECK_TRUE(c.answer->key.packed == r.key);
  }
}

TEST(LoadedAnswer, RecordTtlsAreClampedAsOnStore) {
  // The clamps in force now apply, as to a fresh answer: max_ttl lowered
  // since the save shortens what clients are told and how long it is kept.
  const dns::Bytes pos = build({.qname = "www.example.test", .answer = {{t_a, 3600}}});
  const LoadCheck c = check_loaded_answer(key_of("www.example.test", t_a), pos, 3600, TtlClamp{0, 600});
  CHECK(c.refusal == LoadRefusal::none);
  CHECK_EQUAL(600u, c.answer->ttl_seconds);
  CHECK_EQUAL(600u, ttl_of(c.answer->answer, 0));
  CHECK_FALSE(c.answer->negative);
  const LoadCheck n = check_loaded_answer(key_of("nx.example.test", t_a),
                                          build({.qname = "nx.example.test", .flags = 0x8183, .authority = {{t_soa, 900, 600}}}),
                                          600, TtlClamp{0, 86400});
  CHECK_TRUE(n.answer->negative);
}
