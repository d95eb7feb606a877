// The DoT client's TLS 1.2 cipher suite policy on the wire (RFC 9325 §4.1:
// ECDHE with AES-GCM or ChaCha20-Poly1305 only), through a real Pool and
// Diagnostics as the daemon wires them. The in-process server accepts one
// suite and TLS 1.2 at most: a suite without forward secrecy (static RSA,
// finite-field DHE is not ECDHE) or without a full AEAD (CBC, CCM, CCM-8)
// fails the handshake and opens an episode that names the alert and the
// policy; an allowed suite, on an ECDSA and on an RSA certificate, answers
// (the controls: the same server, key and client succeed, so a failure is
// the suite's).
#include <event2/event.h>
#include <mbedtls/ssl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostics.hpp"
#include "dns/message.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/loop_driver.hpp"
#include "upstream/dot_test_server.hpp"
#include "upstream/dot_transport.hpp"
#include "upstream/pool.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {

struct Row {
  const char* suite;  // mbedTLS's name, as a server operator would configure it
  bool rsa_key;       // the server's certificate key (the suite needs RSA)
  bool allowed;
};

struct Warnings {
  std::vector<std::string> v;
  static void sink(log::Level l, std::string_view m, void* ctx) {
    if (l == log::Level::warn) static_cast<Warnings*>(ctx)->v.emplace_back(m);
  }
};

}  // namespace

TEST_GROUP(TlsCiphersuiteEpisodes) {
  loop::EventBasePtr base;
  std::unique_ptr<loop::LoopScheduler> sched;
  std::unique_ptr<test::LoopDriver> driver;
  std::unique_ptr<Warnings> warnings;

  void setup() override {
    warnings = std::make_unique<Warnings>();
    log::set_sink(&Warnings::sink, warnings.get());
    log::set_level(log::Level::info);
    base.reset(event_base_new());
    sched = std::make_unique<loop::LoopScheduler>(base.get());
    driver = std::make_unique<test::LoopDriver>(base.get());
  }
  void teardown() override {
    driver.reset();
    sched.reset();
    base.reset();
    log::set_sink(nullptr, nullptr);
    warnings.reset();
  }

  // One query through a pool of one DoT entry to a server accepting only
  // `suite`: what is wrong with its outcome and the episodes it left, or "".
  std::string check(const Row& r, const test::TestPki& pki) {
    const int id = mbedtls_ssl_get_ciphersuite_id(r.suite);
    if (id == 0) {
      UT_PRINT((std::string(r.suite) + ": not in this mbedTLS build, row skipped").c_str());
      return {};
    }
    test::TempFile ca(pki.ca_pem);
    test::DotTestServer::Behaviour b;
    b.ciphersuites = {id};
    test::DotTestServer server(base.get(), pki, b);
    upstream::DotTransportOptions o;
    o.address = server.endpoint();
    o.tls_name = "dot.test";
    o.ca_file = ca.path();
    o.label = "tls://127.0.0.1:" + std::to_string(server.port());
    std::string err;
    auto t = upstream::DotTransport::create(base.get(), *sched, o, &err);
    if (!t) return err;
    std::vector<upstream::EntrySpec> specs;
    specs.push_back({0, o.label, 0, std::move(t)});
    diag::Diagnostics d(*sched);
    upstream::PoolOptions po;
    po.on_attempt = [&d](const upstream::AttemptReport& a) { d.on_attempt(a); };
    upstream::Pool pool(*sched, std::move(specs), std::move(po));
    warnings->v.clear();

    std::optional<upstream::PoolOutcome> out;
    pool.submit(dns::make_query(0x4d4d, *dns::name_from_text("suite.example"), 1, 1232),
                [&out](upstream::PoolOutcome&& x) { out = std::move(x); });
    const std::string row = log::cat(r.suite, r.rsa_key ? " (RSA key)" : " (ECDSA key)", ": ");
    if (!driver->until([&out] { return out.has_value(); }, 8000)) return row + "no outcome";

    if (r.allowed) {
      if (!out->ok) return row + "an allowed suite failed: " + upstream::describe(out->cause) + ": " + out->detail;
      if (d.opened_total() != 0) return row + "an allowed suite opened an episode";
      if (server.answers() != 1) return row + log::cat("the server answered ", server.answers(), " queries, want 1");
      return {};
    }
    if (out->ok) return row + "the handshake succeeded on a suite the policy forbids";
    const auto eps = d.episodes();
    if (eps.size() != 1) return row + log::cat(eps.size(), " episodes, want 1");
    const diag::Episode& e = eps[0];
    if (!e.open || e.first_cause != upstream::Cause::handshake_failed) {
      return row + "episode cause " + upstream::describe(e.first_cause) + ", want an open handshake_failed one";
    }
    // What an operator reads: the alert by name, and what nxdns offers.
    for (const char* part : {"handshake_failure (40)", "cipher suites", "ECDHE with AES-GCM or ChaCha20-Poly1305",
                             "tls://127.0.0.1:"}) {
      const std::string both = e.first_detail + " | " + e.url;
      if (both.find(part) == std::string::npos) return row + "episode '" + both + "' lacks '" + part + "'";
    }
    // The log says the same: the transport's warning and the episode's.
    if (warnings->v.empty()) return row + "no warn line";
    for (const std::string& w : warnings->v) {
      if (w.find("handshake_failure (40)") == std::string::npos) return row + "warn line '" + w + "' lacks the alert";
    }
    return {};
  }
};

TEST(TlsCiphersuiteEpisodes, OnlyEcdheWithAeadCompletesATls12Handshake) {
  const test::TestPki ecdsa("dot.test");
  const test::TestPki rsa("dot.test", true);
  const std::vector<Row> rows = {
      // Not AEAD, or a truncated or non-recommended AEAD.
      {"TLS-ECDHE-ECDSA-WITH-AES-128-CBC-SHA256", false, false},
      {"TLS-ECDHE-ECDSA-WITH-AES-256-CBC-SHA", false, false},
      {"TLS-ECDHE-ECDSA-WITH-AES-128-CCM-8", false, false},
      {"TLS-ECDHE-ECDSA-WITH-AES-128-CCM", false, false},
      // No forward secrecy, or not ECDHE.
      {"TLS-RSA-WITH-AES-128-GCM-SHA256", true, false},
      {"TLS-RSA-WITH-AES-256-CBC-SHA256", true, false},
      {"TLS-DHE-RSA-WITH-AES-128-GCM-SHA256", true, false},
      // The allowed ones: each key type, each cipher.
      {"TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256", false, true},
      {"TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384", false, true},
      {"TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256", false, true},
      {"TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256", true, true},
      {"TLS-ECDHE-RSA-WITH-CHACHA20-POLY1305-SHA256", true, true},
  };
  std::string problems;
  for (const Row& r : rows) {
    const std::string p = check(r, r.rsa_key ? rsa : ecdsa);
    if (!p.empty()) problems += "\n  " + p;
  }
  if (!problems.empty()) FAIL(problems.c_str());
}
