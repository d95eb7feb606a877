#pragma once
// The cache's decisions as pure functions of plain inputs, each pinned by a
// table test (tests/cache/policy_test.cpp): how fresh an entry is, whether a
// stale answer may be served (RFC 8767), whether a prefetch may start.
#include <cstdint>
#include <optional>
#include <span>

#include "loop/scheduler.hpp"
#include "upstream/pool.hpp"

namespace nxdns::cache {

enum class Freshness : std::uint8_t {
  fresh,           // within its TTL
  fresh_prefetch,  // within its TTL, in the last part of it: refresh in the background
  stale,           // past its TTL, inside the stale window: only for RFC 8767 use
  expired,         // past the stale window: as good as absent
};
const char* describe(Freshness f);

struct EntryAge {
  loop::TimePoint stored_at{};
  std::uint32_t ttl_seconds = 0;
};

struct FreshnessRules {
  // unbound's `prefetch` refreshes in the last 10 % of the original TTL.
  std::uint32_t prefetch_percent = 10;
  // 0 = serve-stale off (entries are gone once their TTL ends).
  loop::Duration stale_window{};
};

Freshness freshness_at(const EntryAge& e, loop::TimePoint now, const FreshnessRules& rules);
// Whole seconds since the entry was stored (what TTLs are decremented by).
std::uint32_t age_seconds(const EntryAge& e, loop::TimePoint now);

// What has happened to the refresh of a stale entry when the question is asked.
enum class RefreshState : std::uint8_t {
  waiting,           // the exchange is still within the client response timer
  timer_elapsed,     // the client response timer (1.5 s, inside RFC 8767 §5's 1.8 s) ran out first
  every_attempt_failed,
  error_answer,      // the upstream answered SERVFAIL or REFUSED
  // Every upstream failed since its last success (none is `healthy`): the
  // refresh is sent but nothing suggests it will answer in time, so the
  // client gets the stale answer at once (RFC 8767 §5: a recent failure to
  // refresh is answered from stale data without waiting).
  upstreams_failing,
  // A refresh of this entry failed within the failure recheck window (RFC
  // 8767 §4: refreshes from a failing upstream no more often than every
  // 30 s; §5's "failure recheck" timer): the stale answer goes at once and
  // nothing for this name is sent upstream until the window ends.
  failed_recently,
  answered,          // a usable answer arrived
};

// RFC 8767: a stale answer only when serve-stale is on, the entry is stale
// (not fresh: a fresh answer always wins; not expired), and the refresh
// failed or is too slow for the client.
bool may_serve_stale(bool serve_stale, Freshness entry, RefreshState refresh);

// What is known of a stale entry's refresh when a client asks for it, before
// anything is sent: failed_recently while `now` is inside the recheck window
// that the entry's last failed refresh opened ([failed_at, failed_at +
// recheck); a zero window never holds), else upstreams_failing when no
// upstream is healthy, else waiting (a refresh is started or joined).
RefreshState refresh_state_on_arrival(std::optional<loop::TimePoint> refresh_failed_at, loop::TimePoint now,
                                      loop::Duration recheck, bool some_upstream_healthy);

// A prefetch never takes the last free capacity from client queries: it may
// start only when some healthy entry has nobody queued and at least two free
// exchanges (one for the prefetch, one left for a client).
bool may_prefetch(std::span<const upstream::EntryLoad> entries);

// While every upstream is failing (stale answers served at once), the
// refresh behind a stale answer is in effect a probe for the upstream's
// return: a few find it, and a refresh per stale name asked (20 a second in
// the outage bench, each held for the attempt budget against a black hole)
// would fill the entry and queue the clients' own queries behind them. A
// refresh starts only while some entry has nobody queued and uses at most a
// quarter of its in-flight cap, whatever its health.
bool may_refresh_behind_stale(std::span<const upstream::EntryLoad> entries);

}  // namespace nxdns::cache
