// loop::LifeToken: a callback queued on the loop by an object that is gone
// (or that closed what the callback belonged to) does nothing when it runs.
#include "loop/life_token.hpp"

#include <functional>
#include <memory>
#include <vector>

#include "loop/scheduler.hpp"
#include "support/fake_scheduler.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {

// Stands for the engine or a transport: it keeps the callbacks it was given
// and calls them later, from the loop, whoever gave them.
class Deliverer {
 public:
  explicit Deliverer(loop::Scheduler& sched) : timer_(sched) {}
  void later(std::function<void()> fn) {
    queued_.push_back(std::move(fn));
    if (!timer_.armed()) timer_.arm(loop::Duration::zero(), [this] { run(); });
  }

 private:
  void run() {
    auto fns = std::move(queued_);
    queued_.clear();
    for (auto& fn : fns) fn();
  }
  loop::Timer timer_;
  std::vector<std::function<void()>> queued_;
};

// Stands for a listener or a connection: it asks for an answer and counts
// the ones it gets. `answered` lives outside it, so the test can read it
// after the object is gone.
class Asker {
 public:
  Asker(Deliverer& d, int& answered) : deliverer_(d), answered_(answered) {}
  void ask() {
    deliverer_.later([this, life = life_.watch()] {
      if (!life.alive()) return;
      ++answered_;
      ++own_answers_;
    });
  }
  void close() { life_.revoke(); }
  int own_answers() const { return own_answers_; }

 private:
  Deliverer& deliverer_;
  int& answered_;
  int own_answers_ = 0;
  loop::LifeToken life_;
};

}  // namespace

TEST_GROUP(LifeToken) {
  test::FakeScheduler sched;
};

TEST(LifeToken, CallbackForALiveOwnerRuns) {
  Deliverer d(sched);
  int answered = 0;
  Asker a(d, answered);
  a.ask();
  a.ask();
  CHECK_EQUAL(0, answered);  // queued, not run inside ask()
  sched.run_ready();
  CHECK_EQUAL(2, answered);
  CHECK_EQUAL(2, a.own_answers());
}

TEST(LifeToken, CallbackAfterItsOwnerIsDestroyedDoesNothing) {
  Deliverer d(sched);
  int answered = 0;
  auto gone = std::make_unique<Asker>(d, answered);
  Asker stays(d, answered);
  gone->ask();
  stays.ask();
  gone.reset();
  sched.run_ready();  // under ASan, a callback touching `gone` would fail here
  CHECK_EQUAL(1, answered);
  CHECK_EQUAL(1, stays.own_answers());
}

TEST(LifeToken, RevokeEndsEarlierWatchesAndLaterOnesWatchTheNewTerm) {
  Deliverer d(sched);
  int answered = 0;
  Asker a(d, answered);
  a.ask();     // for the first connection
  a.close();   // ... which closes before its answer comes
  a.ask();     // for the next one
  sched.run_ready();
  CHECK_EQUAL(1, answered);
  CHECK_EQUAL(1, a.own_answers());
}

TEST(LifeToken, WatchesAsTable) {
  loop::LifeToken::Watch never;
  CHECK_FALSE(never.alive());
  loop::LifeToken::Watch outlived;
  {
    loop::LifeToken t;
    const loop::LifeToken::Watch first = t.watch();
    const loop::LifeToken::Watch copy = first;
    CHECK_TRUE(first.alive());
    CHECK_TRUE(copy.alive());
    t.revoke();
    CHECK_FALSE(first.alive());
    CHECK_FALSE(copy.alive());
    const loop::LifeToken::Watch second = t.watch();
    CHECK_TRUE(second.alive());
    t.revoke();
    t.revoke();
    CHECK_FALSE(second.alive());
    outlived = t.watch();
    CHECK_TRUE(outlived.alive());
  }
  CHECK_FALSE(outlived.alive());
}

// The flush-loop case: a callback destroys the object whose loop is calling
// it, which must stop before it touches its own members again.
TEST(LifeToken, LoopStopsWhenACallbackDestroysItsOwner) {
  struct Flusher {
    std::vector<std::function<void()>> fns;
    loop::LifeToken life;
    int ran = 0;
    int flush(int& after) {
      const loop::LifeToken::Watch self = life.watch();
      for (std::size_t i = 0; i < fns.size(); ++i) {
        const std::function<void()> fn = fns[i];  // outlives its owner's vector
        fn();
        if (!self.alive()) return -1;
        ++ran;
        ++after;
      }
      return ran;
    }
  };
  auto f = std::make_unique<Flusher>();
  int after = 0;
  f->fns.push_back([] {});
  f->fns.push_back([&f] { f.reset(); });
  f->fns.push_back([] {});
  const int result = f->flush(after);
  CHECK_EQUAL(-1, result);
  CHECK_TRUE(f == nullptr);
  CHECK_EQUAL(1, after);
}
