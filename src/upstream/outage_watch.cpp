#include "upstream/outage_watch.hpp"

#include <algorithm>
#include <chrono>

namespace nxdns::upstream {

namespace {

constexpr loop::Duration window_min = std::chrono::milliseconds(10);
constexpr loop::Duration window_max = std::chrono::milliseconds(100);
constexpr loop::Duration window_unknown = std::chrono::milliseconds(50);

bool dialling(SessionState s) { return s == SessionState::connecting || s == SessionState::handshaking; }
bool established(SessionState s) { return s == SessionState::ready || s == SessionState::draining; }

}  // namespace

bool OutageWatch::life() {
  const bool ended = seen();
  failures_ = 0;
  return ended;
}

void OutageWatch::failure(loop::TimePoint now) {
  if (failures_ == 0) since_ = now;
  if (failures_ < outage_failures) ++failures_;
}

bool stall_shows_outage(StallKind kind, loop::Duration waited, std::optional<loop::Duration> latency_floor) {
  if (kind != StallKind::silent) return false;
  return waited >= std::max(latency_floor.value_or(loop::Duration::zero()) * silent_rtts, silent_min);
}

loop::Duration fresh_dial_window(std::optional<loop::Duration> latency_floor) {
  if (!latency_floor) return window_unknown;
  return std::clamp(*latency_floor, window_min, window_max);
}

SlotTrust slot_trust(const SessionLife& s, loop::TimePoint outage_since, loop::TimePoint now,
                     std::optional<loop::Duration> latency_floor) {
  if (s.state == SessionState::closed) return SlotTrust::suspect;
  if (s.alive_at && *s.alive_at >= outage_since) return SlotTrust::trusted;
  if (dialling(s.state) && now - s.dialed_at < fresh_dial_window(latency_floor)) return SlotTrust::fresh_dial;
  return SlotTrust::suspect;
}

bool retire_after_outage(const SessionLife& s, loop::TimePoint since, loop::TimePoint proof_dialed) {
  if (proof_dialed < since || s.state == SessionState::closed) return false;
  if (established(s.state)) return !s.alive_at || *s.alive_at < since;
  return s.dialed_at < proof_dialed;
}

std::optional<OutagePlacement> outage_placement(std::span<const OutageSlotView> slots, std::size_t max_open,
                                                std::size_t depth, std::optional<std::size_t> exclude) {
  std::size_t open = 0;
  std::optional<std::size_t> best_fresh, free_slot, oldest_dial, idle_suspect;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const OutageSlotView& s = slots[i];
    // Counted as placement counts them (dot_placement.cpp): a draining
    // session is on its way out.
    if (s.state != SessionState::closed && s.state != SessionState::draining) ++open;
    if (exclude && *exclude == i) continue;
    if (s.state == SessionState::closed) {
      if (!free_slot) free_slot = i;
      continue;
    }
    if (s.state == SessionState::draining) continue;
    if (s.trust != SlotTrust::suspect) {
      if (s.load < depth && (!best_fresh || s.load < slots[*best_fresh].load ||
                             (s.load == slots[*best_fresh].load && established(s.state) &&
                              !established(slots[*best_fresh].state)))) {
        best_fresh = i;
      }
      continue;
    }
    // Suspect: a dial that had its chance (its exchanges were never written
    // and move with the slot), or an established session nobody waits on.
    if (dialling(s.state)) {
      if (!oldest_dial || s.dialed_at < slots[*oldest_dial].dialed_at) oldest_dial = i;
    } else if (!s.carries_live && !idle_suspect) {
      idle_suspect = i;
    }
  }
  if (best_fresh) return OutagePlacement{*best_fresh, false, false};
  if (free_slot && (open < max_open || open == 0)) return OutagePlacement{*free_slot, true, false};
  if (oldest_dial) return OutagePlacement{*oldest_dial, true, true};
  if (idle_suspect) return OutagePlacement{*idle_suspect, true, true};
  return std::nullopt;
}

}  // namespace nxdns::upstream
