// The WAN outage rule as tables and one scenario under a fake clock: when
// the path counts as down, which sessions are suspect while it is, where
// the next exchange goes, and which sessions the first sign of life from a
// fresh connection retires. Every row names the household situation it
// stands for, so a failing row says which promise broke.
#include "upstream/outage_watch.hpp"

#include <optional>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using namespace std::chrono_literals;
using nxdns::loop::Duration;
using nxdns::loop::TimePoint;
using nxdns::upstream::fresh_dial_window;
using nxdns::upstream::outage_placement;
using nxdns::upstream::OutageSlotView;
using nxdns::upstream::OutageWatch;
using nxdns::upstream::retire_after_outage;
using nxdns::upstream::SessionLife;
using nxdns::upstream::SessionState;
using nxdns::upstream::slot_trust;
using nxdns::upstream::SlotTrust;
using nxdns::upstream::stall_deadline;
using nxdns::upstream::stall_shows_outage;
using nxdns::upstream::StallInputs;
using nxdns::upstream::StallKind;

namespace {

const TimePoint t0{std::chrono::seconds(1000)};
constexpr auto C = SessionState::closed;
constexpr auto K = SessionState::connecting;
constexpr auto H = SessionState::handshaking;
constexpr auto R = SessionState::ready;
constexpr auto D = SessionState::draining;
constexpr auto trusted = SlotTrust::trusted;
constexpr auto fresh = SlotTrust::fresh_dial;
constexpr auto suspect = SlotTrust::suspect;

const char* name(SlotTrust t) {
  switch (t) {
    case SlotTrust::trusted: return "trusted";
    case SlotTrust::fresh_dial: return "fresh_dial";
    case SlotTrust::suspect: return "suspect";
  }
  return "?";
}

}  // namespace

TEST_GROUP(OutageWatch){};

TEST(OutageWatch, TwoFailuresWithNoLifeBetweenAreAnOutage) {
  OutageWatch w;
  CHECK_FALSE(w.seen());
  w.failure(t0);
  CHECK_FALSE(w.seen());  // one stall: a lost packet or a slow answer
  w.failure(t0 + 300ms);
  CHECK_TRUE(w.seen());
  CHECK_TRUE(w.since() == t0);  // the first failure since the last life
  w.failure(t0 + 900ms);
  CHECK_TRUE(w.since() == t0);
  CHECK_TRUE(w.life());  // the answer that ends it says so
  CHECK_FALSE(w.seen());
}

TEST(OutageWatch, LifeBetweenFailuresStartsTheCountAgain) {
  OutageWatch w;
  w.failure(t0);
  CHECK_FALSE(w.life());  // nothing was seen: nothing ends
  w.failure(t0 + 1s);
  CHECK_FALSE(w.seen());
  CHECK_TRUE(w.since() == t0 + 1s);
  w.failure(t0 + 2s);
  CHECK_TRUE(w.seen());
  CHECK_TRUE(w.since() == t0 + 1s);
}

TEST(OutageWatch, OnlyALongSilenceIsEvidenceOfADeadPath) {
  struct Row {
    const char* situation;
    StallKind kind;
    Duration waited;
    std::optional<Duration> floor;
    bool evidence;
  };
  const std::vector<Row> rows = {
      {"nearby resolver: silent at its deadline", StallKind::silent, 250ms, 20ms, true},
      {"nearby resolver: not yet silent long enough", StallKind::silent, 249ms, 20ms, false},
      {"a 40 ms path: eight round trips", StallKind::silent, 320ms, 40ms, true},
      {"a 40 ms path: seven round trips", StallKind::silent, 280ms, 40ms, false},
      {"slow upstream (1.5 s answers) past the 1 s cap", StallKind::silent, 1s, 1500ms, false},
      {"slow upstream, as slow as ever", StallKind::silent, 3s, 1500ms, false},
      {"slow upstream, eight of its round trips", StallKind::silent, 12s, 1500ms, true},
      {"satellite link (600 ms) past the cap", StallKind::silent, 1200ms, 600ms, false},
      {"latency unknown: the floor of the silent rule", StallKind::silent, 250ms, std::nullopt, true},
      {"left behind: its session answers others", StallKind::left_behind, 10s, 20ms, false},
  };
  for (const Row& r : rows) {
    CHECK_EQUAL_TEXT(r.evidence, stall_shows_outage(r.kind, r.waited, r.floor), r.situation);
  }
}

TEST(OutageWatch, EvidenceAgreesWithTheStallDeadlineBelowItsCap) {
  // Up to 125 ms round trips the silent deadline is eight of them: the
  // evidence comes with the stall itself, so the WAN's return is seen as
  // early as the stall watch can see it.
  for (const Duration floor : {5ms, 20ms, 40ms, 100ms, 125ms}) {
    const auto stall = stall_deadline(StallInputs{t0, std::nullopt, std::nullopt, floor});
    CHECK_TRUE(stall && stall->kind == StallKind::silent);
    CHECK_TRUE(stall_shows_outage(StallKind::silent, stall->at - t0, floor));
    CHECK_FALSE(stall_shows_outage(StallKind::silent, stall->at - t0 - 1ms, floor));
  }
}

TEST(OutageWatch, FreshDialWindowIsOneRoundTrip) {
  struct Row {
    const char* situation;
    std::optional<Duration> floor;
    Duration window;
  };
  const Row rows[] = {
      {"no answer ever (started during the outage)", std::nullopt, 50ms},
      {"40 ms upstream: one round trip", 40ms, 40ms},
      {"loopback-fast upstream: at least 10 ms", 1ms, 10ms},
      {"a satellite link: at most 100 ms", 600ms, 100ms},
  };
  for (const Row& r : rows) {
    if (fresh_dial_window(r.floor) != r.window) FAIL(nxdns::log::cat(r.situation, ": window off").c_str());
  }
}

TEST(OutageWatch, SlotTrustTable) {
  struct Row {
    const char* situation;
    SessionLife s;
    SlotTrust expected;
  };
  // The outage was seen from t0 (its first failure); now is t0 + 2 s; the
  // upstream's fastest round trip is 40 ms.
  const TimePoint now = t0 + 2s;
  const Row rows[] = {
      {"the connection from before the outage, established, answered before it", {R, t0 - 60s, t0 - 1s}, suspect},
      {"established, never answered, handshake before the outage", {R, t0 - 5s, t0 - 5s}, suspect},
      {"draining from before", {D, t0 - 60s, t0 - 2s}, suspect},
      {"answered since the outage began (it ends the outage: shown for completeness)", {R, t0 - 60s, t0 + 1s},
       trusted},
      {"a dial made 10 ms ago: the queries of one burst share it", {K, now - 10ms, std::nullopt}, fresh},
      {"a dial handshaking, 39 ms old", {H, now - 39ms, std::nullopt}, fresh},
      {"a dial one round trip old: it had its chance", {K, now - 40ms, std::nullopt}, suspect},
      {"a dial made during the outage, 1.5 s ago", {H, now - 1500ms, std::nullopt}, suspect},
      {"a closed slot carries nothing", {C, now, std::nullopt}, suspect},
  };
  for (const Row& r : rows) {
    const SlotTrust got = slot_trust(r.s, t0, now, 40ms);
    if (got != r.expected) FAIL(nxdns::log::cat(r.situation, ": got ", name(got), ", want ", name(r.expected)).c_str());
  }
}

TEST(OutageWatch, PlacementTable) {
  struct Row {
    const char* situation;
    std::vector<OutageSlotView> slots;
    std::size_t max_open;
    std::optional<std::size_t> exclude;
    // Expected: nullopt = the usual placement decides.
    std::optional<std::size_t> slot;
    bool dial, replace;
  };
  auto eight = [](std::vector<OutageSlotView> first) {
    first.resize(8, OutageSlotView{C, 0, suspect, t0, false});
    return first;
  };
  const Row rows[] = {
      {"the connection from before is suspect: a fresh dial, not it", eight({{R, 1, suspect, t0, true}}), 8, {}, 1,
       true, false},
      {"an idle connection from before: still a fresh dial beside it", eight({{R, 0, suspect, t0, false}}), 8, {}, 1,
       true, false},
      {"a dial made within the last round trip takes the next exchange (a burst shares it)",
       eight({{R, 1, suspect, t0, true}, {K, 3, fresh, t0 + 1s, true}}), 8, {}, 1, false, false},
      {"the fresh dial is full: another one", eight({{R, 1, suspect, t0, true}, {K, 6, fresh, t0 + 1s, true}}), 8, {},
       2, true, false},
      {"a trusted session wins a tie with a fresh dial",
       eight({{K, 2, fresh, t0 + 1s, true}, {R, 2, trusted, t0 + 1s, true}}), 8, {}, 1, false, false},
      {"every slot open, the oldest suspect dial gives its slot up",
       {{R, 1, suspect, t0, true}, {H, 2, suspect, t0 + 1s, true}, {K, 1, suspect, t0 + 300ms, true},
        {K, 1, suspect, t0 + 2s, true}, {K, 1, suspect, t0 + 3s, true}, {K, 1, suspect, t0 + 4s, true},
        {K, 1, suspect, t0 + 5s, true}, {K, 1, suspect, t0 + 6s, true}},
       8, {}, 2, true, true},
      {"every slot a connection from before: an idle one gives its slot up",
       {{R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 0, suspect, t0, false}, {R, 1, suspect, t0, true},
        {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}},
       8, {}, 2, true, true},
      {"every slot a connection from before, all waited on: the usual placement",
       {{R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true},
        {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}, {R, 1, suspect, t0, true}},
       8, {}, std::nullopt, false, false},
      {"capped at one connection (keepalive 0): the suspect dial's slot is reused, not a ninth",
       eight({{K, 1, suspect, t0, true}}), 1, {}, 0, true, true},
      {"capped at one, the connection from before is waited on: the usual placement",
       eight({{R, 1, suspect, t0, true}}), 1, {}, std::nullopt, false, false},
      {"a re-send never goes back to its own session", eight({{K, 1, fresh, t0 + 1s, true}}), 8, 0, 1, true, false},
      {"a draining session takes nothing and does not count", eight({{D, 3, suspect, t0, true}}), 1, {}, 1, true,
       false},
  };
  for (const Row& r : rows) {
    const auto got = outage_placement(r.slots, r.max_open, 6, r.exclude);
    const bool same = got.has_value() == r.slot.has_value() &&
                      (!got || (got->slot == *r.slot && got->dial == r.dial && got->replace == r.replace));
    if (!same) {
      FAIL(nxdns::log::cat(r.situation, ": got ", got ? std::to_string(got->slot) : std::string("none"),
                           got && got->dial ? " dial" : "", got && got->replace ? " replace" : "")
               .c_str());
    }
  }
}

TEST(OutageWatch, RetireAfterOutageTable) {
  struct Row {
    const char* situation;
    SessionLife s;
    TimePoint proof_dialed;
    bool expected;
  };
  // The outage was seen from t0; the proof is a session dialled at t0 + 30 s
  // (the first query after the return) that just completed its handshake.
  const TimePoint proof = t0 + 30s;
  const Row rows[] = {
      {"the connection from before, silent since: on the old path", {R, t0 - 60s, t0 - 1s}, proof, true},
      {"a dial made during the outage: it went into the dead path", {H, t0 + 20s, std::nullopt}, proof, true},
      {"a dial made after the proof: the path it took is the new one", {K, proof + 50ms, std::nullopt}, proof, false},
      {"a session that answered since the outage began", {R, t0 - 60s, t0 + 1s}, proof, false},
      {"closed: nothing to retire", {C, t0 - 60s, std::nullopt}, proof, false},
      {"the proof is a connection from before: the old path came back as it was", {R, t0 - 60s, t0 - 1s}, t0 - 60s,
       false},
  };
  for (const Row& r : rows) {
    if (retire_after_outage(r.s, t0, r.proof_dialed) != r.expected) {
      FAIL(nxdns::log::cat(r.situation, ": want ", r.expected ? "retired" : "kept").c_str());
    }
  }
}
