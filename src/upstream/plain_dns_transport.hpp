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

#include <memory>
#include <unordered_map>

#include "loop/scheduler.hpp"
#include "net/endpoint.hpp"
#include "upstream/transport.hpp"

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

 private:
  struct Exchange;
  event_base* base_;
  loop::Scheduler& sched_;
  net::Endpoint server_;
  PlainDnsOptions opts_;
  std::unordered_map<ExchangeId, std::unique_ptr<Exchange>> live_;
  ExchangeId next_id_ = 1;
  TransportStats stats_;
};

}  // namespace nxdns::upstream
