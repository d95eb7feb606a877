// The repeated-warning rule as scenarios: lines at given times in, the
// verdict for each out, so a failing step says which promise broke.
#include "log/repeat_limiter.hpp"

#include <chrono>
#include <string>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::log::RepeatLimiter;
using std::chrono::milliseconds;

namespace {

struct Step {
  const char* situation;
  const char* line;
  milliseconds at;  // since the scenario began
  bool warned;
};

void play(const std::vector<Step>& steps) {
  RepeatLimiter limiter;
  // Any origin: the rule looks at differences only.
  const RepeatLimiter::Clock::time_point origin = RepeatLimiter::Clock::time_point{} + std::chrono::hours(5);
  for (const Step& s : steps) {
    const bool got = limiter.first_in_window(s.line, origin + s.at);
    if (got != s.warned) {
      FAIL(nxdns::log::cat(s.situation, ": \"", s.line, "\" at ", s.at.count(), " ms gave ",
                           got ? "warn" : "debug", ", want ", s.warned ? "warn" : "debug")
               .c_str());
    }
  }
}

constexpr milliseconds window = std::chrono::duration_cast<milliseconds>(RepeatLimiter::window);

}  // namespace

TEST_GROUP(RepeatLimiter){};

TEST(RepeatLimiter, ABurstFailingOneWayWarnsOnce) {
  play({{"first failure", "connect_failed: refused", milliseconds(0), true},
       {"second slot, same failure", "connect_failed: refused", milliseconds(1), false},
       {"eighth slot, same failure", "connect_failed: refused", milliseconds(7), false},
       {"just inside the window", "connect_failed: refused", window - milliseconds(1), false}});
}

TEST(RepeatLimiter, APersistingProblemWarnsAgainEachWindow) {
  play({{"first failure", "handshake_failed: x", milliseconds(0), true},
       {"a window later", "handshake_failed: x", window, true},
       {"repeat inside the new window", "handshake_failed: x", window + milliseconds(500), false},
       {"two windows after the first", "handshake_failed: x", 2 * window, true}});
}

TEST(RepeatLimiter, ADifferentProblemWarnsAtOnce) {
  play({{"first failure", "connect_failed: refused", milliseconds(0), true},
       {"another cause", "certificate: expired", milliseconds(1), true},
       {"the first again: no longer the last warned", "connect_failed: refused", milliseconds(2), true},
       {"and now it is", "connect_failed: refused", milliseconds(3), false}});
}

TEST(RepeatLimiter, RepeatsDoNotExtendTheWindow) {
  // The window runs from the last warning, not from the last repeat: a
  // failure repeated every second still warns once a minute.
  play({{"first failure", "eof: x", milliseconds(0), true},
       {"repeat", "eof: x", window / 2, false},
       {"repeat", "eof: x", window - milliseconds(1), false},
       {"a window after the warning", "eof: x", window, true}});
}

TEST(RepeatLimiter, TheFirstLineWarnsWhateverTheClock) {
  // A fake clock starts at zero; the first line is never taken for a repeat.
  RepeatLimiter limiter;
  CHECK_TRUE(limiter.first_in_window("", RepeatLimiter::Clock::time_point{}));
  CHECK_FALSE(limiter.first_in_window("", RepeatLimiter::Clock::time_point{}));
}
