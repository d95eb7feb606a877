#pragma once
// Which clients blocking applies to: `blocking.groups`, by longest prefix
// over the client's address (the most specific group wins, whatever the
// order written); a client in no group is filtered. Immutable; a reload
// builds a new one.
#include <sys/socket.h>

#include <vector>

#include "server/access_control.hpp"

namespace nxdns::route {

struct GroupRule {
  server::Cidr net;
  bool blocking = true;
};

class BlockingGroups {
 public:
  explicit BlockingGroups(std::vector<GroupRule> rules = {});
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address, as
  // access_control judges it. No address (a query with no client, `nxdns
  // why` without --client): filtered.
  bool applies(const sockaddr* client) const;
  bool applies(int family, const std::uint8_t* addr) const;
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<GroupRule> rules_;  // longest prefix first
};

}  // namespace nxdns::route
