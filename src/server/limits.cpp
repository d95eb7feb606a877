#include "server/limits.hpp"

#include <sys/socket.h>

namespace nxdns::server {

static_assert(AF_INET6 == 10, "ListenerState::family assumes Linux's AF_INET6");

const char* describe(Rejection r) {
  switch (r) {
    case Rejection::udp_in_flight_cap: return "udp_in_flight_cap";
    case Rejection::tcp_connection_cap: return "tcp_connection_cap";
    case Rejection::tcp_frame_too_large: return "tcp_frame_too_large";
    case Rejection::tcp_zero_length_frame: return "tcp_zero_length_frame";
    case Rejection::tcp_idle_timeout: return "tcp_idle_timeout";
    case Rejection::tcp_write_stalled: return "tcp_write_stalled";
    case Rejection::udp_truncated_datagram: return "udp_truncated_datagram";
    case Rejection::send_failed: return "send_failed";
    case Rejection::accept_failed: return "accept_failed";
    case Rejection::receive_failed: return "receive_failed";
    case Rejection::udp_query_too_large: return "udp_query_too_large";
  }
  return "unknown";
}

}  // namespace nxdns::server
