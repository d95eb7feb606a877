// The byte bound and the two eviction policies.
#include "cache/answer_store.hpp"
#include "cache/answers.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace nxdns::cache::packets;
using namespace std::chrono_literals;

namespace {
Key key_n(int i) { return make_key(wname("n" + std::to_string(i) + ".example.test"), 1, 1, false, false); }
dns::Bytes answer_n(int i) {
  const std::string name = "n" + std::to_string(i) + ".example.test";
  return build({.qname = name, .answer = {{t_a, 300}}});
}
const EntryAge age{loop::TimePoint{1000s}, 300};
}  // namespace

TEST_GROUP(AnswerStore){};

TEST(AnswerStore, NeverExceedsTheByteBound) {
  for (Eviction policy : {Eviction::lru, Eviction::sieve}) {
    const std::size_t one = AnswerStore::cost(key_n(100), answer_n(100));
    AnswerStore s(20 * one + 64 * sizeof(void*), policy);
    for (int i = 0; i < 500; ++i) {
      CHECK_TRUE(s.put(key_n(i), answer_n(i), age, false));
      CHECK_TRUE(s.bytes() <= s.max_bytes());
      if (i % 3 == 0) s.find(key_n(i / 2));
    }
    CHECK_TRUE(s.entries() >= 10);
    CHECK_TRUE(s.entries() <= 22);  // plus what the spare bucket allowance holds
    CHECK_EQUAL(500 - s.entries(), s.evictions());
  }
}

TEST(AnswerStore, CostCountsMoreThanThePayload) {
  const dns::Bytes a = answer_n(1);
  // Nodes and allocator headers: an entry costs well over its answer.
  CHECK_TRUE(AnswerStore::cost(key_n(1), a) >= a.size() + 100);
}

TEST(AnswerStore, TooLargeForTheWholeBoundIsNotStored) {
  AnswerStore s(100, Eviction::sieve);
  CHECK_FALSE(s.put(key_n(1), answer_n(1), age, false));
  CHECK_EQUAL(0u, s.entries());
}

TEST(AnswerStore, LruKeepsTheRecentlyUsed) {
  const std::size_t one = AnswerStore::cost(key_n(100), answer_n(100));
  AnswerStore s(3 * one + 16 * sizeof(void*), Eviction::lru);
  for (int i = 0; i < 3; ++i) s.put(key_n(i), answer_n(i), age, false);
  CHECK_EQUAL(3u, s.entries());
  s.find(key_n(0));
  s.put(key_n(3), answer_n(3), age, false);  // evicts 1, the least recently used
  CHECK_TRUE(s.find(key_n(0)) != nullptr);
  CHECK_TRUE(s.find(key_n(1)) == nullptr);
}

TEST(AnswerStore, SieveKeepsTheVisited) {
  const std::size_t one = AnswerStore::cost(key_n(100), answer_n(100));
  AnswerStore s(3 * one + 16 * sizeof(void*), Eviction::sieve);
  for (int i = 0; i < 3; ++i) s.put(key_n(i), answer_n(i), age, false);
  s.find(key_n(0));  // oldest, but visited
  s.put(key_n(3), answer_n(3), age, false);
  CHECK_TRUE(s.find(key_n(0)) != nullptr);
  CHECK_TRUE(s.find(key_n(1)) == nullptr);  // oldest unvisited
  CHECK_TRUE(s.find(key_n(2)) != nullptr);
}

TEST(AnswerStore, FlushByNameAndAll) {
  AnswerStore s(1 << 20, Eviction::sieve);
  s.put(make_key(wname("a.test"), 1, 1, false, false), answer_n(1), age, false);
  s.put(make_key(wname("A.test"), 28, 1, true, false), answer_n(2), age, false);
  s.put(make_key(wname("b.a.test"), 1, 1, false, false), answer_n(3), age, false);
  CHECK_EQUAL(2u, s.erase_name(fold_name(wname("a.TEST"))));
  CHECK_EQUAL(1u, s.entries());
  const std::size_t bytes_one = s.bytes();
  CHECK_TRUE(bytes_one > 0);
  CHECK_EQUAL(1u, s.clear());
  CHECK_EQUAL(0u, s.entries());
  CHECK_TRUE(s.bytes() < bytes_one);
}

TEST(AnswerStore, ReplacingAnEntryKeepsTheCountRight) {
  AnswerStore s(1 << 20, Eviction::lru);
  s.put(key_n(1), answer_n(1), age, false);
  const std::size_t b = s.bytes();
  s.put(key_n(1), answer_n(1), age, false);
  CHECK_EQUAL(1u, s.entries());
  CHECK_EQUAL(b, s.bytes());
}
