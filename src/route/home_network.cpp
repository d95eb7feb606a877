// The LAN this host sits on, as `home_router: auto` sees it: the default
// gateway from /proc/net/route and the reverse zones of this host's private
// subnets, each a pure function of text or addresses, and the one reading
// of the system that feeds them.
#include "route/home_network.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/route.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace nxdns::route {
namespace {

// An address block by its leading bits.
struct Block {
  std::uint8_t base[16];
  std::uint8_t prefix;
};

// RFC 1918 §3 and RFC 6598 §7: the IPv4 space a LAN numbers itself from.
constexpr Block private_v4[] = {
    {{10, 0, 0, 0}, 8},
    {{172, 16, 0, 0}, 12},
    {{192, 168, 0, 0}, 16},
    {{100, 64, 0, 0}, 10},
};
// RFC 3927: a router reached over IPv4 link-local is on the LAN by
// definition (no router forwards that space).
constexpr Block link_local_v4 = {{169, 254, 0, 0}, 16};
// RFC 4193: unique local addresses.
constexpr Block ula = {{0xfc}, 7};

bool bit(const std::uint8_t* a, unsigned i) { return (a[i / 8] >> (7 - i % 8)) & 1u; }

void set_bit(std::uint8_t* a, unsigned i, bool v) {
  const auto m = static_cast<std::uint8_t>(1u << (7 - i % 8));
  a[i / 8] = static_cast<std::uint8_t>(v ? (a[i / 8] | m) : (a[i / 8] & ~m));
}

bool in_block(const std::uint8_t* a, const Block& b) {
  for (unsigned i = 0; i < b.prefix; ++i)
    if (bit(a, i) != bit(b.base, i)) return false;
  return true;
}

// One field of /proc/net/route: a hex number of at most 8 digits.
std::optional<std::uint32_t> hex32(std::string_view s) {
  if (s.empty() || s.size() > 8) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
    v = v << 4 | d;
  }
  return v;
}

// The metric column is decimal (the kernel prints it with %d).
std::optional<std::uint32_t> dec32(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return v;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// The reverse zone of the first `bits` bits of `a`: octets (in-addr.arpa)
// or nibbles (ip6.arpa), least significant label first (RFC 1035 §3.5,
// RFC 3596 §2.5).
std::string reverse_name(const std::uint8_t* a, int family, unsigned bits) {
  std::string out;
  if (family == AF_INET) {
    for (unsigned i = bits / 8; i-- > 0;) {
      out += std::to_string(a[i]);
      out += '.';
    }
    return out + "in-addr.arpa";
  }
  static constexpr char hex[] = "0123456789abcdef";
  for (unsigned i = bits / 4; i-- > 0;) {
    out += hex[(a[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
    out += '.';
  }
  return out + "ip6.arpa";
}

// The zones covering the private part of one subnet. The prefix is rounded
// out to the label boundary (8 bits IPv4, 4 bits IPv6) at or above it, so
// the zone is one a DNS server can hold. Where that would reach beyond the
// private block (172.16.0.0/12 rounded out is 172.in-addr.arpa, half of it
// public), the subnet is covered by the zones one boundary below the block's
// own prefix instead: 16 to 31.172.in-addr.arpa, 64 to 127.100.in-addr.arpa,
// c.f and d.f.ip6.arpa, the split RFC 6303 §4 uses for the same space. A
// prefix shorter than its block (a misconfigured /6 on a 10.x address) is
// taken as the block: only that part is known to be private.
void add_zones(const InterfaceAddress& ia, const Block& block, std::vector<std::string>& out) {
  const unsigned unit = ia.family == AF_INET ? 8 : 4;
  const unsigned width = ia.family == AF_INET ? 32 : 128;
  const unsigned prefix = std::clamp<unsigned>(ia.prefix, block.prefix, width);
  unsigned zone_bits = prefix / unit * unit;
  if (zone_bits < block.prefix) zone_bits = (block.prefix + unit - 1) / unit * unit;
  std::uint8_t net[16]{};
  std::memcpy(net, ia.addr, width / 8);
  for (unsigned i = prefix; i < width; ++i) set_bit(net, i, false);
  // At most 2^6 zones (100.64.0.0/10 split into /16s).
  const unsigned spread = zone_bits > prefix ? zone_bits - prefix : 0;
  for (unsigned n = 0; n < (1u << spread); ++n) {
    for (unsigned k = 0; k < spread; ++k) set_bit(net, prefix + k, (n >> (spread - 1 - k)) & 1u);
    out.push_back(reverse_name(net, ia.family, zone_bits));
  }
}

const Block* private_block(const InterfaceAddress& ia) {
  if (ia.family == AF_INET) {
    for (const Block& b : private_v4)
      if (in_block(ia.addr, b)) return &b;
    return nullptr;
  }
  if (ia.family == AF_INET6 && in_block(ia.addr, ula)) return &ula;
  return nullptr;
}

bool is_home_router_address(const std::uint8_t* a) {
  if (in_block(a, link_local_v4)) return true;
  return std::any_of(std::begin(private_v4), std::end(private_v4), [&](const Block& b) { return in_block(a, b); });
}

unsigned prefix_of(const sockaddr* mask) {
  const std::uint8_t* m = nullptr;
  unsigned bytes = 0;
  if (mask->sa_family == AF_INET) {
    m = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in*>(mask)->sin_addr);
    bytes = 4;
  } else if (mask->sa_family == AF_INET6) {
    m = reinterpret_cast<const std::uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(mask)->sin6_addr);
    bytes = 16;
  }
  // Leading ones: a mask with holes (never made by the kernel) counts up
  // to its first hole, the narrower reading.
  unsigned n = 0;
  while (n < bytes * 8 && bit(m, n)) ++n;
  return n;
}

struct IfaddrsFree {
  void operator()(ifaddrs* p) const noexcept { freeifaddrs(p); }
};

std::vector<InterfaceAddress> read_interface_addresses() {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0) return {};
  const std::unique_ptr<ifaddrs, IfaddrsFree> list(raw);
  std::vector<InterfaceAddress> out;
  for (const ifaddrs* i = list.get(); i; i = i->ifa_next) {
    // An address on a link that is down numbers no reachable subnet.
    if (!i->ifa_addr || !i->ifa_netmask || !(i->ifa_flags & IFF_UP)) continue;
    InterfaceAddress ia;
    ia.interface = i->ifa_name ? i->ifa_name : "";
    ia.family = i->ifa_addr->sa_family;
    if (ia.family == AF_INET) {
      std::memcpy(ia.addr, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, 4);
    } else if (ia.family == AF_INET6) {
      std::memcpy(ia.addr, &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    ia.prefix = static_cast<std::uint8_t>(prefix_of(i->ifa_netmask));
    out.push_back(std::move(ia));
  }
  return out;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

std::optional<Gateway> default_gateway_from_proc(std::string_view text) {
  // The column order is fixed by the kernel (fib_route_seq_show); a file
  // whose header is not it is not read at all rather than misread.
  const std::size_t eol = text.find('\n');
  const auto header = fields(text.substr(0, eol));
  if (header.size() < 8 || header[0] != "Iface" || header[1] != "Destination" || header[2] != "Gateway" ||
      header[3] != "Flags" || header[6] != "Metric" || header[7] != "Mask")
    return std::nullopt;
  std::optional<Gateway> best;
  std::uint32_t best_metric = 0;
  std::size_t pos = eol == std::string_view::npos ? text.size() : eol + 1;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const auto f = fields(text.substr(pos, end - pos));
    pos = end + 1;
    // A line that does not parse is passed over: it names no route we
    // could use, and the others still stand.
    if (f.size() < 8) continue;
    const auto dest = hex32(f[1]), gw = hex32(f[2]), flags = hex32(f[3]), mask = hex32(f[7]);
    const auto metric = dec32(f[6]);
    if (!dest || !gw || !flags || !mask || !metric) continue;
    if (*dest != 0 || *mask != 0) continue;  // not a default route
    // RTF_UP is clear on a route whose interface is down (the kernel's
    // dead next hop); without RTF_GATEWAY the route is a point-to-point
    // link with no router to ask.
    if ((*flags & RTF_UP) == 0 || (*flags & RTF_GATEWAY) == 0 || (*flags & RTF_REJECT) != 0) continue;
    if (*gw == 0) continue;
    if (best && *metric >= best_metric) continue;  // ties: the kernel's first
    Gateway g;
    // Host byte order of a little-endian kernel: the low byte is the first
    // octet of the address.
    for (unsigned i = 0; i < 4; ++i) g.addr[i] = static_cast<std::uint8_t>(*gw >> (8 * i));
    g.interface.assign(f[0]);
    best = std::move(g);
    best_metric = *metric;
  }
  return best;
}

HomeNetwork home_network_from(const std::optional<Gateway>& gw, const std::vector<InterfaceAddress>& addrs) {
  HomeNetwork out;
  if (gw && is_home_router_address(gw->addr)) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(53);
    std::memcpy(&sin.sin_addr, gw->addr, 4);
    net::Endpoint ep;
    std::memcpy(&ep.addr, &sin, sizeof sin);
    ep.len = sizeof sin;
    out.router = ep;
    out.interface = gw->interface;
  }
  for (const InterfaceAddress& ia : addrs) {
    if (const Block* b = private_block(ia)) add_zones(ia, *b, out.reverse_zones);
  }
  std::sort(out.reverse_zones.begin(), out.reverse_zones.end());
  out.reverse_zones.erase(std::unique(out.reverse_zones.begin(), out.reverse_zones.end()), out.reverse_zones.end());
  return out;
}

HomeNetwork discover_home_network() {
  // The calling thread's namespace, which getifaddrs's netlink socket sees
  // too: /proc/net is the process leader's, and differs from it in a
  // thread that entered a namespace of its own.
  std::string routes = read_file("/proc/thread-self/net/route");
  if (routes.empty()) routes = read_file("/proc/net/route");
  return home_network_from(default_gateway_from_proc(routes), read_interface_addresses());
}

}  // namespace nxdns::route
