#include "server/bound_socket.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "log/log.hpp"

namespace nxdns::server {

loop::UniqueFd bind_socket(const net::Endpoint& ep, int type, std::string* why) {
  const char* kind = type == SOCK_DGRAM ? "udp" : "tcp";
  loop::UniqueFd fd(::socket(ep.family(), type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  auto fail = [&](const char* step) {
    if (why) *why = log::cat("cannot ", step, " ", kind, " ", ep.to_string(), ": ", std::strerror(errno));
    return loop::UniqueFd();
  };
  if (!fd) return fail("create socket for");
  int one = 1;
  if (type == SOCK_STREAM) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // A wildcard bind answers from the address each query was sent to, which
  // only the PKTINFO control message tells it. A socket bound to one address
  // answers from that address anyway, so it asks for none: the kernel then
  // builds no control message per datagram received and parses none per
  // answer sent (the cached-answer path is mostly kernel time).
  const bool needs_pktinfo = type == SOCK_DGRAM && net::is_unspecified(ep);
  if (ep.family() == AF_INET6) {
    if (::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) return fail("set IPV6_V6ONLY on");
    if (needs_pktinfo && ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one) != 0)
      return fail("set IPV6_RECVPKTINFO on");
  } else if (needs_pktinfo) {
    if (::setsockopt(fd.get(), IPPROTO_IP, IP_PKTINFO, &one, sizeof one) != 0) return fail("set IP_PKTINFO on");
  }
  if (::bind(fd.get(), ep.sa(), ep.len) != 0) return fail("bind");
  if (type == SOCK_STREAM && ::listen(fd.get(), 128) != 0) return fail("listen on");
  return fd;
}

}  // namespace nxdns::server

namespace nxdns::server {

net::Endpoint local_endpoint(int fd) {
  net::Endpoint ep;
  ep.len = sizeof ep.addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ep.addr), &ep.len) != 0) ep.len = 0;
  return ep;
}

}  // namespace nxdns::server
