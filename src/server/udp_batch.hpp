#pragma once
// The datagrams of one UDP wakeup: the receive side of one recvmmsg and the
// answers that go back with one sendmmsg. One syscall per batch instead of
// one per datagram each way: the syscalls are the cached-answer path's
// largest cost after the engine's own (docs/performance.md, "Answer cache").
// No I/O here: the listener makes the calls; this builds and reads the
// message headers they take.
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "dns/message.hpp"
#include "server/limits.hpp"

namespace nxdns::server {

// Where an answer goes, and from which local address it must leave: the
// query's PKTINFO, so that on a wildcard bind the answer leaves from the
// address the client asked (else the client drops it as from a stranger).
struct ReturnAddress {
  sockaddr_storage peer{};
  socklen_t peer_len = 0;
  bool have_v4_pktinfo = false;
  bool have_v6_pktinfo = false;
  in_pktinfo v4{};
  in6_pktinfo v6{};
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&peer); }
};

// The return address of a received datagram: its source, and the IPv4 or
// IPv6 PKTINFO among its control messages. The v4 ifindex is cleared (let
// routing pick the interface, keep the source address); the v6 one is kept
// (a link-local source needs it).
ReturnAddress return_address_of(const msghdr& received);

// Slots for one recvmmsg. Each slot's buffer holds a datagram one octet
// longer than dns::max_client_query, so a longer one is seen as too long
// (MSG_TRUNC is passed: msg_len is the datagram's real length) and answered
// FORMERR from its header.
class ReceiveBatch {
 public:
  static constexpr std::size_t capacity = 16;
  static constexpr std::size_t slot_bytes = dns::max_client_query + 1;
  ReceiveBatch();
  ReceiveBatch(const ReceiveBatch&) = delete;
  ReceiveBatch& operator=(const ReceiveBatch&) = delete;

  // Headers for `n` (<= capacity) datagrams, reset for the kernel to fill.
  mmsghdr* prepare(std::size_t n);
  // After recvmmsg returned: datagram i's real length, the bytes held (at
  // most slot_bytes) and its header.
  std::size_t length(std::size_t i) const { return headers_[i].msg_len; }
  dns::ByteView bytes(std::size_t i) const;
  const msghdr& header(std::size_t i) const { return headers_[i].msg_hdr; }

 private:
  static constexpr std::size_t control_bytes = 256;
  std::unique_ptr<std::uint8_t[]> buffers_;  // capacity * slot_bytes, never zeroed: the kernel writes
  std::array<iovec, capacity> iov_{};
  std::array<sockaddr_storage, capacity> names_{};
  std::array<std::array<std::uint8_t, control_bytes>, capacity> control_{};
  std::array<mmsghdr, capacity> headers_{};
};

// The answers of one wakeup, each with its return address, for one sendmmsg.
class SendBatch {
 public:
  // One wakeup answers at most the datagrams it read.
  static constexpr std::size_t capacity = static_cast<std::size_t>(udp_reads_per_wakeup);
  SendBatch() = default;
  SendBatch(const SendBatch&) = delete;
  SendBatch& operator=(const SendBatch&) = delete;

  bool full() const { return size_ == capacity; }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Precondition: !full().
  void add(const ReturnAddress& to, dns::Bytes&& answer);
  // The headers for sendmmsg, valid until the next add() or clear().
  std::span<mmsghdr> messages();
  void clear();

 private:
  struct Control {
    alignas(cmsghdr) std::uint8_t bytes[CMSG_SPACE(sizeof(in6_pktinfo))];
  };
  std::size_t size_ = 0;
  std::array<ReturnAddress, capacity> to_{};
  std::array<dns::Bytes, capacity> answers_{};
  std::array<iovec, capacity> iov_{};
  std::array<Control, capacity> control_{};
  std::array<mmsghdr, capacity> headers_{};
};

// Fills `msg` to send `bytes` to `to` from its PKTINFO source; `control`
// holds at least CMSG_SPACE(sizeof(in6_pktinfo)) aligned octets. Shared by
// the batch and the listener's single sends (answers from upstream).
void fill_send_header(msghdr& msg, iovec& iov, std::uint8_t* control, const ReturnAddress& to, dns::ByteView bytes);

}  // namespace nxdns::server
