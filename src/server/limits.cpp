#include "server/limits.hpp"

#include <sys/socket.h>

#include <random>

namespace nxdns::server {

static_assert(AF_INET6 == 10, "ListenerState::family assumes Linux's AF_INET6");

ClientLimitOptions default_client_limit_options(const RateLimit& rate) {
  ClientLimitOptions o;
  o.rate = rate;
  o.udp_share = udp_client_share;
  o.tcp_share = tcp_client_share;
  o.table_capacity = client_table_capacity;
  // Per process, so the sets addresses fall into cannot be predicted.
  std::random_device rd;
  o.hash_key = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  return o;
}

ListenerState::ListenerState() : clients(default_client_limit_options(default_rate_limit)) {}

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
    case Rejection::udp_access_refused: return "udp_access_refused";
    case Rejection::tcp_access_refused: return "tcp_access_refused";
    case Rejection::udp_client_share: return "udp_client_share";
    case Rejection::tcp_client_share: return "tcp_client_share";
    case Rejection::udp_client_rate: return "udp_client_rate";
    case Rejection::tcp_client_rate: return "tcp_client_rate";
    case Rejection::client_table_full: return "client_table_full";
    case Rejection::tcp_refused_budget: return "tcp_refused_budget";
  }
  return "unknown";
}

}  // namespace nxdns::server
