#include "upstream/handshake_pacer.hpp"

#include <algorithm>

namespace nxdns::upstream {

HandshakePacer::HandshakePacer(loop::Scheduler& sched) : turn_end_(sched) {}

bool HandshakePacer::take_turn(Stepper& s) {
  if (!turn_taken_ && line_.empty()) {
    turn_taken_ = true;
    end_turn_after(loop::Duration::zero());
    return true;
  }
  if (!waiting(s)) {
    line_.push_back(&s);
    ++deferred_total_;
  }
  if (!turn_end_.armed()) end_turn_after(loop::Duration::zero());
  return false;
}

void HandshakePacer::hold_for_answers() {
  // Nobody waiting: nothing to hold back (and no timer armed per answer on
  // the warm path).
  if (held_ || line_.empty()) return;
  held_ = true;
  turn_taken_ = true;
  end_turn_after(settle);
}

void HandshakePacer::leave(Stepper& s) { line_.erase(std::remove(line_.begin(), line_.end(), &s), line_.end()); }

bool HandshakePacer::waiting(const Stepper& s) const {
  return std::find(line_.begin(), line_.end(), &s) != line_.end();
}

void HandshakePacer::end_turn_after(loop::Duration d) {
  // A zero-delay timer fires after the socket events of the next loop
  // iteration (libevent activates I/O before timers), so whatever became
  // readable meanwhile is served before the next step.
  turn_end_.arm(d, [this]() { end_turn(); });
}

void HandshakePacer::end_turn() {
  turn_taken_ = false;
  held_ = false;
  if (line_.empty()) return;
  Stepper* next = line_.front();
  line_.pop_front();
  turn_taken_ = true;
  end_turn_after(loop::Duration::zero());
  // Last: the step may close its session, dial another, or take or leave the
  // line; the pacer is consistent before it runs.
  next->on_handshake_turn();
}

}  // namespace nxdns::upstream
