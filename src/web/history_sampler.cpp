#include "web/history_sampler.hpp"

namespace nxdns::web {

HistorySampler::HistorySampler(loop::Scheduler& sched, Read read)
    : read_(std::move(read)), last_(read_()), timer_(sched) {
  timer_.arm(history_interval, [this] { tick(); });
}

void HistorySampler::tick() {
  // Re-armed first and relative to now: a late tick (a busy loop) widens
  // that one interval, and sample_between divides by the real width, so
  // queries/s stays right and samples never bunch up to catch up.
  timer_.arm(history_interval, [this] { tick(); });
  HistoryReading now = read_();
  ring_.push(sample_between(last_, now));
  last_ = now;
}

}  // namespace nxdns::web
