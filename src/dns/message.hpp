#pragma once
// The DNS wire codec: pure functions over byte spans, no I/O, no allocation
// beyond the values returned. Everything that reads a packet bounds-checks
// every access; every function here is fuzzed (tests/fuzz/).
//
// Scope is what a forwarder needs: the header, exactly one question, the OPT
// pseudo-record (RFC 6891) of a query, error replies, response validation,
// and UDP truncation. Answers are relayed, never interpreted.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nxdns::dns {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

inline constexpr std::size_t header_size = 12;
inline constexpr std::size_t max_name_wire = 255;   // RFC 1035 §3.1
inline constexpr std::size_t max_label = 63;        // RFC 1035 §2.3.4
inline constexpr std::uint16_t classic_udp_limit = 512;  // RFC 1035 §4.2.1
// Largest UDP answer we ever send, whatever the client advertises (the DNS
// flag day 2020 figure: avoids IP fragmentation on common paths).
inline constexpr std::uint16_t max_udp_limit = 1232;

enum class Rcode : std::uint8_t { noerror = 0, formerr = 1, servfail = 2, nxdomain = 3, notimp = 4, refused = 5 };
inline constexpr std::uint16_t type_opt = 41;

struct Header {
  std::uint16_t id = 0;
  std::uint16_t flags = 0;
  std::uint16_t qdcount = 0, ancount = 0, nscount = 0, arcount = 0;

  bool qr() const { return flags & 0x8000; }
  std::uint8_t opcode() const { return (flags >> 11) & 0xF; }
  bool tc() const { return flags & 0x0200; }
  bool rd() const { return flags & 0x0100; }
  std::uint8_t rcode() const { return flags & 0xF; }
};

struct Question {
  // Uncompressed wire form (length-prefixed labels, terminating zero); case
  // as received. Compare with names_equal(), never with ==.
  Bytes name;
  std::uint16_t qtype = 0;
  std::uint16_t qclass = 0;
};

struct Edns {
  bool present = false;
  std::uint16_t udp_payload = 0;  // as advertised by the sender
  std::uint8_t version = 0;
  bool dnssec_ok = false;
};

enum class ParseError {
  none,
  too_short,          // fewer than 12 bytes: no header to echo
  not_a_query,        // QR set on something sent to us as a query
  bad_opcode,         // not QUERY (0)
  bad_question_count, // qdcount != 1
  truncated,          // a field runs past the end of the packet
  label_too_long,     // > 63
  name_too_long,      // > 255 octets uncompressed
  bad_pointer,        // compression pointer forward, out of range, or looping
  bad_label_type,     // 0x40 / 0x80 label types (RFC 6891 §5 retired them)
  bad_opt,            // malformed OPT, or more than one (RFC 6891 §6.1.1)
  trailing_garbage,   // bytes beyond the records the header counts
};

const char* describe(ParseError e);

struct Query {
  Header header;
  Question question;
  Edns edns;
  // Offset just past the question section: the error replies copy
  // [header_size, question_end) to echo the question verbatim.
  std::size_t question_end = 0;
};

struct QueryParse {
  std::optional<Query> query;
  ParseError error = ParseError::none;
  // True when the 12-byte header could be read: a FORMERR can echo the ID.
  bool header_readable = false;
};

std::optional<Header> parse_header(ByteView msg);

// Parses a client query: header, exactly one question, and the additional
// section for OPT. Answer/authority sections of a query must be empty.
QueryParse parse_query(ByteView msg);

// Reads a possibly compressed name starting at `offset`, writing the
// uncompressed wire form to `out`. Returns the offset just past the name in
// the original message (past the first pointer, if any).
struct NameRead {
  ParseError error = ParseError::none;
  std::size_t next = 0;
};
NameRead read_name(ByteView msg, std::size_t offset, Bytes& out);

// ASCII case-insensitive comparison of two uncompressed wire names
// (RFC 4343): DNS labels may carry any octet; only A-Z fold.
bool names_equal(ByteView a, ByteView b);
// Presentation form for logs ("www.example.com."), escaping odd octets.
std::string name_to_text(ByteView wire_name);
// Wire form of a presentation name ("www.example.com" or with trailing dot).
// Returns nullopt when a label is empty or too long or the name too long.
std::optional<Bytes> name_from_text(std::string_view text);

// Error reply for a query that parsed: echoes ID, opcode, RD and the
// question verbatim; sets QR and RA, the rcode, and nothing else.
Bytes make_error_reply(ByteView raw_query, const Query& q, Rcode rcode);
// FORMERR for a packet whose header is readable but whose body is not: echo
// the ID and RD, no question (RFC 1035 gives no other choice). Returns an
// empty vector when not even the header is readable (drop the packet).
Bytes make_formerr(ByteView raw_packet);

// A fresh query for `name`/`qtype` with the given id, RD set, and optionally
// an OPT advertising `udp_payload` (used by the burst tool and probes).
Bytes make_query(std::uint16_t id, ByteView wire_name, std::uint16_t qtype, std::optional<std::uint16_t> udp_payload);

// Validation of an upstream response against the query it answers.
enum class ResponseError {
  none,
  too_short,
  not_a_response,     // QR clear
  id_mismatch,
  bad_question_count,
  question_mismatch,  // name (case-insensitive), type or class differ
  malformed,          // question unparseable
};
const char* describe(ResponseError e);
ResponseError validate_response(const Query& query, ByteView response);
// Same, given the raw query bytes (parses the question itself). Used by
// transports that only hold the wire query.
ResponseError validate_response(ByteView raw_query, ByteView response);

// The UDP size a client can take: its EDNS payload clamped to
// [512, max_udp_limit], or 512 without EDNS.
std::size_t client_udp_limit(const Edns& e);

// If `response` fits in `limit`, returns it unchanged. Otherwise returns a
// truncated reply: header with TC set and an/ns counts zeroed, the question,
// and the OPT record if the response had one and it fits (RFC 6891 §7).
Bytes truncate_for_udp(ByteView response, std::size_t limit);

// Overwrites the ID of a message in place (no-op if shorter than a header).
void set_id(std::span<std::uint8_t> msg, std::uint16_t id);
std::uint16_t get_id(ByteView msg);

}  // namespace nxdns::dns
