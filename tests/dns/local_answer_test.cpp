// dns::local_answer: the queries nxdns answers itself and never forwards
// (docs/architecture.md, "What is answered locally"), as one table, and the
// replies it gives them.
#include <optional>
#include <string>

#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

namespace {

Query parsed(const Bytes& q) {
  const QueryParse p = parse_query(q);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  return *p.query;
}

}  // namespace

TEST_GROUP(LocalAnswer){};

TEST(LocalAnswer, Table) {
  struct Row {
    std::uint16_t qtype;
    std::uint16_t qclass;
    bool edns;
    std::uint8_t version;
    std::uint16_t flags;  // the query's header flags
    std::optional<Rcode> expected;
  };
  constexpr std::uint16_t in = 1, ch = 3, hs = 4, none = 254, any_class = 255;
  constexpr std::uint16_t rd = 0x0100, tc = 0x0200;
  const Row rows[] = {
      {1, in, false, 0, rd, std::nullopt},
      {1, in, true, 0, rd, std::nullopt},
      {1, in, false, 0, 0, std::nullopt},              // RD clear: forwarded (asked upstream with RD)
      {1, in, false, 0, rd | 0x0010, std::nullopt},    // CD
      {type_any, in, false, 0, rd, std::nullopt},      // RFC 8482: forwarded, the upstream answers minimally
      {0, in, false, 0, rd, std::nullopt},             // TYPE0 is not a meta-type: the upstream's to answer
      {127, in, false, 0, rd, std::nullopt},
      {type_axfr, in, false, 0, rd, Rcode::refused},
      {type_axfr, in, true, 0, rd, Rcode::refused},
      {type_ixfr, in, false, 0, rd, Rcode::refused},
      // Meta-types (RFC 6895 §3.1): no data answers them.
      {type_opt, in, false, 0, rd, Rcode::formerr},
      {128, in, false, 0, rd, Rcode::formerr},
      {248, in, false, 0, rd, Rcode::formerr},
      {249, in, false, 0, rd, Rcode::formerr},  // TKEY
      {250, in, true, 0, rd, Rcode::formerr},   // TSIG
      {253, in, false, 0, rd, Rcode::formerr},  // MAILB
      {254, in, false, 0, rd, Rcode::formerr},  // MAILA
      // Classes other than IN, version.bind CH TXT among them.
      {16, ch, false, 0, rd, Rcode::refused},
      {1, hs, false, 0, rd, Rcode::refused},
      {1, none, false, 0, rd, Rcode::refused},
      {1, any_class, false, 0, rd, Rcode::refused},
      {type_any, ch, false, 0, rd, Rcode::refused},
      {1, 0, false, 0, rd, Rcode::refused},
      {type_axfr, ch, false, 0, rd, Rcode::refused},
      {250, ch, false, 0, rd, Rcode::formerr},  // the type is looked at first, as unbound does
      // TC belongs to responses.
      {1, in, false, 0, rd | tc, Rcode::formerr},
      {1, in, true, 0, tc, Rcode::formerr},
      {type_axfr, in, false, 0, rd | tc, Rcode::formerr},
      // Version first (RFC 6891 §6.1.3).
      {1, in, true, 1, rd, Rcode::badvers},
      {type_axfr, in, true, 1, rd, Rcode::badvers},
      {250, ch, true, 1, rd | tc, Rcode::badvers},
      {1, in, true, 255, rd, Rcode::badvers},
  };
  for (const Row& r : rows) {
    Bytes q = header(3, r.flags, 1, 0, 0, r.edns ? 1 : 0);
    append(q, wname("zone.example"));
    u16(q, r.qtype);
    u16(q, r.qclass);
    if (r.edns) append(q, opt_rr(1232, std::uint32_t{r.version} << 16));
    const auto got = local_answer(parsed(q));
    const std::string row = "qtype " + std::to_string(r.qtype) + " class " + std::to_string(r.qclass) + " flags " +
                            std::to_string(r.flags) + " version " + std::to_string(r.version);
    CHECK_EQUAL_TEXT(r.expected.has_value(), got.has_value(), row.c_str());
    if (r.expected) CHECK_EQUAL_TEXT(static_cast<int>(*r.expected), static_cast<int>(*got), row.c_str());
  }
}

TEST(LocalAnswer, EveryMetaTypeIsAnsweredAndNoOtherType) {
  for (unsigned t = 0; t <= 0xFFFF; ++t) {
    const auto qtype = static_cast<std::uint16_t>(t);
    const bool meta = qtype == type_opt || (qtype >= 128 && qtype <= 254);
    CHECK_EQUAL(meta, is_meta_type(qtype));
    Bytes q = query(3, "zone.example", qtype, false);
    CHECK_EQUAL(meta, local_answer(parsed(q)).has_value());
  }
}

TEST(LocalAnswer, ItsRepliesEchoCdAndCarryNoTc) {
  // The engine builds every local answer with make_error_reply.
  Bytes q = header(0x7777, 0x0100 | 0x0200 | 0x0010, 1, 0, 0, 1);
  append(q, wname("version.bind"));
  u16(q, 16);
  u16(q, 3);
  append(q, opt_rr(1232, 0));
  const Query p = parsed(q);
  const auto rcode = local_answer(p);
  CHECK_TRUE(rcode.has_value());
  const Bytes r = make_error_reply(q, p, *rcode);
  CHECK_EQUAL(0x8191, get16(r, 2));  // QR RD RA CD, FORMERR; TC not echoed
}

TEST(LocalAnswer, IxfrWithItsAuthoritySoaParses) {
  // RFC 1995 §3: the client's SOA goes in the authority section.
  Bytes q = header(5, 0, 1, 0, 1, 0);
  append(q, wname("zone.example"));
  u16(q, type_ixfr);
  u16(q, 1);
  append(q, Bytes{0xC0, 0x0C});
  u16(q, 6);  // SOA
  u16(q, 1);
  u32(q, 0);
  Bytes rdata = wname("ns.zone.example");
  append(rdata, wname("host.zone.example"));
  for (int i = 0; i < 5; ++i) u32(rdata, 1);
  u16(q, static_cast<std::uint16_t>(rdata.size()));
  append(q, rdata);
  const QueryParse p = parse_query(q);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  CHECK_EQUAL(static_cast<int>(Rcode::refused), static_cast<int>(*local_answer(*p.query)));
  const Bytes r = make_error_reply(q, *p.query, Rcode::refused);
  CHECK_EQUAL(5, r[3] & 0x0F);
  CHECK_EQUAL(0, get16(r, 8));  // the SOA is not echoed
  // An authority record on any other type is still FORMERR material.
  set16(q, 12 + wname("zone.example").size(), 1);
  CHECK_PARSE_ERROR(ParseError::unexpected_records, parse_query(q).error);
}

TEST(LocalAnswer, OtherOpcodesGetNotimpEchoingTheQuestion) {
  for (std::uint16_t opcode : {1, 2, 4, 5, 6, 15}) {
    Bytes q = query(0x4242, "zone.example", 6, false);
    set16(q, 2, static_cast<std::uint16_t>(0x0100 | (opcode << 11)));
    CHECK_PARSE_ERROR(ParseError::bad_opcode, parse_query(q).error);
    const Bytes r = make_notimp(q);
    CHECK_EQUAL(q.size(), r.size());
    CHECK_EQUAL(0x4242, get16(r, 0));
    CHECK_EQUAL(opcode, (get16(r, 2) >> 11) & 0xF);
    CHECK_EQUAL(4, r[3] & 0x0F);
    CHECK_TRUE(r[2] & 0x80);
    MEMCMP_EQUAL(q.data() + 12, r.data() + 12, q.size() - 12);
  }
  // An UPDATE with records after its zone section: only the zone is echoed.
  Bytes upd = header(1, 5 << 11, 1, 0, 1, 0);
  append(upd, wname("zone.example"));
  u16(upd, 6);
  u16(upd, 1);
  append(upd, a_rr(Bytes{0xC0, 0x0C}, 1));
  const Bytes r = make_notimp(upd);
  CHECK_EQUAL(0, get16(r, 8));
  CHECK_EQUAL(1, get16(r, 4));
  // Garbage zone section: header only. Responses: nothing.
  Bytes junk = header(1, 4 << 11, 1, 0, 0, 0);
  append(junk, Bytes{0x50, 1, 2});
  CHECK_EQUAL(12u, make_notimp(junk).size());
  CHECK_EQUAL(0, get16(make_notimp(junk), 4));
  set16(junk, 2, 0x8000 | (4 << 11));
  CHECK_TRUE(make_notimp(junk).empty());
}

