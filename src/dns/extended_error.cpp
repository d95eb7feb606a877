// Extended DNS Errors (RFC 8914) on replies nxdns builds itself.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

Bytes with_extended_error(ByteView reply, std::uint16_t info_code, std::string_view extra_text) {
  namespace w = wire;
  const w::Layout l = w::scan(reply);
  // Only an OPT that is the last record can grow in place: bytes added to
  // it shift nothing another record's compression pointer could target.
  if (l.error != ParseError::none || !l.opt || !l.opt_is_last || l.opt_count != 1 || l.end != reply.size()) {
    return Bytes(reply.begin(), reply.end());
  }
  // RFC 8914 §2: INFO-CODE, then EXTRA-TEXT (UTF-8, not NUL-terminated).
  const std::size_t option_len = 2 + extra_text.size();
  const std::size_t new_rdlength = std::size_t{l.opt->rdlength} + 4 + option_len;
  if (new_rdlength > 0xFFFF) return Bytes(reply.begin(), reply.end());
  Bytes out(reply.begin(), reply.end());
  w::put16(out, opt_extended_error);
  w::put16(out, static_cast<std::uint16_t>(option_len));
  w::put16(out, info_code);
  out.insert(out.end(), extra_text.begin(), extra_text.end());
  w::store16(out, l.opt->rdlength_at, static_cast<std::uint16_t>(new_rdlength));
  return out;
}

}  // namespace nxdns::dns
