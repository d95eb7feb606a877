#pragma once
// A cached answer made into an answer to this client's query: the client's
// ID, RD bit and question bytes (0x20 case kept), TTLs aged. The result looks
// like what the upstream would have sent for this query, so the engine
// delivers it through the same client-facing step as a fresh answer (OPT
// rebuilt for the client, UDP truncation). Pure; fuzzed
// (tests/fuzz/cache_rewrite_fuzz.cpp).
#include <cstdint>
#include <optional>
#include <vector>

#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::cache {

struct ClientQuestion {
  std::uint16_t id = 0;
  // The client's question section exactly as received: bytes
  // [header_size, question_end) of its query.
  dns::ByteView question;
  // The client's header flags: its RD goes into the rewritten answer, and
  // client_answer applies dns::client_reply_flags (RD, CD, AD) from them.
  std::uint16_t query_flags = dns::wire::flag_rd;
};

// RFC 8767 §4: the TTL a stale answer carries.
inline constexpr std::uint32_t stale_answer_ttl = 30;

// Where the parts of a one-question message are, found by one walk when it
// is stored, so that making it into a client's answer on every hit is a copy
// and a few stores rather than another walk of every name in it.
struct AnswerLayout {
  std::uint16_t question_end = 0;     // just past the question
  std::uint16_t end = 0;              // just past the last counted record
  std::vector<std::uint16_t> ttl_at;  // each record's TTL field, OPT's excepted
  // dns::answer_for_client's EDNS step for this answer, found once: the
  // client-facing OPT depends only on the stored answer and on whether the
  // client sent OPT and its DO bit, so a hit need not walk the answer again
  // to find and rebuild it (that walk would be a quarter of a hit's cost).
  struct ClientForm {
    std::uint16_t cut = 0;      // the upstream OPT's first octet, or `end` without one
    std::uint16_t dropped = 0;  // records from the upstream OPT on, off ARCOUNT
    std::uint32_t ext_rcode = 0;      // the upstream OPT's extended-rcode bits (TTL & 0xFF000000)
    std::optional<bool> upstream_do;  // its DO bit; nullopt: no OPT (the client's own DO applies)
    dns::Bytes options;               // its options a client may see (Extended DNS Errors only)
  };
  // nullopt: this answer takes the general path (answer_for_client), e.g.
  // one it would refuse. Set only when, for a client with OPT (DO clear and
  // set) and one without, the precomputed form gives answer_for_client's
  // exact bytes (client_form_of checks it).
  std::optional<ClientForm> client;
  // Whether find_client_form has run: the form is found on an answer's
  // first hit, not when it is stored. It costs several walks of the answer,
  // and most answers to names asked once (a burst of unique names, 500
  // outstanding) are never asked again: found at store time it would add
  // those walks to every forwarded answer (bench/callgrind_per_answer.sh
  // counts the forwarding path's instructions).
  bool client_checked = false;
  // The upstream OPT's RDLENGTH: the client form's options are a subset of
  // its options, so the store charges this bound before the form exists.
  std::uint16_t opt_options = 0;
};
// nullopt when `msg` does not walk as one question plus its counted records
// (or is longer than a DNS message can be). No client form yet.
std::optional<AnswerLayout> layout_of(dns::ByteView msg);
// Sets layout.client (or leaves it nullopt) and client_checked; `layout` is
// layout_of(stored). An answer gets no form when what the general path does
// with it at a hit could differ from the form: a name that reads octets past
// the last record, a TTL octet or a question letter (whose case the client
// chooses) that is structure. Those answers take the general path.
void find_client_form(dns::ByteView stored, AnswerLayout& layout);

// Every record's TTL except OPT's becomes `fixed_ttl` when given (stale
// answers), else max(0, ttl - age_seconds). Returns nullopt when `stored` does
// not walk as one question plus its counted records, or when its question is
// not the client's (name case-insensitively, type and class exactly). The
// two questions then have the same length, so every compression pointer in
// the stored answer still lands where it did.
std::optional<dns::Bytes> rewrite_answer(dns::ByteView stored, const ClientQuestion& client, std::uint32_t age_seconds,
                                         std::optional<std::uint32_t> fixed_ttl = std::nullopt);
// The same, with `layout` = layout_of(stored) found earlier (the hit path).
std::optional<dns::Bytes> rewrite_answer(dns::ByteView stored, const AnswerLayout& layout, const ClientQuestion& client,
                                         std::uint32_t age_seconds, std::optional<std::uint32_t> fixed_ttl = std::nullopt);

// The answer a client receives for a hit, in one copy: rewrite_answer, then
// dns::answer_for_client's rules: the header flags for this client
// (dns::client_reply_flags), the EDNS rule from `layout.client` (the copy
// stops at the upstream OPT; ours for a client that sent OPT), then UDP
// truncation to the link. Byte-identical to answer_for_client(rewrite_answer(...)).
// `rcode` is the reply's full 12-bit rcode (dns::reply_rcode's value, known
// without a scan). nullopt when the layout has no client form, the answer
// does not rewrite, or answer_for_client would refuse it (an extended rcode
// for a client without OPT): the caller takes the general path.
struct ClientAnswer {
  dns::Bytes bytes;
  std::uint16_t rcode = 0;
};
std::optional<ClientAnswer> client_answer(dns::ByteView stored, const AnswerLayout& layout, const ClientQuestion& client,
                                          std::uint32_t age_seconds, const dns::Edns& client_edns,
                                          const dns::ClientLink& link);

// The stored form of an answer: every record TTL except OPT's clamped to
// [lo, hi], so that what a client is told never outlives (max_ttl) or falls
// short of (min_ttl) how long the cache keeps the answer. For a negative
// answer `hi` is its negative TTL: RFC 2308 §3 has the SOA carry it. Returns
// nullopt when the message does not walk.
std::optional<dns::Bytes> clamp_record_ttls(dns::ByteView answer, std::uint32_t lo, std::uint32_t hi);
// The same, with `layout` = dns::wire::scan(answer) found by the caller.
std::optional<dns::Bytes> clamp_record_ttls(dns::ByteView answer, const dns::wire::Layout& layout, std::uint32_t lo,
                                            std::uint32_t hi);
// The same over the TTL fields `layout` = layout_of(answer) found, without
// another walk. `changed` is false when every TTL was already inside
// [lo, hi]: `bytes` are then the answer's own, and `layout` describes them
// as well (a TTL octet that a name reads can change the walk only when it
// changes). nullopt when `layout` does not fit `answer`.
struct ClampedAnswer {
  dns::Bytes bytes;
  bool changed = false;
};
std::optional<ClampedAnswer> clamp_record_ttls(dns::ByteView answer, const AnswerLayout& layout, std::uint32_t lo,
                                               std::uint32_t hi);

// The question section of a parsed client query, for ClientQuestion.
inline dns::ByteView question_bytes(dns::ByteView raw_query, const dns::Query& q) {
  return raw_query.subspan(dns::header_size, q.question_end - dns::header_size);
}

}  // namespace nxdns::cache
