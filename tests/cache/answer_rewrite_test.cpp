// A cached answer made into an answer for this client: ID, RD, question
// case from the client; TTLs aged, never below 0; stale answers TTL 30.
#include "cache/answer_rewrite.hpp"
#include "cache/answers.hpp"
#include "dns/wire.hpp"

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
  auto out = rewrite_answer(stored, {0xBEEF, q}, 100);
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
  UNSIGNED_LONGS_EQUAL(0, ttl_of(*rewrite_answer(stored, {1, q}, 31), 0));
  UNSIGNED_LONGS_EQUAL(0, ttl_of(*rewrite_answer(stored, {1, q}, 0xFFFFFFFFu), 0));
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, ttl_of(*rewrite_answer(stored, {1, q}, 99999, stale_answer_ttl), 0));
}

TEST(AnswerRewrite, RdFollowsTheClient) {
  const dns::Bytes stored = build({.answer = {{t_a, 30}}});
  const dns::Bytes q = question_of("www.example.test");
  auto no_rd = rewrite_answer(stored, {1, q, 0}, 0);
  CHECK_EQUAL(0, (*no_rd)[2] & 0x01);
  CHECK_EQUAL(0x80, (*no_rd)[3] & 0x80);  // RA kept
}

TEST(AnswerRewrite, RefusesAnotherQuestion) {
  const dns::Bytes stored = build({.answer = {{t_a, 30}}});
  CHECK_FALSE(rewrite_answer(stored, {1, question_of("www.example.tesu")}, 0).has_value());
  CHECK_FALSE(rewrite_answer(stored, {1, question_of("www.example.test", t_aaaa)}, 0).has_value());
  CHECK_FALSE(rewrite_answer(stored, {1, question_of("ww.example.test")}, 0).has_value());
  dns::Bytes cut = stored;
  cut.resize(cut.size() - 1);
  CHECK_FALSE(rewrite_answer(cut, {1, question_of("www.example.test")}, 0).has_value());
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

TEST(AnswerRewrite, StoredFormFromTheLayoutIsTheWalkedOne) {
  const dns::Bytes a = build({.answer = {{t_cname, 7 * 86400}, {t_a, 5}}, .authority = {{t_ns, 0x80000000u}}, .opt = true});
  const auto layout = layout_of(a);
  CHECK_TRUE(layout.has_value());
  const auto walked = clamp_record_ttls(a, 60, 86400);
  const auto from_layout = clamp_record_ttls(a, *layout, 60, 86400);
  CHECK_TRUE(walked.has_value() && from_layout.has_value());
  CHECK_TRUE(*walked == from_layout->bytes);
  CHECK_TRUE(from_layout->changed);
  // Every TTL inside the bounds: the answer's own bytes, so its layout is the
  // stored form's too.
  const dns::Bytes inside = build({.answer = {{t_cname, 3600}, {t_a, 300}}, .opt = true});
  const auto same = clamp_record_ttls(inside, *layout_of(inside), 60, 86400);
  CHECK_TRUE(same.has_value());
  CHECK_FALSE(same->changed);
  CHECK_TRUE(same->bytes == inside);
  // A layout of other (longer) bytes is refused, never trusted.
  const dns::Bytes other = build({.answer = std::vector<Rec>(12, Rec{t_a, 1})});
  CHECK_FALSE(clamp_record_ttls(inside, *layout_of(other), 0, 10).has_value());
}

TEST(AnswerRewrite, StoredLayoutGivesTheSameAnswer) {
  const dns::Bytes stored = build({.id = 0x1111, .answer = {{t_cname, 3600}, {t_a, 300}}, .authority = {{t_ns, 900}}, .opt = true});
  const dns::Bytes q = question_of("WwW.eXample.TEST");
  const auto layout = layout_of(stored);
  CHECK_TRUE(layout.has_value());
  UNSIGNED_LONGS_EQUAL(3, layout->ttl_at.size());  // OPT's TTL field is not a TTL
  for (std::uint32_t age : {0u, 100u, 0xFFFFFFFFu}) {
    auto slow = rewrite_answer(stored, {0xBEEF, q, static_cast<std::uint16_t>(age % 2 == 0 ? dns::wire::flag_rd : 0)}, age);
    auto fast = rewrite_answer(stored, *layout, {0xBEEF, q, static_cast<std::uint16_t>(age % 2 == 0 ? dns::wire::flag_rd : 0)}, age);
    CHECK_TRUE(slow.has_value() && fast.has_value());
    CHECK_TRUE(*slow == *fast);
  }
  // A layout of other (longer) bytes is refused, never trusted.
  const dns::Bytes other = build({.answer = std::vector<Rec>(12, Rec{t_a, 1})});
  const auto wrong = layout_of(other);
  CHECK_FALSE(rewrite_answer(stored, *wrong, {1, q}, 0).has_value());
}

// client_answer (the hit path's one copy) against the general path it
// replaces: for every stored shape x client x link, the same bytes as
// answer_for_client(rewrite_answer(...)), or a decline where that path would
// refuse or where the form could not be found (the caller then takes it).
namespace {
struct Shape {
  const char* what;
  dns::Bytes stored;
};

dns::Bytes with_opt_rdata(Answer a, std::uint32_t ttl, const dns::Bytes& rdata, bool record_after = false) {
  a.opt = false;
  dns::Bytes b = build(a);
  b[11] = static_cast<std::uint8_t>(b[11] + 1 + (record_after ? 1 : 0));
  dns::test::append(b, dns::test::opt_rr(4096, ttl, rdata));
  if (record_after) put_rec(b, {t_a, 300});
  return b;
}

std::vector<Shape> shapes() {
  const Answer two{.id = 0x1111, .answer = {{t_cname, 3600}, {t_a, 300}}};
  dns::Bytes opts = dns::test::option(dns::opt_padding, dns::Bytes(40, 0));
  dns::test::append(opts, dns::test::option(dns::opt_cookie, dns::Bytes{1, 2, 3, 4, 5, 6, 7, 8}));  // not relayed
  dns::test::append(opts, dns::test::option(dns::opt_extended_error, dns::Bytes{0, 3}));  // relayed
  dns::test::append(opts, dns::test::option(dns::opt_nsid, dns::Bytes{'n', 's'}));         // not relayed
  dns::test::append(opts, dns::test::option(dns::opt_tcp_keepalive, {}));
  Answer many = two;
  for (int i = 0; i < 60; ++i) many.answer.push_back({t_aaaa, 300});
  // An upstream's answer to our query: RD and AD set (validated), and a Z
  // bit no reply may carry.
  dns::Bytes validated = build({.id = 0x1111, .answer = two.answer, .opt = true});
  dns::test::set16(validated, 2, 0x81E0);
  return {
      {"AD and Z in the header", validated},
      {"no OPT", build(two)},
      {"OPT, no options", build({.id = 0x1111, .answer = two.answer, .opt = true})},
      {"OPT with DO", with_opt_rdata(two, dns::wire::edns_do_bit, {})},
      {"OPT with hop-by-hop and other options", with_opt_rdata(two, 0, opts)},
      {"OPT with an extended rcode", build({.id = 0x1111, .answer = two.answer, .opt = true, .ext_rcode = 1})},
      {"a record after the OPT", with_opt_rdata(two, 0, {}, true)},
      {"options that do not tile", with_opt_rdata(two, 0, dns::Bytes{0, 10, 0, 9, 1})},
      {"over 512 octets (TC for a classic client)", build({.id = 0x1111, .answer = many.answer, .opt = true})},
  };
}
}  // namespace

TEST(AnswerRewrite, ClientAnswerIsTheGeneralPathsBytesForEveryShapeClientAndLink) {
  const dns::Bytes q = question_of("WwW.eXample.TEST");
  // The client's header: RD, dig +norec, CD, AD (the flags its reply echoes
  // or earns, dns::client_reply_flags).
  const std::uint16_t client_flags[] = {0x0100, 0x0000, 0x0110, 0x0120};
  int compared = 0, declined = 0;
  for (const Shape& s : shapes()) {
    auto layout = layout_of(s.stored);
    CHECK_TEXT(layout.has_value(), s.what);
    find_client_form(s.stored, *layout);
    for (int kind = 0; kind < 3; ++kind) {
      for (const std::uint16_t flags : client_flags) {
        dns::Query client;
        client.header.flags = flags;
        client.edns.present = kind > 0;
        client.edns.dnssec_ok = kind == 2;
        client.edns.udp_payload = 1232;
        const ClientQuestion cq{0xBEEF, q, flags};
        for (const dns::ClientLink link :
             {dns::ClientLink{true, 512}, dns::ClientLink{true, 1232}, dns::ClientLink{false, 1232}}) {
          const auto general_in = rewrite_answer(s.stored, *layout, cq, 100);
          CHECK_TEXT(general_in.has_value(), s.what);
          const auto want = dns::answer_for_client(*general_in, client, link);
          const auto got = client_answer(s.stored, *layout, cq, 100, client.edns, link);
          if (!got) {
            ++declined;
            continue;  // the caller takes the general path: whatever it gives is right by definition
          }
          CHECK_TEXT(want.has_value(), s.what);
          CHECK_TEXT(*want == got->bytes, s.what);
          CHECK_EQUAL_TEXT(*dns::reply_rcode(*want), got->rcode, s.what);
          ++compared;
        }
      }
    }
  }
  // Declines: the non-tiling options (no form at all: 36) and the extended
  // rcode to clients without OPT (12). Everything else takes the one copy.
  CHECK_EQUAL(48, declined);
  CHECK_EQUAL(9 * 36 - 48, compared);
}

TEST(AnswerRewrite, AHitGivesEachClientItsOwnFlagsAndOnlyExtendedErrors) {
  // One stored answer to our query (RD, AD: validated; a cookie, an NSID and
  // an Extended DNS Error in its OPT), hit by three clients in turn.
  dns::Bytes opts = dns::test::option(dns::opt_cookie, dns::Bytes(24, 0xCC));
  dns::test::append(opts, dns::test::option(dns::opt_nsid, dns::Bytes{'u', 'p'}));
  dns::test::append(opts, dns::test::option(dns::opt_extended_error, dns::Bytes{0, 3}));
  dns::Bytes stored = with_opt_rdata({.id = 0x1111, .answer = {{t_a, 300}}}, 0, opts);
  dns::test::set16(stored, 2, 0x81A0);
  auto layout = layout_of(stored);
  CHECK_TRUE(layout.has_value());
  find_client_form(stored, *layout);
  CHECK_TRUE(layout->client.has_value());
  const dns::Bytes q = question_of("www.example.test");
  const dns::ClientLink udp{true, 1232};
  struct Row {
    std::uint16_t query_flags;
    bool dnssec_ok;
    std::uint16_t reply_flags;
  };
  for (const Row& r : {Row{0x0100, false, 0x8180}, Row{0x0000, false, 0x8080}, Row{0x0130, false, 0x81B0},
                       Row{0x0100, true, 0x81A0}}) {
    dns::Edns edns;
    edns.present = true;
    edns.dnssec_ok = r.dnssec_ok;
    const auto got = client_answer(stored, *layout, {0xBEEF, q, r.query_flags}, 0, edns, udp);
    CHECK_TRUE(got.has_value());
    CHECK_EQUAL(r.reply_flags, dns::test::get16(got->bytes, 2));
    // Our OPT, last: 11 octets, then exactly the EDE option.
    const dns::Bytes ede = dns::test::option(dns::opt_extended_error, dns::Bytes{0, 3});
    CHECK_EQUAL(ede.size(), dns::test::get16(got->bytes, got->bytes.size() - ede.size() - 2));
    CHECK_TRUE(std::equal(ede.begin(), ede.end(), got->bytes.end() - static_cast<std::ptrdiff_t>(ede.size())));
  }
}

TEST(AnswerRewrite, ClientFormIsFoundOnTheFirstHitNotWhenStored) {
  const dns::Bytes stored = build({.id = 0x1111, .answer = {{t_a, 300}}, .opt = true});
  auto layout = layout_of(stored);
  CHECK_FALSE(layout->client_checked);  // storing an answer asked once pays no walks for it
  CHECK_FALSE(layout->client.has_value());
  find_client_form(stored, *layout);
  CHECK_TRUE(layout->client_checked);
  CHECK_TRUE(layout->client.has_value());
  CHECK_EQUAL(stored.size() - 11, layout->client->cut);  // the upstream OPT is the last 11 octets
  CHECK_EQUAL(1, layout->client->dropped);
  CHECK_TRUE(layout->client->upstream_do.has_value());
}

// A crafted answer whose second owner name is a compression pointer into the
// first record's TTL field: octets 01 41 00 00 walk as the name "A." while
// the TTL is 0x01410000, but aged by one second they are 01 40 FF FF, a
// pointer past the end. The general path re-scans what it built and refuses
// it; the one-copy form must not hand it out (found by the cache_rewrite
// fuzzer), so such an answer has no client form.
TEST(AnswerRewrite, AnAnswerWhoseNamesReadATtlFieldTakesTheGeneralPath) {
  dns::Bytes stored;
  for (const std::uint16_t v : {0x1111, 0x8180, 1, 2, 0, 0}) u16(stored, v);
  const dns::Bytes q = question_of("a.test");
  dns::test::append(stored, q);
  const std::size_t first = stored.size();
  u16(stored, 0xC00C);
  u16(stored, t_a);
  u16(stored, 1);
  const std::size_t ttl_field = stored.size();
  u32(stored, 0x01410000);
  u16(stored, 4);
  u32(stored, 0xC0000201);
  u16(stored, static_cast<std::uint16_t>(0xC000 | ttl_field));  // the owner name is the TTL's octets
  u16(stored, t_a);
  u16(stored, 1);
  u32(stored, 300);
  u16(stored, 4);
  u32(stored, 0xC0000202);
  CHECK(first < ttl_field);

  auto layout = layout_of(stored);
  CHECK_TRUE(layout.has_value());
  find_client_form(stored, *layout);
  const auto aged = rewrite_answer(stored, *layout, {0xBEEF, q}, 1);
  CHECK_TRUE(aged.has_value());
  dns::Query client;
  const dns::ClientLink udp{true, 512};
  CHECK_FALSE(dns::answer_for_client(*aged, client, udp).has_value());  // the general path refuses it
  CHECK_FALSE(layout->client.has_value());
  CHECK_FALSE(client_answer(stored, *layout, {0xBEEF, q}, 1, client.edns, udp).has_value());
}

namespace {
// The general path's verdict and the one-copy form's for the same hit: the
// form either declines or gives the general path's bytes.
void check_hit_paths_agree(const dns::Bytes& stored, const dns::Bytes& client_question, bool general_answers) {
  auto layout = layout_of(stored);
  CHECK_TRUE(layout.has_value());
  find_client_form(stored, *layout);
  const ClientQuestion cq{0xBEEF, client_question};
  const auto rewritten = rewrite_answer(stored, *layout, cq, 1);
  CHECK_TRUE(rewritten.has_value());
  dns::Query client;  // with OPT: the form declines an extended rcode to others
  client.edns.present = true;
  client.edns.udp_payload = 1232;
  const dns::ClientLink udp{true, 1232};
  const auto general = dns::answer_for_client(*rewritten, client, udp);
  CHECK_EQUAL(general_answers, general.has_value());
  const auto fast = client_answer(stored, *layout, cq, 1, client.edns, udp);
  if (!general) {
    CHECK_FALSE(layout->client.has_value());
    CHECK_FALSE(fast.has_value());
  } else if (fast) {
    CHECK_TRUE(*general == fast->bytes);
  }
}
}  // namespace

// A crafted answer whose last owner name runs past the last record: a label
// starting in the first record's RDATA spans the second record and the OPT
// up to its flags, whose first octet (5) is read as a length that ends in
// octets after the OPT. The stored answer walks; the general path copies
// only up to the last record, so its answer does not walk and it refuses.
// The form, derived from the stored octets (where answer_for_client puts its
// own OPT, whose flags octet is 0: the root), used to answer: found by the
// cache_rewrite fuzzer in CI. It must be derived from what the general path
// starts from. (Extended rcode 1 makes the form decline clients without OPT,
// so that the no-OPT check in client_form_of does not hide the difference.)
TEST(AnswerRewrite, AnAnswerWhoseNamesReadPastTheLastRecordTakesTheGeneralPath) {
  dns::Bytes stored;
  for (const std::uint16_t v : {0x1111, 0x8180, 1, 2, 0, 1}) u16(stored, v);
  const dns::Bytes q = question_of("a.test");
  dns::test::append(stored, q);
  u16(stored, 0xC00C);
  u16(stored, t_a);
  u16(stored, 1);
  u32(stored, 300);
  u16(stored, 4);
  const std::size_t label_at = stored.size();
  u32(stored, 0x1A787878);  // a 26-octet label: 3 octets of RDATA,
  u16(stored, static_cast<std::uint16_t>(0xC000 | label_at));
  u16(stored, t_a);
  u16(stored, 1);
  u32(stored, 300);
  u16(stored, 4);
  u32(stored, 0xC0000202);  // 16 octets of this record,
  const std::size_t opt_at = stored.size();
  stored.push_back(0);
  u16(stored, dns::type_opt);
  u16(stored, 1232);
  u32(stored, 0x01000500);  // and 7 of the OPT; flags 0x0500 (DO clear)
  u16(stored, 0);
  const std::size_t end = stored.size();
  CHECK_EQUAL(label_at + 1 + 26, opt_at + 7);
  for (const int b : {int{'j'}, int{'j'}, 0}) stored.push_back(static_cast<std::uint8_t>(b));  // the 5-octet label ends here, then the root
  CHECK_EQUAL(end, layout_of(stored)->end);
  check_hit_paths_agree(stored, q, false);
}

// A hit copies the client's question over the stored one, and a letter there
// may differ in case (RFC 4343). After a 0xC0 octet a letter is a pointer's
// second octet: 'A' aims at offset 65, 'a' at 97. Here the stored question
// makes the answer's owner walk (65 holds a root octet) and the client's
// makes it fail (97 holds a bad label type), so the general path refuses the
// client's hit and the form must not exist.
TEST(AnswerRewrite, AQuestionLetterThatIsAPointerOctetTakesTheGeneralPath) {
  dns::Bytes name(1 + 63 + 1 + 63 + 1, 'x');
  name[0] = 63;
  name[64] = 63;
  name[128] = 0;
  name[65 - dns::header_size] = 0;     // offset 65: the name ends (valid)
  name[97 - dns::header_size] = 0x80;  // offset 97: bad label type
  const std::size_t pointer_at = 100;
  name[pointer_at - dns::header_size] = 0xC0;
  name[pointer_at + 1 - dns::header_size] = 'A';
  dns::Bytes stored_q = name;
  u16(stored_q, t_a);
  u16(stored_q, 1);
  dns::Bytes client_q = stored_q;
  client_q[pointer_at + 1 - dns::header_size] = 'a';

  dns::Bytes stored;
  for (const std::uint16_t v : {0x1111, 0x8180, 1, 1, 0, 0}) u16(stored, v);
  dns::test::append(stored, stored_q);
  u16(stored, static_cast<std::uint16_t>(0xC000 | pointer_at));
  u16(stored, t_a);
  u16(stored, 1);
  u32(stored, 300);
  u16(stored, 4);
  u32(stored, 0xC0000201);
  check_hit_paths_agree(stored, stored_q, true);   // the stored case: both answer
  check_hit_paths_agree(stored, client_q, false);  // the other case: the general path refuses
}
