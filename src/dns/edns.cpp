// The query nxdns sends upstream, and EDNS(0) handling for the encrypted
// upstream transports: Padding (RFC 7830, sizes from RFC 8467) so an
// observer of the TLS stream cannot infer the name from the length, and
// edns-tcp-keepalive (RFC 7828) so DoT sessions learn how long the upstream
// will keep them open.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

namespace {

constexpr std::size_t max_rdlength = 0xFFFF;
constexpr std::size_t option_header = 4;  // code 2 + length 2

void put_option(Bytes& out, std::uint16_t code, ByteView data) {
  wire::put16(out, code);
  wire::put16(out, static_cast<std::uint16_t>(data.size()));
  out.insert(out.end(), data.begin(), data.end());
}

}  // namespace

Bytes prepare_upstream_query(ByteView client_query, const UpstreamQueryOptions& o) {
  const QueryParse p = parse_query(client_query);
  if (!p.query) return {};
  const Query& q = *p.query;

  // Nothing of the client's OPT but DO: its payload size describes its UDP
  // path, not our stream; its version is 0 (local_answer answers any other);
  // its options stay in the LAN (message.hpp). A query without OPT asks
  // what one with DO clear asks, so both share one exchange and one entry.
  const std::uint32_t ttl = q.edns.present && q.edns.dnssec_ok ? wire::edns_do_bit : 0;
  Bytes options;
  // Room for the padding option and ours: built octet by octet, it would
  // otherwise reallocate several times per query.
  options.reserve(2 * option_header + o.pad_block + 2);
  if (o.tcp_keepalive) put_option(options, opt_tcp_keepalive, {});
  // RD: asked whatever the client asked, so that every client's exchange is
  // the same and what is cached or shared is the full answer: an upstream
  // answers RD=0 from its cache only (a referral, an empty NOERROR) or
  // REFUSED, and either, cached, would be wrong for the next client. The
  // client's own RD comes back in its reply (client_reply_flags).
  // AD: RFC 6840 §5.7, a validating upstream then says whether the answer
  // is authentic; client_reply_flags keeps that only for clients that ask.
  // CD: the client's, part of the cache key (RFC 4035 §3.2.2).
  const auto flags = static_cast<std::uint16_t>(wire::flag_rd | wire::flag_ad | (q.header.flags & wire::flag_cd));

  const std::size_t question_len = q.question_end - header_size;
  const std::size_t unpadded = header_size + question_len + wire::opt_fixed_size + options.size();
  if (o.pad_block > 0) {
    // The padding option's own 4-octet header counts toward the total.
    const std::size_t rem = (unpadded + option_header) % o.pad_block;
    const std::size_t pad = rem == 0 ? 0 : o.pad_block - rem;
    if (options.size() + option_header + pad <= max_rdlength) {
      wire::put16(options, opt_padding);
      wire::put16(options, static_cast<std::uint16_t>(pad));
      // RFC 7830 §3: padding octets SHOULD be 0x00.
      options.insert(options.end(), pad, 0);
    }
  }

  Bytes out;
  out.reserve(unpadded + option_header + o.pad_block);
  wire::put16(out, o.id);
  wire::put16(out, flags);
  wire::put16(out, 1);
  wire::put16(out, 0);
  wire::put16(out, 0);
  wire::put16(out, 1);
  out.insert(out.end(), client_query.begin() + header_size,
             client_query.begin() + static_cast<std::ptrdiff_t>(q.question_end));
  wire::put_opt_header(out, max_udp_limit, ttl, static_cast<std::uint16_t>(options.size()));
  out.insert(out.end(), options.begin(), options.end());
  // Cannot happen (one question and our own options), but a stream
  // transport must never be handed a message its length prefix cannot state.
  if (out.size() > max_stream_message) return {};
  return out;
}

std::optional<std::uint16_t> edns_tcp_keepalive(ByteView response) {
  const wire::Layout l = wire::scan(response);
  if (l.error != ParseError::none || !l.opt) return std::nullopt;
  std::optional<std::uint16_t> timeout;
  const bool ok = wire::for_each_option(response.subspan(l.opt->rdata, l.opt->rdlength), [&](const wire::Option& opt) {
    // RFC 7828 §3.1: a server's option carries exactly the 2-octet TIMEOUT.
    if (opt.code == opt_tcp_keepalive && opt.data.size() == 2 && !timeout) timeout = wire::load16(opt.data, 0);
  });
  if (!ok) return std::nullopt;
  return timeout;
}

Bytes strip_padding(ByteView response) {
  auto unchanged = [&] { return Bytes(response.begin(), response.end()); };
  const wire::Layout l = wire::scan(response);
  // Records after the OPT may hold compression pointers to offsets past it;
  // removing bytes would silently redirect them, so leave those alone.
  if (l.error != ParseError::none || !l.opt || !l.opt_is_last) return unchanged();
  const wire::Rr& opt = *l.opt;
  const ByteView rdata = response.subspan(opt.rdata, opt.rdlength);
  Bytes kept;
  bool padded = false;
  const bool ok = wire::for_each_option(rdata, [&](const wire::Option& o) {
    if (o.code == opt_padding) {
      padded = true;
      return;
    }
    put_option(kept, o.code, o.data);
  });
  if (!ok || !padded) return unchanged();

  Bytes out(response.begin(), response.begin() + static_cast<std::ptrdiff_t>(opt.rdata));
  wire::store16(std::span<std::uint8_t>(out), opt.rdlength_at, static_cast<std::uint16_t>(kept.size()));
  out.insert(out.end(), kept.begin(), kept.end());
  out.insert(out.end(), response.begin() + static_cast<std::ptrdiff_t>(opt.end), response.end());
  // A label in an earlier record may span into the OPT's rdata (a crafted
  // but parseable message: the fuzzer found one); removing bytes there
  // changes what that name reads and can leave the message malformed. Never
  // hand a client something that no longer parses: keep the original.
  if (wire::scan(out).error != ParseError::none) return unchanged();
  return out;
}

}  // namespace nxdns::dns
