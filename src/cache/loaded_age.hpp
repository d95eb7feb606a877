#pragma once
// How old an answer read from the cache file is, as pure functions of plain
// inputs (table-tested in tests/cache/loaded_age_test.cpp).
//
// The file says how old each entry was when it was written and when, by
// the wall clock, that was. Across a restart or a reboot only the wall
// clock spans the gap, and on a Pi without RTC it is not always right: it
// may start behind the time the file was written (no saved clock, no NTP
// yet). A clock behind the file proves the gap cannot be measured, so every
// entry is loaded as stale: RFC 8767 lets a stale answer stand in while the
// upstreams cannot be reached, and a fresh answer always replaces it while
// one can. A clock that reads ahead of the file is believed.
#include <cstdint>
#include <optional>

#include "cache/policy.hpp"
#include "loop/scheduler.hpp"

namespace nxdns::cache {

enum class ClockVerdict : std::uint8_t {
  trusted,      // now is at or after the file's time: entries age by the gap
  behind_file,  // now is before it: the gap is unknown, entries load as stale only
};
const char* describe(ClockVerdict v);

struct FileClock {
  ClockVerdict verdict = ClockVerdict::trusted;
  std::uint64_t elapsed_seconds = 0;  // since the file was written; 0 when behind
};

// Whole seconds, Unix time.
FileClock judge_clock(std::int64_t written_unix, std::int64_t now_unix);

// The entry's age in the loaded cache (stored_at on the loop's clock, which
// counts from this boot), or nullopt when it is of no use any more: past
// its TTL and the stale window (with serve-stale off the window is 0, so
// only fresh entries load). Trusted clock: aged by the gap. Clock behind
// the file: at least as old as its TTL, i.e. stale from the first query on,
// and never younger than it was when written.
std::optional<EntryAge> loaded_age(std::uint32_t ttl_seconds, std::uint32_t age_when_written, const FileClock& clock,
                                   loop::TimePoint now, loop::Duration stale_window);

}  // namespace nxdns::cache
