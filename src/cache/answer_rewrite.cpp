#include "cache/answer_rewrite.hpp"

#include <algorithm>

#include "dns/wire.hpp"

namespace nxdns::cache {

namespace {
// Calls f(ttl) -> new ttl for every record but OPT, in place. False when the
// message does not walk.
// `l` is w::scan(msg) (or of bytes with the same layout: same length and
// record structure).
template <class F>
bool map_ttls(dns::Bytes& msg, const dns::wire::Layout& l, F&& f) {
  namespace w = dns::wire;
  if (l.error != dns::ParseError::none || !l.questions_ok) return false;
  const unsigned total = unsigned{l.header.ancount} + l.header.nscount + l.header.arcount;
  std::size_t off = l.questions_end;
  for (unsigned i = 0; i < total; ++i) {
    w::Rr rr;
    if (w::read_rr(msg, off, rr) != dns::ParseError::none) return false;  // scan() walked it: unreachable
    off = rr.end;
    if (rr.type == dns::type_opt) continue;  // its TTL field is extended RCODE and flags
    w::store32(msg, rr.rdlength_at - 4, f(w::ttl_value(rr.ttl)));
  }
  return true;
}
}  // namespace

std::optional<dns::Bytes> clamp_record_ttls(dns::ByteView answer, std::uint32_t lo, std::uint32_t hi) {
  return clamp_record_ttls(answer, dns::wire::scan(answer), lo, hi);
}

std::optional<dns::Bytes> clamp_record_ttls(dns::ByteView answer, const dns::wire::Layout& layout, std::uint32_t lo,
                                            std::uint32_t hi) {
  dns::Bytes out(answer.begin(), answer.end());
  if (lo > hi) lo = hi;
  // The copy has the answer's layout: map_ttls reads and writes it in place.
  if (!map_ttls(out, layout, [lo, hi](std::uint32_t t) { return std::clamp(t, lo, hi); })) return std::nullopt;
  return out;
}

std::optional<ClampedAnswer> clamp_record_ttls(dns::ByteView answer, const AnswerLayout& layout, std::uint32_t lo,
                                               std::uint32_t hi) {
  namespace w = dns::wire;
  // A layout of other bytes would write out of bounds: refuse rather than trust.
  if (layout.end > answer.size()) return std::nullopt;
  ClampedAnswer out;
  out.bytes.assign(answer.begin(), answer.end());
  if (lo > hi) lo = hi;
  for (const std::uint16_t at : layout.ttl_at) {
    if (at < layout.question_end || std::size_t{at} + 4 > layout.end) return std::nullopt;
    const std::uint32_t was = w::load32(out.bytes, at);
    const std::uint32_t ttl = std::clamp(w::ttl_value(was), lo, hi);
    if (ttl == was) continue;
    out.changed = true;
    w::store32(out.bytes, at, ttl);
  }
  return out;
}

namespace {

// The client's ID, RD and question bytes, and aged TTLs, into `out` (a copy
// of the stored answer's first octets); TTL fields at or past out.size()
// belong to records the copy left out. False when the layout does not fit
// `stored` or the questions differ.
bool rewrite_into(dns::Bytes& out, dns::ByteView stored, const AnswerLayout& layout, const ClientQuestion& client,
                  std::uint32_t age_seconds, std::optional<std::uint32_t> fixed_ttl, std::size_t copy_end);

// The reply answer_for_client gives for a client that sent OPT (with `dnssec_ok`) or none, built from the form.
dns::Bytes apply_form(dns::Bytes out, const AnswerLayout::ClientForm& form, std::uint16_t arcount, bool edns, bool dnssec_ok) {
  namespace w = dns::wire;
  std::uint16_t ar = static_cast<std::uint16_t>(arcount - form.dropped);
  if (edns) {
    const bool d = form.upstream_do ? *form.upstream_do : dnssec_ok;
    w::put_opt_header(out, dns::max_udp_limit, form.ext_rcode | (d ? w::edns_do_bit : 0),
                      static_cast<std::uint16_t>(form.options.size()));
    out.insert(out.end(), form.options.begin(), form.options.end());
    ++ar;
  }
  w::store16(out, w::off_arcount, ar);
  return out;
}

// The client form of `msg`, or nullopt unless it reproduces answer_for_client
// exactly for the three kinds of client (OPT with DO clear, with DO set, no
// OPT). Deriving the form from answer_for_client's own output keeps one
// definition of the rule (hop-by-hop options, OPT placement).
std::optional<AnswerLayout::ClientForm> client_form_of(dns::ByteView msg, const dns::wire::Layout& l) {
  namespace w = dns::wire;
  if (l.opt_count > 1) return std::nullopt;
  const dns::ClientLink tcp{false, dns::max_udp_limit};
  // The header flags follow each hit's client (client_answer applies
  // dns::client_reply_flags to them): the form is judged with clients whose
  // query asks for the answer's RD, CD and AD, so that only the Z bit, which
  // the rule always clears, changes in the header.
  dns::Query with_opt, without_opt;
  with_opt.header.flags = without_opt.header.flags = static_cast<std::uint16_t>(l.header.flags | w::flag_ad);
  with_opt.edns.present = true;
  const auto e = dns::answer_for_client(msg, with_opt, tcp);
  if (!e || e->size() < dns::header_size) return std::nullopt;
  // answer_for_client put our OPT last: 11 octets of header, then options.
  const w::Layout el = w::scan(*e);
  if (el.error != dns::ParseError::none || !el.opt || el.opt_count != 1) return std::nullopt;
  AnswerLayout::ClientForm f;
  f.cut = static_cast<std::uint16_t>(el.opt->start);
  if (f.cut != (l.opt ? l.opt->start : l.end)) return std::nullopt;
  const std::uint16_t e_ar = el.header.arcount;
  if (e_ar == 0 || l.header.arcount + 1 < e_ar) return std::nullopt;
  f.dropped = static_cast<std::uint16_t>(l.header.arcount + 1 - e_ar);
  f.ext_rcode = el.opt->ttl & 0xFF000000u;
  if (l.opt) f.upstream_do = (l.opt->ttl & w::edns_do_bit) != 0;
  const dns::ByteView opts = dns::ByteView(*e).subspan(el.opt->rdata, el.opt->rdlength);
  f.options.assign(opts.begin(), opts.end());

  dns::Bytes prefix(msg.begin(), msg.begin() + f.cut);
  w::store16(prefix, w::off_flags, dns::client_reply_flags(l.header.flags, with_opt.header.flags, false));
  for (const bool d : {false, true}) {
    with_opt.edns.dnssec_ok = d;
    const auto want = dns::answer_for_client(msg, with_opt, tcp);
    if (!want || *want != apply_form(prefix, f, l.header.arcount, true, d)) return std::nullopt;
  }
  const auto want = dns::answer_for_client(msg, without_opt, tcp);
  if (f.ext_rcode != 0) {
    if (want) return std::nullopt;  // the form would refuse where the rule answers
  } else if (!want || *want != apply_form(prefix, f, l.header.arcount, false, false)) {
    return std::nullopt;
  }
  f.options.shrink_to_fit();
  return f;
}

// True when no octet of a TTL field is part of how `msg` parses. Every hit
// rewrites the TTLs (ageing); the general path re-scans what it built and
// refuses a message that no longer walks (answer_for_client's last check),
// but the one-copy form skips that scan. A crafted answer can aim a
// compression pointer into a TTL field, so that ageing turns a name that
// walked into one that does not: found by the cache_rewrite fuzzer. Two
// checks cover every way a TTL octet can be structure:
//   - as a length octet: 0x40 is an error in every context (RFC 6891 §5's
//     retired extended label type), so a walk with every TTL octet set to
//     it proves no name reads a length octet there;
//   - as the second octet of a pointer whose first octet lies just before
//     the field (the class's low octet, 0xC0 or above).
// An answer that fails either takes the general path on every hit.
bool ttls_are_not_structure(dns::ByteView msg, const AnswerLayout& layout) {
  namespace w = dns::wire;
  dns::Bytes probe(msg.begin(), msg.end());
  for (const std::uint16_t at : layout.ttl_at) {
    if (at == 0 || at + 4u > probe.size() || msg[at - 1u] >= 0xC0) return false;
    std::fill_n(probe.begin() + at, 4, std::uint8_t{0x40});
  }
  const w::Layout l = w::scan(probe);
  return l.error == dns::ParseError::none && l.end == layout.end;
}

// True when no octet the client may send in another case is structure.
// A hit copies the client's question over the stored one, and RFC 4343 lets
// its letters differ in case. A letter is never a length octet (0x41-0x7A
// all carry the 0x40 label type, an error in either case), but it can be the
// second octet of a pointer after a 0xC0 octet, and then the client's case
// would move the pointer. Hostnames hold no octet of 0xC0 or above, so a
// question name with one simply takes the general path.
bool question_case_is_not_structure(dns::ByteView msg, const AnswerLayout& layout) {
  if (layout.question_end < dns::header_size + 5u || layout.question_end > msg.size()) return false;
  const auto name = msg.subspan(dns::header_size, layout.question_end - dns::header_size - 4u);
  return std::none_of(name.begin(), name.end(), [](std::uint8_t b) { return b >= 0xC0; });
}

}  // namespace

std::optional<AnswerLayout> layout_of(dns::ByteView msg) {
  namespace w = dns::wire;
  // One walk (what scan() checks, plus where the TTLs are): this runs for
  // every answer stored and every one rewritten for a waiting client.
  const auto h = dns::parse_header(msg);
  if (!h || h->qdcount != 1) return std::nullopt;
  std::size_t off = dns::header_size;
  if (w::read_question(msg, off, nullptr, off) != dns::ParseError::none) return std::nullopt;
  AnswerLayout out;
  const std::size_t question_end = off;
  const unsigned before_additional = unsigned{h->ancount} + h->nscount;
  const unsigned total = before_additional + h->arcount;
  out.ttl_at.reserve(total);
  bool opt_seen = false;
  for (unsigned i = 0; i < total; ++i) {
    w::Rr rr;
    if (w::read_rr(msg, off, rr) != dns::ParseError::none) return std::nullopt;
    off = rr.end;
    if (rr.type == dns::type_opt) {
      // Its TTL field is extended RCODE and flags. The first one in the
      // additional section is the message's OPT (as scan() finds it).
      if (i >= before_additional && !opt_seen) {
        out.opt_options = static_cast<std::uint16_t>(rr.rdlength);
        opt_seen = true;
      }
      continue;
    }
    out.ttl_at.push_back(static_cast<std::uint16_t>(rr.rdlength_at - 4));
  }
  if (off > 0xFFFF) return std::nullopt;
  out.question_end = static_cast<std::uint16_t>(question_end);
  out.end = static_cast<std::uint16_t>(off);
  return out;
}

void find_client_form(dns::ByteView stored, AnswerLayout& layout) {
  layout.client_checked = true;
  layout.client.reset();
  // The form must reproduce the general path, and that path never sees the
  // octets after the last record: rewrite_answer copies up to layout.end. A
  // crafted answer can hide there what a name reads (found by the
  // cache_rewrite fuzzer: a name ran into trailing junk, so the stored
  // answer walked and the rewritten one did not), so the form is derived
  // from exactly what the general path starts from.
  if (layout.end > stored.size()) return;
  const dns::ByteView msg = stored.first(layout.end);
  if (!question_case_is_not_structure(msg, layout)) return;
  if (!ttls_are_not_structure(msg, layout)) return;
  const dns::wire::Layout l = dns::wire::scan(msg);
  if (l.error != dns::ParseError::none || l.end != layout.end) return;
  layout.client = client_form_of(msg, l);
}

std::optional<dns::Bytes> rewrite_answer(dns::ByteView stored, const ClientQuestion& client, std::uint32_t age_seconds,
                                         std::optional<std::uint32_t> fixed_ttl) {
  const auto layout = layout_of(stored);
  if (!layout) return std::nullopt;
  return rewrite_answer(stored, *layout, client, age_seconds, fixed_ttl);
}

std::optional<dns::Bytes> rewrite_answer(dns::ByteView stored, const AnswerLayout& layout, const ClientQuestion& client,
                                         std::uint32_t age_seconds, std::optional<std::uint32_t> fixed_ttl) {
  dns::Bytes out;
  if (!rewrite_into(out, stored, layout, client, age_seconds, fixed_ttl, layout.end)) return std::nullopt;
  return out;
}

std::optional<ClientAnswer> client_answer(dns::ByteView stored, const AnswerLayout& layout, const ClientQuestion& client,
                                          std::uint32_t age_seconds, const dns::Edns& client_edns,
                                          const dns::ClientLink& link) {
  if (!layout.client) return std::nullopt;
  const AnswerLayout::ClientForm& form = *layout.client;
  if (!client_edns.present && form.ext_rcode != 0) return std::nullopt;
  if (form.cut > layout.end) return std::nullopt;
  dns::Bytes out;
  out.reserve(std::size_t{form.cut} + 11 + form.options.size());
  if (!rewrite_into(out, stored, layout, client, age_seconds, std::nullopt, form.cut)) return std::nullopt;
  dns::wire::store16(out, dns::wire::off_flags,
                     dns::client_reply_flags(dns::wire::load16(out, dns::wire::off_flags), client.query_flags,
                                             client_edns.present && client_edns.dnssec_ok));
  const std::uint16_t arcount = dns::wire::load16(out, dns::wire::off_arcount);
  ClientAnswer a;
  a.rcode = static_cast<std::uint16_t>((out[3] & 0x0F) | (client_edns.present ? (form.ext_rcode >> 24) << 4 : 0));
  a.bytes = apply_form(std::move(out), form, arcount, client_edns.present, client_edns.dnssec_ok);
  // As answer_for_client: truncation last, and a TCP reply bounded by what
  // the stream prefix can state.
  if (link.udp) {
    if (a.bytes.size() > link.udp_limit) {
      a.bytes = dns::truncate_for_udp(a.bytes, link.udp_limit);
      // Rare; the TC reply may have had no room for the OPT and its bits.
      a.rcode = dns::reply_rcode(a.bytes).value_or(a.rcode);
    }
  } else if (a.bytes.size() > dns::max_stream_message) {
    return std::nullopt;
  }
  return a;
}

namespace {

bool rewrite_into(dns::Bytes& out, dns::ByteView stored, const AnswerLayout& layout, const ClientQuestion& client,
                  std::uint32_t age_seconds, std::optional<std::uint32_t> fixed_ttl, std::size_t copy_end) {
  namespace w = dns::wire;
  // A layout of other bytes would write out of bounds: refuse rather than trust.
  if (layout.end > stored.size() || layout.question_end > layout.end || layout.question_end < dns::header_size) return false;
  if (copy_end < layout.question_end || copy_end > layout.end) return false;
  const std::size_t qlen = layout.question_end - dns::header_size;
  if (client.question.size() != qlen || qlen < 5) return false;
  const std::size_t name_len = qlen - 4;
  const dns::ByteView stored_q = stored.subspan(dns::header_size, qlen);
  // Byte-equal (a client asking in the case the answer was stored under) is
  // the common case and one memcmp; only a different case needs the
  // label-by-label comparison (RFC 4343).
  const bool same_bytes = std::equal(stored_q.begin(), stored_q.end(), client.question.begin());
  if (!same_bytes && (!dns::names_equal(stored_q.first(name_len), client.question.first(name_len)) ||
                      !std::equal(stored_q.begin() + static_cast<std::ptrdiff_t>(name_len), stored_q.end(),
                                  client.question.begin() + static_cast<std::ptrdiff_t>(name_len)))) {
    return false;
  }

  out.assign(stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(copy_end));
  dns::set_id(out, client.id);
  std::uint16_t flags = static_cast<std::uint16_t>((out[2] << 8) | out[3]);
  flags = static_cast<std::uint16_t>((flags & ~w::flag_rd) | (client.query_flags & w::flag_rd));
  w::store16(out, w::off_flags, flags);
  // Same length: every compression pointer still lands where it did.
  std::copy(client.question.begin(), client.question.end(), out.begin() + dns::header_size);

  for (const std::uint16_t at : layout.ttl_at) {
    if (at < layout.question_end || std::size_t{at} + 4 > layout.end) return false;
    if (std::size_t{at} + 4 > copy_end) continue;  // a record after the OPT: left out
    const std::uint32_t ttl = w::ttl_value(w::load32(out, at));
    w::store32(out, at, fixed_ttl ? *fixed_ttl : (ttl > age_seconds ? ttl - age_seconds : 0));
  }
  return true;
}

}  // namespace

}  // namespace nxdns::cache
