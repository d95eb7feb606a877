// Fitting an answer into what a UDP client can take (RFC 1035 §4.2.1,
// RFC 6891 §7): a TC reply tells the client to retry over TCP.
#include <algorithm>

#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

Bytes truncate_for_udp(ByteView response, std::size_t limit) {
  if (response.size() <= limit) return Bytes(response.begin(), response.end());
  const wire::Layout l = wire::scan(response);
  if (l.error == ParseError::too_short) return {};
  // Below a header nothing useful fits; the header alone is the floor.
  limit = std::max(limit, header_size);

  Bytes out(response.begin(), response.begin() + header_size);
  // Through `out` each time: appending below may move its storage.
  auto set_field = [&out](std::size_t off, std::uint16_t v) { wire::store16(std::span<std::uint8_t>(out), off, v); };
  set_field(wire::off_flags, static_cast<std::uint16_t>(l.header.flags | wire::flag_tc));
  set_field(wire::off_ancount, 0);
  set_field(wire::off_nscount, 0);
  set_field(wire::off_arcount, 0);

  // The question section is copied verbatim: it starts right after the
  // header in both messages, so any pointer inside it keeps its target.
  if (!l.questions_ok || l.questions_end > limit) {
    set_field(wire::off_qdcount, 0);
    return out;
  }
  out.insert(out.end(), response.begin() + header_size,
             response.begin() + static_cast<std::ptrdiff_t>(l.questions_end));

  // Keep the OPT (extended RCODE and version live in its TTL, RFC 6891
  // §6.1.3) when the records could be walked to find it: whole if it fits,
  // else without its options, else not at all.
  if (l.error == ParseError::none && l.opt) {
    const wire::Rr& opt = *l.opt;
    const ByteView rdata = response.subspan(opt.rdata, opt.rdlength);
    const std::size_t full = wire::opt_fixed_size + rdata.size();
    if (out.size() + full <= limit) {
      wire::put_opt_header(out, opt.rrclass, opt.ttl, opt.rdlength);
      out.insert(out.end(), rdata.begin(), rdata.end());
      set_field(wire::off_arcount, 1);
    } else if (out.size() + wire::opt_fixed_size <= limit) {
      wire::put_opt_header(out, opt.rrclass, opt.ttl, 0);
      set_field(wire::off_arcount, 1);
    }
  }
  return out;
}

}  // namespace nxdns::dns
