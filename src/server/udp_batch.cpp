#include "server/udp_batch.hpp"

#include <algorithm>
#include <cstring>

namespace nxdns::server {

namespace {

// Makes `msg` carry one PKTINFO control message, so the answer leaves from
// the address the query arrived at. `control` must hold CMSG_SPACE(sizeof T).
template <class Pktinfo>
void set_source(msghdr& msg, std::uint8_t* control, int level, int type, const Pktinfo& info) {
  std::memset(control, 0, CMSG_SPACE(sizeof(Pktinfo)));
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(Pktinfo));
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = level;
  c->cmsg_type = type;
  c->cmsg_len = CMSG_LEN(sizeof(Pktinfo));
  std::memcpy(CMSG_DATA(c), &info, sizeof info);
}

}  // namespace

ReturnAddress return_address_of(const msghdr& received) {
  ReturnAddress to;
  const std::size_t name_len = std::min<std::size_t>(received.msg_namelen, sizeof to.peer);
  if (received.msg_name) std::memcpy(&to.peer, received.msg_name, name_len);
  to.peer_len = static_cast<socklen_t>(name_len);
  auto& msg = const_cast<msghdr&>(received);  // CMSG_NXTHDR takes a non-const header; nothing is written
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      std::memcpy(&to.v4, CMSG_DATA(c), sizeof to.v4);
      to.v4.ipi_ifindex = 0;  // let routing pick the interface; keep the source address
      to.have_v4_pktinfo = true;
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      std::memcpy(&to.v6, CMSG_DATA(c), sizeof to.v6);
      to.have_v6_pktinfo = true;  // ifindex kept: link-local sources need it
    }
  }
  return to;
}

void fill_send_header(msghdr& msg, iovec& iov, std::uint8_t* control, const ReturnAddress& to, dns::ByteView bytes) {
  iov = iovec{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
  msg = msghdr{};
  msg.msg_name = const_cast<sockaddr_storage*>(&to.peer);
  msg.msg_namelen = to.peer_len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (to.have_v4_pktinfo) {
    set_source(msg, control, IPPROTO_IP, IP_PKTINFO, to.v4);
  } else if (to.have_v6_pktinfo) {
    set_source(msg, control, IPPROTO_IPV6, IPV6_PKTINFO, to.v6);
  }
}

ReceiveBatch::ReceiveBatch() : buffers_(new std::uint8_t[capacity * slot_bytes]) {
  // The pointers never change: set once, so a wakeup only resets what the
  // kernel writes back (prepare).
  for (std::size_t i = 0; i < capacity; ++i) {
    iov_[i] = iovec{buffers_.get() + i * slot_bytes, slot_bytes};
    msghdr& m = headers_[i].msg_hdr;
    m.msg_name = &names_[i];
    m.msg_iov = &iov_[i];
    m.msg_iovlen = 1;
    m.msg_control = control_[i].data();
  }
}

mmsghdr* ReceiveBatch::prepare(std::size_t n) {
  // recvmmsg writes each header's name and control lengths, its flags and
  // msg_len; the iovecs it only reads.
  for (std::size_t i = 0; i < n && i < capacity; ++i) {
    msghdr& m = headers_[i].msg_hdr;
    m.msg_namelen = sizeof names_[i];
    m.msg_controllen = control_bytes;
    m.msg_flags = 0;
    headers_[i].msg_len = 0;
  }
  return headers_.data();
}

dns::ByteView ReceiveBatch::bytes(std::size_t i) const {
  return dns::ByteView(buffers_.get() + i * slot_bytes, std::min<std::size_t>(headers_[i].msg_len, slot_bytes));
}

void SendBatch::add(const ReturnAddress& to, dns::Bytes&& answer) {
  to_[size_] = to;
  answers_[size_] = std::move(answer);
  ++size_;
}

std::span<mmsghdr> SendBatch::messages() {
  for (std::size_t i = 0; i < size_; ++i) {
    fill_send_header(headers_[i].msg_hdr, iov_[i], control_[i].bytes, to_[i], answers_[i]);
    headers_[i].msg_len = 0;
  }
  return std::span<mmsghdr>(headers_.data(), size_);
}

void SendBatch::clear() {
  // The answers' storage goes with them; the next wakeup moves new ones in.
  for (std::size_t i = 0; i < size_; ++i) answers_[i] = dns::Bytes{};
  size_ = 0;
}

}  // namespace nxdns::server
