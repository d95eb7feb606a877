#pragma once
// Hand-built answers for the cache tests, byte by byte (not with the code
// under test). Owner names are compression pointers to the question (0xC00C)
// like real servers write them, so the rewriter's pointer invariant is tested.
#include <cstdint>
#include <string_view>
#include <vector>

#include "dns/message.hpp"
#include "dns/packets.hpp"

namespace nxdns::cache::packets {

// The byte writers are the codec tests' (one test-packet builder); this
// header adds the answer shapes the cache tests need.
using dns::test::header;
using dns::test::opt_rr;
using dns::test::u16;
using dns::test::u32;
using dns::test::wname;

inline constexpr std::uint16_t t_a = 1, t_ns = 2, t_cname = 5, t_soa = 6, t_aaaa = 28, t_opt = 41;

struct Rec {
  std::uint16_t type = t_a;
  std::uint32_t ttl = 300;
  // SOA only: the MINIMUM field.
  std::uint32_t soa_minimum = 0;
};

struct Answer {
  std::uint16_t id = 0x1234;
  std::string_view qname = "www.example.test";
  std::uint16_t qtype = t_a;
  std::uint16_t flags = 0x8180;  // QR RD RA, NOERROR
  std::vector<Rec> answer{};
  std::vector<Rec> authority{};
  bool opt = false;
  std::uint8_t ext_rcode = 0;
};

inline void put_rec(dns::Bytes& b, const Rec& r) {
  u16(b, 0xC00C);
  u16(b, r.type);
  u16(b, 1);
  u32(b, r.ttl);
  if (r.type == t_soa) {
    // MNAME = pointer, RNAME = pointer, serial refresh retry expire minimum
    u16(b, 2 + 2 + 20);
    u16(b, 0xC00C);
    u16(b, 0xC00C);
    for (int i = 0; i < 4; ++i) u32(b, 1000);
    u32(b, r.soa_minimum);
  } else if (r.type == t_aaaa) {
    u16(b, 16);
    for (int i = 0; i < 16; ++i) b.push_back(static_cast<std::uint8_t>(i));
  } else {
    u16(b, 4);
    for (std::uint8_t o : {192, 0, 2, 1}) b.push_back(o);
  }
}

inline dns::Bytes build(const Answer& a) {
  dns::Bytes b = header(a.id, a.flags, 1, static_cast<std::uint16_t>(a.answer.size()),
                        static_cast<std::uint16_t>(a.authority.size()), a.opt ? 1 : 0);
  dns::test::append(b, wname(a.qname));
  u16(b, a.qtype);
  u16(b, 1);
  for (const Rec& r : a.answer) put_rec(b, r);
  for (const Rec& r : a.authority) put_rec(b, r);
  if (a.opt) dns::test::append(b, opt_rr(1232, static_cast<std::uint32_t>(a.ext_rcode) << 24));
  return b;
}

// The TTL of the i-th record after the question (answer, authority, additional).
// Knows only this builder's shapes: pointer owners, root-owned OPT.
inline std::uint32_t ttl_of(const dns::Bytes& msg, std::size_t i) {
  std::size_t off = 12;
  while (msg[off] != 0) off += 1 + msg[off];
  off += 1 + 4;
  for (std::size_t k = 0;; ++k) {
    off += msg[off] == 0 ? 1 : 2;
    const std::size_t ttl_at = off + 4;
    const std::uint32_t ttl = (std::uint32_t{msg[ttl_at]} << 24) | (std::uint32_t{msg[ttl_at + 1]} << 16) |
                              (std::uint32_t{msg[ttl_at + 2]} << 8) | msg[ttl_at + 3];
    if (k == i) return ttl;
    off = ttl_at + 4;
    off += 2 + ((std::size_t{msg[off]} << 8) | msg[off + 1]);
  }
}

}  // namespace nxdns::cache::packets
