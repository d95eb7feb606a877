#include "upstream/completion_queue.hpp"

#include <algorithm>
#include <exception>

#include "log/log.hpp"

namespace nxdns::upstream {

CompletionQueue::CompletionQueue(loop::Scheduler& sched, std::string owner) : owner_(std::move(owner)), timer_(sched) {}

void CompletionQueue::push(Transport::ExchangeId id, Transport::Completion done, ExchangeResult&& result) {
  waiting_.push_back(Finished{id, std::move(done), std::move(result)});
  if (!timer_.armed()) timer_.arm(loop::Duration::zero(), [this]() { flush(); });
}

bool CompletionQueue::drop(Transport::ExchangeId id) {
  const auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Finished& f) { return f.id == id; });
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  return true;
}

void CompletionQueue::clear() {
  timer_.disarm();
  waiting_.clear();
}

void CompletionQueue::flush() {
  const loop::LifeToken::Watch queue = life_.watch();
  while (!waiting_.empty()) {
    Finished f = std::move(waiting_.front());
    waiting_.pop_front();
    // Runs from a timer callback (C frames below): nothing may unwind.
    try {
      if (f.done) f.done(std::move(f.result));
    } catch (const std::exception& e) {
      log::error(owner_, ": exchange completion threw: ", e.what());
    } catch (...) {
      log::error(owner_, ": exchange completion threw");
    }
    if (!queue.alive()) return;  // the completion destroyed our transport
  }
}

}  // namespace nxdns::upstream
