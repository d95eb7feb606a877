#pragma once
// The special-use names a household server answers itself and never sends
// to the internet: its own queries about them would leak the LAN's layout
// (private reverse lookups, home.arpa) to a public resolver that can only
// answer NXDOMAIN, or ask for names no resolver on the internet will ever
// hold. The list is RFC 6303 §4 (locally served reverse zones, including
// RFC 6598's shared address space, RFC 7793), RFC 6761 §6 (localhost,
// invalid, test; `example` is deliberately absent: §6.5 has caching servers
// resolve it normally), RFC 7686 (onion) and RFC 8375 (home.arpa).
#include <cstdint>
#include <span>
#include <string_view>

namespace nxdns::route {

enum class SpecialKind : std::uint8_t {
  // NXDOMAIN with a synthesized SOA for the zone (RFC 6303 §3), for the
  // apex and every name below it.
  empty_zone,
  // RFC 6761 §6.3: the name and every name below it is the loopback host:
  // A 127.0.0.1, AAAA ::1, NOERROR without data for other types.
  loopback,
};

struct SpecialZone {
  std::string_view name;  // presentation form, lower case, no trailing dot
  SpecialKind kind = SpecialKind::empty_zone;
  std::string_view rfc;   // "RFC 6303", for `nxdns why` and the logs
};

// Every built-in zone, each once. A fixed table built before main.
std::span<const SpecialZone> special_zones();

// TTL of the synthesized SOA (and so the negative TTL) of a built-in zone:
// RFC 6303 §3 suggests a week, which is right for names that never exist,
// but a client would then keep an NXDOMAIN for a week for a name the home
// router could later serve; an hour bounds that.
inline constexpr std::uint32_t special_negative_ttl = 3600;
// The same for a zone the home router is expected to serve but does not
// answer right now (down, rebooting, no DNS): short, so that the names
// work again soon after it does.
inline constexpr std::uint32_t fallback_negative_ttl = 30;

}  // namespace nxdns::route
