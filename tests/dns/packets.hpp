#pragma once
// Hand-built DNS packets for the codec tests. Built byte by byte (not with
// the codec under test) so a codec bug cannot hide in a matching builder bug.
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "dns/message.hpp"

namespace nxdns::dns::test {

inline void u8(Bytes& b, std::uint8_t v) { b.push_back(v); }
inline void u16(Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v & 0xFF));
}
inline void u32(Bytes& b, std::uint32_t v) {
  u16(b, static_cast<std::uint16_t>(v >> 16));
  u16(b, static_cast<std::uint16_t>(v & 0xFFFF));
}
inline void raw(Bytes& b, std::initializer_list<std::uint8_t> v) { b.insert(b.end(), v.begin(), v.end()); }
inline void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

inline Bytes header(std::uint16_t id, std::uint16_t flags, std::uint16_t qd, std::uint16_t an, std::uint16_t ns,
                    std::uint16_t ar) {
  Bytes b;
  u16(b, id);
  u16(b, flags);
  u16(b, qd);
  u16(b, an);
  u16(b, ns);
  u16(b, ar);
  return b;
}

// Dotted text to uncompressed wire form; no escapes (test names are plain).
inline Bytes wname(std::string_view text) {
  Bytes b;
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

inline Bytes option(std::uint16_t code, const Bytes& data) {
  Bytes b;
  u16(b, code);
  u16(b, static_cast<std::uint16_t>(data.size()));
  append(b, data);
  return b;
}

// OPT RR with root owner. ttl: ext-rcode<<24 | version<<16 | DO 0x8000.
inline Bytes opt_rr(std::uint16_t payload, std::uint32_t ttl, const Bytes& rdata = {}) {
  Bytes b;
  u8(b, 0);
  u16(b, 41);
  u16(b, payload);
  u32(b, ttl);
  u16(b, static_cast<std::uint16_t>(rdata.size()));
  append(b, rdata);
  return b;
}

// A record with the given (possibly compressed) owner bytes and 4-octet IP.
inline Bytes a_rr(const Bytes& owner, std::uint32_t ip, std::uint32_t ttl = 300) {
  Bytes b = owner;
  u16(b, 1);
  u16(b, 1);
  u32(b, ttl);
  u16(b, 4);
  u32(b, ip);
  return b;
}

// A query: header (RD set), one question, optional OPT.
inline Bytes query(std::uint16_t id, std::string_view name, std::uint16_t qtype = 1, bool edns = false,
                   std::uint16_t payload = 1232) {
  Bytes b = header(id, 0x0100, 1, 0, 0, edns ? 1 : 0);
  append(b, wname(name));
  u16(b, qtype);
  u16(b, 1);
  if (edns) append(b, opt_rr(payload, 0));
  return b;
}

// A response to `q` (first question copied), answers as A records whose
// owner is a pointer to the question name at offset 12.
inline Bytes response(std::uint16_t id, std::string_view name, std::uint16_t qtype, int answers,
                      const Bytes* opt = nullptr) {
  Bytes b = header(id, 0x8180, 1, static_cast<std::uint16_t>(answers), 0, opt ? 1 : 0);
  append(b, wname(name));
  u16(b, qtype);
  u16(b, 1);
  for (int i = 0; i < answers; ++i) append(b, a_rr(Bytes{0xC0, 0x0C}, 0x0A000000u + static_cast<std::uint32_t>(i)));
  if (opt) append(b, *opt);
  return b;
}

inline void set16(Bytes& b, std::size_t off, std::uint16_t v) {
  b[off] = static_cast<std::uint8_t>(v >> 8);
  b[off + 1] = static_cast<std::uint8_t>(v & 0xFF);
}
inline std::uint16_t get16(const Bytes& b, std::size_t off) {
  return static_cast<std::uint16_t>((b[off] << 8) | b[off + 1]);
}

}  // namespace nxdns::dns::test

// Enum checks through describe(): a failure prints both meanings.
#define CHECK_PARSE_ERROR(expected, actual) STRCMP_EQUAL(::nxdns::dns::describe(expected), ::nxdns::dns::describe(actual))
// Byte vectors: length first (clear message), then content.
#define CHECK_BYTES(expected, actual)                              \
  do {                                                             \
    const auto& e_ = (expected);                                   \
    const auto& a_ = (actual);                                     \
    UNSIGNED_LONGS_EQUAL(e_.size(), a_.size());                    \
    if (!e_.empty()) MEMCMP_EQUAL(e_.data(), a_.data(), e_.size()); \
  } while (0)
