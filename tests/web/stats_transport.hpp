#pragma once
// The upstream tests' FakeTransport (exchanges finish when the test says
// so), with every TransportStats field settable, so a metrics test can give
// each field of each upstream a value of its own and catch a swapped field.
#include <memory>

#include "upstream/fake_transport.hpp"
#include "upstream/transport.hpp"

namespace nxdns::test {

class StatsTransport final : public upstream::Transport {
 public:
  ExchangeId start(dns::ByteView query, Completion done) override { return fake.start(query, std::move(done)); }
  void cancel(ExchangeId id) override { fake.cancel(id); }
  void close_all() override { fake.close_all(); }
  upstream::TransportStats stats() const override { return stats_value; }
  const char* kind() const override { return kind_value; }

  FakeTransport fake;
  upstream::TransportStats stats_value;
  const char* kind_value = "dot";
};

}  // namespace nxdns::test
