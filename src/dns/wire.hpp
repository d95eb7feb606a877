#pragma once
// Internal to the codec (not part of the public contract): bounds-checked
// primitives and a section walker shared by the parsers and rewriters.
// Every reader takes an offset and a length check before touching a byte;
// nothing here trusts a count or length read from the packet.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "dns/message.hpp"

namespace nxdns::dns::wire {

// True when [off, off + n) lies inside `m`, written so it cannot overflow.
inline bool has(ByteView m, std::size_t off, std::size_t n) { return off <= m.size() && n <= m.size() - off; }

// Callers check has(m, off, 2/4) first.
inline std::uint16_t load16(ByteView m, std::size_t off) {
  return static_cast<std::uint16_t>((m[off] << 8) | m[off + 1]);
}
inline std::uint32_t load32(ByteView m, std::size_t off) {
  return (static_cast<std::uint32_t>(load16(m, off)) << 16) | load16(m, off + 2);
}

inline void put16(Bytes& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v & 0xFF));
}
inline void put32(Bytes& out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xFFFF));
}
inline void store16(std::span<std::uint8_t> m, std::size_t off, std::uint16_t v) {
  m[off] = static_cast<std::uint8_t>(v >> 8);
  m[off + 1] = static_cast<std::uint8_t>(v & 0xFF);
}
inline void store32(std::span<std::uint8_t> m, std::size_t off, std::uint32_t v) {
  store16(m, off, static_cast<std::uint16_t>(v >> 16));
  store16(m, off + 2, static_cast<std::uint16_t>(v & 0xFFFF));
}

// A record's TTL field as a cache must read it: RFC 2181 §8 makes a value
// with the top bit set zero.
inline std::uint32_t ttl_value(std::uint32_t field) { return field > 0x7FFFFFFFu ? 0 : field; }

// Header flag bits (RFC 1035 §4.1.1).
inline constexpr std::uint16_t flag_qr = 0x8000;
inline constexpr std::uint16_t flag_aa = 0x0400;
inline constexpr std::uint16_t flag_tc = 0x0200;
inline constexpr std::uint16_t flag_rd = 0x0100;
inline constexpr std::uint16_t flag_ra = 0x0080;
inline constexpr std::uint16_t flag_z = 0x0040;   // RFC 1035 §4.1.1: zero in queries and responses
inline constexpr std::uint16_t flag_ad = 0x0020;  // RFC 4035 §3.2.3, RFC 6840 §5.7
inline constexpr std::uint16_t flag_cd = 0x0010;  // RFC 4035 §3.2.2
inline constexpr std::uint16_t opcode_mask = 0x7800;

// Offsets of the count fields inside the header.
inline constexpr std::size_t off_flags = 2, off_qdcount = 4, off_ancount = 6, off_nscount = 8, off_arcount = 10;

// The one name walker behind read_name and every "skip this name": `out`
// may be null when only validation and the end offset are wanted.
struct NameWalk {
  ParseError error = ParseError::none;
  std::size_t next = 0;    // just past the name where it was found
  std::size_t length = 0;  // uncompressed wire length (1 = root)
};
NameWalk walk_name(ByteView msg, std::size_t offset, Bytes* out);

// One resource record's fixed fields and where its parts lie.
struct Rr {
  std::size_t start = 0;      // owner name
  bool owner_is_root = false;
  std::uint16_t type = 0;
  std::uint16_t rrclass = 0;
  std::uint32_t ttl = 0;
  std::size_t rdlength_at = 0;  // offset of the RDLENGTH field
  std::size_t rdata = 0;
  std::uint16_t rdlength = 0;
  std::size_t end = 0;  // just past RDATA
};
// Reads the RR at `offset`; `error` is `truncated` when any field, RDATA
// included, runs past the end, or the name error.
ParseError read_rr(ByteView msg, std::size_t offset, Rr& rr);

// A question at `offset`: name (decoded into q->name when q is non-null),
// type, class.
ParseError read_question(ByteView msg, std::size_t offset, Question* q, std::size_t& next);

// Where the sections of a whole message lie, and its OPT record.
struct Layout {
  ParseError error = ParseError::none;  // first structural failure, if any
  Header header;
  std::size_t questions_end = 0;  // valid when error is none, or past the questions
  bool questions_ok = false;
  std::optional<Rr> opt;  // the first OPT in the additional section
  unsigned opt_index = 0;  // its place among all records (answer section first)
  std::size_t opt_count = 0;
  bool opt_is_last = false;  // no record follows the (first) OPT
  std::size_t end = 0;       // just past the last counted record
};
// Walks header, questions and every counted record. Trailing bytes are not
// an error here (callers that care compare `end` with the size).
Layout scan(ByteView msg);

// One EDNS option inside OPT RDATA.
struct Option {
  std::size_t at = 0;  // offset of the option code, relative to RDATA
  std::uint16_t code = 0;
  ByteView data;
};
// Calls f(Option) for each option; false when the options do not tile
// RDATA exactly (RFC 6891 §6.1.2: {code, length, data} repeated).
template <class F>
bool for_each_option(ByteView rdata, F&& f) {
  std::size_t off = 0;
  while (off < rdata.size()) {
    if (!has(rdata, off, 4)) return false;
    const std::uint16_t code = load16(rdata, off);
    const std::uint16_t len = load16(rdata, off + 2);
    if (!has(rdata, off + 4, len)) return false;
    f(Option{off, code, rdata.subspan(off + 4, len)});
    off += 4 + std::size_t{len};
  }
  return true;
}
inline bool options_well_formed(ByteView rdata) {
  return for_each_option(rdata, [](const Option&) {});
}

// Appends an OPT record header: root owner, TYPE 41, CLASS = UDP payload,
// TTL = extended rcode / version / flags, and RDLENGTH.
inline void put_opt_header(Bytes& out, std::uint16_t udp_payload, std::uint32_t ttl, std::uint16_t rdlength) {
  out.push_back(0);
  put16(out, type_opt);
  put16(out, udp_payload);
  put32(out, ttl);
  put16(out, rdlength);
}
// Appends one resource record: `owner` (a complete wire name), TYPE,
// CLASS, TTL, RDLENGTH and RDATA. The caller keeps RDATA within 65,535
// octets (what RDLENGTH can state).
inline void put_rr(Bytes& out, ByteView owner, std::uint16_t type, std::uint16_t rrclass, std::uint32_t ttl,
                   ByteView rdata) {
  out.insert(out.end(), owner.begin(), owner.end());
  put16(out, type);
  put16(out, rrclass);
  put32(out, ttl);
  put16(out, static_cast<std::uint16_t>(rdata.size()));
  out.insert(out.end(), rdata.begin(), rdata.end());
}
// Fixed part of an OPT record: owner 1 + type 2 + class 2 + ttl 4 + rdlength 2.
inline constexpr std::size_t opt_fixed_size = 11;
inline constexpr std::uint32_t edns_do_bit = 0x8000;  // RFC 3225, in the OPT TTL

}  // namespace nxdns::dns::wire
