#pragma once
// The TLS session (ticket) one DoT upstream's slots resume from: RFC 5077
// tickets and session IDs on TLS 1.2, NewSessionTicket PSKs on TLS 1.3
// (RFC 8446 §4.6.1). A resumed TLS 1.3 handshake skips the certificate
// chain and its verification; a resumed TLS 1.2 one also saves a round trip.
//
// One cache per upstream (held by its TlsClientConfig), so a ticket is never
// offered to another upstream; every stored ticket also records who issued
// it (address and tls_name) and may_offer_ticket() re-checks that on every
// dial, so a ticket cannot leak even if the cache were ever shared. No early
// data (0-RTT) is ever sent: replayable queries are not worth one round trip.
#include <mbedtls/ssl.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "loop/scheduler.hpp"

namespace nxdns::upstream {

// Who a ticket belongs to: the address dialled and the name verified.
struct TlsPeerIdentity {
  std::string address;   // "192.0.2.1:853", as net::Endpoint::to_string()
  std::string tls_name;  // SNI and certificate name
  bool operator==(const TlsPeerIdentity&) const = default;
};

// What the decision needs to know about a stored ticket.
struct TicketFacts {
  TlsPeerIdentity issued_by;
  loop::TimePoint received_at;
  std::chrono::seconds lifetime;  // already capped (see ticket_lifetime())
};

enum class TicketVerdict : std::uint8_t {
  offer,           // resume with it
  none_stored,     // nothing to offer: full handshake
  other_upstream,  // issued by someone else: never offered, dropped
  expired,         // too old (or about to be): dropped, full handshake
};
const char* describe(TicketVerdict v);

// A ticket is not offered in its last seconds: the server would most likely
// refuse it (its clock or its ticket-key rotation runs a little ahead), and a
// refused ticket costs the bytes of the offer for nothing.
inline constexpr std::chrono::seconds ticket_expiry_margin{10};
// RFC 8446 §4.6.1: no ticket lives longer than 7 days, whatever it claims.
inline constexpr std::chrono::seconds ticket_lifetime_cap{7 * 24 * 3600};
// RFC 5077 §3.3: a TLS 1.2 lifetime hint of 0 means "unspecified"; a session
// ID has none at all. Assume an hour (servers' caches commonly keep 5 min to
// a day; a refused resumption only costs the full handshake we would do
// anyway).
inline constexpr std::chrono::seconds ticket_lifetime_unspecified{3600};

// The lifetime to honour for a ticket whose server said `hint_seconds`.
// TLS 1.3: 0 means "discard at once" (RFC 8446 §4.6.1). TLS 1.2: 0 means
// unspecified.
std::chrono::seconds ticket_lifetime(std::uint32_t hint_seconds, bool tls13);

// The pure "may this dial offer the stored ticket" rule.
TicketVerdict may_offer_ticket(const std::optional<TicketFacts>& stored, const TlsPeerIdentity& dialling,
                               loop::TimePoint now);

class TlsSessionCache {
 public:
  TlsSessionCache() = default;
  ~TlsSessionCache();
  TlsSessionCache(const TlsSessionCache&) = delete;
  TlsSessionCache& operator=(const TlsSessionCache&) = delete;

  // Keeps the session `ssl` can resume from, replacing any older one. TLS
  // 1.2: right after the handshake. TLS 1.3: after each NewSessionTicket
  // (MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET from mbedtls_ssl_read),
  // the only moment the ticket can be exported. Returns false (and keeps the
  // old one) when there is nothing resumable.
  bool store(const mbedtls_ssl_context& ssl, const TlsPeerIdentity& issued_by, loop::TimePoint now);
  // Before the handshake: loads the stored session into `ssl` when
  // may_offer_ticket() says so; drops a ticket it says must go.
  TicketVerdict offer(mbedtls_ssl_context& ssl, const TlsPeerIdentity& dialling, loop::TimePoint now);
  // A handshake that offered the ticket failed: a server that chokes on it
  // must not be offered it again (the redial then is a plain full handshake).
  void forget();

 private:
  void release();

  bool live_ = false;  // session_ is initialised
  mbedtls_ssl_session session_{};
  std::optional<TicketFacts> facts_;
};

}  // namespace nxdns::upstream
