#pragma once
// Where a transport's finished exchanges wait for the loop. The Transport
// contract says a completion never runs inside start() or cancel(), nor
// inside a socket or curl callback; both transports honour it by queueing
// here and flushing from a zero-delay timer.
#include <deque>
#include <string>

#include "loop/life_token.hpp"
#include "loop/scheduler.hpp"
#include "upstream/transport.hpp"

namespace nxdns::upstream {

class CompletionQueue {
 public:
  // `owner` names the transport in the log line of a completion that throws.
  CompletionQueue(loop::Scheduler& sched, std::string owner);
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  void push(Transport::ExchangeId id, Transport::Completion done, ExchangeResult&& result);
  // Cancel of an exchange that already finished: its completion never runs.
  // Returns whether it was waiting here.
  bool drop(Transport::ExchangeId id);
  // Teardown: nothing waiting will run.
  void clear();
  std::size_t size() const { return waiting_.size(); }

 private:
  struct Finished {
    Transport::ExchangeId id;
    Transport::Completion done;
    ExchangeResult result;
  };
  void flush();

  std::string owner_;
  std::deque<Finished> waiting_;
  loop::Timer timer_;
  // Ends with the queue (that is, with its transport): a completion that
  // destroys the transport ends the flush loop.
  loop::LifeToken life_;
};

}  // namespace nxdns::upstream
