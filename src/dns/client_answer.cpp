// The answer a client receives: the header flags its query asked for, the
// upstream's OPT replaced by ours (EDNS is hop-by-hop, RFC 6891 §6.1.1 and
// §7), then UDP truncation. One function, so fresh answers, error replies and
// cached ones follow one rule.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace {

// The one upstream option a client sees. Options are hop-by-hop unless
// known to be about the answer itself: a COOKIE or NSID answered our query
// (and a cached one would be replayed to every later client), keepalive and
// padding describe our stream, Client Subnet was never asked for (RFC 7871
// §7.2.2), and an unknown option may be any of those. Extended DNS Errors
// (RFC 8914) say why the answer is what it is: every client may know.
bool relayed_to_client(std::uint16_t code) { return code == opt_extended_error; }

constexpr std::uint32_t ext_rcode_mask = 0xFF000000u;

}  // namespace

ClientLink client_link(const Query& q, bool udp) {
  ClientLink l;
  l.udp = udp;
  l.udp_limit = client_udp_limit(q.edns);
  return l;
}

std::optional<Bytes> answer_for_client(ByteView answer, const Query& client_query, const ClientLink& link) {
  const wire::Layout l = wire::scan(answer);
  // Every record must walk: the OPT is looked for among all of them, and one
  // we could not find would leak.
  if (l.error != ParseError::none || l.opt_count > 1) return std::nullopt;
  if (l.opt && !l.opt->owner_is_root) return std::nullopt;

  std::uint32_t upstream_ttl = 0;
  Bytes options;
  if (l.opt) {
    upstream_ttl = l.opt->ttl;
    const bool tiles =
        wire::for_each_option(answer.subspan(l.opt->rdata, l.opt->rdlength), [&](const wire::Option& o) {
          if (!relayed_to_client(o.code)) return;
          wire::put16(options, o.code);
          wire::put16(options, static_cast<std::uint16_t>(o.data.size()));
          options.insert(options.end(), o.data.begin(), o.data.end());
        });
    if (!tiles) return std::nullopt;
  }
  const std::uint32_t ext_rcode = upstream_ttl & ext_rcode_mask;
  if (!client_query.edns.present && ext_rcode != 0) return std::nullopt;

  // Everything up to the OPT (or the whole message) verbatim, with trailing
  // bytes past the last counted record cut off; the OPT and what followed
  // it are left out.
  const std::size_t keep_end = l.opt ? l.opt->start : l.end;
  Bytes out(answer.begin(), answer.begin() + static_cast<std::ptrdiff_t>(keep_end));
  wire::store16(std::span<std::uint8_t>(out), wire::off_flags,
                client_reply_flags(l.header.flags, client_query.header.flags,
                                   client_query.edns.present && client_query.edns.dnssec_ok));
  std::uint16_t arcount = l.header.arcount;
  if (l.opt) {
    // Records from the OPT on: the OPT itself and any that followed it
    // (records lie in order, so those are the last ones counted).
    const unsigned records = unsigned{l.header.ancount} + l.header.nscount + l.header.arcount;
    arcount = static_cast<std::uint16_t>(arcount - (records - l.opt_index));
  }
  if (client_query.edns.present) {
    // Ours: our payload size, version 0, the upstream's extended rcode and
    // DO (RFC 3225 §3: the upstream copied it from our query, which had the
    // client's); no upstream OPT at all means the client's DO.
    const bool dnssec_ok = l.opt ? (upstream_ttl & wire::edns_do_bit) != 0 : client_query.edns.dnssec_ok;
    wire::put_opt_header(out, max_udp_limit, ext_rcode | (dnssec_ok ? wire::edns_do_bit : 0),
                         static_cast<std::uint16_t>(options.size()));
    out.insert(out.end(), options.begin(), options.end());
    ++arcount;
  }
  wire::store16(std::span<std::uint8_t>(out), wire::off_arcount, arcount);
  // A label of an earlier record may reach into the bytes we removed only
  // in a crafted message; never hand a client what no longer parses.
  const wire::Layout check = wire::scan(out);
  if (check.error != ParseError::none || check.end != out.size()) return std::nullopt;

  if (link.udp) return truncate_for_udp(out, link.udp_limit);
  if (out.size() > max_stream_message) return std::nullopt;
  return out;
}

std::uint16_t client_reply_flags(std::uint16_t answer_flags, std::uint16_t query_flags, bool query_dnssec_ok) {
  constexpr std::uint16_t echoed = wire::flag_rd | wire::flag_cd;
  auto flags = static_cast<std::uint16_t>((answer_flags & ~(echoed | wire::flag_z)) | (query_flags & echoed));
  if ((query_flags & wire::flag_ad) == 0 && !query_dnssec_ok) flags = static_cast<std::uint16_t>(flags & ~wire::flag_ad);
  return flags;
}

std::optional<std::uint16_t> reply_rcode(ByteView reply) {
  const auto h = parse_header(reply);
  if (!h) return std::nullopt;
  std::uint16_t rcode = h->rcode();
  const wire::Layout l = wire::scan(reply);
  if (l.error == ParseError::none && l.opt) rcode = static_cast<std::uint16_t>(rcode | ((l.opt->ttl >> 24) << 4));
  return rcode;
}

}  // namespace nxdns::dns
