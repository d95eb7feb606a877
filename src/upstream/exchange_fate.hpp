#pragma once
// What becomes of a DoT exchange when a session carrying one of its copies
// ends, as a pure function of plain inputs, so that every branch is
// table-tested without a wire (tests/upstream/exchange_fate_test.cpp).
// DotTransport::settle builds the inputs, asks fate() and carries it out.
//
// Invariants the transport keeps, and this model relies on:
//  - An exchange has at most two copies on the wire at once, never two on
//    one session: its own, and one more (a hedge, its re-send, or an outage
//    copy). A second copy is made only while it has one; a copy that dies
//    with its session leaves the other to carry the exchange alone.
//  - One redial per exchange, ever (retry_decision.hpp), and at most one
//    re-send; a hedge copy is not the re-send.
//  - A copy never written is placed again at most max_unwritten_replacements
//    times, without spending the redial.
#include <array>
#include <cstddef>
#include <cstdint>

#include "upstream/transport.hpp"

namespace nxdns::upstream {

// Exchanges of a session that died before writing them (the server never saw
// them) are placed again at most this many times each, not spending their
// redial: enough to ride out a connection or two lost under them, never a
// loop against an upstream whose every connection dies.
inline constexpr unsigned max_unwritten_replacements = 2;

// One copy of an exchange, queued or on the wire on one session.
struct Copy {
  std::size_t slot = 0;  // the session carrying it (an index among the upstream's slots)
  bool reused = false;   // that session was established when the copy was placed on it
  // That session's responses() when the copy was placed: answers after it
  // show the connection worked while it held this copy.
  std::uint64_t answers_before = 0;
};

// An exchange's copies: first the one it was placed with, then its hedge,
// re-send or outage copy. When one goes, the other (if any) becomes the
// first: it carries the exchange on alone.
class Copies {
 public:
  static constexpr std::size_t max = 2;

  Copies() = default;
  explicit Copies(const Copy& only) { add(only); }

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const Copy* begin() const { return copies_.data(); }
  const Copy* end() const { return copies_.data() + count_; }
  Copy& operator[](std::size_t i) { return copies_[i]; }
  const Copy& operator[](std::size_t i) const { return copies_[i]; }

  // The copy on `slot`, or nullptr.
  const Copy* on(std::size_t slot) const;
  // The exchange has exactly one copy, and it is on `slot`: what the second
  // chances (hedge, re-send) ask before they add a copy.
  bool only_on(std::size_t slot) const { return count_ == 1 && copies_[0].slot == slot; }
  // False, adding nothing, when the exchange already has `max` copies or one
  // on the same slot.
  bool add(const Copy& c);
  // The copy on `slot` is gone (its session ended or let it go).
  void remove(std::size_t slot);
  // Removes the i-th copy.
  void remove_at(std::size_t i);

 private:
  std::array<Copy, max> copies_{};
  std::size_t count_ = 0;
};

// What an exchange has spent of its second chances. fate() reads `redial`
// and `unwritten_replacements`; the others gate adding a second copy.
struct Spent {
  bool redial = false;  // its one redial (retry_decision.hpp)
  // Its one re-send: a second copy on another session, made when its
  // session proved serial or left it unanswered (dot_transport_resend.cpp).
  bool resend = false;
  // Its copy on a cold burst's first session up (DotTransport::hedge_onto)
  // was made. Not its re-send: if the hedge's session dies, the exchange is
  // back to one copy and may still get its re-send.
  bool hedge = false;
  unsigned unwritten_replacements = 0;  // times placed again after a session ended before writing it
};

// How the session that carried a copy ended (SessionEnd, dot_session.hpp).
struct SessionEnding {
  bool was_established = false;  // false: a dial that failed before its handshake completed
  Cause cause = Cause::ok;       // ok: closed on purpose (idle, keepalive 0) while still carrying it
  bool partial_frame_pending = false;  // bytes of some answer had arrived: a query was evidently processed
  std::uint64_t responses = 0;         // answers that connection delivered before it ended
};

// The copy the ending session carried, as its end found it. Whether it was
// written comes from the session's end (SessionEnd::Carried): the session,
// not the exchange, knows what reached TLS.
struct CarriedCopy {
  Copy copy;
  bool written = false;           // handed to TLS: the server may have it
  bool other_copy_alive = false;  // the exchange has a copy on another session
  bool sibling_culprit = false;   // the session was torn down for another exchange's bad answer
};

enum class Fate : std::uint8_t {
  keep,         // its other copy carries it on; only this copy is gone
  place_again,  // never written, so never seen: placed anew, the redial unspent
  requeue,      // the connection answered others after it was placed, then closed: placed anew
  redial,       // its one redial, on a fresh dial of the same slot
  final,        // it fails: after a failed dial with the dial's cause, else with failure_cause()
};

// `others_up`: another session of the upstream is established and taking
// exchanges (a failed dial is then not the upstream's answer for what it
// never wrote).
Fate fate(const CarriedCopy& carried, const Spent& spent, const SessionEnding& how, bool others_up);

// The cause an exchange fails with when its established session ended, and
// what fate() judges the requeue and the redial by: session_closed when the
// session was torn down for a sibling's bad answer or closed on purpose
// while carrying it, else the session's own. (A failed dial fails what it
// carried with the dial's own cause.)
Cause failure_cause(const CarriedCopy& carried, const SessionEnding& how);

const char* describe(Fate f);

}  // namespace nxdns::upstream
