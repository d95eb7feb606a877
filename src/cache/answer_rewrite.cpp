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
    const std::uint32_t ttl = f(rr.ttl > 0x7FFFFFFFu ? 0 : rr.ttl);  // RFC 2181 §8
    const std::size_t at = rr.rdlength_at - 4;
    w::store16(msg, at, static_cast<std::uint16_t>(ttl >> 16));
    w::store16(msg, at + 2, static_cast<std::uint16_t>(ttl & 0xFFFF));
  }
  return true;
}
}  // namespace

std::optional<dns::Bytes> clamp_record_ttls(dns::ByteView answer, std::uint32_t lo, std::uint32_t hi) {
  dns::Bytes out(answer.begin(), answer.end());
  if (lo > hi) lo = hi;
  if (!map_ttls(out, dns::wire::scan(out), [lo, hi](std::uint32_t t) { return std::clamp(t, lo, hi); })) return std::nullopt;
  return out;
}

std::optional<dns::Bytes> rewrite_answer(dns::ByteView stored, const ClientQuestion& client, std::uint32_t age_seconds,
                                         std::optional<std::uint32_t> fixed_ttl) {
  namespace w = dns::wire;
  const w::Layout l = w::scan(stored);
  if (l.error != dns::ParseError::none || !l.questions_ok || l.header.qdcount != 1) return std::nullopt;
  const std::size_t qlen = l.questions_end - dns::header_size;
  if (client.question.size() != qlen || qlen < 5) return std::nullopt;
  const std::size_t name_len = qlen - 4;
  const dns::ByteView stored_q = stored.subspan(dns::header_size, qlen);
  if (!dns::names_equal(stored_q.first(name_len), client.question.first(name_len)) ||
      !std::equal(stored_q.begin() + static_cast<std::ptrdiff_t>(name_len), stored_q.end(),
                  client.question.begin() + static_cast<std::ptrdiff_t>(name_len))) {
    return std::nullopt;
  }

  dns::Bytes out(stored.begin(), stored.begin() + static_cast<std::ptrdiff_t>(l.end));
  dns::set_id(out, client.id);
  std::uint16_t flags = static_cast<std::uint16_t>((out[2] << 8) | out[3]);
  flags = static_cast<std::uint16_t>(client.recursion_desired ? flags | w::flag_rd : flags & ~w::flag_rd);
  w::store16(out, w::off_flags, flags);
  std::copy(client.question.begin(), client.question.end(), out.begin() + dns::header_size);

  // The copy differs from `stored` only in ID, flags and question case: the
  // layout scanned above is still its layout (one walk, not two).
  const bool walked = map_ttls(out, l, [&](std::uint32_t ttl) {
    return fixed_ttl ? *fixed_ttl : (ttl > age_seconds ? ttl - age_seconds : 0);
  });
  if (!walked) return std::nullopt;
  return out;
}

}  // namespace nxdns::cache
