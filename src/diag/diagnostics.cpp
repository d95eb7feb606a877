#include "diag/diagnostics.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "log/log.hpp"

namespace nxdns::diag {

Diagnostics::Diagnostics(loop::Scheduler& sched, DiagnosticsOptions opts, std::function<WallClock::time_point()> wall)
    : sched_(sched), opts_(opts), wall_(std::move(wall)) {}

void Diagnostics::on_attempt(const upstream::AttemptReport& r) {
  using upstream::Cause;
  if (r.cause == Cause::cancelled) return;
  const auto now = sched_.now();
  const std::string empty;
  const std::string& url = r.label ? *r.label : empty;
  const std::string& detail = r.detail ? *r.detail : empty;
  auto it = open_.find(r.entry_index);

  if (r.cause == Cause::ok) {
    if (it == open_.end()) return;
    Episode ep = std::move(it->second);
    open_.erase(it);
    ep.open = false;
    ep.ended = now;
    ep.ended_wall = wall_();
    log::info("upstream ", ep.upstream, " (", ep.url, "): recovered after ", format_seconds(ep.ended - ep.started),
              " and ", ep.failures, " failed attempt(s); last cause ", upstream::describe(ep.last_cause), " (episode ",
              ep.id, ")");
    closed_.push_back(std::move(ep));
    while (closed_.size() > opts_.capacity) closed_.pop_front();
    return;
  }

  if (it == open_.end()) {
    Episode ep;
    ep.id = next_id_++;
    ep.upstream = r.entry_index;
    ep.url = url;
    ep.started = now;
    ep.started_wall = wall_();
    ep.first_cause = r.cause;
    ep.first_detail = detail;
    it = open_.emplace(r.entry_index, std::move(ep)).first;
    log::warn("upstream ", r.entry_index, " (", url, "): failing: ", upstream::describe(r.cause),
              detail.empty() ? "" : ": ", detail, " (episode ", it->second.id, ")");
  } else {
    log::debug("upstream ", r.entry_index, " (", url, "): still failing: ", upstream::describe(r.cause),
               detail.empty() ? "" : ": ", detail, " (episode ", it->second.id, ", failure ",
               it->second.failures + 1, ")");
  }
  Episode& ep = it->second;
  ++ep.failures;
  ++ep.by_cause[static_cast<std::size_t>(r.cause)];
  ep.last_failure = now;
  ep.last_cause = r.cause;
  ep.last_detail = detail;
}

std::vector<Episode> Diagnostics::episodes() const {
  std::vector<Episode> out;
  out.reserve(open_.size() + closed_.size());
  for (const auto& [idx, ep] : open_) out.push_back(ep);
  std::sort(out.begin(), out.end(), [](const Episode& a, const Episode& b) { return a.id > b.id; });
  for (auto it = closed_.rbegin(); it != closed_.rend(); ++it) out.push_back(*it);
  return out;
}

std::string format_seconds(loop::Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  const long long whole = ms / 1000, frac = ms % 1000;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%03lld s", whole, frac < 0 ? -frac : frac);
  return buf;
}

std::string format_utc(WallClock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  long long frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s.%03lldZ", date, frac);
  return buf;
}

}  // namespace nxdns::diag
