#pragma once
// Plain DNS (RFC 1035) to a server on the LAN: the household router that
// serves the LAN's own names. Never used for anything but the zones routed
// to it (route/), since nothing on this path is encrypted.
//
// Each exchange gets its own connected UDP socket (so a kernel-chosen
// random source port, RFC 5452 §9.2) and a random ID from the system's
// CSPRNG; an answer counts only when it comes from the server's address and
// port (the connected socket), carries the ID and echoes the question
// (dns::validate_response). A datagram that does not match is ignored and
// the exchange keeps waiting: an off-path spoofer must guess, not race.
// A lost datagram is sent again once, after `udp_retransmit`. A truncated
// answer (TC) is asked again over TCP (RFC 7766 §5), on a connection of
// its own, closed after the answer.
#include <event2/event.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "upstream/completion_queue.hpp"
#include "upstream/transport.hpp"
#include "upstream/wire_id_batch.hpp"

namespace nxdns::upstream {

struct PlainDnsOptions {
  // A router on the LAN answers in a few milliseconds; Wi-Fi can still
  // drop a datagram.
  loop::Duration udp_retransmit = std::chrono::milliseconds(400);
  // Connect timeout of the TCP retry.
  loop::Duration tcp_connect_timeout = std::chrono::milliseconds(1000);
};

class PlainDnsTransport final : public Transport {
 public:
  PlainDnsTransport(event_base* base, loop::Scheduler& sched, net::Endpoint server, PlainDnsOptions opts = {});
  ~PlainDnsTransport() override;

  ExchangeId start(dns::ByteView query, Completion done) override;
  void cancel(ExchangeId id) override;
  void close_all() override;
  TransportStats stats() const override;
  const char* kind() const override { return "dns"; }

  const net::Endpoint& server() const { return server_; }

  // Introspection for tests and diagnostics.
  std::size_t live_exchanges() const { return live_.size(); }
  // Datagrams that arrived on an exchange's socket and did not answer its
  // query (another ID, another question, not a response): each one is an
  // off-path guess or a confused server, never an answer.
  std::uint64_t ignored_datagrams() const { return ignored_datagrams_; }
  // Second copies sent after udp_retransmit without an answer.
  std::uint64_t retransmits() const { return retransmits_; }
  // Exchanges asked again over TCP after a truncated UDP answer.
  std::uint64_t tcp_retries() const { return tcp_retries_; }

 private:
  struct Exchange;
  static void on_socket(evutil_socket_t fd, short what, void* arg);
  void on_ready(Exchange& ex, short what);
  void open_udp(Exchange& ex);
  bool send_datagram(Exchange& ex);
  void on_retransmit(Exchange& ex);
  void read_datagrams(Exchange& ex);
  void ask_over_tcp(Exchange& ex);
  void finish_connect(Exchange& ex);
  void write_tcp(Exchange& ex);
  void read_tcp(Exchange& ex);
  void accept_answer(Exchange& ex, dns::ByteView answer);
  // A throw out of a loop callback (an allocation failure) ends that
  // exchange as a local fault; nothing unwinds into libevent.
  void internal_error(ExchangeId id) noexcept;
  void finish(ExchangeId id, Cause cause, std::string detail, dns::Bytes response = {});

  event_base* base_;
  loop::Scheduler& sched_;
  net::Endpoint server_;
  PlainDnsOptions opts_;
  // IDs from getrandom(2), a batch at a time.
  WireIdBatch wire_ids_;
  std::unordered_map<ExchangeId, std::unique_ptr<Exchange>> live_;
  ExchangeId next_id_ = 1;
  TransportStats stats_;
  // Completions wait here for the loop: never run inside start()/cancel(),
  // nor inside a socket callback.
  CompletionQueue completions_;
  // One datagram at a time is read here (the loop has one thread).
  dns::Bytes datagram_;
  std::uint64_t ignored_datagrams_ = 0;
  std::uint64_t retransmits_ = 0;
  std::uint64_t tcp_retries_ = 0;
};

}  // namespace nxdns::upstream
