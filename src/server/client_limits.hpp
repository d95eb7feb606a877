#pragma once
// Per-client fairness: a token bucket per client address (query rate with a
// burst allowance) and caps on the share of the UDP in-flight slots and TCP
// connections one address may hold, kept in a fixed-size table so a flood
// from spoofed sources cannot grow memory (docs/reference/config.md,
// client_limits). Pure: time comes in as an argument, nothing does I/O.
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "loop/scheduler.hpp"

namespace nxdns::server {

// Sustained queries per second and the burst a client may spend at once.
// per_second == 0 turns the limit off.
struct RateLimit {
  std::uint32_t per_second = 0;
  std::uint32_t burst = 0;
  bool enabled() const { return per_second > 0; }
};

// Generous for a busy household device: a browser opening a heavy page asks
// a few hundred names within a second, and a device whose network just came
// back retries everything at once. Stub resolvers send nowhere near a
// sustained 300/s.
inline constexpr RateLimit default_rate_limit{300, 3000};

struct TokenBucket {
  double tokens = 0;
  loop::TimePoint refilled{};
};

// A new client starts with a full bucket.
TokenBucket full_bucket(const RateLimit& limit, loop::TimePoint now);
// Refills for the time since the last call (capped at the burst), then takes
// one token if there is one. A clock that steps back refills nothing.
bool take_token(TokenBucket& bucket, const RateLimit& limit, loop::TimePoint now);

// An exact client address; IPv4-mapped IPv6 is folded to IPv4. IPv6 is not
// aggregated by /64: a household LAN is one /64, so that would make the whole
// house one client.
struct ClientKey {
  std::array<std::uint8_t, 16> addr{};
  std::uint8_t family = AF_INET;
  bool operator==(const ClientKey&) const = default;
};
ClientKey client_key(const sockaddr* peer);

struct ClientRecord {
  ClientKey key;
  bool used = false;
  loop::TimePoint last_seen{};
  TokenBucket bucket;
  std::uint32_t udp_in_flight = 0;
  std::uint32_t tcp_connections = 0;
  // A busy record holds counts that a later release must find: never evicted.
  bool busy() const { return udp_in_flight > 0 || tcp_connections > 0; }
};

// Fixed capacity, set-associative (ways_per_set records per set, the set
// chosen by a keyed hash so a remote sender cannot aim at one set). A new
// client takes a free record of its set, else evicts the set's least recently
// seen idle record (losing only that client's bucket, which refills anyway);
// when every record of the set is busy the new client is not admitted.
class ClientTable {
 public:
  static constexpr std::size_t ways_per_set = 8;
  ClientTable(std::size_t capacity, std::uint64_t hash_key);

  ClientRecord* find(const ClientKey& key);
  const ClientRecord* find(const ClientKey& key) const;
  ClientRecord* find_or_claim(const ClientKey& key, loop::TimePoint now, const RateLimit& limit);

  std::size_t capacity() const { return records_.size(); }
  std::size_t size() const { return used_; }
  std::uint64_t evictions() const { return evictions_; }

 private:
  std::size_t set_of(const ClientKey& key) const;

  std::vector<ClientRecord> records_;
  std::uint64_t hash_key_;
  std::size_t used_ = 0;
  std::uint64_t evictions_ = 0;
};

enum class ClientVerdict : std::uint8_t { admit, over_rate, over_share, table_full };

struct ClientLimitOptions {
  RateLimit rate = default_rate_limit;
  std::uint32_t udp_share = 0;  // in-flight UDP queries per client
  std::uint32_t tcp_share = 0;  // open TCP connections per client
  std::size_t table_capacity = 0;
  std::uint64_t hash_key = 0;
};

// The decisions the listeners ask for, one call per event. A client is
// identified by its address only (ports change per query).
class ClientLimits {
 public:
  explicit ClientLimits(const ClientLimitOptions& opts);

  // A UDP query: spends a token, then checks the client's in-flight share.
  // On admit the caller calls hold_udp once the query is really in flight.
  ClientVerdict admit_udp_query(const ClientKey& key, loop::TimePoint now);
  void hold_udp(const ClientKey& key);
  void release_udp(const ClientKey& key);
  // A query on an already accepted TCP connection: spends a token.
  ClientVerdict admit_tcp_query(const ClientKey& key, loop::TimePoint now);
  // A new TCP connection: checks the client's connection share and holds it.
  ClientVerdict admit_tcp_connection(const ClientKey& key, loop::TimePoint now);
  void release_tcp_connection(const ClientKey& key);

  // A reload's new rate: the table and its held counts stay (a release
  // must find what it holds), each bucket refills at the new rate from the
  // tokens it has.
  void set_rate(const RateLimit& rate) { opts_.rate = rate; }

  const ClientTable& table() const { return table_; }
  const ClientLimitOptions& options() const { return opts_; }

 private:
  ClientLimitOptions opts_;
  ClientTable table_;
};

}  // namespace nxdns::server
