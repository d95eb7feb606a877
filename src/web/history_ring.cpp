#include "web/history_ring.hpp"

#include <chrono>

namespace nxdns::web {

namespace {
template <typename T>
T delta(T before, T after) {
  return after > before ? after - before : T{};
}
}  // namespace

HistorySample sample_between(const HistoryReading& before, const HistoryReading& after) {
  HistorySample s;
  const double dt = std::chrono::duration<double>(after.at - before.at).count();
  if (dt > 0) s.queries_per_second = static_cast<double>(delta(before.replies, after.replies)) / dt;
  const std::uint64_t n = delta(before.exchanges, after.exchanges);
  if (n != 0) s.latency_seconds = delta(before.exchange_seconds, after.exchange_seconds) / static_cast<double>(n);
  s.queued = delta(before.queued, after.queued);
  s.queue_depth = after.queue_depth;
  s.in_flight = after.in_flight;
  return s;
}

void HistoryRing::push(const HistorySample& s) {
  ring_[next_] = s;
  next_ = (next_ + 1) % history_capacity;
  if (size_ < history_capacity) ++size_;
}

}  // namespace nxdns::web
