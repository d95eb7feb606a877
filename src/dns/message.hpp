#pragma once
// The DNS wire codec: pure functions over byte spans, no I/O, no state.
// Everything that reads a packet bounds-checks every access; every function
// here is fuzzed (tests/fuzz/dns_fuzz.cpp).
//
// Scope is what a forwarder needs: the header, exactly one question, the OPT
// pseudo-record (RFC 6891) of a query, error replies, response validation,
// UDP truncation, the EDNS rewrites of the encrypted transports (Padding,
// edns-tcp-keepalive) and the hop-by-hop rebuild of an answer's OPT for the
// client (answer_for_client). Answers are relayed, never interpreted.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
// Largest client query accepted, on every listener (UDP and TCP alike). A
// query holds one question (at most 12 + 255 + 4 = 271 octets) and one OPT;
// 4096 leaves room for any option a client may legitimately attach (cookies,
// RFC 8467 padding to a 468- or even 1232-octet block, Client Subnet); none
// of them goes upstream (prepare_upstream_query), and what does stays far
// below the 65,535 octets a stream length prefix can state (RFC 1035
// §4.2.2). Bigger is hostile: FORMERR over UDP, connection closed over TCP
// (docs/reference/config.md, "Limits").
inline constexpr std::size_t max_client_query = 4096;
// What a two-octet stream length prefix can announce (RFC 1035 §4.2.2).
inline constexpr std::size_t max_stream_message = 65535;

// Response codes, 12 bits wide with EDNS (RFC 6891 §6.1.3: the OPT TTL's top
// octet holds the upper 8 bits, the header the lower 4).
enum class Rcode : std::uint16_t {
  noerror = 0,
  formerr = 1,
  servfail = 2,
  nxdomain = 3,
  notimp = 4,
  refused = 5,
  badvers = 16,  // RFC 6891 §6.1.3: needs an OPT to be expressed
};
inline constexpr std::uint16_t type_opt = 41;
inline constexpr std::uint16_t type_ixfr = 251;  // RFC 1995
inline constexpr std::uint16_t type_axfr = 252;  // RFC 5936
inline constexpr std::uint16_t type_any = 255;   // RFC 8482
inline constexpr std::uint16_t class_in = 1;
// EDNS option codes (IANA "DNS EDNS0 Option Codes").
inline constexpr std::uint16_t opt_nsid = 3;             // RFC 5001
inline constexpr std::uint16_t opt_client_subnet = 8;    // RFC 7871
inline constexpr std::uint16_t opt_cookie = 10;          // RFC 7873
inline constexpr std::uint16_t opt_tcp_keepalive = 11;   // RFC 7828
inline constexpr std::uint16_t opt_padding = 12;         // RFC 7830
inline constexpr std::uint16_t opt_extended_error = 15;  // RFC 8914

// RFC 6895 §3.1: OPT (41) and 128-254 are meta-types and QTYPEs that name no
// data a resolver looks up (TKEY, TSIG, IXFR, AXFR, MAILB, MAILA and the
// unassigned rest of the range). ANY (255) is a QTYPE that does ask for
// data, and is not one of them.
constexpr bool is_meta_type(std::uint16_t qtype) { return qtype == type_opt || (qtype >= 128 && qtype <= 254); }

struct Header {
  std::uint16_t id = 0;
  std::uint16_t flags = 0;
  std::uint16_t qdcount = 0, ancount = 0, nscount = 0, arcount = 0;

  bool qr() const { return flags & 0x8000; }
  std::uint8_t opcode() const { return (flags >> 11) & 0xF; }
  bool tc() const { return flags & 0x0200; }
  bool rd() const { return flags & 0x0100; }
  bool ad() const { return flags & 0x0020; }
  bool cd() const { return flags & 0x0010; }
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
  // A length octet 0x40..0x7F. A 64-octet label cannot be written on the
  // wire: its length octet is the "01" extended label type (RFC 6891 §5
  // retired it, RFC 2673 bitstrings 0x41 are dead), so both read as this.
  label_too_long,
  name_too_long,      // > 255 octets uncompressed
  // Compression pointer into the header, not strictly before the labels it
  // interrupts (forward, self, loop), or more hops than a name can need.
  bad_pointer,
  bad_label_type,     // "10" (0x80..0xBF): reserved label type
  bad_opt,            // malformed OPT, or more than one (RFC 6891 §6.1.1)
  trailing_garbage,   // bytes beyond the records the header counts
  // A QUERY carrying answer or authority records (RFC 1035 §4.1: a query
  // has none); rejected so the client gets FORMERR rather than a forwarded
  // packet whose extra sections the upstream would interpret its own way.
  unexpected_records,
  // Longer than max_client_query: no single-question query needs that much.
  too_large,
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
// section for OPT. Answer/authority sections of a query must be empty
// (else unexpected_records), except the one SOA an IXFR query carries in its
// authority section (RFC 1995 §3), walked and never forwarded. Longer than
// max_client_query: too_large, decided before anything else is read. Non-OPT additional records (e.g. TSIG) are
// walked and tolerated; nxdns never forwards them. Every octet must belong
// to a counted record (else trailing_garbage). On success `error` is none.
QueryParse parse_query(ByteView msg);

// Reads a possibly compressed name starting at `offset`, writing the
// uncompressed wire form to `out` (cleared first; left empty on error).
// Returns the offset just past the name in the original message (past the
// first pointer, if any).
//
// Pointer rule: a pointer must target an offset at or past the header and
// strictly before the first octet of the run of labels it ends. "Before the
// pointer itself" is not enough: labels at 20, a pointer at 22 back to 20
// would loop. With this rule every jump lands strictly lower than the last,
// so decompression terminates; a hop limit is kept as a second fence.
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
// Returns nullopt when a label is empty or too long, the name too long, or
// an escape malformed; `why`, when not null, then says which ("label longer
// than 63 octets"), without the input text.
std::optional<Bytes> name_from_text(std::string_view text, std::string* why = nullptr);

// Error reply for a query that parsed: echoes ID, opcode, RD, CD (RFC 4035
// §3.1.6) and the question verbatim; sets QR and RA, the rcode, and nothing
// else. When the
// query carried OPT the reply carries a minimal one (payload 1232, version
// 0, the query's DO bit, no options, the upper 8 bits of an extended rcode
// such as BADVERS): RFC 6891 §7 has responders include OPT whenever the
// query did. An extended rcode asked for a query without OPT cannot be
// expressed: the reply is SERVFAIL instead.
Bytes make_error_reply(ByteView raw_query, const Query& q, Rcode rcode);
// Records of a reply of our own, complete in wire form (owner names and
// names in RDATA uncompressed, so they read the same at any offset):
// `answers` records for the answer section, then `authorities` for the
// authority section.
struct OwnRecords {
  ByteView records;
  std::uint16_t answers = 0;
  std::uint16_t authorities = 0;
};
// The builder behind make_error_reply, for replies that carry data: the
// same header, question and OPT, AA set when `authoritative` (an answer
// from data this server holds, RFC 1035 §4.1.1), and `records` between the
// question and the OPT, which stays the last record (RFC 6891 §7 places no
// order, but answer_for_client expects it there).
Bytes make_reply(ByteView raw_query, const Query& q, Rcode rcode, bool authoritative, const OwnRecords& records);
// NOTIMP for a message whose opcode we do not implement (anything but
// QUERY): echoes ID, opcode, RD and CD, and the question (zone) section when it
// is exactly one parseable entry; no other section, no OPT (the rest of a
// NOTIFY or UPDATE is not parsed). Empty, like make_formerr, when the header
// is unreadable or QR is set.
Bytes make_notimp(ByteView raw_packet);
// FORMERR for a packet whose header is readable but whose body is not: echo
// the ID, opcode, RD and CD, no question (RFC 1035 gives no other choice).
// Returns an empty vector when not even the header is readable, or when QR
// is set: answering a response could start a reply loop between two
// servers, so such packets are dropped.
Bytes make_formerr(ByteView raw_packet);

// A fresh query for `name`/`qtype` (class IN) with the given id, RD set, and
// optionally an OPT advertising `udp_payload` (used by the burst tool and
// probes). Returns an empty vector when `wire_name` is not one well-formed
// uncompressed wire name.
Bytes make_query(std::uint16_t id, ByteView wire_name, std::uint16_t qtype, std::optional<std::uint16_t> udp_payload);

// The single question of a message (query or response): nullopt unless the
// header is readable, qdcount == 1 and the question parses.
std::optional<Question> parse_question_of(ByteView msg);

// What nxdns answers itself, never forwarding, for a query that parsed, in
// this order (the rcodes are what unbound answers):
//   - EDNS version > 0: BADVERS (RFC 6891 §6.1.3: we implement version 0);
//   - TC set in the query: FORMERR. TC describes a response (RFC 1035
//     §4.1.1); a query carrying it is malformed, and resolvers answer so.
//   - AXFR and IXFR: REFUSED. A zone transfer is a multi-message exchange
//     (RFC 5936 §2.2) that a per-message forwarder cannot relay, and a
//     household forwarder is no zone's primary; REFUSED (a policy answer,
//     as unbound and dnsmasq give) rather than NOTIMP, which RFC 1035 keeps
//     for kinds of query the server does not support at all, and tells a
//     transfer client the refusal is deliberate.
//   - any other meta-type (is_meta_type: OPT, TKEY, TSIG, MAILB, MAILA,
//     128-248): FORMERR. No data answers them; a resolver says FORMERR.
//   - a class other than IN (CH, HS, NONE, ANY): REFUSED. The upstreams
//     serve IN; CH would ask them for their own identity (version.bind,
//     id.server), which is not this server's and not the LAN's business.
// Forwarded, any of these would come back as an error the pool counts
// against an upstream's health. ANY (RFC 8482) is forwarded: the upstream
// decides how minimal its answer is, and a UDP client gets TC like for any
// big answer. nullopt: forward.
std::optional<Rcode> local_answer(const Query& q);

// --- EDNS for the encrypted upstream transports (DoT, DoH) ---

// The block a query to an encrypted upstream (DoT, DoH) is padded to a
// multiple of: RFC 8467 §4.1 recommends 128 octets for queries, so that their
// size says little about the name asked.
inline constexpr std::size_t encrypted_query_pad_block = 128;

struct UpstreamQueryOptions {
  // Pad the whole message to a multiple of this (RFC 7830 Padding option).
  // 0 = no padding.
  std::size_t pad_block = encrypted_query_pad_block;
  // Add an empty edns-tcp-keepalive option (RFC 7828 §3.2.1: clients send
  // it with no data). For DoT sessions.
  bool tcp_keepalive = false;
  // ID to put in the header (RFC 8484 §4.1: DoH uses 0).
  std::uint16_t id = 0;
};

// The query to send upstream for a client query that parse_query accepts:
// the client's question verbatim, the given id, and nothing else of the
// client's but its CD bit and its DO bit. The header is built, not copied:
// QUERY, RD and AD set, CD as the client sent it, AA, TC and Z clear. One
// OPT: payload 1232, version 0, DO as the client's (clear without an OPT),
// other Z bits clear, and only our own options (the keepalive and padding
// as asked). No client option goes upstream: COOKIE (RFC 7873) and Client
// Subnet (RFC 7871) identify a device of the LAN; the others (NSID, EXPIRE,
// unknown ones) ask the upstream for something that would come back in an
// answer cached and shared with clients that never asked. So the exchange
// is a function of the cache key (name, type, class, DO, CD) alone, and any
// client with that key may share it. Other additional records are dropped
// (a TSIG signs the client's message, not ours). Returns an empty vector when
// the input does not parse as a query (so never for more than
// max_client_query octets), or when the result would exceed
// max_stream_message. Padding is omitted (never mis-sized) in the
// pathological case where it cannot fit a 16-bit RDLENGTH.
Bytes prepare_upstream_query(ByteView client_query, const UpstreamQueryOptions& o = {});

// The TIMEOUT (units of 100 ms, RFC 7828 §3.1) of a response's OPT
// edns-tcp-keepalive option, when present with exactly 2 octets of data.
std::optional<std::uint16_t> edns_tcp_keepalive(ByteView response);

// A copy of `response` with every Padding option removed from its OPT
// record (RDLENGTH adjusted), everything else byte-identical. Returns the
// input unchanged when there is no OPT, no padding, the message is
// malformed, or records follow the OPT (their compression pointers could
// target offsets that removing bytes would shift).
Bytes strip_padding(ByteView response);

// Validation of an upstream response against the query it answers. A
// forwarded answer is validated once, by the transport that received it
// (the contract of upstream::Transport::Completion); the cache and the
// engine rely on that and do not check it again.
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
// How many responses this thread has validated (either form above). Tests
// read it to prove that a forwarded answer is validated exactly once.
std::uint64_t responses_validated();

// The UDP size a client can take: its EDNS payload clamped to
// [512, max_udp_limit], or 512 without EDNS.
std::size_t client_udp_limit(const Edns& e);

// If `response` fits in `limit`, returns it unchanged. Otherwise returns a
// truncated reply: header with TC set and an/ns counts zeroed, the question,
// and the OPT record if the response had one and it fits (RFC 6891 §7).
Bytes truncate_for_udp(ByteView response, std::size_t limit);

// --- The answer a client receives ---

// How the reply travels to the client.
struct ClientLink {
  // Over UDP an answer longer than `udp_limit` is truncated (TC). Over TCP
  // the only bound is what the stream prefix can state.
  bool udp = true;
  std::size_t udp_limit = classic_udp_limit;
};
// The udp limit for `q` (client_udp_limit) or TCP.
ClientLink client_link(const Query& q, bool udp);

// The one rewrite of an upstream answer (or a reply of our own) for the
// client that asked `client_query`. EDNS is hop-by-hop (RFC 6891 §6.1.1,
// §7): the upstream's OPT answered the query *we* sent, so it is replaced.
//   - The header flags are the client's (client_reply_flags).
//   - Client sent no OPT: the reply has none. An extended rcode (upper bits
//     in the upstream's OPT) cannot be said without one: SERVFAIL instead.
//   - Client sent OPT: the reply carries exactly one, ours: payload
//     max_udp_limit, version 0, the upstream's extended rcode and DO bit
//     (the client's DO when the upstream sent no OPT), other Z bits clear,
//     and of the upstream's options only Extended DNS Errors (RFC 8914: it
//     says why the answer is what it is, which every client may know).
//     Every other option answered something of our query (a COOKIE, an
//     NSID, keepalive, padding) or was never asked for by this client, and
//     a cached answer is replayed to clients that sent other options.
//   - The OPT is moved to the end. Records that followed it in the
//     additional section are dropped: their compression pointers could
//     target offsets the move shifts, and additional data is optional
//     (RFC 2181 §9). Records before it are byte-identical.
//   - Then, over UDP, truncate_for_udp to the link's limit (TC replies keep
//     the rewritten OPT, so the same rule holds for them).
// nullopt when the answer cannot be rewritten safely: records that do not
// walk, more than one OPT, an OPT not owned by the root, options that do
// not tile its RDATA, or a TCP reply over max_stream_message. The caller
// answers SERVFAIL: nothing we cannot vouch for reaches a client.
std::optional<Bytes> answer_for_client(ByteView answer, const Query& client_query, const ClientLink& link);

// The header flags a client's reply carries: the answer's (QR, opcode, AA,
// TC, RA, rcode; `answer_flags`) with RD and CD echoed from the client's
// query (RFC 1035 §4.1.1; RFC 4035 §3.1.6), Z clear, and AD kept only for a
// client whose query set AD or DO (RFC 6840 §5.7, §5.8: AD means nothing to
// a client that did not ask, and nxdns always asks upstream). The upstream
// saw our query (RD and AD set, CD as the client's), not the client's.
std::uint16_t client_reply_flags(std::uint16_t answer_flags, std::uint16_t query_flags, bool query_dnssec_ok);

// The full 12-bit rcode of a reply: the header's 4 bits plus, when the
// reply has an OPT, its upper 8 bits (RFC 6891 §6.1.3). nullopt when the
// header is unreadable. An OPT that cannot be found leaves the header's.
std::optional<std::uint16_t> reply_rcode(ByteView reply);

// RFC 8914 INFO-CODEs nxdns sets on its own replies.
inline constexpr std::uint16_t ede_blocked = 15;  // §4.16: blocked by the operator's policy
// `reply` with an Extended DNS Error option added to its OPT record (when
// it has exactly one, as its last record; unchanged otherwise: a client
// that sent no OPT gets no option). dns::answer_for_client keeps EDE
// options, so the client receives it.
Bytes with_extended_error(ByteView reply, std::uint16_t info_code, std::string_view extra_text = {});

// Overwrites the ID of a message in place (no-op if shorter than a header).
void set_id(std::span<std::uint8_t> msg, std::uint16_t id);
std::uint16_t get_id(ByteView msg);

}  // namespace nxdns::dns
