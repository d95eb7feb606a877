#pragma once
// At most one expensive TLS handshake step per loop turn, per upstream, and
// none while answers that just arrived are still on their way to clients.
//
// A cold burst dials several sessions of one upstream at once (a spread, in
// case the upstream answers one query at a time per connection). Each
// handshake costs public-key arithmetic on the loop thread: the ClientHello's
// key share, then, when the server's flight arrives, the key agreement and
// the certificate checks: millions of instructions each, tens of ms on a
// Pi 4 (docs/performance.md, "Handshake CPU"). Run back to back they hold
// the loop, and the first session up, which already carries the whole
// burst (DotTransport::hedge_onto), cannot hand its answers on until every
// other handshake is done: on a slow CPU a cold burst then waits for all of
// the handshakes instead of one (docs/performance.md, "A cold burst on a
// slow CPU", measures it with the daemon's CPU held to a Pi-like share).
//
// Paced, the loop polls its sockets between any two steps, and answers that
// arrive get `settle` to reach their clients (the completion queue and the
// pool deliver through zero-delay timers, microseconds each) before the next
// step starts. A step waits at most one step plus one settle per answer
// batch, so handshakes are never starved, however busy the upstream.
//
// The pacer only orders work: nothing is dropped or timed out here (a
// session's dial timeout still bounds its handshake). The line is FIFO.
#include <cstddef>
#include <cstdint>
#include <deque>

#include "loop/scheduler.hpp"

namespace nxdns::upstream {

class HandshakePacer {
 public:
  // What waits in the line: called back, from the loop, on its turn.
  class Stepper {
   public:
    virtual void on_handshake_turn() = 0;

   protected:
    ~Stepper() = default;
  };

  // Long enough for the zero-delay hops that carry an answer to its client,
  // short next to one handshake step (milliseconds of CPU on a PC, tens of
  // them on a Pi).
  static constexpr loop::Duration settle = std::chrono::milliseconds(2);

  explicit HandshakePacer(loop::Scheduler& sched);
  HandshakePacer(const HandshakePacer&) = delete;
  HandshakePacer& operator=(const HandshakePacer&) = delete;

  // True: this turn's step is the caller's; it does it now. False: the turn
  // is taken; the caller is queued (once) and called back on a later turn.
  bool take_turn(Stepper& s);
  // Answers were just read: while anyone waits in the line, no step for
  // `settle`. Once per turn, so a steady flow of answers delays the line by
  // one settle per step at most.
  void hold_for_answers();
  // Leaves the line (the session closed). No call back after this.
  void leave(Stepper& s);
  bool waiting(const Stepper& s) const;
  std::size_t line_length() const { return line_.size(); }
  // Steps that had to wait for a later turn, over the pacer's life.
  std::uint64_t deferred_total() const { return deferred_total_; }

 private:
  // (Re)arms the end of this turn `d` from now.
  void end_turn_after(loop::Duration d);
  void end_turn();

  loop::Timer turn_end_;
  std::deque<Stepper*> line_;
  bool turn_taken_ = false;  // a step ran, or answers settle, this turn
  bool held_ = false;        // hold_for_answers() already pushed this turn's end
  std::uint64_t deferred_total_ = 0;
};

}  // namespace nxdns::upstream
