// Pool::apply(), the reload hook, as scenarios on a fake clock: what a kept
// entry keeps, where a drained entry's waiters and exchanges go, when its
// transport is closed and destroyed, and that started entries take their
// place in the priority order.
#include <memory>
#include <optional>
#include <vector>

#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace std::chrono_literals;
using upstream::Cause;

namespace {

struct Harness {
  test::FakeScheduler sched;
  std::unique_ptr<upstream::Pool> pool;
  std::vector<std::optional<upstream::PoolOutcome>> outcomes;

  static upstream::EntrySpec spec(std::size_t index, int priority, test::FakeTransport** out) {
    auto t = std::make_unique<test::FakeTransport>();
    *out = t.get();
    return upstream::EntrySpec{index, "tls://127.0.0.1:" + std::to_string(8530 + index), priority, std::move(t)};
  }

  void make(std::vector<upstream::EntrySpec> specs) {
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), upstream::PoolOptions{});
  }

  std::size_t submit() {
    const std::size_t slot = outcomes.size();
    outcomes.emplace_back();
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    pool->submit(std::move(q), sched.now() + 5s,
                 [this, slot](upstream::PoolOutcome&& o) { outcomes[slot] = std::move(o); });
    return slot;
  }
  std::vector<std::size_t> indexes() const {
    std::vector<std::size_t> v;
    for (const auto& s : pool->snapshot()) v.push_back(s.index);
    return v;
  }
};

}  // namespace

TEST_GROUP(PoolReload){};

TEST(PoolReload, KeptEntryKeepsItsTransportHealthAndCountersWhileTheRemovedOneDrains) {
  Harness h;
  test::FakeTransport *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<upstream::EntrySpec> specs;
  specs.push_back(Harness::spec(0, 5, &a));
  specs.push_back(Harness::spec(1, 0, &b));  // preferred
  h.make(std::move(specs));
  bool b_closed_then_destroyed = false;
  b->destroyed_after_close = &b_closed_then_destroyed;
  // A answered once before the reload (a counter to keep); then B holds
  // an exchange in flight.
  h.submit();
  CHECK_TRUE(b->fail_oldest(Cause::bad_response));  // fails over to A
  CHECK_TRUE(a->answer_oldest());
  h.sched.advance(1ms);
  CHECK_TRUE(h.outcomes[0]->ok);
  h.submit();
  CHECK_EQUAL(1u, b->live());

  upstream::PoolChange change;
  change.keep.push_back({0, 0, 5});
  change.drain.push_back(1);
  change.start.push_back(Harness::spec(1, 0, &c));
  std::vector<std::size_t> drained;
  change.on_drained = [&](std::size_t i, const std::string&) { drained.push_back(i); };
  h.pool->apply(std::move(change));

  // New queries go to the started entry, never to the draining one.
  const std::size_t fresh = h.submit();
  CHECK_EQUAL(1u, c->live());
  CHECK_EQUAL(1u, b->live());
  // B's exchange in flight finishes normally and is delivered.
  CHECK_TRUE(b->answer_oldest());
  h.sched.advance(1ms);
  CHECK_TRUE(h.outcomes[1].has_value());
  CHECK_TRUE(h.outcomes[1]->ok);
  // Then B's sessions close and its transport goes.
  CHECK_TRUE(b_closed_then_destroyed);
  CHECK_EQUAL(1u, drained.size());
  CHECK_EQUAL(1u, drained[0]);
  CHECK_EQUAL(0u, h.pool->draining_count());
  CHECK_TRUE(c->answer_oldest());
  h.sched.advance(1ms);
  CHECK_TRUE(h.outcomes[fresh]->ok);
  // A: same transport, counters kept (one answer), no close.
  const auto snaps = h.pool->snapshot();
  CHECK_EQUAL(2u, snaps.size());
  for (const auto& s : snaps) {
    if (s.index == 0) CHECK_EQUAL(1u, s.outcomes[static_cast<std::size_t>(Cause::ok)]);
    if (s.index == 1) CHECK_EQUAL(0u, s.outcomes[static_cast<std::size_t>(Cause::bad_response)]);
  }
  CHECK_EQUAL(0u, a->close_all_calls());
  CHECK_EQUAL(1u, a->started());
}

TEST(PoolReload, WaitersAtADrainedEntryMoveOnAtOnceInOrder) {
  Harness h;
  test::FakeTransport *a = nullptr, *b = nullptr;
  std::vector<upstream::EntrySpec> specs;
  specs.push_back(Harness::spec(0, 0, &a));
  h.make(std::move(specs));
  a->capacity_now = 1;
  h.submit();  // in flight
  h.submit();  // queued
  h.submit();  // queued
  upstream::PoolChange change;
  change.drain.push_back(0);
  change.start.push_back(Harness::spec(0, 0, &b));
  h.pool->apply(std::move(change));
  // The two waiters never reached A's upstream: they run on B now.
  CHECK_EQUAL(2u, b->live());
  CHECK_EQUAL(1u, a->live());
  CHECK_EQUAL(1u, h.pool->draining_count());
  // The drained entry is gone from the snapshot (its index is B's now).
  CHECK_EQUAL(1u, h.indexes().size());
  CHECK_TRUE(b->answer_oldest());
  CHECK_TRUE(b->answer_oldest());
  CHECK_TRUE(a->answer_oldest());
  h.sched.advance(1ms);
  for (const auto& o : h.outcomes) CHECK_TRUE(o.has_value() && o->ok);
  CHECK_EQUAL(0u, h.pool->draining_count());
}

TEST(PoolReload, DrainingAnIdleEntryRetiresItOnTheNextLoopTurn) {
  Harness h;
  test::FakeTransport *a = nullptr, *b = nullptr, *c = nullptr;
  std::vector<upstream::EntrySpec> specs;
  specs.push_back(Harness::spec(0, 0, &a));
  specs.push_back(Harness::spec(1, 0, &b));
  h.make(std::move(specs));
  bool destroyed = false;
  a->destroyed_after_close = &destroyed;
  upstream::PoolChange change;
  change.drain.push_back(0);
  h.pool->apply(std::move(change));
  CHECK_FALSE(destroyed);  // never from inside apply()
  h.sched.advance(0ms);
  CHECK_TRUE(destroyed);
  CHECK_EQUAL(1u, h.pool->entry_count());
  // A later reload reuses the retired position.
  upstream::PoolChange again;
  again.start.push_back(Harness::spec(2, -1, &c));
  h.pool->apply(std::move(again));
  CHECK_EQUAL(2u, h.pool->entry_count());
  h.submit();
  CHECK_EQUAL(1u, c->live());  // priority -1: preferred
  CHECK_EQUAL(0u, b->live());
  CHECK_TRUE(c->answer_oldest());
  h.sched.advance(1ms);
  CHECK_TRUE(h.outcomes[0]->ok);
}

TEST(PoolReload, KeptEntriesTakeTheirNewIndexesAndPriorities) {
  Harness h;
  test::FakeTransport *a = nullptr, *b = nullptr;
  std::vector<upstream::EntrySpec> specs;
  specs.push_back(Harness::spec(0, 0, &a));
  specs.push_back(Harness::spec(1, 5, &b));
  h.make(std::move(specs));
  // The operator swapped the two in the file and made B preferred.
  upstream::PoolChange change;
  change.keep.push_back({0, 1, 5});
  change.keep.push_back({1, 0, 0});
  h.pool->apply(std::move(change));
  h.submit();
  CHECK_EQUAL(1u, b->live());
  CHECK_EQUAL(0u, a->live());
  const auto snaps = h.pool->snapshot();
  CHECK_EQUAL(2u, snaps.size());
  for (const auto& s : snaps) {
    if (s.label == "tls://127.0.0.1:8531") CHECK_EQUAL(0u, s.index);
    if (s.label == "tls://127.0.0.1:8530") CHECK_EQUAL(1u, s.index);
  }
  CHECK_TRUE(b->answer_oldest());
  h.sched.advance(1ms);
}
