#pragma once
// A DoT session with no socket and no TLS: the test plays the network. It
// keeps the bookkeeping a TlsDotSession keeps (what is queued, what is on
// the wire and since when, what this connection answered) and reports to
// the transport the way one does, so that DotTransport's decisions (hedge,
// re-send, requeue, redial, outage dials) run as scenarios on the fake
// clock: the same inputs, the same moments, every run.
//
// Like the real one, a ready session writes what it was given on the loop's
// next turn (FakeScheduler::run_ready), never inside enqueue(), and dial
// failures are reported only when the test says so.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dns/message.hpp"
#include "loop/scheduler.hpp"
#include "upstream/dot_session.hpp"

namespace nxdns::test {

class ScriptedDotSession final : public upstream::DotSession {
 public:
  using Cause = upstream::Cause;
  using SessionState = upstream::SessionState;
  using SessionEnd = upstream::SessionEnd;

  ScriptedDotSession(loop::Scheduler& sched, Listener& listener, std::size_t index)
      : sched_(sched), listener_(listener), index_(index), write_timer_(sched) {}

  // ---- DotSession
  void dial() override {
    if (state_ != SessionState::closed) return;
    state_ = SessionState::connecting;
    ++dial_count_;
    dialed_at_ = sched_.now();
    established_at_.reset();
    responses_ = 0;
    next_seq_ = 1;
    newest_answered_written_.reset();
    last_answer_at_.reset();
    last_answered_written_.reset();
    reordered_ = false;
    partial_ = false;
    version_.clear();
  }
  void enqueue(ExchangeId id, std::uint16_t wire_id, dns::StreamMessage wire_query) override {
    queued_.push_back(Line{id, wire_id, dns::Bytes(wire_query.message().begin(), wire_query.message().end()), {}, 0});
    if (established()) write_soon();
  }
  Withdraw withdraw(ExchangeId id) override {
    for (auto it = queued_.begin(); it != queued_.end(); ++it) {
      if (it->id != id) continue;
      queued_.erase(it);
      return Withdraw::removed;
    }
    for (const Line& o : outstanding_) {
      if (o.id == id) return Withdraw::written;
    }
    return Withdraw::not_here;
  }
  SessionEnd close(Cause cause, std::string detail, bool /*send_close_notify*/) override {
    SessionEnd end;
    end.cause = cause;
    end.detail = std::move(detail);
    end.was_established = established();
    end.partial_frame_pending = partial_;
    end.responses = responses_;
    for (const Line& o : outstanding_) end.exchanges.push_back({o.id, true});
    for (const Line& q : queued_) end.exchanges.push_back({q.id, false});
    std::sort(end.exchanges.begin(), end.exchanges.end(),
              [](const SessionEnd::Carried& a, const SessionEnd::Carried& b) { return a.id < b.id; });
    queued_.clear();
    outstanding_.clear();
    partial_ = false;
    write_timer_.disarm();
    state_ = SessionState::closed;
    return end;
  }

  SessionState state() const override { return state_; }
  std::size_t load() const override { return queued_.size() + outstanding_.size(); }
  bool wire_id_in_use(std::uint16_t wire_id) const override {
    const auto same = [&](const Line& l) { return l.wire_id == wire_id; };
    return std::any_of(queued_.begin(), queued_.end(), same) ||
           std::any_of(outstanding_.begin(), outstanding_.end(), same);
  }
  bool partial_frame_pending() const override { return partial_; }
  const std::string& tls_version() const override { return version_; }
  std::uint64_t responses() const override { return responses_; }
  std::uint64_t tickets_received() const override { return 0; }
  std::size_t index() const override { return index_; }
  std::uint64_t dial_count() const override { return dial_count_; }
  const upstream::AnswerTiming& last_answer_timing() const override { return timing_; }
  std::vector<Unanswered> unanswered() const override {
    std::vector<Unanswered> out;
    for (const Line& o : outstanding_) out.push_back(Unanswered{o.id, true, o.written_at});
    for (const Line& q : queued_) out.push_back(Unanswered{q.id, false, loop::TimePoint{}});
    return out;
  }
  std::optional<loop::TimePoint> last_answer_at() const override { return last_answer_at_; }
  loop::TimePoint dialed_at() const override { return dialed_at_; }
  std::optional<loop::TimePoint> established_at() const override { return established_at_; }
  std::optional<loop::TimePoint> newest_answered_written() const override { return newest_answered_written_; }
  void set_max_outstanding(std::size_t n) override {
    max_outstanding_ = n == 0 ? 1 : n;
    if (established()) write_soon();
  }
  // The scripted server advertises no edns-tcp-keepalive.
  std::optional<std::uint16_t> server_keepalive() const override { return std::nullopt; }

  // ---- the network, as the test plays it
  // The handshake completes: ready; what waits is written on the next turn.
  void up(std::string version = "TLSv1.3") {
    state_ = SessionState::ready;
    established_at_ = sched_.now();
    version_ = std::move(version);
    listener_.on_session_ready(*this);
    write_soon();
  }
  // The server answers this exchange's copy (NOERROR, the query echoed as
  // a response). False when no copy of it is on the wire here.
  bool answer(ExchangeId id) {
    const auto it = std::find_if(outstanding_.begin(), outstanding_.end(), [&](const Line& o) { return o.id == id; });
    if (it == outstanding_.end()) return false;
    const loop::TimePoint now = sched_.now();
    timing_ = upstream::AnswerTiming{it->written_at, now, last_answer_at_, false, reordered_, last_answered_written_};
    for (const Line& o : outstanding_) {
      if (o.seq < it->seq) {
        timing_.overtook = true;
        reordered_ = true;
        break;
      }
    }
    last_answer_at_ = now;
    last_answered_written_ = it->written_at;
    if (!newest_answered_written_ || it->written_at > *newest_answered_written_) {
      newest_answered_written_ = it->written_at;
    }
    dns::Bytes response = std::move(it->query);
    response[2] |= 0x80;  // QR
    response[3] |= 0x80;  // RA
    outstanding_.erase(it);
    ++responses_;
    listener_.on_session_response(*this, id, response);
    if (established()) write_soon();
    return true;
  }
  // Answers every copy on the wire here, in write order.
  std::size_t answer_all() {
    std::size_t n = 0;
    while (!outstanding_.empty() && answer(outstanding_.front().id)) ++n;
    return n;
  }
  // The connection ends under what it carries (peer close, reset, a dial
  // that never completes), reported as a real session reports it.
  void drop(Cause cause, std::string detail = "scripted") {
    SessionEnd end = close(cause, std::move(detail), false);
    listener_.on_session_closed(*this, std::move(end));
  }
  // Part of some answer's frame has arrived (and waits for the rest).
  void start_frame() { partial_ = true; }

  bool carries(ExchangeId id) const {
    const auto same = [&](const Line& l) { return l.id == id; };
    return std::any_of(queued_.begin(), queued_.end(), same) ||
           std::any_of(outstanding_.begin(), outstanding_.end(), same);
  }
  // Copies on the wire here, in write order.
  std::vector<ExchangeId> on_wire() const {
    std::vector<ExchangeId> out;
    for (const Line& o : outstanding_) out.push_back(o.id);
    return out;
  }
  // Copies this slot ever wrote, over all its connections.
  std::uint64_t writes() const { return writes_; }

 private:
  struct Line {
    ExchangeId id;
    std::uint16_t wire_id;
    dns::Bytes query;
    loop::TimePoint written_at;
    std::uint64_t seq;
  };

  void write_soon() {
    if (!queued_.empty() && !write_timer_.armed()) write_timer_.arm(loop::Duration::zero(), [this]() { write(); });
  }
  void write() {
    if (!established()) return;
    const loop::TimePoint now = sched_.now();
    while (!queued_.empty() && outstanding_.size() < max_outstanding_) {
      Line l = std::move(queued_.front());
      queued_.pop_front();
      l.written_at = now;
      l.seq = next_seq_++;
      outstanding_.push_back(std::move(l));
      ++writes_;
    }
  }

  loop::Scheduler& sched_;
  Listener& listener_;
  std::size_t index_;
  loop::Timer write_timer_;

  SessionState state_ = SessionState::closed;
  std::deque<Line> queued_;
  std::deque<Line> outstanding_;  // in write order
  std::size_t max_outstanding_ = SIZE_MAX;
  std::uint64_t dial_count_ = 0;
  std::uint64_t writes_ = 0;
  std::uint64_t responses_ = 0;
  std::uint64_t next_seq_ = 1;
  loop::TimePoint dialed_at_{};
  std::optional<loop::TimePoint> established_at_;
  std::optional<loop::TimePoint> newest_answered_written_;
  std::optional<loop::TimePoint> last_answer_at_;
  std::optional<loop::TimePoint> last_answered_written_;
  bool reordered_ = false;
  bool partial_ = false;
  std::string version_;
  upstream::AnswerTiming timing_;
};

}  // namespace nxdns::test
