// The cache in front of the pool, under a fake clock and a fake transport:
// hits without an exchange, dedup fan-out and its bound, per-client budgets,
// serve-stale, prefetch.
#include "cache/caching_pool.hpp"
#include "cache/answer_rewrite.hpp"
#include "cache/answers.hpp"
#include "cache/caching_pool_rig.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace nxdns::cache::rig;
using namespace std::chrono_literals;

TEST_GROUP(CachingPool){};

TEST(CachingPool, SecondQueryAnsweredWithoutAnExchange) {
  Rig r;
  r.ask("www.example.test", 1);
  CHECK_EQUAL(1u, r.fake->started());
  r.answer(300);
  CHECK_TRUE(r.got[0]->ok);
  r.sched.advance(100s);
  const std::size_t i = r.ask("WWW.Example.TEST", 2);
  CHECK_FALSE(r.got[i].has_value());  // never from inside submit()
  r.sched.run_ready();
  CHECK_EQUAL(1u, r.fake->started());
  CHECK_TRUE(r.got[i]->ok);
  CHECK_EQUAL(2, dns::get_id(r.got[i]->response));
  CHECK(dns::validate_response(r.sent[i], r.got[i]->response) == dns::ResponseError::none);
  CHECK_TRUE(std::equal(r.sent[i].begin() + 12, r.sent[i].end(), r.got[i]->response.begin() + 12));  // 0x20 case
  UNSIGNED_LONGS_EQUAL(200, r.ttl(i));
  const CacheStats s = r.cache->stats();
  CHECK_EQUAL(1u, s.hits);
  CHECK_EQUAL(1u, s.misses);
  CHECK_EQUAL(1u, s.entries);
}

TEST(CachingPool, NeverCachedAnswersGoUpstreamAgain) {
  Rig r;
  r.ask("www.example.test", 1);
  r.fake->respond_oldest([](const dns::Bytes& q) { return a_answer(q, 300, 0x8182); });  // SERVFAIL
  r.sched.run_ready();
  CHECK_TRUE(r.got[0]->ok);  // relayed as it came
  r.ask("www.example.test", 2);
  CHECK_EQUAL(2u, r.fake->started());
  r.answer(0);  // TTL 0
  r.ask("www.example.test", 3);
  CHECK_EQUAL(3u, r.fake->started());
  CHECK_EQUAL(0u, r.cache->stats().entries);
}

TEST(CachingPool, ThirtyIdenticalQueriesCostOneExchange) {
  Rig r;
  for (int i = 0; i < 30; ++i) r.ask(i % 2 ? "www.example.test" : "WWW.EXAMPLE.TEST", static_cast<std::uint16_t>(100 + i));
  CHECK_EQUAL(1u, r.fake->started());
  r.answer(300);
  for (int i = 0; i < 30; ++i) {
    CHECK_TRUE(r.got[i]->ok);
    CHECK(dns::validate_response(r.sent[i], r.got[i]->response) == dns::ResponseError::none);
  }
  CHECK_EQUAL(29u, r.cache->stats().dedup_joins);
}

TEST(CachingPool, EveryMemberOfAFlightGetsItsOwnIdAndQuestionCase) {
  Rig r;
  r.ask("www.example.test", 1);
  r.ask("WwW.ExAmPlE.tEsT", 2);  // joins: the same key
  CHECK_EQUAL(1u, r.fake->started());
  r.answer(300);  // the answer carries the first client's question bytes
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK_TRUE(r.got[i]->ok);
    CHECK_EQUAL(dns::get_id(r.sent[i]), dns::get_id(r.got[i]->response));
    CHECK_TRUE(r.got[i]->response.size() > r.sent[i].size());
    MEMCMP_EQUAL(r.sent[i].data() + 12, r.got[i]->response.data() + 12, r.sent[i].size() - 12);
    UNSIGNED_LONGS_EQUAL(300, r.ttl(i));
  }
  CHECK_EQUAL(1u, r.cache->stats().stores);
}

TEST(CachingPool, AnAnswerWhoseRecordsDoNotWalkReachesNoClient) {
  // Its transport validated the header and the question, not the records.
  Rig r;
  r.ask("www.example.test", 1);
  r.ask("WWW.example.test", 2);
  r.fake->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes a = a_answer(q, 300);
    a.resize(a.size() - 2);  // the A record's RDATA runs past the end
    return a;
  });
  r.sched.run_ready();
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK_FALSE(r.got[i]->ok);
    STRCMP_EQUAL("bad_response", upstream::describe(r.got[i]->cause));
  }
  CHECK_EQUAL(0u, r.cache->stats().entries);
}

TEST(CachingPool, JoinersBeyondTheBoundStartTheirOwnExchange) {
  CacheOptions o;
  o.max_joiners = 3;
  Rig r(o);
  for (int i = 0; i < 6; ++i) r.ask("www.example.test", static_cast<std::uint16_t>(i));
  CHECK_EQUAL(2u, r.fake->started());  // 1 + 3 joiners, then 1 + 1
  CHECK_EQUAL(4u, r.cache->stats().dedup_joins);
  r.answer();
  r.answer();
  for (int i = 0; i < 6; ++i) CHECK_TRUE(r.got[i]->ok);
}

TEST(CachingPool, WhenTheOlderOfTwoFlightsEndsNewClientsStillJoinTheNewer) {
  // The join table views the newest flight's key: the older, full flight
  // ending first must leave it pointing at live bytes (ASan's build checks).
  CacheOptions o;
  o.max_joiners = 1;
  Rig r(o);
  r.ask("www.example.test", 1);
  r.ask("www.example.test", 2);  // joins the first flight, now full
  r.ask("www.example.test", 3);  // a second flight
  CHECK_EQUAL(2u, r.fake->started());
  r.answer(0);  // the first flight ends; TTL 0 keeps the name uncached
  r.ask("www.example.test", 4);
  CHECK_EQUAL(2u, r.fake->started());  // joined the second flight
  CHECK_EQUAL(2u, r.cache->stats().dedup_joins);
  r.answer(0);
  for (int i = 0; i < 4; ++i) CHECK_TRUE(r.got[i]->ok);
}

TEST(CachingPool, FirstClientsBudgetEndingDoesNotFailTheOthers) {
  CacheOptions o;
  o.exchange_budget = 5s;
  Rig r(o);
  r.ask("www.example.test", 1);
  r.sched.advance(3s);
  r.ask("www.example.test", 2);
  CHECK_EQUAL(1u, r.fake->started());
  r.sched.advance(2s);
  r.cache->cancel(r.tickets[0]);  // the engine's 5 s budget for client 1
  CHECK_FALSE(r.got[1].has_value());
  // The flight ran out with client 2 still inside its own budget: it gets a
  // fresh exchange rather than client 1's SERVFAIL.
  CHECK_EQUAL(2u, r.fake->started());
  CHECK_EQUAL(1u, r.fake->cancelled());
  r.answer();
  CHECK_TRUE(r.got[1]->ok);
  CHECK_EQUAL(2, dns::get_id(r.got[1]->response));
}

TEST(CachingPool, LastClientLeavingCancelsTheExchange) {
  Rig r;
  r.ask("www.example.test", 1);
  r.ask("www.example.test", 2);
  r.cache->cancel(r.tickets[0]);
  CHECK_EQUAL(0u, r.fake->cancelled());  // client 2 still waits
  r.cache->cancel(r.tickets[1]);
  r.sched.run_ready();
  CHECK_EQUAL(1u, r.fake->cancelled());
  CHECK_EQUAL(0u, r.cache->stats().flights);
}

TEST(CachingPool, StaleServedAtTheClientTimerAndRefreshContinues) {
  Rig r;
  r.ask("www.example.test", 1);
  r.answer(60);
  r.sched.advance(61s);
  const std::size_t i = r.ask("www.example.test", 2);
  CHECK_EQUAL(2u, r.fake->started());
  // 1.5 s: the stale answer must reach the client inside RFC 8767's 1.8 s,
  // and a timer of 1.8 s lands just past it.
  r.sched.advance(1499ms);
  CHECK_FALSE(r.got[i].has_value());  // the refresh may still answer in time
  r.sched.advance(1ms);
  CHECK_TRUE(r.got[i].has_value());
  CHECK_TRUE(r.got[i]->ok);
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(i));
  CHECK_EQUAL(1u, r.cache->stats().stale_served);
  CHECK_EQUAL(1u, r.fake->live());  // refresh goes on in the background
  r.answer(120);
  const std::size_t j = r.ask("www.example.test", 3);
  r.sched.run_ready();
  CHECK_EQUAL(2u, r.fake->started());
  UNSIGNED_LONGS_EQUAL(120, r.ttl(j));
}

TEST(CachingPool, StaleServedAtOnceWhenEveryAttemptFails) {
  Rig r;
  r.ask("www.example.test", 1);
  r.answer(60);
  r.sched.advance(100s);
  const std::size_t i = r.ask("www.example.test", 2);
  r.fake->fail_oldest(upstream::Cause::connect_failed);
  r.sched.run_ready();
  CHECK_TRUE(r.got[i]->ok);
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(i));
}

TEST(CachingPool, StaleServedAtOnceWhenEveryUpstreamFailedSinceItsLastSuccess) {
  Rig r;
  r.ask("www.example.test", 1);
  r.answer(60);
  r.sched.advance(61s);
  // The upstream goes quiet: one attempt fails (a black hole's timeout).
  const std::size_t u = r.ask("unseen.example.test", 2);
  r.fake->fail_oldest(upstream::Cause::connect_failed);
  r.sched.run_ready();
  CHECK_FALSE(r.got[u]->ok);
  const std::size_t i = r.ask("www.example.test", 3);
  CHECK_FALSE(r.got[i].has_value());  // never from inside submit()
  r.sched.run_ready();                // no time passes: no client response timer
  CHECK_TRUE(r.got[i].has_value());
  CHECK_TRUE(r.got[i]->ok);
  UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(i));
  CHECK_EQUAL(1u, r.cache->stats().stale_served);
  // The refresh goes on in the background, one per key, and finds the
  // upstream back: the next client gets the fresh answer.
  r.ask("www.example.test", 4);
  r.sched.run_ready();
  CHECK_EQUAL(3u, r.fake->started());
  CHECK_EQUAL(1u, r.fake->live());
  r.answer(120);
  const std::size_t j = r.ask("www.example.test", 5);
  r.sched.run_ready();
  CHECK_EQUAL(3u, r.fake->started());
  UNSIGNED_LONGS_EQUAL(120, r.ttl(j));
}

TEST(CachingPool, OutageRefreshesBehindStaleAnswersAreBounded) {
  Rig r;
  std::vector<std::string> names;
  for (int n = 0; n < 30; ++n) names.push_back("n" + std::to_string(n) + ".example.test");
  for (const auto& n : names) {
    r.ask(n.c_str(), 1);
    r.answer(60);
  }
  r.sched.advance(61s);
  r.ask("unseen.example.test", 2);
  r.fake->fail_oldest(upstream::Cause::connect_failed);
  r.sched.run_ready();
  const std::size_t first = r.got.size();
  for (const auto& n : names) r.ask(n.c_str(), 3);
  r.sched.run_ready();
  for (std::size_t i = first; i < r.got.size(); ++i) {
    CHECK_TRUE(r.got[i].has_value());
    UNSIGNED_LONGS_EQUAL(stale_answer_ttl, r.ttl(i));
  }
  // A quarter of the entry's in-flight cap, the rest left to clients' queries.
  CHECK_EQUAL(upstream::max_in_flight_per_entry / 4, r.fake->live());
}

TEST(CachingPool, StaleWaitsForTheRefreshWhileTheUpstreamIsHealthy) {
  Rig r;
  r.ask("www.example.test", 1);
  r.answer(60);
  r.sched.advance(61s);
  const std::size_t i = r.ask("www.example.test", 2);
  r.sched.run_ready();
  CHECK_FALSE(r.got[i].has_value());  // RFC 8767: a fresh answer may still come
  r.answer(120);
  CHECK_TRUE(r.got[i]->ok);
  UNSIGNED_LONGS_EQUAL(120, r.ttl(i));
  CHECK_EQUAL(0u, r.cache->stats().stale_served);
}

TEST(CachingPool, BareNodataIsCachedForFiveSeconds) {
  Rig r;
  r.ask("www.example.test", 1);
  // NOERROR, no answer, nothing in the authority: no SOA to take a TTL from.
  r.fake->respond_oldest([](const dns::Bytes& q) {
    dns::Bytes b = a_answer(q, 300);
    b[7] = 0;
    b.resize(dns::parse_query(q).query->question_end);
    return b;
  });
  r.sched.run_ready();
  CHECK_TRUE(r.got[0]->ok);
  r.sched.advance(4s);
  r.ask("www.example.test", 2);
  r.sched.run_ready();
  CHECK_EQUAL(1u, r.fake->started());
  CHECK_TRUE(r.got[1]->ok);
  r.sched.advance(1s);
  r.ask("www.example.test", 3);
  CHECK_EQUAL(2u, r.fake->started());
}

TEST(CachingPool, NoStaleWhenOffOrPastTheWindow) {
  CacheOptions off;
  off.serve_stale = false;
  Rig a(off);
  a.ask("www.example.test", 1);
  a.answer(60);
  a.sched.advance(61s);
  a.ask("www.example.test", 2);
  a.fake->fail_oldest(upstream::Cause::connect_failed);
  a.sched.run_ready();
  CHECK_FALSE(a.got[1]->ok);

  CacheOptions window;
  window.stale_window = 10s;
  Rig b(window);
  b.ask("www.example.test", 1);
  b.answer(60);
  b.sched.advance(71s);
  b.ask("www.example.test", 2);
  b.sched.advance(2s);
  CHECK_FALSE(b.got[1].has_value());  // no stale entry: waits for the exchange
  b.fake->fail_oldest(upstream::Cause::connect_failed);
  b.sched.run_ready();
  CHECK_FALSE(b.got[1]->ok);
}

TEST(CachingPool, PrefetchInTheLastTenthOfTheTtl) {
  Rig r;
  r.ask("www.example.test", 1);
  r.answer(100);
  r.sched.advance(50s);
  r.ask("www.example.test", 2);
  CHECK_EQUAL(1u, r.fake->started());  // not yet
  r.sched.advance(41s);
  r.ask("www.example.test", 3);
  r.ask("www.example.test", 4);
  r.sched.run_ready();
  CHECK_EQUAL(2u, r.fake->started());  // one prefetch, not two
  CHECK_EQUAL(1u, r.cache->stats().prefetches);
  CHECK_TRUE(r.got[2]->ok);
  r.answer(100);
  r.sched.advance(20s);  // past the first entry's TTL: the prefetched one answers
  const std::size_t i = r.ask("www.example.test", 5);
  r.sched.run_ready();
  CHECK_EQUAL(2u, r.fake->started());
  UNSIGNED_LONGS_EQUAL(80, r.ttl(i));
}

TEST(CachingPool, FlushMakesTheNextQueryGoUpstream) {
  Rig r;
  r.ask("www.example.test", 1);
  r.answer();
  CHECK_EQUAL(1u, *r.cache->flush_name("WWW.example.test."));
  r.ask("www.example.test", 2);
  CHECK_EQUAL(2u, r.fake->started());
  CHECK_FALSE(r.cache->flush_name("bad..name").has_value());
  r.answer();
  CHECK_EQUAL(1u, r.cache->flush_all());
}
