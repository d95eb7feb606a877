#include "cache/loaded_age.hpp"

#include <algorithm>
#include <chrono>

namespace nxdns::cache {

namespace {
// Ages beyond this are all "expired" alike (a TTL is at most 2^31 s, RFC
// 2181 §8; the stale window a week): capping keeps the arithmetic below far
// from overflowing whatever the two clocks say.
constexpr std::uint64_t age_cap = std::uint64_t{1} << 34;
}  // namespace

const char* describe(ClockVerdict v) { return v == ClockVerdict::trusted ? "trusted" : "behind_file"; }

FileClock judge_clock(std::int64_t written_unix, std::int64_t now_unix) {
  if (now_unix < written_unix) return {ClockVerdict::behind_file, 0};
  // Unsigned: the difference of two int64 fits, whatever they are.
  const std::uint64_t gap = static_cast<std::uint64_t>(now_unix) - static_cast<std::uint64_t>(written_unix);
  return {ClockVerdict::trusted, std::min(gap, age_cap)};
}

std::optional<EntryAge> loaded_age(std::uint32_t ttl_seconds, std::uint32_t age_when_written, const FileClock& clock,
                                   loop::TimePoint now, loop::Duration stale_window) {
  const std::uint64_t age = clock.verdict == ClockVerdict::trusted
                                ? std::min<std::uint64_t>(age_when_written + clock.elapsed_seconds, age_cap)
                                : std::max<std::uint64_t>(age_when_written, ttl_seconds);
  // freshness_at: expired from ttl + stale_window on. Compared in whole
  // seconds before anything becomes a Duration.
  const auto window = static_cast<std::uint64_t>(
      std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(stale_window).count()));
  if (age >= std::uint64_t{ttl_seconds} + window) return std::nullopt;
  return EntryAge{now - std::chrono::seconds(static_cast<std::int64_t>(age)), ttl_seconds};
}

}  // namespace nxdns::cache
