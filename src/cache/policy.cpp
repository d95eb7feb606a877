#include "cache/policy.hpp"

#include <chrono>

namespace nxdns::cache {

const char* describe(Freshness f) {
  switch (f) {
    case Freshness::fresh: return "fresh";
    case Freshness::fresh_prefetch: return "fresh_prefetch";
    case Freshness::stale: return "stale";
    case Freshness::expired: return "expired";
  }
  return "unknown";
}

std::uint32_t age_seconds(const EntryAge& e, loop::TimePoint now) {
  if (now <= e.stored_at) return 0;
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(now - e.stored_at).count();
  return s > 0xFFFFFFFFLL ? 0xFFFFFFFFu : static_cast<std::uint32_t>(s);
}

Freshness freshness_at(const EntryAge& e, loop::TimePoint now, const FreshnessRules& rules) {
  const loop::Duration ttl = std::chrono::seconds(e.ttl_seconds);
  const loop::TimePoint expires = e.stored_at + ttl;
  if (now < expires) {
    const loop::Duration left = expires - now;
    // left <= ttl * percent / 100, in integer arithmetic on the tick count.
    if (left.count() * 100 <= ttl.count() * static_cast<loop::Duration::rep>(rules.prefetch_percent))
      return Freshness::fresh_prefetch;
    return Freshness::fresh;
  }
  if (now < expires + rules.stale_window) return Freshness::stale;
  return Freshness::expired;
}

bool may_serve_stale(bool serve_stale, Freshness entry, RefreshState refresh) {
  if (!serve_stale || entry != Freshness::stale) return false;
  switch (refresh) {
    case RefreshState::timer_elapsed:
    case RefreshState::every_attempt_failed:
    case RefreshState::error_answer:
    case RefreshState::upstreams_failing:
    case RefreshState::failed_recently: return true;
    case RefreshState::waiting:
    case RefreshState::answered: return false;
  }
  return false;
}

RefreshState refresh_state_on_arrival(std::optional<loop::TimePoint> refresh_failed_at, loop::TimePoint now,
                                      loop::Duration recheck, bool some_upstream_healthy) {
  if (refresh_failed_at && now < *refresh_failed_at + recheck) return RefreshState::failed_recently;
  return some_upstream_healthy ? RefreshState::waiting : RefreshState::upstreams_failing;
}

bool may_prefetch(std::span<const upstream::EntryLoad> entries) {
  for (const auto& e : entries) {
    if (e.health != upstream::HealthState::healthy) continue;
    if (e.queue_depth == 0 && e.in_flight + 2 <= upstream::max_in_flight_per_entry) return true;
  }
  return false;
}

bool may_refresh_behind_stale(std::span<const upstream::EntryLoad> entries) {
  for (const auto& e : entries) {
    if (e.queue_depth == 0 && e.in_flight < upstream::max_in_flight_per_entry / 4) return true;
  }
  return false;
}

}  // namespace nxdns::cache
