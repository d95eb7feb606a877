#pragma once
// The fixture of the DotTransport scenario tests: the transport over
// scripted sessions (scripted_dot_session.hpp) on the fake clock. A test
// plays the network step by step (a handshake completes, the server answers
// one query, a connection drops) and checks what the transport decided:
// which exchange went where, how many copies, and what each caller got.
#include <chrono>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "net/endpoint.hpp"
#include "support/fake_scheduler.hpp"
#include "support/query_helpers.hpp"
#include "upstream/dot_transport.hpp"
#include "upstream/scripted_dot_session.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::test {

struct DotScenarioFixture : public Utest, public QueryHelpers {
  struct Asked {
    std::uint16_t client_id = 0;
    std::string name;
    upstream::Transport::ExchangeId id = 0;
    int calls = 0;
    upstream::ExchangeResult result;
  };

  FakeScheduler sched;
  std::vector<ScriptedDotSession*> slots;  // owned by the transport
  std::unique_ptr<upstream::DotTransport> dot;
  std::deque<Asked> asked;  // a deque: the callbacks hold references
  std::uint16_t next_wire_id = 0x1000;

  void setup() override {
    log::set_level(getenv("NXDNS_SCENARIO_DEBUG") ? log::Level::debug : log::Level::error);
    dot = std::make_unique<upstream::DotTransport>(
        sched, options(),
        [this](std::size_t index, upstream::DotSession::Listener& listener) -> std::unique_ptr<upstream::DotSession> {
          auto s = std::make_unique<ScriptedDotSession>(sched, listener, index);
          slots.push_back(s.get());
          return s;
        },
        // Distinct, predictable wire IDs: the scenarios are about where
        // copies go, not about ID randomness (wire_id_batch_test.cpp).
        [this](void* out, std::size_t n) {
          auto* bytes = static_cast<std::uint8_t*>(out);
          for (std::size_t i = 0; i + 1 < n; i += 2) {
            bytes[i] = static_cast<std::uint8_t>(next_wire_id >> 8);
            bytes[i + 1] = static_cast<std::uint8_t>(next_wire_id & 0xff);
            ++next_wire_id;
          }
          return true;
        });
  }
  void teardown() override {
    dot.reset();
    log::set_level(log::Level::info);
  }

  static upstream::DotTransportOptions options() {
    upstream::DotTransportOptions o;
    o.address = *net::make_endpoint("127.0.0.1", 853);
    o.tls_name = "dot.test";
    o.label = "tls://scripted";
    return o;
  }

  ScriptedDotSession& slot(std::size_t i) { return *slots.at(i); }

  Asked& ask(const std::string& name) {
    Asked& a = asked.emplace_back();
    a.client_id = static_cast<std::uint16_t>(asked.size());
    a.name = name;
    a.id = dot->start(query_for(a.client_id, name), [&a](upstream::ExchangeResult&& r) {
      ++a.calls;
      a.result = std::move(r);
    });
    return a;
  }
  // `n` names at once, as a burst arrives within one loop turn.
  std::vector<Asked*> burst(std::size_t n, const std::string& prefix) {
    std::vector<Asked*> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(&ask(log::cat(prefix, i, ".example")));
    return out;
  }

  // One loop turn: writes, completions and other zero-delay work.
  void turn() { sched.run_ready(); }
  void advance(int ms) { sched.advance(std::chrono::milliseconds(ms)); }

  // One session up and answering, with the upstream's latency learned
  // (`rtt_ms`), as after the household's first query; a second later.
  ScriptedDotSession& warm(int rtt_ms = 10) {
    Asked& first = ask("warm.example");
    turn();
    ScriptedDotSession* s = nullptr;
    for (ScriptedDotSession* c : slots) {
      if (c->carries(first.id)) s = c;
    }
    CHECK_TRUE(s != nullptr);
    s->up();
    turn();
    advance(rtt_ms);
    CHECK_TRUE(s->answer(first.id));
    turn();
    answered(first);
    advance(1000);
    return *s;
  }

  // Every handshake under way completes; their writes go out.
  void up_dialled() {
    for (ScriptedDotSession* c : slots) {
      if (c->state() == upstream::SessionState::connecting) c->up();
    }
    turn();
  }
  // `rtt_ms` later, every session but `except` answers what it has on the
  // wire; the callbacks run.
  void answer_everywhere(int rtt_ms = 10, const ScriptedDotSession* except = nullptr) {
    advance(rtt_ms);
    for (ScriptedDotSession* c : slots) {
      if (c != except) c->answer_all();
    }
    turn();
  }

  // `rtt_ms` later, `s` answers these last-written first: answers that
  // overtake earlier queries, which only an upstream that pipelines gives.
  void answer_reversed(ScriptedDotSession& s, const std::vector<Asked*>& names, int rtt_ms = 10) {
    advance(rtt_ms);
    for (auto it = names.rbegin(); it != names.rend(); ++it) CHECK_TRUE(s.answer((*it)->id));
    turn();
  }

  // The caller got exactly one callback, an answer to its own question.
  static void answered(const Asked& a) {
    if (a.calls != 1) FAIL(log::cat(a.name, ": ", a.calls, " callbacks").c_str());
    if (!a.result.ok()) FAIL(log::cat(a.name, ": ", describe(a.result.cause), ": ", a.result.detail).c_str());
    LONGS_EQUAL(a.client_id, dns::get_id(a.result.response));
    CHECK_TRUE(answers_name(a.result.response, a.name));
  }
  static void failed(const Asked& a, upstream::Cause cause) {
    if (a.calls != 1) FAIL(log::cat(a.name, ": ", a.calls, " callbacks").c_str());
    STRCMP_EQUAL(describe(cause), describe(a.result.cause));
  }
  std::size_t slots_carrying(const Asked& a) const {
    std::size_t n = 0;
    for (const ScriptedDotSession* s : slots) n += s->carries(a.id);
    return n;
  }
  std::uint64_t total_writes() const {
    std::uint64_t n = 0;
    for (const ScriptedDotSession* s : slots) n += s->writes();
    return n;
  }
};

}  // namespace nxdns::test
