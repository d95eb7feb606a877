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

}  // namespace nxdns::upstream
