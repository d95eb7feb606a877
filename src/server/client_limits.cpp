#include "server/client_limits.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace nxdns::server {

TokenBucket full_bucket(const RateLimit& limit, loop::TimePoint now) {
  return TokenBucket{static_cast<double>(limit.burst), now};
}

bool take_token(TokenBucket& b, const RateLimit& limit, loop::TimePoint now) {
  if (!limit.enabled()) return true;
  if (now > b.refilled) {
    const double seconds = std::chrono::duration<double>(now - b.refilled).count();
    b.tokens = std::min(static_cast<double>(limit.burst), b.tokens + seconds * limit.per_second);
    b.refilled = now;
  }
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

ClientKey client_key(const sockaddr* peer) {
  ClientKey k;
  if (peer->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(peer);
    static constexpr std::uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    if (std::memcmp(in6->sin6_addr.s6_addr, v4_mapped, sizeof v4_mapped) == 0) {
      std::memcpy(k.addr.data(), in6->sin6_addr.s6_addr + 12, 4);
    } else {
      k.family = AF_INET6;
      std::memcpy(k.addr.data(), in6->sin6_addr.s6_addr, 16);
    }
  } else if (peer->sa_family == AF_INET) {
    std::memcpy(k.addr.data(), &reinterpret_cast<const sockaddr_in*>(peer)->sin_addr, 4);
  }
  return k;
}

ClientTable::ClientTable(std::size_t capacity, std::uint64_t hash_key)
    : records_(std::max<std::size_t>(ways_per_set, capacity / ways_per_set * ways_per_set)), hash_key_(hash_key) {}

std::size_t ClientTable::set_of(const ClientKey& key) const {
  // Keyed multiply-xorshift over the address (splitmix64 finaliser per word):
  // the key is random per process, so which addresses share a set cannot be
  // chosen from outside.
  auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::uint64_t lo = 0, hi = 0;
  std::memcpy(&lo, key.addr.data(), 8);
  std::memcpy(&hi, key.addr.data() + 8, 8);
  const std::uint64_t h = mix(mix(hash_key_ ^ lo ^ key.family) + hi);
  return static_cast<std::size_t>(h % (records_.size() / ways_per_set));
}

const ClientRecord* ClientTable::find(const ClientKey& key) const {
  const ClientRecord* set = &records_[set_of(key) * ways_per_set];
  for (std::size_t i = 0; i < ways_per_set; ++i)
    if (set[i].used && set[i].key == key) return &set[i];
  return nullptr;
}

ClientRecord* ClientTable::find(const ClientKey& key) {
  return const_cast<ClientRecord*>(std::as_const(*this).find(key));
}

ClientRecord* ClientTable::find_or_claim(const ClientKey& key, loop::TimePoint now, const RateLimit& limit) {
  ClientRecord* set = &records_[set_of(key) * ways_per_set];
  ClientRecord* free = nullptr;
  ClientRecord* oldest_idle = nullptr;
  for (std::size_t i = 0; i < ways_per_set; ++i) {
    ClientRecord& r = set[i];
    if (!r.used) {
      if (!free) free = &r;
      continue;
    }
    if (r.key == key) {
      r.last_seen = now;
      return &r;
    }
    if (!r.busy() && (!oldest_idle || r.last_seen < oldest_idle->last_seen)) oldest_idle = &r;
  }
  ClientRecord* r = free;
  if (!r) {
    if (!oldest_idle) return nullptr;
    r = oldest_idle;
    ++evictions_;
  } else {
    ++used_;
  }
  *r = ClientRecord{};
  r->used = true;
  r->key = key;
  r->last_seen = now;
  r->bucket = full_bucket(limit, now);
  return r;
}

ClientLimits::ClientLimits(const ClientLimitOptions& opts) : opts_(opts), table_(opts.table_capacity, opts.hash_key) {}

ClientVerdict ClientLimits::admit_udp_query(const ClientKey& key, loop::TimePoint now) {
  ClientRecord* r = table_.find_or_claim(key, now, opts_.rate);
  if (!r) return ClientVerdict::table_full;
  // The share first: a query refused for the share spends no token.
  if (r->udp_in_flight >= opts_.udp_share) return ClientVerdict::over_share;
  if (!take_token(r->bucket, opts_.rate, now)) return ClientVerdict::over_rate;
  return ClientVerdict::admit;
}

void ClientLimits::hold_udp(const ClientKey& key) {
  if (ClientRecord* r = table_.find(key)) ++r->udp_in_flight;
}

void ClientLimits::release_udp(const ClientKey& key) {
  ClientRecord* r = table_.find(key);
  if (r && r->udp_in_flight > 0) --r->udp_in_flight;
}

ClientVerdict ClientLimits::admit_tcp_query(const ClientKey& key, loop::TimePoint now) {
  ClientRecord* r = table_.find_or_claim(key, now, opts_.rate);
  if (!r) return ClientVerdict::table_full;
  return take_token(r->bucket, opts_.rate, now) ? ClientVerdict::admit : ClientVerdict::over_rate;
}

ClientVerdict ClientLimits::admit_tcp_connection(const ClientKey& key, loop::TimePoint now) {
  ClientRecord* r = table_.find_or_claim(key, now, opts_.rate);
  if (!r) return ClientVerdict::table_full;
  if (r->tcp_connections >= opts_.tcp_share) return ClientVerdict::over_share;
  ++r->tcp_connections;
  return ClientVerdict::admit;
}

void ClientLimits::release_tcp_connection(const ClientKey& key) {
  ClientRecord* r = table_.find(key);
  if (r && r->tcp_connections > 0) --r->tcp_connections;
}

}  // namespace nxdns::server
