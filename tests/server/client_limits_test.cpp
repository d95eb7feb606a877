// Per-client fairness as pure logic under a fake clock: the token bucket,
// the fixed-size client table (claim, eviction, never evicting a busy
// record) and the share / rate verdicts the listeners act on.
#include "server/client_limits.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <string>

#include <CppUTest/TestHarness.h>

using nxdns::loop::TimePoint;
using nxdns::server::ClientKey;
using nxdns::server::ClientLimitOptions;
using nxdns::server::ClientLimits;
using nxdns::server::ClientTable;
using nxdns::server::ClientVerdict;
using nxdns::server::RateLimit;
using nxdns::server::TokenBucket;
using nxdns::server::full_bucket;
using nxdns::server::take_token;
using std::chrono::milliseconds;

namespace {

const TimePoint t0{std::chrono::seconds(1000)};

ClientKey v4(std::uint32_t host_order) {
  ClientKey k;
  const std::uint32_t n = htonl(host_order);
  std::memcpy(k.addr.data(), &n, 4);
  return k;
}

int takes(TokenBucket& b, const RateLimit& r, TimePoint now, int tries) {
  int got = 0;
  for (int i = 0; i < tries; ++i) got += take_token(b, r, now);
  return got;
}

}  // namespace

TEST_GROUP(TokenBucket){};

TEST(TokenBucket, TableOfRefills) {
  const RateLimit r{10, 20};  // 10/s, burst 20
  struct Step {
    int after_ms;  // since the previous step
    int tries;
    int want;
  } steps[] = {
      {0, 25, 20},     // a new client spends its whole burst at once
      {0, 1, 0},       // and then nothing
      {100, 2, 1},     // 100 ms at 10/s: one token
      {50, 1, 0},      // half a token is not a token
      {50, 1, 1},      // the halves add up
      {10'000, 30, 20},  // a long pause refills to the burst, not beyond
      {-5'000, 1, 0},  // a clock stepping back refills nothing (and breaks nothing)
      {5'100, 2, 1},   // and time moves on from the last refill
  };
  TokenBucket b = full_bucket(r, t0);
  TimePoint now = t0;
  int i = 0;
  for (const Step& s : steps) {
    now += milliseconds(s.after_ms);
    CHECK_EQUAL_TEXT(s.want, takes(b, r, now, s.tries), ("step " + std::to_string(i++)).c_str());
  }
}

TEST(TokenBucket, ZeroRateMeansNoLimit) {
  const RateLimit off{0, 0};
  TokenBucket b = full_bucket(off, t0);
  CHECK_EQUAL(100000, takes(b, off, t0, 100000));
}

TEST_GROUP(ClientTable){};

TEST(ClientTable, CapacityIsFixedAndRoundedToWholeSets) {
  ClientTable t(100, 1);
  CHECK_EQUAL(96u, t.capacity());
  const RateLimit r{10, 10};
  // A spoofed-source flood: ten thousand addresses, the table stays at its size.
  for (std::uint32_t i = 0; i < 10000; ++i) CHECK(t.find_or_claim(v4(0x0A000000 + i), t0, r) != nullptr);
  CHECK_EQUAL(96u, t.size());
  CHECK_EQUAL(10000u - 96u, t.evictions());
}

TEST(ClientTable, EvictsTheLeastRecentlySeenIdleRecordOfTheSet) {
  // One set only: capacity == ways_per_set.
  ClientTable t(ClientTable::ways_per_set, 7);
  const RateLimit r{10, 10};
  for (std::uint32_t i = 0; i < ClientTable::ways_per_set; ++i)
    t.find_or_claim(v4(i + 1), t0 + milliseconds(i), r);
  // Client 1 is seen again: client 2 becomes the oldest.
  t.find_or_claim(v4(1), t0 + milliseconds(100), r);
  t.find_or_claim(v4(99), t0 + milliseconds(101), r);
  CHECK(t.find(v4(1)) != nullptr);
  CHECK(t.find(v4(2)) == nullptr);
  CHECK(t.find(v4(99)) != nullptr);
}

TEST(ClientTable, NeverEvictsABusyRecordAndSaysSoWhenTheSetIsFull) {
  ClientTable t(ClientTable::ways_per_set, 7);
  const RateLimit r{10, 10};
  for (std::uint32_t i = 0; i < ClientTable::ways_per_set; ++i) t.find_or_claim(v4(i + 1), t0, r)->udp_in_flight = 1;
  CHECK(t.find_or_claim(v4(99), t0, r) == nullptr);
  // One of them finishes: the newcomer takes its record, the busy ones stay.
  t.find(v4(3))->udp_in_flight = 0;
  CHECK(t.find_or_claim(v4(99), t0, r) != nullptr);
  CHECK(t.find(v4(3)) == nullptr);
  for (std::uint32_t i : {1u, 2u, 4u, 5u, 6u, 7u, 8u}) CHECK(t.find(v4(i)) != nullptr);
}

TEST_GROUP(ClientLimits){};

namespace {
ClientLimitOptions opts(RateLimit rate, std::uint32_t udp_share, std::uint32_t tcp_share) {
  ClientLimitOptions o;
  o.rate = rate;
  o.udp_share = udp_share;
  o.tcp_share = tcp_share;
  o.table_capacity = 64;
  o.hash_key = 42;
  return o;
}
}  // namespace

TEST(ClientLimits, UdpShareBindsOneClientOnly) {
  ClientLimits cl(opts({1000, 1000}, 3, 2));
  const ClientKey hog = v4(0x0A000001), other = v4(0x0A000002);
  for (int i = 0; i < 3; ++i) {
    CHECK(ClientVerdict::admit == cl.admit_udp_query(hog, t0));
    cl.hold_udp(hog);
  }
  CHECK(ClientVerdict::over_share == cl.admit_udp_query(hog, t0));
  CHECK(ClientVerdict::admit == cl.admit_udp_query(other, t0));
  cl.release_udp(hog);
  CHECK(ClientVerdict::admit == cl.admit_udp_query(hog, t0));
}

TEST(ClientLimits, RateIsPerClientAndShareRefusalsSpendNoToken) {
  ClientLimits cl(opts({10, 5}, 1, 2));
  const ClientKey flooder = v4(0x0A000001), quiet = v4(0x0A000002);
  cl.hold_udp(flooder);  // no record yet: nothing to hold (never underflows later)
  for (int i = 0; i < 5; ++i) CHECK(ClientVerdict::admit == cl.admit_udp_query(flooder, t0));
  CHECK(ClientVerdict::over_rate == cl.admit_udp_query(flooder, t0));
  CHECK(ClientVerdict::over_rate == cl.admit_tcp_query(flooder, t0));  // one bucket for both protocols
  CHECK(ClientVerdict::admit == cl.admit_udp_query(quiet, t0));
  // Over its share, a query is refused without spending the client's tokens.
  cl.hold_udp(quiet);
  for (int i = 0; i < 10; ++i) CHECK(ClientVerdict::over_share == cl.admit_udp_query(quiet, t0));
  cl.release_udp(quiet);
  for (int i = 0; i < 4; ++i) CHECK(ClientVerdict::admit == cl.admit_udp_query(quiet, t0));
  CHECK(ClientVerdict::over_rate == cl.admit_udp_query(quiet, t0));
  // 100 ms later the flooder has one token again.
  CHECK(ClientVerdict::admit == cl.admit_udp_query(flooder, t0 + milliseconds(100)));
  CHECK(ClientVerdict::over_rate == cl.admit_udp_query(flooder, t0 + milliseconds(100)));
}

TEST(ClientLimits, TcpConnectionShare) {
  ClientLimits cl(opts({0, 0}, 1, 2));
  const ClientKey a = v4(0x0A000001), b = v4(0x0A000002);
  CHECK(ClientVerdict::admit == cl.admit_tcp_connection(a, t0));
  CHECK(ClientVerdict::admit == cl.admit_tcp_connection(a, t0));
  CHECK(ClientVerdict::over_share == cl.admit_tcp_connection(a, t0));
  CHECK(ClientVerdict::admit == cl.admit_tcp_connection(b, t0));
  cl.release_tcp_connection(a);
  CHECK(ClientVerdict::admit == cl.admit_tcp_connection(a, t0));
  // Releases never underflow.
  for (int i = 0; i < 5; ++i) cl.release_tcp_connection(b);
  CHECK(ClientVerdict::admit == cl.admit_tcp_connection(b, t0));
}

TEST(ClientLimits, MappedIpv6IsTheSameClientAsIpv4) {
  sockaddr_in v4a{};
  v4a.sin_family = AF_INET;
  ::inet_pton(AF_INET, "192.168.1.7", &v4a.sin_addr);
  sockaddr_in6 mapped{};
  mapped.sin6_family = AF_INET6;
  ::inet_pton(AF_INET6, "::ffff:192.168.1.7", &mapped.sin6_addr);
  CHECK(nxdns::server::client_key(reinterpret_cast<sockaddr*>(&v4a)) ==
        nxdns::server::client_key(reinterpret_cast<sockaddr*>(&mapped)));
}
