#include "upstream/dot_placement.hpp"

#include <algorithm>

namespace nxdns::upstream {

namespace {

std::size_t sessions_for(std::size_t exchanges, std::size_t depth) { return (exchanges + depth - 1) / depth; }

}  // namespace

std::optional<PlacementChoice> choose_placement(PipeliningVerdict verdict, std::span<const SlotView> slots,
                                                std::size_t max_open, std::optional<std::size_t> exclude) {
  std::size_t open = 0;   // dialled slots not draining, the excluded one included
  std::size_t total = 0;  // exchanges they carry
  std::size_t free_count = 0;
  std::optional<std::size_t> best_ready, best_opening, best_open, best_draining, free_slot;
  bool all_loaded = true;  // every candidate session that takes work carries a spread depth
  auto load = [&](std::optional<std::size_t> i) { return slots[*i].load; };
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const SlotView& s = slots[i];
    // A draining session is on its way out (often because the server asked:
    // edns-tcp-keepalive 0): it neither counts against max_open nor takes
    // work while anything else can.
    if (s.state != SessionState::closed && s.state != SessionState::draining) {
      ++open;
      total += s.load;
    }
    if (exclude && *exclude == i) continue;
    switch (s.state) {
      case SessionState::closed:
        ++free_count;
        if (!free_slot) free_slot = i;
        break;
      case SessionState::draining:
        if (!best_draining || s.load < load(best_draining)) best_draining = i;
        break;
      case SessionState::connecting:
      case SessionState::handshaking:
      case SessionState::ready: {
        const bool ready = s.state == SessionState::ready;
        if (s.load < dot_spread_depth) all_loaded = false;
        if (ready && (!best_ready || s.load < load(best_ready))) best_ready = i;
        if (!ready && (!best_opening || s.load < load(best_opening))) best_opening = i;
        // Least loaded overall; on a tie an established session wins (no
        // handshake to wait for).
        if (!best_open || s.load < load(best_open) ||
            (s.load == load(best_open) && ready && slots[*best_open].state != SessionState::ready)) {
          best_open = i;
        }
        break;
      }
    }
  }
  const bool may_dial = free_slot && (open < max_open || open == 0);
  const std::size_t after = total + 1;  // load once this exchange is placed
  // Background dials: sessions that take nothing now, so that they are up
  // when the load grows past what the open ones should carry, or when the
  // upstream proves serial and the unanswered tail is re-sent to them.
  auto headroom = [&](std::size_t want_open, bool dialing_chosen) -> std::size_t {
    const std::size_t have = open + (dialing_chosen ? 1 : 0);
    const std::size_t cap = std::min(want_open, max_open);
    const std::size_t spare = free_count - (dialing_chosen ? 1 : 0);
    return cap > have ? std::min(cap - have, spare) : 0;
  };
  // Unknown: as many sessions as a spread would use, in case the upstream
  // proves serial. Pipelining: what the depth needs, plus one spare once a
  // burst is under way.
  const std::size_t want_open = verdict == PipeliningVerdict::unknown
                                    ? sessions_for(after, dot_spread_depth)
                                    : sessions_for(after, dot_pipeline_depth) + (after > dot_spread_depth ? 1 : 0);

  if (verdict != PipeliningVerdict::serial) {
    // The cheapest place: an established session (no handshake), deep.
    if (best_ready && load(best_ready) < dot_pipeline_depth) {
      return PlacementChoice{*best_ready, false, headroom(want_open, false)};
    }
    if (verdict == PipeliningVerdict::pipelining) {
      // Known to pipeline: one handshake carries the burst.
      if (best_opening && load(best_opening) < dot_pipeline_depth) {
        return PlacementChoice{*best_opening, false, headroom(want_open, false)};
      }
      if (may_dial) return PlacementChoice{*free_slot, true, headroom(want_open, true)};
    }
  }
  // Serial, or nothing established and no verdict yet: spread.
  if (best_ready && load(best_ready) < dot_spread_depth) return PlacementChoice{*best_ready, false, 0};
  // Everything open is loaded (or nothing is open): dial a free slot in
  // parallel. Being empty, it takes this exchange and queues it until its
  // handshake completes.
  if (all_loaded && may_dial) return PlacementChoice{*free_slot, true, 0};
  if (best_open) return PlacementChoice{*best_open, false, 0};
  // Every allowed slot is draining: it still answers what it is given.
  if (best_draining) return PlacementChoice{*best_draining, false, 0};
  if (free_slot) return PlacementChoice{*free_slot, true, 0};
  return std::nullopt;
}

}  // namespace nxdns::upstream
