// The UDP listener's batches apart from the event loop: the return address
// read from a received header (PKTINFO rules), the send headers built for
// one sendmmsg, and one real recvmmsg/sendmmsg round trip on loopback.
#include <arpa/inet.h>
#include <unistd.h>

#include <cstring>

#include "server/udp_batch.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using server::ReceiveBatch;
using server::ReturnAddress;
using server::SendBatch;

namespace {

sockaddr_in v4(const char* ip, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

// A received header carrying one PKTINFO control message.
template <class Pktinfo>
struct Received {
  sockaddr_storage name{};
  alignas(cmsghdr) std::uint8_t control[CMSG_SPACE(sizeof(Pktinfo))] = {};
  msghdr msg{};
  Received(const void* peer, socklen_t len, int level, int type, const Pktinfo& info) {
    std::memcpy(&name, peer, len);
    msg.msg_name = &name;
    msg.msg_namelen = len;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = level;
    c->cmsg_type = type;
    c->cmsg_len = CMSG_LEN(sizeof(Pktinfo));
    std::memcpy(CMSG_DATA(c), &info, sizeof info);
  }
};

}  // namespace

TEST_GROUP(UdpBatch){};

TEST(UdpBatch, V4PktinfoKeepsTheAddressAndClearsTheInterface) {
  const sockaddr_in peer = v4("127.0.0.9", 5353);
  in_pktinfo info{};
  info.ipi_ifindex = 7;
  ::inet_pton(AF_INET, "127.0.0.2", &info.ipi_spec_dst);
  Received<in_pktinfo> r(&peer, sizeof peer, IPPROTO_IP, IP_PKTINFO, info);
  const ReturnAddress to = server::return_address_of(r.msg);
  CHECK_TRUE(to.have_v4_pktinfo);
  CHECK_FALSE(to.have_v6_pktinfo);
  CHECK_EQUAL(0, to.v4.ipi_ifindex);
  CHECK_EQUAL(info.ipi_spec_dst.s_addr, to.v4.ipi_spec_dst.s_addr);
  CHECK_EQUAL(sizeof peer, to.peer_len);
  CHECK_EQUAL(0, std::memcmp(&peer, &to.peer, sizeof peer));
}

TEST(UdpBatch, V6PktinfoKeepsTheInterfaceForLinkLocalSources) {
  sockaddr_in6 peer{};
  peer.sin6_family = AF_INET6;
  peer.sin6_addr = in6addr_loopback;
  in6_pktinfo info{};
  info.ipi6_ifindex = 3;
  info.ipi6_addr = in6addr_loopback;
  Received<in6_pktinfo> r(&peer, sizeof peer, IPPROTO_IPV6, IPV6_PKTINFO, info);
  const ReturnAddress to = server::return_address_of(r.msg);
  CHECK_TRUE(to.have_v6_pktinfo);
  CHECK_FALSE(to.have_v4_pktinfo);
  CHECK_EQUAL(3, to.v6.ipi6_ifindex);
}

TEST(UdpBatch, SendHeadersCarryEachAnswerItsPeerAndItsSource) {
  SendBatch b;
  CHECK_TRUE(b.empty());
  ReturnAddress with_source;
  const sockaddr_in p1 = v4("127.0.0.9", 1000);
  std::memcpy(&with_source.peer, &p1, sizeof p1);
  with_source.peer_len = sizeof p1;
  with_source.have_v4_pktinfo = true;
  ::inet_pton(AF_INET, "127.0.0.2", &with_source.v4.ipi_spec_dst);
  ReturnAddress plain;
  const sockaddr_in p2 = v4("127.0.0.10", 2000);
  std::memcpy(&plain.peer, &p2, sizeof p2);
  plain.peer_len = sizeof p2;
  b.add(with_source, dns::Bytes{1, 2, 3});
  b.add(plain, dns::Bytes(100, 7));
  auto m = b.messages();
  CHECK_EQUAL(2u, m.size());
  CHECK_EQUAL(3u, m[0].msg_hdr.msg_iov[0].iov_len);
  CHECK_EQUAL(100u, m[1].msg_hdr.msg_iov[0].iov_len);
  CHECK_EQUAL(sizeof p1, m[0].msg_hdr.msg_namelen);
  CHECK_EQUAL(0, std::memcmp(m[1].msg_hdr.msg_name, &p2, sizeof p2));
  const cmsghdr* c = CMSG_FIRSTHDR(&m[0].msg_hdr);
  CHECK(c != nullptr);
  CHECK_EQUAL(IPPROTO_IP, c->cmsg_level);
  CHECK_EQUAL(IP_PKTINFO, c->cmsg_type);
  in_pktinfo sent{};
  std::memcpy(&sent, CMSG_DATA(c), sizeof sent);
  CHECK_EQUAL(with_source.v4.ipi_spec_dst.s_addr, sent.ipi_spec_dst.s_addr);
  CHECK_EQUAL(0u, m[1].msg_hdr.msg_controllen);  // no PKTINFO: the socket's own address
  b.clear();
  CHECK_TRUE(b.empty());
  CHECK_EQUAL(0u, b.messages().size());
}

TEST(UdpBatch, FillsUpToOneAnswerPerDatagramOfAWakeup) {
  SendBatch b;
  for (std::size_t i = 0; i < SendBatch::capacity; ++i) b.add(ReturnAddress{}, dns::Bytes{1});
  CHECK_TRUE(b.full());
  CHECK_EQUAL(static_cast<std::size_t>(server::udp_reads_per_wakeup), b.messages().size());
}

// One recvmmsg takes several datagrams with their real lengths, a too-long
// one included (MSG_TRUNC: its slot holds max_client_query + 1 octets), and
// one sendmmsg answers them all.
TEST(UdpBatch, OneRecvmmsgAndOneSendmmsgOnLoopback) {
  const int srv = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  const int cli = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a = v4("127.0.0.1", 0);
  CHECK_EQUAL(0, ::bind(srv, reinterpret_cast<sockaddr*>(&a), sizeof a));
  socklen_t len = sizeof a;
  ::getsockname(srv, reinterpret_cast<sockaddr*>(&a), &len);
  const std::size_t sizes[] = {12, 300, dns::max_client_query + 100};
  for (std::size_t n : sizes) {
    const dns::Bytes d(n, 0x5A);
    CHECK_EQUAL(static_cast<ssize_t>(n), ::sendto(cli, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a));
  }
  ReceiveBatch in;
  const int got = ::recvmmsg(srv, in.prepare(ReceiveBatch::capacity), ReceiveBatch::capacity, MSG_DONTWAIT | MSG_TRUNC, nullptr);
  CHECK_EQUAL(3, got);
  SendBatch out;
  for (int i = 0; i < got; ++i) {
    const auto s = static_cast<std::size_t>(i);
    CHECK_EQUAL(sizes[i], in.length(s));
    CHECK_EQUAL(std::min(sizes[i], ReceiveBatch::slot_bytes), in.bytes(s).size());
    CHECK_EQUAL((sizes[i] > ReceiveBatch::slot_bytes), (in.header(s).msg_flags & MSG_TRUNC) != 0);
    out.add(server::return_address_of(in.header(s)), dns::Bytes(s + 1, 0xA5));
  }
  auto m = out.messages();
  CHECK_EQUAL(3, ::sendmmsg(srv, m.data(), static_cast<unsigned>(m.size()), 0));
  for (std::size_t i = 0; i < 3; ++i) {
    std::uint8_t buf[16];
    CHECK_EQUAL(static_cast<ssize_t>(i + 1), ::recv(cli, buf, sizeof buf, 0));
  }
  ::close(srv);
  ::close(cli);
}
