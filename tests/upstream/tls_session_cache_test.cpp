// The resumption choice as a table: may this dial offer the stored ticket?
// Every row names the situation, so a failing row says which promise broke
// (never another upstream's ticket, never an expired one).
#include "upstream/tls_session_cache.hpp"

#include <optional>
#include <vector>

#include <CppUTest/TestHarness.h>

#include "log/log.hpp"

using nxdns::upstream::describe;
using nxdns::upstream::may_offer_ticket;
using nxdns::upstream::ticket_expiry_margin;
using nxdns::upstream::ticket_lifetime;
using nxdns::upstream::ticket_lifetime_cap;
using nxdns::upstream::ticket_lifetime_unspecified;
using nxdns::upstream::TicketFacts;
using nxdns::upstream::TicketVerdict;
using nxdns::upstream::TlsPeerIdentity;
using namespace std::chrono_literals;

namespace {

const nxdns::loop::TimePoint t0 = nxdns::loop::TimePoint{} + 1000h;
const TlsPeerIdentity a{"127.0.0.1:853", "dot.test"};

struct Row {
  const char* situation;
  std::optional<TicketFacts> stored;
  TlsPeerIdentity dialling;
  nxdns::loop::Duration age;  // now - t0
  TicketVerdict expected;
};

}  // namespace

TEST_GROUP(TicketOffer){};

TEST(TicketOffer, Table) {
  const TicketFacts fresh{a, t0, 3600s};
  const std::vector<Row> rows = {
      {"nothing stored yet", std::nullopt, a, 0s, TicketVerdict::none_stored},
      {"same upstream, fresh ticket", fresh, a, 0s, TicketVerdict::offer},
      {"same upstream, half its lifetime", fresh, a, 1800s, TicketVerdict::offer},
      {"same upstream, just before the margin", fresh, a, 3600s - ticket_expiry_margin - 1s, TicketVerdict::offer},
      {"same upstream, inside the expiry margin", fresh, a, 3600s - ticket_expiry_margin, TicketVerdict::expired},
      {"same upstream, past its lifetime", fresh, a, 3601s, TicketVerdict::expired},
      {"clock before the ticket (never trusted)", fresh, a, -1s, TicketVerdict::expired},
      {"other port, same name", fresh, {"127.0.0.1:854", "dot.test"}, 0s, TicketVerdict::other_upstream},
      {"other address, same name", fresh, {"127.0.0.2:853", "dot.test"}, 0s, TicketVerdict::other_upstream},
      {"same address, other tls_name", fresh, {"127.0.0.1:853", "other.test"}, 0s, TicketVerdict::other_upstream},
      {"other upstream even when expired", TicketFacts{a, t0, 20s}, {"127.0.0.1:854", "dot.test"}, 3600s,
       TicketVerdict::other_upstream},
      {"lifetime no longer than the margin", TicketFacts{a, t0, ticket_expiry_margin}, a, 0s,
       TicketVerdict::expired},
  };
  for (const Row& r : rows) {
    const TicketVerdict got = may_offer_ticket(r.stored, r.dialling, t0 + r.age);
    if (got != r.expected) {
      FAIL(nxdns::log::cat(r.situation, ": got ", describe(got), ", want ", describe(r.expected)).c_str());
    }
  }
}

TEST(TicketOffer, LifetimeHonoursTheHintWithinRfcLimits) {
  struct L {
    const char* situation;
    std::uint32_t hint;
    bool tls13;
    std::chrono::seconds expected;
  };
  const std::vector<L> rows = {
      {"TLS 1.2 hint", 7200, false, 7200s},
      {"TLS 1.3 hint", 300, true, 300s},
      {"TLS 1.2 zero: unspecified (RFC 5077 3.3)", 0, false, ticket_lifetime_unspecified},
      {"TLS 1.3 zero: discard at once (RFC 8446 4.6.1)", 0, true, 0s},
      {"over 7 days capped (RFC 8446 4.6.1)", 30 * 24 * 3600, true, ticket_lifetime_cap},
      {"TLS 1.2 over 7 days capped too", 30 * 24 * 3600, false, ticket_lifetime_cap},
  };
  for (const L& r : rows) {
    const auto got = ticket_lifetime(r.hint, r.tls13);
    if (got != r.expected) {
      FAIL(nxdns::log::cat(r.situation, ": got ", got.count(), " s, want ", r.expected.count(), " s").c_str());
    }
  }
}
