// The DoH capacity rule (doh_capacity.hpp) as a table.
#include "upstream/doh_capacity.hpp"

#include <cstdio>

#include "upstream/transport.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::upstream::doh_capacity;
using nxdns::upstream::DohProtocol;
using nxdns::upstream::inferred_stream_limit;

TEST_GROUP(DohCapacity){};

TEST(DohCapacity, ConnectionsTimesStreamsCappedAtTheEntryCap) {
  struct Row {
    DohProtocol protocol;
    std::size_t stream_limit;
    std::size_t want;
  };
  const Row rows[] = {
      {DohProtocol::unknown, 0, 8},     // cold: one request per slot until the protocol shows
      {DohProtocol::unknown, 100, 8},   // a stale limit does not matter before the protocol is known
      {DohProtocol::http1, 0, 8},       // 8 connections x 1 request
      {DohProtocol::http1, 100, 8},
      {DohProtocol::http2, 0, 64},      // no limit seen: the entry cap
      {DohProtocol::http2, 1, 8},       // 8 x 1
      {DohProtocol::http2, 2, 16},      // 8 x 2
      {DohProtocol::http2, 7, 56},
      {DohProtocol::http2, 8, 64},
      {DohProtocol::http2, 100, 64},    // never above max_in_flight_per_entry
  };
  for (const auto& r : rows) {
    const std::size_t got = doh_capacity(r.protocol, r.stream_limit);
    if (got != r.want) {
      char msg[128];
      std::snprintf(msg, sizeof msg, "protocol %d, stream limit %zu: want %zu, got %zu", static_cast<int>(r.protocol),
                    r.stream_limit, r.want, got);
      FAIL(msg);
    }
  }
}

TEST(DohCapacity, StreamLimitIsInferredOnlyWhenEverySlotHasAConnection) {
  struct Row {
    std::size_t running, open, want;
  };
  const Row rows[] = {
      {0, 8, 0},    // nothing running: nothing learned
      {16, 8, 2},   // 8 connections x 2 streams, curl holding the rest
      {15, 8, 2},   // a stream between answers: rounding up never overstates (15 <= 8 x limit)
      {8, 8, 1},    // one stream each
      {9, 8, 2},
      {64, 8, 8},
      {30, 7, 0},   // a slot is free: curl would dial, not hold; nothing learned
      {2, 1, 0},    // one connection (e.g. another closing after GOAWAY): nothing learned
  };
  for (const auto& r : rows) {
    const std::size_t got = inferred_stream_limit(r.running, r.open);
    if (got != r.want) {
      char msg[128];
      std::snprintf(msg, sizeof msg, "running %zu on %zu connections: want %zu, got %zu", r.running, r.open, r.want,
                    got);
      FAIL(msg);
    }
  }
}
