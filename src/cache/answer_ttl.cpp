#include "cache/answer_ttl.hpp"

#include <algorithm>
#include <limits>

#include "dns/wire.hpp"

namespace nxdns::cache {

namespace {
constexpr std::uint16_t type_soa = 6;
// MNAME and RNAME (each at least the root octet) plus five 32-bit fields.
constexpr std::size_t soa_min_rdata = 2 + 20;

}  // namespace

const char* describe(Verdict v) {
  switch (v) {
    case Verdict::positive: return "positive";
    case Verdict::negative: return "negative";
    case Verdict::truncated: return "truncated";
    case Verdict::error_rcode: return "error_rcode";
    case Verdict::ttl_zero: return "ttl_zero";
    case Verdict::no_soa: return "no_soa";
    case Verdict::malformed: return "malformed";
  }
  return "unknown";
}

AnswerTtl answer_ttl(dns::ByteView response, const TtlClamp& clamp) {
  return answer_ttl(response, dns::wire::scan(response), clamp);
}

AnswerTtl answer_ttl(dns::ByteView response, const dns::wire::Layout& l, const TtlClamp& clamp) {
  namespace w = dns::wire;
  AnswerTtl out;
  if (l.error != dns::ParseError::none || !l.questions_ok || l.header.qdcount != 1 || !l.header.qr()) return out;
  if (l.header.tc()) return {Verdict::truncated, 0};
  // The extended RCODE lives in the top 8 bits of the OPT TTL (RFC 6891 §6.1.3).
  const bool ext_rcode = l.opt && (l.opt->ttl >> 24) != 0;
  const auto rcode = static_cast<dns::Rcode>(l.header.rcode());
  if (ext_rcode || (rcode != dns::Rcode::noerror && rcode != dns::Rcode::nxdomain)) return {Verdict::error_rcode, 0};
  const bool negative = rcode == dns::Rcode::nxdomain || l.header.ancount == 0;

  std::uint32_t min_ttl = std::numeric_limits<std::uint32_t>::max();
  std::optional<std::uint32_t> soa_ttl;
  const unsigned an = l.header.ancount, ns = l.header.nscount;
  const unsigned total = an + ns + l.header.arcount;
  std::size_t off = l.questions_end;
  for (unsigned i = 0; i < total; ++i) {
    w::Rr rr;
    if (w::read_rr(response, off, rr) != dns::ParseError::none) return out;
    off = rr.end;
    if (rr.type == dns::type_opt) continue;
    const std::uint32_t ttl = w::ttl_value(rr.ttl);
    min_ttl = std::min(min_ttl, ttl);
    if (negative && i >= an && i < an + ns && rr.type == type_soa && !soa_ttl && rr.rdlength >= soa_min_rdata) {
      // MINIMUM is the last field of the RDATA, whatever the names before it.
      const std::uint32_t minimum = w::ttl_value(w::load32(response, rr.end - 4));
      soa_ttl = std::min(ttl, minimum);
    }
  }
  if (negative && !soa_ttl) {
    if (ns != 0) return {Verdict::no_soa, 0};
    // Only OPT or additional records, if anything: a bare negative.
    const std::uint32_t ttl = std::min({min_ttl, bare_negative_ttl, clamp.max_ttl, clamp.max_negative});
    if (ttl == 0) return {Verdict::ttl_zero, 0};
    return {Verdict::negative, ttl};
  }
  if (negative) min_ttl = std::min(min_ttl, *soa_ttl);
  if (min_ttl == 0) return {Verdict::ttl_zero, 0};
  std::uint32_t ttl = std::clamp(min_ttl, std::min(clamp.min_ttl, clamp.max_ttl), clamp.max_ttl);
  if (negative) ttl = std::min(ttl, clamp.max_negative);
  return {negative ? Verdict::negative : Verdict::positive, ttl};
}

}  // namespace nxdns::cache
