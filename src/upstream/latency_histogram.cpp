#include "upstream/latency_histogram.hpp"

#include <chrono>

namespace nxdns::upstream {

void LatencyHistogram::observe(loop::Duration d) {
  const double s = std::chrono::duration<double>(d).count();
  std::size_t i = 0;
  while (i < bounds.size() && s > bounds[i]) ++i;
  ++counts_[i];
  ++count_;
  sum_ += s;
}

std::optional<double> LatencyHistogram::quantile(double q) const {
  if (count_ == 0) return std::nullopt;
  const double rank = q * static_cast<double>(count_);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const std::uint64_t in = counts_[i];
    if (in != 0 && static_cast<double>(below + in) >= rank) {
      const double lower = i == 0 ? 0.0 : bounds[i - 1];
      const double frac = (rank - static_cast<double>(below)) / static_cast<double>(in);
      return lower + (bounds[i] - lower) * frac;
    }
    below += in;
  }
  return bounds.back();
}

}  // namespace nxdns::upstream
