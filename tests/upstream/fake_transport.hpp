#pragma once
// A Transport whose exchanges finish only when the test says so.
#include <map>
#include <string>
#include <vector>

#include "upstream/transport.hpp"

namespace nxdns::test {

class FakeTransport final : public upstream::Transport {
 public:
  struct Started {
    dns::Bytes query;
    Completion done;
  };

  ExchangeId start(dns::ByteView query, Completion done) override {
    const ExchangeId id = next_++;
    live_.emplace(id, Started{dns::Bytes(query.begin(), query.end()), std::move(done)});
    order_.push_back(id);
    ++started_;
    if (live_.size() > peak_) peak_ = live_.size();
    return id;
  }
  void cancel(ExchangeId id) override {
    if (live_.erase(id)) ++cancelled_;
  }
  void close_all() override { ++close_all_calls_; }
  upstream::TransportStats stats() const override {
    upstream::TransportStats s;
    s.open_sessions = open_sessions;
    s.reuse_recoveries = reuse_recoveries;
    return s;
  }
  const char* kind() const override { return "dot"; }
  std::size_t capacity() const override { return capacity_now; }

  // Changes the capacity the pool reads; growth is announced as a real
  // transport would (from the loop, never inside start()).
  void set_capacity(std::size_t n) {
    const bool grew = n > capacity_now;
    capacity_now = n;
    if (grew) capacity_grew();
  }

  // Completes the oldest live exchange (or a given one) with an answer that
  // echoes the query, or with a failure.
  bool answer_oldest() { return finish_oldest(upstream::Cause::ok); }
  bool fail_oldest(upstream::Cause c) { return finish_oldest(c); }
  bool finish(ExchangeId id, upstream::Cause c) {
    auto it = live_.find(id);
    if (it == live_.end()) return false;
    Started s = std::move(it->second);
    live_.erase(it);
    upstream::ExchangeResult r;
    r.cause = c;
    if (c == upstream::Cause::ok) {
      r.response = s.query;
      if (r.response.size() > 2) r.response[2] |= 0x80;  // QR
    } else {
      r.detail = std::string("fake ") + upstream::describe(c);
    }
    s.done(std::move(r));
    return true;
  }

  // Completes the oldest live exchange with whatever `make` builds from its query.
  template <class F>
  bool respond_oldest(F make) {
    for (auto id : order_) {
      auto it = live_.find(id);
      if (it == live_.end()) continue;
      Started s = std::move(it->second);
      live_.erase(it);
      upstream::ExchangeResult r;
      r.response = make(s.query);
      s.done(std::move(r));
      return true;
    }
    return false;
  }

  std::size_t live() const { return live_.size(); }
  std::size_t peak() const { return peak_; }
  std::size_t started() const { return started_; }
  std::size_t cancelled() const { return cancelled_; }
  std::size_t close_all_calls() const { return close_all_calls_; }

  std::uint32_t open_sessions = 0;
  std::uint64_t reuse_recoveries = 0;
  std::size_t capacity_now = upstream::max_in_flight_per_entry;

 private:
  bool finish_oldest(upstream::Cause c) {
    for (auto id : order_) {
      if (live_.count(id)) return finish(id, c);
    }
    return false;
  }
  ExchangeId next_ = 1;
  std::map<ExchangeId, Started> live_;
  std::vector<ExchangeId> order_;
  std::size_t peak_ = 0, started_ = 0, cancelled_ = 0, close_all_calls_ = 0;
};

}  // namespace nxdns::test
