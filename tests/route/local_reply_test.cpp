// The replies for names answered at home, read back with the codec's own
// parsers (header, section walk, names) and passed through
// dns::answer_for_client as the engine does, with and without the
// client's OPT, over UDP and TCP.
#include "route/local_reply.hpp"

#include <string>
#include <vector>

#include "dns/packets.hpp"
#include "dns/wire.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::dns::Bytes;
using nxdns::dns::ByteView;
using nxdns::dns::Query;
using nxdns::dns::Rcode;
using namespace nxdns::dns::test;
using namespace nxdns::route;
namespace dns = nxdns::dns;
namespace wire = nxdns::dns::wire;

namespace {

constexpr std::uint16_t flag_qr = 0x8000, flag_aa = 0x0400, flag_tc = 0x0200, flag_rd = 0x0100, flag_ra = 0x0080,
                        flag_ad = 0x0020, flag_cd = 0x0010;

struct Client {
  Bytes raw;
  Query q;
};

// A query as a client sends it: `flags` in the header, one OPT when `edns`.
Client client(std::string_view name, std::uint16_t qtype, std::uint16_t flags, bool edns, bool dnssec_ok = false) {
  Client c;
  c.raw = header(0xBEEF, flags, 1, 0, 0, edns ? 1 : 0);
  append(c.raw, wname(name));
  u16(c.raw, qtype);
  u16(c.raw, 1);
  if (edns) append(c.raw, opt_rr(4096, dnssec_ok ? 0x8000 : 0));
  const dns::QueryParse p = dns::parse_query(c.raw);
  CHECK_PARSE_ERROR(dns::ParseError::none, p.error);
  c.q = *p.query;
  return c;
}

struct ReadRecord {
  Bytes owner;
  std::uint16_t type = 0, rrclass = 0;
  std::uint32_t ttl = 0;
  Bytes rdata;
};
struct ReadReply {
  dns::Header header;
  Bytes question;  // the question section's octets
  std::vector<ReadRecord> records;  // answer, authority, additional in order
  std::optional<wire::Rr> opt;
  bool opt_is_last = false;
};

ReadReply read(ByteView reply) {
  ReadReply r;
  const wire::Layout l = wire::scan(reply);
  CHECK_PARSE_ERROR(dns::ParseError::none, l.error);
  UNSIGNED_LONGS_EQUAL(reply.size(), l.end);
  r.header = l.header;
  r.question.assign(reply.begin() + dns::header_size, reply.begin() + static_cast<std::ptrdiff_t>(l.questions_end));
  std::size_t off = l.questions_end;
  const unsigned total = unsigned{l.header.ancount} + l.header.nscount + l.header.arcount;
  for (unsigned i = 0; i < total; ++i) {
    wire::Rr rr;
    CHECK_PARSE_ERROR(dns::ParseError::none, wire::read_rr(reply, off, rr));
    ReadRecord rec;
    CHECK_PARSE_ERROR(dns::ParseError::none, dns::read_name(reply, off, rec.owner).error);
    rec.type = rr.type;
    rec.rrclass = rr.rrclass;
    rec.ttl = rr.ttl;
    const ByteView rdata = reply.subspan(rr.rdata, rr.rdlength);
    rec.rdata.assign(rdata.begin(), rdata.end());
    r.records.push_back(rec);
    off = rr.end;
  }
  r.opt = l.opt;
  r.opt_is_last = l.opt_is_last;
  return r;
}

Bytes question_of(const Client& c) {
  return Bytes(c.raw.begin() + 12, c.raw.begin() + static_cast<std::ptrdiff_t>(c.q.question_end));
}

// SOA RDATA fields (RFC 1035 §3.3.13).
struct Soa {
  Bytes mname, rname;
  std::uint32_t serial = 0, refresh = 0, retry = 0, expire = 0, minimum = 0;
};
Soa soa_of(const ReadRecord& r) {
  Soa s;
  Bytes wrapped = header(0, 0, 0, 0, 0, 0);  // read_name wants a message
  append(wrapped, r.rdata);
  const dns::NameRead m = dns::read_name(wrapped, 12, s.mname);
  CHECK_PARSE_ERROR(dns::ParseError::none, m.error);
  const dns::NameRead n = dns::read_name(wrapped, m.next, s.rname);
  CHECK_PARSE_ERROR(dns::ParseError::none, n.error);
  UNSIGNED_LONGS_EQUAL(n.next + 20, wrapped.size());
  std::uint32_t* fields[] = {&s.serial, &s.refresh, &s.retry, &s.expire, &s.minimum};
  for (int i = 0; i < 5; ++i) *fields[i] = wire::load32(wrapped, n.next + 4 * static_cast<std::size_t>(i));
  return s;
}

void check_soa(const ReadRecord& r, std::string_view zone, std::uint32_t negative_ttl) {
  CHECK(r.owner == wname(zone));
  LONGS_EQUAL(type_soa, r.type);
  LONGS_EQUAL(1, r.rrclass);
  UNSIGNED_LONGS_EQUAL(negative_ttl, r.ttl);
  const Soa s = soa_of(r);
  CHECK(s.mname == wname(zone));
  CHECK(s.rname == wname("nobody.invalid"));
  UNSIGNED_LONGS_EQUAL(1, s.serial);
  UNSIGNED_LONGS_EQUAL(negative_ttl, s.minimum);
}

LocalRecords set_of(std::vector<std::string> lines) {
  std::vector<Record> records;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string why;
    auto r = parse_record(lines[i], "records[" + std::to_string(i) + "]", &why);
    if (!r) FAIL(why.c_str());
    records.push_back(*r);
  }
  std::string why;
  auto set = LocalRecords::build(std::move(records), &why);
  if (!set) FAIL(why.c_str());
  return std::move(*set);
}

// What the client would receive, checked to be accepted.
Bytes delivered(const Bytes& reply, const Client& c, bool udp) {
  const auto out = dns::answer_for_client(reply, c.q, dns::client_link(c.q, udp));
  if (!out) FAIL("answer_for_client refused the reply");
  return out ? *out : Bytes{};
}

const Bytes home = wname("home.arpa");

}  // namespace

TEST_GROUP(LocalReply){};

TEST(LocalReply, RecordsReplyHeaderQuestionAndAnswers) {
  const LocalRecords set = set_of({"www.home.arpa 120 CNAME nas.home.arpa", "nas.home.arpa 60 A 192.168.1.2"});
  for (const bool edns : {false, true}) {
    // Mixed case (0x20), RD and CD set, AD asked.
    const Client c = client("WwW.HoMe.ArPa", type_a, flag_rd | flag_cd | flag_ad, edns);
    const Bytes reply = make_records_reply(c.raw, c.q, set.find(c.q.question.name, type_a), home, 30);
    const ReadReply r = read(reply);
    UNSIGNED_LONGS_EQUAL(0xBEEF, r.header.id);
    UNSIGNED_LONGS_EQUAL(flag_qr | flag_aa | flag_rd | flag_ra | flag_cd, r.header.flags);
    CHECK(r.question == question_of(c));
    LONGS_EQUAL(1, r.header.qdcount);
    LONGS_EQUAL(2, r.header.ancount);
    LONGS_EQUAL(0, r.header.nscount);
    LONGS_EQUAL(edns ? 1 : 0, r.header.arcount);
    // The alias owned by the question's spelling, then its target's A.
    CHECK(r.records[0].owner == wname("WwW.HoMe.ArPa"));
    LONGS_EQUAL(type_cname, r.records[0].type);
    UNSIGNED_LONGS_EQUAL(120, r.records[0].ttl);
    CHECK(r.records[0].rdata == wname("nas.home.arpa"));
    CHECK(r.records[1].owner == wname("nas.home.arpa"));
    LONGS_EQUAL(1, r.records[1].rrclass);
    UNSIGNED_LONGS_EQUAL(60, r.records[1].ttl);
    CHECK(r.records[1].rdata == (Bytes{192, 168, 1, 2}));
    CHECK_EQUAL(edns, r.opt.has_value());
    if (edns) CHECK_TRUE(r.opt_is_last);
  }
}

TEST(LocalReply, RdClearIsEchoedClear) {
  const LocalRecords set = set_of({"nas.home.arpa A 192.168.1.2"});
  const Client c = client("nas.home.arpa", type_a, 0, false);
  const ReadReply r = read(make_records_reply(c.raw, c.q, set.find(c.q.question.name, type_a), home, 30));
  UNSIGNED_LONGS_EQUAL(flag_qr | flag_aa | flag_ra, r.header.flags);
}

TEST(LocalReply, NodataAndAbsentCarryTheZoneSoa) {
  const LocalRecords set = set_of({"nas.home.arpa A 192.168.1.2"});
  struct Row {
    const char* qname;
    std::uint16_t qtype;
    std::uint16_t rcode;
  };
  for (const Row& row : {Row{"nas.home.arpa", type_aaaa, 0}, Row{"tv.home.arpa", type_a, 3}}) {
    const Client c = client(row.qname, row.qtype, flag_rd, true);
    const ReadReply r = read(make_records_reply(c.raw, c.q, set.find(c.q.question.name, row.qtype), home, 30));
    UNSIGNED_LONGS_EQUAL(flag_qr | flag_aa | flag_rd | flag_ra | row.rcode, r.header.flags);
    LONGS_EQUAL(0, r.header.ancount);
    LONGS_EQUAL(1, r.header.nscount);
    LONGS_EQUAL(1, r.header.arcount);
    check_soa(r.records[0], "home.arpa", 30);
    LONGS_EQUAL(dns::type_opt, r.records[1].type);
  }
}

TEST(LocalReply, NegativeReplyForABuiltInZone) {
  for (const Rcode rcode : {Rcode::nxdomain, Rcode::noerror}) {
    const Client c = client("1.1.168.192.In-Addr.Arpa", type_ptr, flag_rd, false);
    const Bytes zone = wname("168.192.in-addr.arpa");
    const ReadReply r = read(make_negative_reply(c.raw, c.q, rcode, zone, 3600));
    UNSIGNED_LONGS_EQUAL(flag_qr | flag_aa | flag_rd | flag_ra | static_cast<std::uint16_t>(rcode), r.header.flags);
    CHECK(r.question == question_of(c));
    LONGS_EQUAL(0, r.header.ancount);
    LONGS_EQUAL(1, r.header.nscount);
    LONGS_EQUAL(0, r.header.arcount);
    check_soa(r.records[0], "168.192.in-addr.arpa", 3600);
  }
}

TEST(LocalReply, LoopbackAnswersAddressesAndNodataOtherwise) {
  const Bytes zone = wname("localhost");
  struct Row {
    std::uint16_t qtype;
    std::vector<Bytes> rdata;
  };
  const Row rows[] = {
      {type_a, {{127, 0, 0, 1}}},
      {type_aaaa, {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}},
      {dns::type_any, {{127, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}},
      {type_mx, {}},
      {type_txt, {}},
  };
  for (const Row& row : rows) {
    const Client c = client("App.LocalHost", row.qtype, flag_rd, true);
    const ReadReply r = read(make_loopback_reply(c.raw, c.q, zone, 600));
    UNSIGNED_LONGS_EQUAL(flag_qr | flag_aa | flag_rd | flag_ra, r.header.flags);
    CHECK(r.question == question_of(c));
    LONGS_EQUAL(row.rdata.size(), r.header.ancount);
    LONGS_EQUAL(row.rdata.empty() ? 1 : 0, r.header.nscount);
    for (std::size_t i = 0; i < row.rdata.size(); ++i) {
      CHECK(r.records[i].owner == wname("App.LocalHost"));
      UNSIGNED_LONGS_EQUAL(600, r.records[i].ttl);
      CHECK(r.records[i].rdata == row.rdata[i]);
    }
    if (row.rdata.empty()) check_soa(r.records[0], "localhost", 600);
  }
}

TEST(LocalReply, AnswerForClientAcceptsEveryKind) {
  const LocalRecords set = set_of({"nas.home.arpa A 192.168.1.2", "t.home.arpa TXT \"hello\""});
  for (const bool edns : {false, true}) {
    for (const bool dnssec_ok : {false, true}) {
      if (dnssec_ok && !edns) continue;
      const Client a = client("nas.home.arpa", type_a, flag_rd, edns, dnssec_ok);
      const Client none = client("tv.home.arpa", type_a, flag_rd, edns, dnssec_ok);
      const Client nodata = client("t.home.arpa", type_a, flag_rd, edns, dnssec_ok);
      const Client lo = client("localhost", type_aaaa, flag_rd, edns, dnssec_ok);
      const Client lo_mx = client("localhost", type_mx, flag_rd, edns, dnssec_ok);
      const std::pair<const Client*, Bytes> replies[] = {
          {&a, make_records_reply(a.raw, a.q, set.find(a.q.question.name, type_a), home, 30)},
          {&none, make_records_reply(none.raw, none.q, set.find(none.q.question.name, type_a), home, 30)},
          {&nodata, make_records_reply(nodata.raw, nodata.q, set.find(nodata.q.question.name, type_a), home, 30)},
          {&none, make_negative_reply(none.raw, none.q, Rcode::nxdomain, home, 3600)},
          {&lo, make_loopback_reply(lo.raw, lo.q, wname("localhost"), 600)},
          {&lo_mx, make_loopback_reply(lo_mx.raw, lo_mx.q, wname("localhost"), 600)},
      };
      for (const auto& [c, reply] : replies) {
        for (const bool udp : {true, false}) {
          const Bytes out = delivered(reply, *c, udp);
          const ReadReply before = read(reply), after = read(out);
          // Nothing of ours needed rewriting: same flags, same sections.
          UNSIGNED_LONGS_EQUAL(before.header.flags, after.header.flags);
          LONGS_EQUAL(before.header.ancount, after.header.ancount);
          LONGS_EQUAL(before.header.nscount, after.header.nscount);
          LONGS_EQUAL(edns ? 1 : 0, after.header.arcount);
          if (edns) {
            CHECK_TRUE(after.opt_is_last);
            CHECK_EQUAL(dnssec_ok, (after.opt->ttl & 0x8000) != 0);
          }
          CHECK(out == reply);
        }
      }
    }
  }
}

TEST(LocalReply, BigTxtSetIsTruncatedOverUdpAndWholeOverTcp) {
  std::vector<std::string> lines;
  for (int i = 0; i < 12; ++i)
    lines.push_back("big.home.arpa TXT \"" + std::string(200, static_cast<char>('a' + i)) + "\"");
  const LocalRecords set = set_of(lines);
  for (const bool edns : {false, true}) {
    const Client c = client("big.home.arpa", type_txt, flag_rd, edns);
    const Bytes reply = make_records_reply(c.raw, c.q, set.find(c.q.question.name, type_txt), home, 30);
    CHECK(reply.size() > dns::max_udp_limit);
    const ReadReply udp = read(delivered(reply, c, true));
    CHECK_TRUE((udp.header.flags & flag_tc) != 0);
    LONGS_EQUAL(0, udp.header.ancount);
    LONGS_EQUAL(edns ? 1 : 0, udp.header.arcount);
    const ReadReply tcp = read(delivered(reply, c, false));
    CHECK_FALSE((tcp.header.flags & flag_tc) != 0);
    LONGS_EQUAL(12, tcp.header.ancount);
  }
}
