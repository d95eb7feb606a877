#pragma once
// Hand-built answers for the cache tests, byte by byte (not with the code
// under test). Owner names are compression pointers to the question (0xC00C)
// like real servers write them, so the rewriter's pointer invariant is tested.
#include <cstdint>
#include <string_view>
#include <vector>

#include "dns/message.hpp"

namespace nxdns::cache::packets {

inline void u16(dns::Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v & 0xFF));
}
inline void u32(dns::Bytes& b, std::uint32_t v) {
  u16(b, static_cast<std::uint16_t>(v >> 16));
  u16(b, static_cast<std::uint16_t>(v & 0xFFFF));
}
inline dns::Bytes wname(std::string_view text) {
  dns::Bytes b;
  while (!text.empty()) {
    const auto dot = text.find('.');
    const auto label = text.substr(0, dot);
    b.push_back(static_cast<std::uint8_t>(label.size()));
    b.insert(b.end(), label.begin(), label.end());
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  b.push_back(0);
  return b;
}

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
  dns::Bytes b;
  u16(b, a.id);
  u16(b, a.flags);
  u16(b, 1);
  u16(b, static_cast<std::uint16_t>(a.answer.size()));
  u16(b, static_cast<std::uint16_t>(a.authority.size()));
  u16(b, a.opt ? 1 : 0);
  const dns::Bytes n = wname(a.qname);
  b.insert(b.end(), n.begin(), n.end());
  u16(b, a.qtype);
  u16(b, 1);
  for (const Rec& r : a.answer) put_rec(b, r);
  for (const Rec& r : a.authority) put_rec(b, r);
  if (a.opt) {
    b.push_back(0);
    u16(b, t_opt);
    u16(b, 1232);
    u32(b, static_cast<std::uint32_t>(a.ext_rcode) << 24);
    u16(b, 0);
  }
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
