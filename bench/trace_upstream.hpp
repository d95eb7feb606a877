#pragma once
// A household trace (household_trace.py) and an upstream that answers every
// name in it as the trace says after a fixed round trip, for the programs
// that replay a trace through the real cache under the fake clock
// (cache_replay.cpp, cache_persist.cpp).
#include <istream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "dns/message.hpp"
#include "loop/scheduler.hpp"
#include "upstream/transport.hpp"

namespace nxdns::bench {

struct Line {
  std::uint64_t t_ms;
  std::string name;
  std::uint16_t qtype;
  std::uint32_t ttl;
  std::uint8_t rcode;  // 0 or 3
  bool nodata;
};

struct Truth {
  std::uint32_t ttl;
  bool nxdomain;
  bool nodata;
};

inline void put16(dns::Bytes& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v & 0xFF));
}
inline void put32(dns::Bytes& b, std::uint32_t v) {
  put16(b, static_cast<std::uint16_t>(v >> 16));
  put16(b, static_cast<std::uint16_t>(v & 0xFFFF));
}

// An upstream that knows every name in the trace.
class TraceUpstream final : public upstream::Transport {
 public:
  TraceUpstream(loop::Scheduler& s, const std::unordered_map<std::string, Truth>& truth, loop::Duration rtt)
      : sched_(s), truth_(truth), rtt_(rtt) {}
  ExchangeId start(dns::ByteView query, Completion done) override {
    const ExchangeId id = next_++;
    ++exchanges;
    dns::Bytes q(query.begin(), query.end());
    auto& timer = live_[id];
    timer = std::make_unique<loop::Timer>(sched_);
    // The Timer may be destroyed from its own callback (erase below): Timer
    // moves the callback out before running it.
    timer->arm(rtt_, [this, id, q = std::move(q), done = std::move(done)]() mutable {
      live_.erase(id);
      upstream::ExchangeResult r;
      r.response = answer(q);
      done(std::move(r));
    });
    return id;
  }
  void cancel(ExchangeId id) override {
    live_.erase(id);  // its Timer disarms as it goes
  }
  void close_all() override {}
  upstream::TransportStats stats() const override { return {}; }
  const char* kind() const override { return "dot"; }
  std::uint64_t exchanges = 0;

 private:
  dns::Bytes answer(const dns::Bytes& q) const {
    auto p = dns::parse_query(q);
    const dns::Query& query = *p.query;
    const auto it = truth_.find(dns::name_to_text(query.question.name));
    const Truth t = it == truth_.end() ? Truth{60, true, false} : it->second;
    dns::Bytes b(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(query.question_end));
    b[2] = 0x81;
    b[3] = static_cast<std::uint8_t>(0x80 | (t.nxdomain ? 3 : 0));
    b[10] = b[11] = 0;
    const bool negative = t.nxdomain || t.nodata;
    b[6] = 0, b[7] = negative ? 0 : 2;
    b[8] = 0, b[9] = negative ? 1 : 0;
    if (negative) {
      // zone SOA: owner = the query name (a pointer), MNAME/RNAME ~ 20 + 25 octets
      put16(b, 0xC00C), put16(b, 6), put16(b, 1), put32(b, t.ttl);
      put16(b, 45 + 20);
      for (int i = 0; i < 45; ++i) b.push_back(i % 10 == 0 ? 9 : 'a');
      put32(b, 2026120101), put32(b, 7200), put32(b, 3600), put32(b, 1209600), put32(b, t.ttl);
    } else {
      const std::uint16_t len = query.question.qtype == 1 ? 4 : query.question.qtype == 28 ? 16 : 42;
      for (int r = 0; r < 2; ++r) {
        put16(b, 0xC00C), put16(b, query.question.qtype), put16(b, 1), put32(b, t.ttl), put16(b, len);
        for (int i = 0; i < len; ++i) b.push_back(static_cast<std::uint8_t>(i + r));
      }
    }
    return b;
  }
  loop::Scheduler& sched_;
  const std::unordered_map<std::string, Truth>& truth_;
  loop::Duration rtt_;
  ExchangeId next_ = 1;
  std::unordered_map<ExchangeId, std::unique_ptr<loop::Timer>> live_;
};

inline std::uint16_t qtype_of(const std::string& s) { return s == "A" ? 1 : s == "AAAA" ? 28 : 65; }

// One query per line: <t_ms> <name> <qtype> <ttl> <kind>; also fills the
// upstream's truth for every name.
inline std::vector<Line> read_trace(std::istream& in, std::unordered_map<std::string, Truth>& truth) {
  std::vector<Line> trace;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Line l;
    std::string qt, kind;
    if (!(ls >> l.t_ms >> l.name >> qt >> l.ttl >> kind)) continue;
    l.qtype = qtype_of(qt);
    l.rcode = kind == "nxdomain" ? 3 : 0;
    l.nodata = kind == "nodata";
    truth[l.name + "."] = Truth{l.ttl, kind == "nxdomain", kind == "nodata"};
    trace.push_back(std::move(l));
  }
  return trace;
}

}  // namespace nxdns::bench
