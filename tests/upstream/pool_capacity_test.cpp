// The pool's admission cap follows the transport's real capacity
// (Transport::capacity), so that exchanges a transport cannot run yet wait
// in the pool's visible FIFO, not inside the transport (in curl's hidden
// pending list behind CURLMOPT_MAX_HOST_CONNECTIONS).
#include <memory>
#include <optional>
#include <vector>

#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {

struct CapacityHarness {
  test::FakeScheduler sched;
  test::FakeTransport* fake = nullptr;
  std::unique_ptr<upstream::Pool> pool;
  std::vector<std::optional<upstream::PoolOutcome>> outcomes;

  explicit CapacityHarness(std::size_t capacity) {
    auto t = std::make_unique<test::FakeTransport>();
    fake = t.get();
    fake->capacity_now = capacity;
    std::vector<upstream::EntrySpec> specs;
    specs.push_back(upstream::EntrySpec{0, "https://doh.test/dns-query", 0, std::move(t)});
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), upstream::PoolOptions{});
  }
  void submit(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t slot = outcomes.size();
      outcomes.emplace_back();
      dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
      pool->submit(std::move(q), [this, slot](upstream::PoolOutcome&& o) { outcomes[slot] = std::move(o); });
    }
  }
  upstream::EntrySnapshot snap() { return pool->snapshot().at(0); }
};

}  // namespace

TEST_GROUP(PoolCapacity){};

TEST(PoolCapacity, AdmissionStopsAtTheTransportsCapacityAndTheRestQueueVisibly) {
  CapacityHarness h(8);  // DoH over HTTP/1.1: 8 connections x 1 exchange
  h.submit(30);
  CHECK_EQUAL(8u, h.fake->live());
  auto s = h.snap();
  CHECK_EQUAL(8u, s.in_flight);
  CHECK_EQUAL(8u, s.capacity);
  CHECK_EQUAL(22u, s.queue_depth);
  // Each answer lets exactly one waiter in, in order; never more than 8 run.
  while (h.fake->answer_oldest()) CHECK_TRUE(h.fake->live() <= 8);
  h.sched.run_ready();
  CHECK_EQUAL(8u, h.fake->peak());
  CHECK_EQUAL(22u, h.snap().queued_total);
  for (auto& o : h.outcomes) CHECK_TRUE(o && o->ok);
}

TEST(PoolCapacity, GrowthPumpsTheFifoWithoutWaitingForACompletion) {
  CapacityHarness h(8);
  h.submit(30);
  CHECK_EQUAL(22u, h.snap().queue_depth);
  h.fake->set_capacity(16);  // e.g. HTTP/2 learned: streams multiplex
  CHECK_EQUAL(16u, h.fake->live());
  CHECK_EQUAL(14u, h.snap().queue_depth);
  h.fake->set_capacity(64);
  CHECK_EQUAL(30u, h.fake->live());
  CHECK_EQUAL(0u, h.snap().queue_depth);
}

TEST(PoolCapacity, ShrinkingNeverDisturbsRunningExchangesAndHoldsNewOnes) {
  CapacityHarness h(16);
  h.submit(20);
  CHECK_EQUAL(16u, h.fake->live());
  h.fake->set_capacity(4);  // a stream limit learned
  CHECK_EQUAL(16u, h.fake->live());
  CHECK_EQUAL(0u, h.fake->cancelled());
  // Completions drain in-flight down to the new cap before anyone else is let in.
  for (int i = 0; i < 12; ++i) CHECK_TRUE(h.fake->answer_oldest());
  CHECK_EQUAL(4u, h.fake->live());
  CHECK_EQUAL(4u, h.snap().queue_depth);
  CHECK_TRUE(h.fake->answer_oldest());
  CHECK_EQUAL(4u, h.fake->live());
  CHECK_EQUAL(3u, h.snap().queue_depth);
}

TEST(PoolCapacity, CapacityIsClampedToTheCompiledCapAndToOne) {
  CapacityHarness h(0);  // a transport that says 0 still gets one at a time
  h.submit(3);
  CHECK_EQUAL(1u, h.fake->live());
  CHECK_EQUAL(1u, h.snap().capacity);
  h.fake->set_capacity(1000);
  CHECK_EQUAL(3u, h.fake->live());
  CHECK_EQUAL(upstream::max_in_flight_per_entry, h.snap().capacity);
}
