#pragma once
// Fixed-bucket latency histogram (Prometheus-style cumulative on render).
#include <array>
#include <cstdint>
#include <optional>

#include "loop/scheduler.hpp"

namespace nxdns::upstream {

class LatencyHistogram {
 public:
  // Upper bounds in seconds. 40 ms is a typical DoT round trip; 5 s is the
  // default total budget, so the top buckets show budget trouble.
  static constexpr std::array<double, 11> bounds{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0};

  void observe(loop::Duration d);
  // Non-cumulative count of observations in bucket i (i == bounds.size() is +Inf).
  std::uint64_t bucket(std::size_t i) const { return counts_[i]; }
  std::uint64_t count() const { return count_; }
  double sum_seconds() const { return sum_; }
  // The q-quantile (0 < q <= 1) in seconds, estimated as Prometheus's
  // histogram_quantile does: find the bucket holding the q*count-th
  // observation and interpolate linearly inside it (the first bucket from
  // 0). Observations past the top bound cannot be placed: a quantile that
  // falls there is the top bound (a floor, "at least 5 s"). nullopt before
  // the first observation. The status page shows p50/p95 from this.
  std::optional<double> quantile(double q) const;

 private:
  std::array<std::uint64_t, bounds.size() + 1> counts_{};
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
};

}  // namespace nxdns::upstream
