#pragma once
// The pool under test: entries over fake transports, a fake clock, and the
// outcomes the pool delivered, shared by the pool_*_test.cpp files.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/fake_scheduler.hpp"
#include "upstream/fake_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::test {

struct Harness {
  FakeScheduler sched;
  std::vector<FakeTransport*> fakes;  // by configuration index
  std::unique_ptr<upstream::Pool> pool;
  std::vector<std::optional<upstream::PoolOutcome>> outcomes;

  // priorities[i] is the priority of configuration entry i.
  explicit Harness(std::vector<int> priorities, upstream::PoolOptions opts = {}) {
    std::vector<upstream::EntrySpec> specs;
    for (std::size_t i = 0; i < priorities.size(); ++i) {
      auto t = std::make_unique<FakeTransport>();
      fakes.push_back(t.get());
      specs.push_back(upstream::EntrySpec{i, "tls://127.0.0.1:" + std::to_string(8530 + i), priorities[i], std::move(t)});
    }
    pool = std::make_unique<upstream::Pool>(sched, std::move(specs), std::move(opts));
  }

  upstream::Pool::Ticket submit() { return submit(1, 1); }
  // A query for the root with this type and class.
  upstream::Pool::Ticket submit(std::uint16_t qtype, std::uint16_t qclass) {
    const std::size_t slot = outcomes.size();
    outcomes.emplace_back();
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0};
    for (const std::uint16_t v : {qtype, qclass}) {
      q.push_back(static_cast<std::uint8_t>(v >> 8));
      q.push_back(static_cast<std::uint8_t>(v & 0xFF));
    }
    return pool->submit(std::move(q), [this, slot](upstream::PoolOutcome&& o) { outcomes[slot] = std::move(o); });
  }
  // As the engine submits: with the deadline of the caller's total budget.
  upstream::Pool::Ticket submit_within(loop::Duration total) {
    const std::size_t slot = outcomes.size();
    outcomes.emplace_back();
    dns::Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
    return pool->submit(std::move(q), sched.now() + total,
                        [this, slot](upstream::PoolOutcome&& o) { outcomes[slot] = std::move(o); });
  }
  upstream::EntrySnapshot snap(std::size_t config_index) {
    for (auto& s : pool->snapshot())
      if (s.index == config_index) return s;
    FAIL("no such entry");
    return {};
  }
  std::size_t delivered() const {
    std::size_t n = 0;
    for (auto& o : outcomes) n += o.has_value();
    return n;
  }
};

}  // namespace nxdns::test
