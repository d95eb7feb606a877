// The header flags a client's reply carries (dns::client_reply_flags): RD
// and CD echo its query, Z is clear, AD only for a client that asked for it;
// and answer_for_client applies them to every reply, an upstream answer to
// our RD=1, AD=1 query included.
#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

namespace {

constexpr std::uint16_t qr = 0x8000, aa = 0x0400, tc = 0x0200, rd = 0x0100, ra = 0x0080, z = 0x0040, ad = 0x0020,
                        cd = 0x0010;

Query parsed(const Bytes& q) {
  const QueryParse p = parse_query(q);
  CHECK_PARSE_ERROR(ParseError::none, p.error);
  return *p.query;
}

}  // namespace

TEST_GROUP(ReplyFlags){};

TEST(ReplyFlags, Table) {
  struct Row {
    std::uint16_t answer;  // what the upstream (or the cache) says
    std::uint16_t query;   // what the client asked
    bool dnssec_ok;
    std::uint16_t reply;
  };
  const Row rows[] = {
      // RD echoes the client: the upstream always saw RD=1.
      {qr | rd | ra, rd, false, qr | rd | ra},
      {qr | rd | ra, 0, false, qr | ra},
      {qr | ra, rd, false, qr | rd | ra},
      // CD echoes the client (RFC 4035 §3.1.6), whatever the answer says.
      {qr | rd | ra, rd | cd, false, qr | rd | ra | cd},
      {qr | rd | ra | cd, rd, false, qr | rd | ra},
      // AD: kept for a client that set AD or DO (RFC 6840 §5.7, §5.8), cleared otherwise.
      {qr | rd | ra | ad, rd | ad, false, qr | rd | ra | ad},
      {qr | rd | ra | ad, rd, true, qr | rd | ra | ad},
      {qr | rd | ra | ad, rd, false, qr | rd | ra},
      {qr | rd | ra, rd | ad, true, qr | rd | ra},  // never set where the answer had none
      // Z is clear in every response (RFC 1035 §4.1.1); AA, TC, RA, opcode and rcode are the answer's.
      {qr | rd | ra | z, rd | z, false, qr | rd | ra},
      {qr | aa | tc | rd | ra | 3, rd, false, qr | aa | tc | rd | ra | 3},
      {qr | rd | 5, rd | aa | tc, false, qr | rd | 5},
      {static_cast<std::uint16_t>(qr | (2 << 11) | rd | 4), rd, false, static_cast<std::uint16_t>(qr | (2 << 11) | rd | 4)},
  };
  for (const Row& r : rows) CHECK_EQUAL(r.reply, client_reply_flags(r.answer, r.query, r.dnssec_ok));
}

TEST(ReplyFlags, AnswerForClientGivesEachClientItsOwnFlags) {
  // One upstream answer to our query (RD, AD set: a validated answer), as
  // the cache would replay it to several clients.
  Bytes up = response(7, "a.example", 1, 1);
  set16(up, 2, qr | rd | ra | ad);
  const ClientLink udp{true, 512};

  Bytes stub = query(7, "a.example");  // RD, no AD, no DO
  auto out = answer_for_client(up, parsed(stub), udp);
  CHECK_TRUE(out.has_value());
  CHECK_EQUAL(qr | rd | ra, get16(*out, 2));

  Bytes norec = query(7, "a.example");  // dig +norec +cd
  set16(norec, 2, cd);
  out = answer_for_client(up, parsed(norec), udp);
  CHECK_TRUE(out.has_value());
  CHECK_EQUAL(qr | ra | cd, get16(*out, 2));

  Bytes validating = query(7, "a.example", 1, true);  // DO set
  set16(validating, validating.size() - 4, 0x8000);
  out = answer_for_client(up, parsed(validating), udp);
  CHECK_TRUE(out.has_value());
  CHECK_EQUAL(qr | rd | ra | ad, get16(*out, 2));

  // A TC reply keeps them too.
  const Bytes big = [] {
    Bytes b = response(7, "a.example", 1, 60);
    set16(b, 2, qr | rd | ra | ad);
    return b;
  }();
  out = answer_for_client(big, parsed(norec), udp);
  CHECK_TRUE(out.has_value());
  CHECK_EQUAL(qr | tc | ra | cd, get16(*out, 2));
}
