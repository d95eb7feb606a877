#pragma once
// The DoT fixture's server (tests/fixtures/dot_server.hpp, the one behind
// nxdns-fixture-dot) run in process on a loopback port, driven by the same
// event_base as the transport under test, with a test PKI generated at run
// time (tests/fixtures/test_pki.hpp). Deterministic where a separate
// process would not be: the test decides exactly when the server runs (it
// runs only inside the loop), and every counter is read without IPC.
//
// DotTestBehaviour is the unit tests' vocabulary for the fixture's script
// (tests/fixtures/dot_script.hpp); script_of() is the one translation.
#include <event2/event.h>
#include <mbedtls/ssl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dns/message.hpp"
#include "dot_script.hpp"
#include "dot_server.hpp"
#include "fixture_util.hpp"
#include "net/endpoint.hpp"
#include "support/temp_file.hpp"
#include "test_pki.hpp"

namespace nxdns::test {

// A CA and a server certificate for `server_name` signed by it (PEM text).
// The server's key is ECDSA P-256, unless `rsa_server_key` (RSA-2048, for
// tests of RSA key exchanges).
struct TestPki {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;

  explicit TestPki(const std::string& server_name, bool rsa_server_key = false) {
    fixture::pki::Request r;
    r.name = server_name;
    r.leaf_key = rsa_server_key ? fixture::pki::LeafKey::rsa2048 : fixture::pki::LeafKey::p256;
    fixture::pki::Pem pem = fixture::pki::generate(r);
    ca_pem = std::move(pem.ca);
    cert_pem = std::move(pem.cert);
    key_pem = std::move(pem.key);
  }
};

// Counts are per connection.
struct DotTestBehaviour {
  // Queries 1..N are answered; query N+1 makes the server close
  // (close_notify + FIN) without answering it: what a reused session sees
  // when the server dropped it while idle. -1: never.
  int close_on_query_after = -1;
  // Queries 1..N are answered; query N+1 gets one octet of its length
  // prefix, then the connection is cut (no close_notify): a failure after
  // the first response byte. -1: never.
  int prefix_byte_then_close_after = -1;
  // Hold queries until this many arrived, then answer them all in reverse
  // order, in one TLS record (pipelining, out-of-order answers).
  std::size_t hold_until = 0;
  bool silent = false;          // read queries, never answer
  bool black_hole = false;      // accept TCP, never speak TLS
  bool wrong_id = false;        // answer with a different ID
  bool wrong_question = false;  // answer a different name
  // edns-tcp-keepalive TIMEOUT in answers (nxdns always asks for it).
  std::optional<std::uint16_t> keepalive;
  // RFC 7830 padding in answers, bringing each to a multiple of this many
  // octets (a Padding option even when that takes none).
  std::size_t response_padding = 0;
  // Of the queries decrypted from one read, answer only the first; swallow
  // the rest (dnsdist 1.7's TLS frontend: one answer per coalesced write).
  bool answer_first_of_batch = false;
  // The only cipher suites the server accepts (IANA ids), and TLS 1.2 at
  // most; empty: the library's defaults and versions.
  std::vector<int> ciphersuites;

  bool operator==(const DotTestBehaviour&) const = default;
};

// The fixture's script for `b` (the TLS side, ciphersuites, is set once, at
// construction).
inline fixture::dot::Script script_of(const DotTestBehaviour& b) {
  fixture::dot::Script s;
  if (b.close_on_query_after >= 0) s.close_on_query_after = static_cast<std::uint64_t>(b.close_on_query_after);
  if (b.prefix_byte_then_close_after >= 0) {
    s.prefix_byte_then_close_after = static_cast<std::uint64_t>(b.prefix_byte_then_close_after);
  }
  s.hold_until = b.hold_until;
  s.black_hole = b.silent;
  s.never_handshake = b.black_hole;
  if (b.wrong_id) s.lie = fixture::dot::Lie::wrong_id;
  if (b.wrong_question) s.lie = fixture::dot::Lie::wrong_question;
  s.keepalive_ds = b.keepalive;
  s.shape.pad_block = static_cast<std::uint16_t>(b.response_padding);
  s.answer_first_of_batch = b.answer_first_of_batch;
  return s;
}

class DotTestServer {
 public:
  using Behaviour = DotTestBehaviour;

  struct Query {
    std::size_t conn;  // in accept order, from 0
    dns::Bytes wire;
  };

  DotTestServer(event_base* base, const TestPki& pki, Behaviour b = {})
      : behaviour_(std::move(b)),
        script_(script_of(behaviour_)),
        scripted_from_(behaviour_),
        server_(base, [this]() -> const fixture::dot::Script& { return current_script(); }, {}, observer()) {
    fixture::dot::TlsSettings tls;
    tls.cert_pem = pki.cert_pem;
    tls.key_pem = pki.key_pem;
    tls.groups = fixture::dot::Groups::library_default;
    tls.ciphersuites = behaviour_.ciphersuites;
#if defined(MBEDTLS_SSL_TICKET_C) && defined(MBEDTLS_SSL_SESSION_TICKETS)
    // Real DoT servers issue session tickets; under TLS 1.3 they arrive
    // after the handshake, which the client must take in its stride.
    tls.session_tickets = true;
#endif
    auto addr = fixture::parse_loopback("127.0.0.1:0");
    std::string err;
    if (!addr || !server_.init(*addr, tls, err)) throw std::runtime_error("DoT test server: " + err);
    port_ = fixture::port_of(addr->get());
  }
  DotTestServer(const DotTestServer&) = delete;
  DotTestServer& operator=(const DotTestServer&) = delete;

  std::uint16_t port() const { return port_; }
  net::Endpoint endpoint() const { return *net::make_endpoint("127.0.0.1", port_); }
  // What the server does from the next connection or query on.
  Behaviour& behaviour() { return behaviour_; }

  std::size_t accepts() const { return server_.stats().accepts; }
  std::size_t queries() const { return received_.size(); }
  std::size_t answers() const { return server_.stats().answers; }
  std::size_t swallowed() const { return server_.stats().swallowed_in_batch; }
  const std::vector<Query>& received() const { return received_; }
  // Accepted, and closed by neither end (an outage leaves them open).
  std::size_t open_connections() const { return server_.stats().active_connections; }
  // Connections the client closed (EOF, reset, close_notify or an alert).
  std::size_t closed_by_client() const { return server_.stats().closes_by_client; }
  std::size_t close_notify_from_client() const { return server_.stats().close_notify_received; }
  std::size_t queries_on(std::size_t conn) const { return conn < conns_.size() ? conns_[conn].queries : 0; }
  std::size_t connection_count() const { return conns_.size(); }

  // Closes every connection now (close_notify when established): an idle
  // close by the server.
  void close_all_connections() { server_.close_all(); }

  // A WAN outage as a household router ends it when it comes back with a
  // new public address (tests/fixtures/wan_outage.hpp): every connection
  // accepted so far, and every one accepted before end_outage(), is dead
  // for good (nothing is read from it or written to it, and neither end is
  // told); connections accepted after end_outage() are served as before.
  void begin_outage() {
    for (Conn& c : conns_) c.cut = true;
    server_.begin_outage();
  }
  void end_outage() { server_.end_outage(); }
  // Connection `conn` (in accept order) was served: accepted outside an
  // outage, and not taken by one since.
  bool served(std::size_t conn) const { return conn < conns_.size() && !conns_[conn].cut; }

 private:
  struct Conn {
    std::size_t queries = 0;
    bool cut = false;  // taken by an outage
  };

  // Connection ids count from 1 in accept order, so conns_[id - 1].
  fixture::dot::Server::Observer observer() {
    fixture::dot::Server::Observer o;
    o.accepted = [this](std::uint64_t) { conns_.push_back(Conn{0, server_.in_outage()}); };
    o.query = [this](std::uint64_t id, const dns::Bytes& frame) {
      ++conns_[id - 1].queries;
      received_.push_back(Query{static_cast<std::size_t>(id - 1), frame});
    };
    return o;
  }

  // Tests change behaviour() between loop turns; the server reads the
  // script at every accept and query.
  const fixture::dot::Script& current_script() {
    if (!(behaviour_ == scripted_from_)) {
      script_ = script_of(behaviour_);
      scripted_from_ = behaviour_;
    }
    return script_;
  }

  Behaviour behaviour_;
  fixture::dot::Script script_;
  Behaviour scripted_from_;
  std::vector<Conn> conns_;
  std::vector<Query> received_;
  std::uint16_t port_ = 0;
  fixture::dot::Server server_;  // last: destroyed first, while the records above still exist
};

}  // namespace nxdns::test
