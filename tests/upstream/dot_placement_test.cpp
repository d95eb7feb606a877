// DoT placement as a table: every row names the daemon state it stands for
// (one open session, none, a serial upstream, a capped upstream), so a
// failing row says which promise broke.
#include "upstream/dot_placement.hpp"

#include <optional>
#include <vector>

#include "log/log.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::upstream::choose_placement;
using nxdns::upstream::dot_pipeline_depth;
using nxdns::upstream::dot_spread_depth;
using nxdns::upstream::PipeliningVerdict;
using nxdns::upstream::SessionState;
using nxdns::upstream::SlotView;

namespace {

constexpr auto C = SessionState::closed;
constexpr auto H = SessionState::handshaking;
constexpr auto R = SessionState::ready;
constexpr auto D = SessionState::draining;
constexpr auto unknown = PipeliningVerdict::unknown;
constexpr auto pipelining = PipeliningVerdict::pipelining;
constexpr auto serial = PipeliningVerdict::serial;

struct Row {
  const char* situation;
  PipeliningVerdict verdict;
  std::vector<SlotView> slots;
  std::size_t max_open;
  std::optional<std::size_t> exclude;
  // Expected: nullopt slot = no placement possible.
  std::optional<std::size_t> slot;
  bool dial;
  std::size_t headroom;
};

std::vector<SlotView> eight(std::vector<SlotView> first) {
  first.resize(8, SlotView{C, 0});
  return first;
}

std::vector<Row> rows() {
  return {
      {"nothing open, no verdict: dial the first slot", unknown, eight({}), 8, {}, 0, true, 0},
      {"cold burst, no verdict: spread, the first session takes a spread depth", unknown, eight({{H, 5}}), 8, {}, 0,
       false, 0},
      {"cold burst, no verdict: the next exchange dials a parallel session", unknown, eight({{H, 6}}), 8, {}, 1, true,
       0},
      {"one open session, no verdict: it takes the burst past the spread depth", unknown, eight({{R, 6}}), 8, {}, 0,
       false, 1},
      {"one open session, no verdict: headroom grows with the burst (5 sessions for 30)", unknown,
       eight({{R, 29}, {H, 0}, {H, 0}, {H, 0}}), 8, {}, 0, false, 1},
      {"one open session, no verdict: headroom already dialled", unknown,
       eight({{R, 29}, {H, 0}, {H, 0}, {H, 0}, {H, 0}}), 8, {}, 0, false, 0},
      {"one open session, pipelining: the burst stays on it with one spare", pipelining, eight({{R, 6}}), 8, {}, 0,
       false, 1},
      {"one open session, pipelining: spare already dialled", pipelining, eight({{R, 20}, {H, 0}}), 8, {}, 0, false,
       0},
      {"one open session at the pipeline depth: the spare takes the next, and a new spare is dialled", pipelining,
       eight({{R, dot_pipeline_depth}, {H, 0}}), 8, {}, 1, false, 1},
      {"a small load, pipelining: no headroom", pipelining, eight({{R, 2}}), 8, {}, 0, false, 0},
      {"the least loaded established session wins", pipelining, eight({{R, 9}, {R, 3}, {R, 7}}), 8, {}, 1, false,
       0},
      {"nothing open, pipelining (idle close): one dial carries the burst", pipelining, eight({{H, 12}}), 8, {}, 0,
       false, 1},
      {"nothing open at all, pipelining: dial", pipelining, eight({}), 8, {}, 0, true, 0},
      {"serial: an established session takes up to the spread depth", serial, eight({{R, 5}}), 8, {}, 0, false, 0},
      {"serial: past the spread depth a parallel session is dialled", serial, eight({{R, 6}}), 8, {}, 1, true, 0},
      {"serial: a handshaking session with room takes it", serial, eight({{R, 6}, {H, 2}}), 8, {}, 1, false, 0},
      {"serial, every slot loaded: least loaded, established on a tie", serial,
       eight({{H, 7}, {R, 7}, {R, 8}, {R, 9}, {R, 9}, {R, 9}, {R, 9}, {R, 9}}), 8, {}, 1, false, 0},
      {"re-send: never onto the excluded session", serial, eight({{R, 20}, {H, 0}}), 8, 0, 1, false, 0},
      {"re-send: nothing else open, dial", serial, eight({{R, 20}}), 8, 0, 1, true, 0},
      {"re-send: the only slot is excluded", serial, {{R, 20}}, 1, 0, std::nullopt, false, 0},
      {"capped at one (keepalive 0): no parallel dial, the open one takes it", serial, eight({{R, 6}}), 1, {}, 0,
       false, 0},
      {"capped at one, no verdict: no headroom", unknown, eight({{R, 6}}), 1, {}, 0, false, 0},
      {"capped: a draining session does not count, its replacement is dialled", unknown, eight({{D, 3}}), 1, {}, 1,
       true, 0},
      {"capped: with a replacement up, the draining one takes nothing", unknown, eight({{D, 3}, {R, 0}}), 1, {}, 1,
       false, 0},
      {"every slot draining: the least loaded still answers", unknown, {{D, 4}, {D, 2}}, 2, {}, 1, false, 0},
  };
}

}  // namespace

TEST_GROUP(DotPlacement){};

TEST(DotPlacement, Table) {
  for (const Row& r : rows()) {
    const auto got = choose_placement(r.verdict, r.slots, r.max_open, r.exclude);
    if (!r.slot) {
      if (got) FAIL(nxdns::log::cat(r.situation, ": placed on ", got->slot, ", want no placement").c_str());
      continue;
    }
    if (!got) FAIL(nxdns::log::cat(r.situation, ": no placement").c_str());
    if (got->slot != *r.slot || got->dial != r.dial || got->headroom != r.headroom) {
      FAIL(nxdns::log::cat(r.situation, ": got slot ", got->slot, " dial ", got->dial, " headroom ", got->headroom,
                           ", want slot ", *r.slot, " dial ", r.dial, " headroom ", r.headroom)
               .c_str());
    }
  }
}

TEST(DotPlacement, ThirtyNamesOnOneOpenSessionDialFiveSessionsWithoutAVerdict) {
  // Replays a burst through the policy: every exchange stays on the open
  // session, and the headroom dialled for a possible serial verdict is the
  // spread's session count.
  std::vector<SlotView> slots = eight({{R, 0}});
  for (int i = 0; i < 30; ++i) {
    const auto c = choose_placement(unknown, slots, 8);
    CHECK_TRUE(c.has_value());
    LONGS_EQUAL(0, c->slot);
    ++slots[c->slot].load;
    std::size_t h = c->headroom;
    for (auto& s : slots) {
      if (h > 0 && s.state == C) {
        s.state = H;
        --h;
      }
    }
  }
  std::size_t open = 0;
  for (const auto& s : slots) open += s.state != C;
  LONGS_EQUAL((30 + dot_spread_depth - 1) / dot_spread_depth, open);
}
