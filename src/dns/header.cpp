// The fixed 12-octet header (RFC 1035 §4.1.1) and the ID field.
#include "dns/message.hpp"
#include "dns/wire.hpp"

namespace nxdns::dns {

std::optional<Header> parse_header(ByteView msg) {
  if (msg.size() < header_size) return std::nullopt;
  Header h;
  h.id = wire::load16(msg, 0);
  h.flags = wire::load16(msg, wire::off_flags);
  h.qdcount = wire::load16(msg, wire::off_qdcount);
  h.ancount = wire::load16(msg, wire::off_ancount);
  h.nscount = wire::load16(msg, wire::off_nscount);
  h.arcount = wire::load16(msg, wire::off_arcount);
  return h;
}

void set_id(std::span<std::uint8_t> msg, std::uint16_t id) {
  if (msg.size() < header_size) return;
  wire::store16(msg, 0, id);
}

std::uint16_t get_id(ByteView msg) { return msg.size() < 2 ? 0 : wire::load16(msg, 0); }

}  // namespace nxdns::dns
