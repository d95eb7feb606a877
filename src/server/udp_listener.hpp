#pragma once
// Plain DNS over UDP on one address. Queries go to the engine; answers go
// back from the address the query arrived at (wildcard binds on hosts with
// several addresses), truncated to what the client can take. A wakeup reads
// its datagrams with recvmmsg and sends the answers it could give at once
// (cache hits, refusals, FORMERR) with one sendmmsg; answers from upstream
// arrive one at a time, later, and go out at once with sendmsg.
#include <memory>
#include <string>

#include "loop/event_handles.hpp"
#include "loop/life_token.hpp"
#include "net/endpoint.hpp"
#include "query/engine.hpp"
#include "server/limits.hpp"
#include "server/udp_batch.hpp"

namespace nxdns::server {

class UdpListener {
 public:
  // Returns nullptr and sets `why` when the socket cannot be bound.
  static std::unique_ptr<UdpListener> open(event_base* base, const net::Endpoint& ep, query::Engine& engine,
                                           ListenerState& state, std::string* why);
  ~UdpListener() = default;
  UdpListener(const UdpListener&) = delete;
  UdpListener& operator=(const UdpListener&) = delete;

  const net::Endpoint& local() const { return local_; }
  // Stop reading new queries (shutdown drain); answers still go out.
  void stop_accepting();
  // Drains what the socket holds right now (also the readiness callback).
  void on_readable();

 private:
  struct Key {};

 public:
  UdpListener(Key, query::Engine& engine, ListenerState& state) : engine_(engine), state_(state) {}

 private:
  // One datagram of a wakeup: admitted, refused or answered; an answer
  // given now joins `outbox_`.
  void handle(const ReturnAddress& to, dns::ByteView packet, std::size_t real_length);
  void queue_reply(const ReturnAddress& to, dns::Bytes&& bytes);
  void flush_outbox();
  void send_reply(const ReturnAddress& to, dns::ByteView bytes);

  query::Engine& engine_;
  ListenerState& state_;
  loop::UniqueFd fd_;
  loop::EventPtr ev_;
  net::Endpoint local_;
  // Queries still owed an answer; their reply callbacks watch this token so
  // an answer arriving after the listener is gone is dropped safely.
  loop::LifeToken life_;
  ReceiveBatch inbox_;
  SendBatch outbox_;
};

}  // namespace nxdns::server
