#include "route/blocking_groups.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace nxdns::route {

BlockingGroups::BlockingGroups(std::vector<GroupRule> rules) : rules_(std::move(rules)) {
  std::stable_sort(rules_.begin(), rules_.end(),
                   [](const GroupRule& a, const GroupRule& b) { return a.net.prefix > b.net.prefix; });
}

bool BlockingGroups::applies(int family, const std::uint8_t* addr) const {
  for (const GroupRule& g : rules_) {
    if (server::cidr_contains(g.net, family, addr)) return g.blocking;
  }
  return true;
}

bool BlockingGroups::applies(const sockaddr* client) const {
  if (!client || rules_.empty()) return true;
  if (client->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(client);
    std::uint8_t a[16] = {};
    std::memcpy(a, &v4->sin_addr, 4);
    return applies(AF_INET, a);
  }
  if (client->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(client);
    if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
      std::uint8_t a[16] = {};
      std::memcpy(a, v6->sin6_addr.s6_addr + 12, 4);
      return applies(AF_INET, a);
    }
    return applies(AF_INET6, v6->sin6_addr.s6_addr);
  }
  return true;
}

}  // namespace nxdns::route
