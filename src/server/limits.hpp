#pragma once
// Compiled listener caps and the counters that show them biting.
#include <array>
#include <cstddef>
#include <cstdint>

#include "dns/message.hpp"
#include "loop/scheduler.hpp"
#include "server/access_control.hpp"
#include "server/client_limits.hpp"

namespace nxdns::server {

// Per address family. Sized for a household's worst moment (the WAN comes
// back and every device retries at once), not for a calm one: queries past
// the upstreams' own concurrency wait in the pool's FIFO under the total
// budget, which costs memory, not refusals: a few KB of RSS per query in
// flight, so a full cap stays within a few percent of a 1 GiB Pi's memory
// (docs/reference/config.md, "Limits", gives the figure bench/admission_rss.sh
// measures).
inline constexpr std::uint32_t udp_in_flight_cap = 4096;
// A connection costs a descriptor and two bufferevent buffers (a few KB
// idle; at most max_tcp_output_backlog of unread answers); 256 per
// family stays well inside systemd's default soft limit of 1024 descriptors
// together with the upstream sessions (8 per upstream).
inline constexpr std::uint32_t tcp_connection_cap = 256;
// No single client address may hold more than this share of either cap:
// one misbehaving device leaves the others three quarters of the UDP slots
// and seven eighths of the TCP connections. A stub resolver needs a handful
// of each; the UDP share still admits a 500-outstanding load test from one
// address (bench/outstanding_500.sh).
inline constexpr std::uint32_t udp_client_share = udp_in_flight_cap / 4;
inline constexpr std::uint32_t tcp_client_share = tcp_connection_cap / 8;
// Connections that clients outside access_control may hold together, per
// family (within the cap). Such a connection carries one REFUSED and closes,
// so a client that only needs to learn it is refused holds one for a round
// trip; one that connects and stays silent holds it until the idle timeout.
// Either way, however many connections a refused host opens, the allowed
// clients keep the rest of the cap.
inline constexpr std::uint32_t tcp_refused_budget = 8;
// Clients tracked for rate and share (8-way sets). Larger than the busy
// records the caps allow in practice, so new clients nearly always find room;
// about 64 bytes each: 512 KiB, fixed at start.
inline constexpr std::size_t client_table_capacity = 8192;
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
  udp_access_refused,     // client outside access_control: answered REFUSED
  tcp_access_refused,     // client outside access_control: one query answered REFUSED, then closed
  udp_client_share,       // client holds its share of UDP slots: answered REFUSED
  tcp_client_share,       // client holds its share of TCP connections: closed at once
  udp_client_rate,        // client over its query rate: answered REFUSED
  tcp_client_rate,        // client over its query rate: answered REFUSED
  client_table_full,      // no room to track a new client (all of its set busy): REFUSED / closed
  tcp_refused_budget,     // client outside access_control while refused clients hold their budget: closed at once
};
inline constexpr std::size_t rejection_count = static_cast<std::size_t>(Rejection::tcp_refused_budget) + 1;
const char* describe(Rejection r);

// The compiled shares and table size with `rate` and a random hash key.
ClientLimitOptions default_client_limit_options(const RateLimit& rate);

struct FamilyState {
  std::uint32_t udp_in_flight = 0;
  std::uint32_t tcp_connections = 0;
  // Of those, accepted from clients outside access_control (tcp_refused_budget).
  std::uint32_t tcp_refused_connections = 0;
};

// Shared by every listener of the daemon.
struct ListenerState {
  ListenerState();
  AccessControl access;
  ClientLimits clients;
  FamilyState v4, v6;
  std::array<std::uint64_t, rejection_count> rejections{};
  std::uint64_t tcp_accepted = 0;

  FamilyState& family(int af) { return af == 10 /* AF_INET6 */ ? v6 : v4; }
  void reject(Rejection r) { ++rejections[static_cast<std::size_t>(r)]; }
  std::uint64_t rejected(Rejection r) const { return rejections[static_cast<std::size_t>(r)]; }
};

}  // namespace nxdns::server
