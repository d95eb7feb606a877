#include "upstream/exchange_fate.hpp"

#include "upstream/retry_decision.hpp"

namespace nxdns::upstream {

const Copy* Copies::on(std::size_t slot) const {
  for (const Copy& c : *this) {
    if (c.slot == slot) return &c;
  }
  return nullptr;
}

bool Copies::add(const Copy& c) {
  if (count_ == max || on(c.slot)) return false;
  copies_[count_++] = c;
  return true;
}

void Copies::remove(std::size_t slot) {
  for (std::size_t i = 0; i < count_; ++i) {
    if (copies_[i].slot == slot) {
      remove_at(i);
      return;
    }
  }
}

void Copies::remove_at(std::size_t i) {
  if (i >= count_) return;
  for (std::size_t k = i + 1; k < count_; ++k) copies_[k - 1] = copies_[k];
  --count_;
}

Cause failure_cause(const CarriedCopy& carried, const SessionEnding& how) {
  if (carried.sibling_culprit) return Cause::session_closed;
  if (how.cause == Cause::ok) return Cause::session_closed;
  return how.cause;
}

Fate fate(const CarriedCopy& carried, const Spent& spent, const SessionEnding& how, bool others_up) {
  // A re-sent (or hedged) exchange lives on while either copy does.
  if (carried.other_copy_alive) return Fate::keep;
  // Never written: the server never saw it, so its loss says nothing about
  // the upstream and nothing about this query. It is placed again, not
  // failed, when the session had been up (it died for another reason) or
  // another session is up to take it; a dial failure with nothing else up is
  // the upstream's answer.
  if (!carried.written && spent.unwritten_replacements < max_unwritten_replacements &&
      (how.was_established || others_up)) {
    return Fate::place_again;
  }
  if (!how.was_established) return Fate::final;
  const Cause cause = failure_cause(carried, how);
  // The connection answered others after this copy was placed on it, then
  // ended (server close, reset, torn down with a sibling) with it unanswered
  // and no byte of any answer pending: typically a server that limits
  // queries per connection (RFC 7766 §6.2.4: clients SHOULD retry unanswered
  // queries). The one-redial rule's `reused` test cannot see this (with
  // pipelining, exchanges ride on connections they did not find open), yet
  // the connection proved the upstream works: the exchange is placed again
  // without spending its redial. It cannot loop: each re-placement was paid
  // for by an answer on the connection it left.
  if (how.responses > carried.copy.answers_before && !how.partial_frame_pending && is_connection_lifecycle(cause)) {
    return Fate::requeue;
  }
  if (spent.redial) return Fate::final;
  return retry_decision(carried.copy.reused, how.partial_frame_pending, cause) == RetryDecision::retry ? Fate::redial
                                                                                                       : Fate::final;
}

const char* describe(Fate f) {
  switch (f) {
    case Fate::keep:
      return "keep";
    case Fate::place_again:
      return "place_again";
    case Fate::requeue:
      return "requeue";
    case Fate::redial:
      return "redial";
    case Fate::final:
      return "final";
  }
  return "?";
}

}  // namespace nxdns::upstream
