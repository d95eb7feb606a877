// Serve-stale's failure recheck window (RFC 8767 §4, §5), under a fake clock
// and a fake transport: after a stale name's refresh fails, its clients get
// the stale answer at once and nothing for it goes upstream for 30 s; then
// one refresh again; an answer closes the window.
#include "cache/answer_rewrite.hpp"
#include "cache/caching_pool.hpp"
#include "cache/caching_pool_rig.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace nxdns::cache::rig;
using namespace std::chrono_literals;

namespace {

constexpr const char* name = "www.example.test";

// An entry for `name` stored with TTL 60, and 61 s later: stale.
void stale_entry(Rig& r) {
  r.ask(name, 1);
  r.answer(60);
  r.sched.advance(61s);
}

// The oldest exchange ends with the upstream's SERVFAIL (neutral for health:
// the upstream stays `healthy`, so clients wait for the refresh).
void servfail(Rig& r) {
  r.fake->respond_oldest([](const dns::Bytes& q) { return a_answer(q, 0, 0x8182); });
  r.sched.run_ready();
}

// Asks for `name` and lets the loop run once, no time passing: whether the
// stale answer (TTL 30) came back.
bool stale_at_once(Rig& r, std::uint16_t id) {
  const std::size_t i = r.ask(name, id);
  r.sched.run_ready();
  return r.got[i].has_value() && r.got[i]->ok && r.ttl(i) == stale_answer_ttl;
}

}  // namespace

TEST_GROUP(StaleRecheck){};

TEST(StaleRecheck, AfterASlowFailedRefreshEveryClientGetsStaleAtOnceAndOneAttemptPerWindow) {
  Rig r;
  stale_entry(r);
  CHECK_EQUAL(1u, r.fake->started());
  // The upstream is healthy: the first client waits for the refresh, which
  // fails slowly (1.2 s, inside the client response timer).
  const std::size_t first = r.ask(name, 2);
  CHECK_EQUAL(2u, r.fake->started());
  r.sched.advance(1200ms);
  CHECK_FALSE(r.got[first].has_value());
  servfail(r);
  CHECK_TRUE(r.got[first]->ok);
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(first));

  // Inside the window: at once, and no upstream attempt, however many ask.
  for (std::uint16_t k = 0; k < 5; ++k) {
    CHECK_TRUE(stale_at_once(r, static_cast<std::uint16_t>(10 + k)));
    r.sched.advance(5s);
  }
  r.sched.advance(4999ms);  // the window's last millisecond
  CHECK_TRUE(stale_at_once(r, 20));
  CHECK_EQUAL(2u, r.fake->started());
  CHECK_EQUAL(6u, r.cache->stats().stale_refreshes_skipped);
  CHECK_EQUAL(7u, r.cache->stats().stale_served);

  // 30 s after the failure: one refresh again, joined by a concurrent
  // client, both waiting for it as the first client did.
  r.sched.advance(1ms);
  const std::size_t a = r.ask(name, 30);
  const std::size_t b = r.ask(name, 31);
  r.sched.run_ready();
  CHECK_EQUAL(3u, r.fake->started());
  CHECK_FALSE(r.got[a].has_value());
  CHECK_FALSE(r.got[b].has_value());
  CHECK_EQUAL(1u, r.cache->stats().dedup_joins);
  r.sched.advance(1200ms);
  servfail(r);
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(a));
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(b));
  // It failed again: a new window.
  CHECK_TRUE(stale_at_once(r, 32));
  CHECK_EQUAL(3u, r.fake->started());
}

TEST(StaleRecheck, WhileEveryUpstreamFailsTheRefreshBehindStaleAnswersWaitsForTheWindow) {
  Rig r;
  stale_entry(r);
  // The upstream goes quiet: an unseen name's attempt fails, and no
  // upstream has succeeded since.
  r.ask("unseen.example.test", 2);
  r.fake->fail_oldest(upstream::Cause::connect_failed);
  r.sched.run_ready();
  // Stale at once (every upstream failing), one refresh behind it; it fails.
  CHECK_TRUE(stale_at_once(r, 3));
  CHECK_EQUAL(3u, r.fake->started());
  r.fake->fail_oldest(upstream::Cause::connect_failed);
  r.sched.run_ready();
  // No further refresh for 30 s, whoever asks.
  for (std::uint16_t k = 0; k < 6; ++k) {
    CHECK_TRUE(stale_at_once(r, static_cast<std::uint16_t>(10 + k)));
    r.sched.advance(4999ms);
  }
  CHECK_EQUAL(3u, r.fake->started());
  CHECK_EQUAL(0u, r.fake->live());
  // After it, the next stale answer has one refresh behind it again.
  r.sched.advance(6ms);
  CHECK_TRUE(stale_at_once(r, 20));
  CHECK_EQUAL(4u, r.fake->started());
  CHECK_TRUE(stale_at_once(r, 21));
  CHECK_EQUAL(4u, r.fake->started());
}

TEST(StaleRecheck, ARefreshThatRunsOutOfItsBudgetOpensTheWindow) {
  // A black hole: the flight's budget (5 s) ends before the pool's attempt
  // budget (10 s in the rig).
  Rig r;
  stale_entry(r);
  const std::size_t first = r.ask(name, 2);
  r.sched.advance(1500ms);  // the client response timer: stale, the refresh goes on
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(first));
  r.sched.advance(2500ms);
  const std::size_t late = r.ask(name, 3);  // joins the refresh, 1 s before its budget ends
  CHECK_EQUAL(1u, r.cache->stats().dedup_joins);
  r.sched.advance(1s);
  // The refresh is over: the client still attached gets the stale answer,
  // not another exchange for the name.
  CHECK_TRUE(r.got[late].has_value());
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(late));
  CHECK_EQUAL(1u, r.fake->cancelled());
  CHECK_TRUE(stale_at_once(r, 4));
  CHECK_EQUAL(2u, r.fake->started());
  CHECK_EQUAL(0u, r.fake->live());
}

TEST(StaleRecheck, AStoredRefreshClosesTheWindow) {
  // Two refreshes in flight at once (one joiner per flight): the first
  // fails and opens the window, the second answers.
  CacheOptions o;
  o.max_joiners = 1;
  Rig r(o);
  stale_entry(r);
  r.ask(name, 2);
  r.ask(name, 3);
  const std::size_t other = r.ask(name, 4);
  CHECK_EQUAL(3u, r.fake->started());
  servfail(r);
  CHECK_TRUE(stale_at_once(r, 5));
  r.answer(1);
  UNSIGNED_LONGS_EQUAL(1, r.ttl(other));
  // The new entry goes stale inside the first failure's 30 s: its clients
  // wait for a refresh again (the upstream is healthy), and get it fresh.
  r.sched.advance(2s);
  const std::size_t i = r.ask(name, 6);
  r.sched.run_ready();
  CHECK_EQUAL(4u, r.fake->started());
  CHECK_FALSE(r.got[i].has_value());
  r.answer(300);
  UNSIGNED_LONGS_EQUAL(300, r.ttl(i));
}

TEST(StaleRecheck, AnAnswerThatIsNotStoredClosesTheWindowToo) {
  CacheOptions o;
  o.max_joiners = 1;
  Rig r(o);
  stale_entry(r);
  r.ask(name, 2);
  r.ask(name, 3);
  const std::size_t other = r.ask(name, 4);
  servfail(r);
  CHECK_TRUE(stale_at_once(r, 5));
  r.answer(0);  // TTL 0: relayed, never cached; the old entry stays stale
  CHECK_TRUE(r.got[other]->ok);
  UNSIGNED_LONGS_EQUAL(0, r.ttl(other));
  CHECK_EQUAL(1u, r.cache->stats().entries);
  // The upstream answers the name again: the next client asks it.
  const std::size_t i = r.ask(name, 6);
  r.sched.run_ready();
  CHECK_EQUAL(4u, r.fake->started());
  CHECK_FALSE(r.got[i].has_value());
}
