// Which listening sockets ask the kernel for the query's destination address
// (IP_PKTINFO / IPV6_RECVPKTINFO): only wildcard UDP binds, which must answer
// from it. A socket bound to one address answers from that address without
// it, and the control message costs the kernel work on every datagram.
#include <netinet/in.h>
#include <sys/socket.h>

#include "net/endpoint.hpp"
#include "server/bound_socket.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {
int option(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof v;
  if (::getsockopt(fd, level, name, &v, &len) != 0) return -1;
  return v;
}
loop::UniqueFd bound(const char* ip, int type) {
  const auto ep = net::make_endpoint(ip, 0);
  CHECK_TRUE(ep.has_value());
  std::string why;
  auto fd = server::bind_socket(*ep, type, &why);
  CHECK_TEXT(static_cast<bool>(fd), why.c_str());
  return fd;
}
}  // namespace

TEST_GROUP(BoundSocket){};

TEST(BoundSocket, OnlyAWildcardUdpBindAsksForTheDestinationAddress) {
  CHECK_EQUAL(1, option(bound("0.0.0.0", SOCK_DGRAM).get(), IPPROTO_IP, IP_PKTINFO));
  CHECK_EQUAL(0, option(bound("127.0.0.1", SOCK_DGRAM).get(), IPPROTO_IP, IP_PKTINFO));
  CHECK_EQUAL(1, option(bound("::", SOCK_DGRAM).get(), IPPROTO_IPV6, IPV6_RECVPKTINFO));
  CHECK_EQUAL(0, option(bound("::1", SOCK_DGRAM).get(), IPPROTO_IPV6, IPV6_RECVPKTINFO));
}
