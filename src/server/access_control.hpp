#pragma once
// Who may use the resolver: CIDR allow/refuse rules over client addresses,
// decided by longest prefix (the most specific rule wins, whatever the order
// it was written in). An open resolver on the internet answers anyone, which
// makes it a reflector for amplification attacks and a leak of the
// household's lookups; the default therefore serves only the networks a home
// LAN uses and refuses the rest (docs/reference/config.md, access_control).
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nxdns::server {

enum class Access : std::uint8_t { allow, refuse };

// An address prefix. IPv4 is held as 4 bytes (the rest zero), IPv6 as 16.
struct Cidr {
  int family = AF_INET;  // AF_INET or AF_INET6
  std::array<std::uint8_t, 16> addr{};
  std::uint8_t prefix = 0;  // 0..32 or 0..128

  bool operator==(const Cidr&) const = default;
  std::string to_string() const;
};

struct AccessRule {
  Cidr net;
  Access access = Access::allow;
};

// "192.168.0.0/16", "fd00::/8", or a bare address (a /32 or /128). Rejects
// host bits set below the prefix ("192.168.1.1/16": a typo more often than
// not), with the network that was probably meant in `why`.
std::optional<Cidr> parse_cidr(std::string_view text, std::string* why);

// loopback, RFC 1918, RFC 6598 (100.64/10), link-local (169.254/16,
// fe80::/10), ULA (fc00::/7) allowed; 0.0.0.0/0 and ::/0 refused. A fixed
// array built before main: asking for it never allocates.
std::span<const AccessRule> default_access_rules();

class AccessControl {
 public:
  // The defaults with `rules` laid over them: a rule for exactly the same
  // prefix as a default replaces it (so `allow: 0.0.0.0/0` opens IPv4).
  explicit AccessControl(const std::vector<AccessRule>& rules = {});

  // An address no rule covers is refused (the defaults cover everything).
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address.
  Access decide(const sockaddr* peer) const;
  Access decide(int family, const std::uint8_t* addr) const;

  const std::vector<AccessRule>& rules() const { return rules_; }  // longest prefix first

 private:
  std::vector<AccessRule> rules_;
};

// True when `net` covers the address (same family, first `prefix` bits equal).
bool cidr_contains(const Cidr& net, int family, const std::uint8_t* addr);

}  // namespace nxdns::server
