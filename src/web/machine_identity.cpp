#include "web/machine_identity.hpp"

#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "net/host_name.hpp"

namespace nxdns::web {

namespace {
struct IfaddrsDeleter {
  void operator()(ifaddrs* p) const noexcept { ::freeifaddrs(p); }
};
}  // namespace

std::string machine_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  return net::normalize_host_name(buf).value_or("");
}

std::vector<net::Endpoint> machine_addresses() {
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) return {};
  const std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
  std::vector<net::Endpoint> out;
  for (const ifaddrs* i = list.get(); i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    const sa_family_t fam = i->ifa_addr->sa_family;
    const std::size_t len = fam == AF_INET ? sizeof(sockaddr_in) : fam == AF_INET6 ? sizeof(sockaddr_in6) : 0;
    if (len == 0) continue;
    net::Endpoint e;
    std::memcpy(&e.addr, i->ifa_addr, len);
    e.len = static_cast<socklen_t>(len);
    out.push_back(e);
  }
  return out;
}

}  // namespace nxdns::web
