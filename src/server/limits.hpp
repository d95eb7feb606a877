#pragma once
// Compiled listener caps and the counters that show them biting.
#include <array>
#include <cstddef>
#include <cstdint>

#include "dns/message.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::server {

// Per address family. 64 concurrent UDP queries comfortably cover a
// household burst (the field repro is 30) and bound memory on a Pi.
inline constexpr std::uint32_t udp_in_flight_cap = 64;
inline constexpr std::uint32_t tcp_connection_cap = 64;
// RFC 7766 allows frames up to 65535 octets, but a query never needs more
// than a name, a question and a small OPT: larger frames are hostile. The
// same cap as UDP's (dns::max_client_query, where the figure is argued).
inline constexpr std::size_t max_tcp_query_frame = dns::max_client_query;
// Pipelined queries one TCP connection may have outstanding before we stop
// reading from it (RFC 7766 §6.2.1.1 lets servers bound this).
inline constexpr std::size_t max_pending_per_connection = 16;
// RFC 7766 §6.2.3: servers close idle connections; tens of seconds at most.
inline constexpr loop::Duration tcp_idle_timeout = std::chrono::seconds(10);
// A client that does not read its answers loses the connection.
inline constexpr loop::Duration tcp_write_stall_timeout = std::chrono::seconds(10);
inline constexpr std::size_t max_tcp_output_backlog = 256 * 1024;
// Datagrams read per readiness callback: bounds how long one busy socket can
// hold the loop before timers and other sockets get their turn.
inline constexpr int udp_reads_per_wakeup = 64;
// After accept() fails for lack of descriptors, stop accepting this long
// instead of spinning on a listening socket that stays readable.
inline constexpr loop::Duration accept_pause = std::chrono::milliseconds(100);

enum class Rejection : std::uint8_t {
  udp_in_flight_cap = 0,  // answered REFUSED
  tcp_connection_cap,     // accepted and closed at once
  tcp_frame_too_large,    // connection closed
  tcp_zero_length_frame,  // connection closed
  tcp_idle_timeout,       // connection closed
  tcp_write_stalled,      // connection closed
  udp_truncated_datagram, // larger than our receive buffer: dropped
  send_failed,            // sendmsg/bufferevent write failed: answer lost
  accept_failed,          // accept() error (EMFILE, ENFILE, ...)
  receive_failed,         // recvmsg error other than EAGAIN/EINTR
  udp_query_too_large,    // datagram over dns::max_client_query: answered FORMERR
};
inline constexpr std::size_t rejection_count = static_cast<std::size_t>(Rejection::udp_query_too_large) + 1;
const char* describe(Rejection r);

struct FamilyState {
  std::uint32_t udp_in_flight = 0;
  std::uint32_t tcp_connections = 0;
};

// Shared by every listener of the daemon.
struct ListenerState {
  FamilyState v4, v6;
  std::array<std::uint64_t, rejection_count> rejections{};
  std::uint64_t tcp_accepted = 0;

  FamilyState& family(int af) { return af == 10 /* AF_INET6 */ ? v6 : v4; }
  void reject(Rejection r) { ++rejections[static_cast<std::size_t>(r)]; }
  std::uint64_t rejected(Rejection r) const { return rejections[static_cast<std::size_t>(r)]; }
};

}  // namespace nxdns::server
