// WireIdBatch: one generator call per 64 IDs, IDs handed out in the order
// drawn and never twice, a failed draw is reported and retried.
#include "upstream/wire_id_batch.hpp"

#include <cstring>
#include <vector>

#include <CppUTest/TestHarness.h>

using nxdns::upstream::WireIdBatch;

namespace {

// A generator that writes 0, 1, 2, ... as 16-bit values and counts calls.
struct CountingFill {
  int calls = 0;
  std::uint16_t next_value = 0;
  bool fail = false;
  WireIdBatch::Fill fn() {
    return [this](void* out, std::size_t n) {
      ++calls;
      if (fail) return false;
      std::vector<std::uint16_t> v(n / 2);
      for (auto& x : v) x = next_value++;
      std::memcpy(out, v.data(), n);
      return true;
    };
  }
};

}  // namespace

TEST_GROUP(WireIdBatch){};

TEST(WireIdBatch, OneGeneratorCallServesABatchOfIds) {
  CountingFill g;
  WireIdBatch ids(g.fn());
  for (std::uint16_t i = 0; i < WireIdBatch::batch; ++i) {
    const auto id = ids.next();
    CHECK_TRUE(id.has_value());
    UNSIGNED_LONGS_EQUAL(i, *id);
  }
  LONGS_EQUAL(1, g.calls);
  // The 65th ID needs a new draw, and is a fresh value, not a reused one.
  const auto more = ids.next();
  CHECK_TRUE(more.has_value());
  UNSIGNED_LONGS_EQUAL(WireIdBatch::batch, *more);
  LONGS_EQUAL(2, g.calls);
}

TEST(WireIdBatch, NoGeneratorCallBeforeTheFirstId) {
  CountingFill g;
  WireIdBatch ids(g.fn());
  LONGS_EQUAL(0, g.calls);
}

TEST(WireIdBatch, AFailedDrawGivesNoIdAndIsRetriedNextTime) {
  CountingFill g;
  g.fail = true;
  WireIdBatch ids(g.fn());
  CHECK_FALSE(ids.next().has_value());
  CHECK_FALSE(ids.next().has_value());
  LONGS_EQUAL(2, g.calls);
  g.fail = false;
  const auto id = ids.next();
  CHECK_TRUE(id.has_value());
  UNSIGNED_LONGS_EQUAL(0, *id);
  LONGS_EQUAL(3, g.calls);
}
