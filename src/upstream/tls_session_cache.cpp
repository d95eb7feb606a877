#include "upstream/tls_session_cache.hpp"

#include <mbedtls/version.h>

#include <algorithm>

#include "dns/message.hpp"

namespace nxdns::upstream {

namespace {

// A session being exported: freed on every early return unless released.
class ExportedSession {
 public:
  ExportedSession() { mbedtls_ssl_session_init(&s_); }
  ~ExportedSession() { mbedtls_ssl_session_free(&s_); }
  ExportedSession(const ExportedSession&) = delete;
  ExportedSession& operator=(const ExportedSession&) = delete;
  mbedtls_ssl_session* get() { return &s_; }
  // The struct owns heap buffers (ticket, peer certificate, 3.x hostname)
  // and no pointer into itself: handing it over bitwise and re-initialising
  // this one to empty moves that ownership.
  mbedtls_ssl_session release() {
    mbedtls_ssl_session out = s_;
    mbedtls_ssl_session_init(&s_);
    return out;
  }

 private:
  mbedtls_ssl_session s_;
};

// What mbedTLS keeps about an exported session. 3.x made these fields
// private and offers no accessor for the ticket or its lifetime (upstream's
// Mbed-TLS/mbedtls#9661 asks for one); MBEDTLS_PRIVATE names them on every
// 3.x, and 2.28 has them public.
struct ExportedFacts {
  bool has_ticket = false;
  bool has_session_id = false;
  std::uint32_t lifetime_hint = 0;
};

ExportedFacts exported_facts(const mbedtls_ssl_session& s) {
  ExportedFacts f;
#if MBEDTLS_VERSION_MAJOR >= 3
  f.has_session_id = s.MBEDTLS_PRIVATE(id_len) > 0;
#if defined(MBEDTLS_SSL_SESSION_TICKETS)
  f.has_ticket = s.MBEDTLS_PRIVATE(ticket_len) > 0;
  f.lifetime_hint = s.MBEDTLS_PRIVATE(ticket_lifetime);
#endif
#else
  f.has_session_id = s.id_len > 0;
#if defined(MBEDTLS_SSL_SESSION_TICKETS)
  f.has_ticket = s.ticket_len > 0;
  f.lifetime_hint = s.ticket_lifetime;
#endif
#endif
  return f;
}

// The bytes a server recognises the session by: the ticket, or without one
// the TLS 1.2 session ID. Equal bytes mean "the same session", however often
// it is exported (a resumed TLS 1.2 handshake without a new ticket).
dns::ByteView resumption_key(const mbedtls_ssl_session& s) {
#if defined(MBEDTLS_SSL_SESSION_TICKETS)
#if MBEDTLS_VERSION_MAJOR >= 3
  if (s.MBEDTLS_PRIVATE(ticket_len) > 0) return {s.MBEDTLS_PRIVATE(ticket), s.MBEDTLS_PRIVATE(ticket_len)};
#else
  if (s.ticket_len > 0) return {s.ticket, s.ticket_len};
#endif
#endif
#if MBEDTLS_VERSION_MAJOR >= 3
  return {s.MBEDTLS_PRIVATE(id), s.MBEDTLS_PRIVATE(id_len)};
#else
  return {s.id, s.id_len};
#endif
}

bool negotiated_tls13(const mbedtls_ssl_context& ssl) {
#if MBEDTLS_VERSION_MAJOR >= 3 && defined(MBEDTLS_SSL_PROTO_TLS1_3)
  return mbedtls_ssl_get_version_number(&ssl) == MBEDTLS_SSL_VERSION_TLS1_3;
#else
  (void)ssl;
  return false;
#endif
}

}  // namespace

const char* describe(TicketVerdict v) {
  switch (v) {
    case TicketVerdict::offer: return "offer";
    case TicketVerdict::none_stored: return "none stored";
    case TicketVerdict::other_upstream: return "issued by another upstream";
    case TicketVerdict::expired: return "expired";
  }
  return "unknown";
}

std::chrono::seconds ticket_lifetime(std::uint32_t hint_seconds, bool tls13) {
  if (hint_seconds == 0) return tls13 ? std::chrono::seconds(0) : ticket_lifetime_unspecified;
  return std::min(std::chrono::seconds(hint_seconds), ticket_lifetime_cap);
}

TicketVerdict may_offer_ticket(const std::optional<TicketFacts>& stored, const TlsPeerIdentity& dialling,
                               loop::TimePoint now) {
  if (!stored) return TicketVerdict::none_stored;
  // Identity first: a ticket from elsewhere is never offered, however fresh
  // (it would tell the other server who we talked to, RFC 8446 §C.4).
  if (!(stored->issued_by == dialling)) return TicketVerdict::other_upstream;
  // A steady clock never runs backwards; a negative age could only come from
  // a bug, and is treated like an expired ticket rather than trusted.
  const auto age = now - stored->received_at;
  if (age < loop::Duration::zero()) return TicketVerdict::expired;
  if (age + ticket_expiry_margin >= stored->lifetime) return TicketVerdict::expired;
  return TicketVerdict::offer;
}

TlsSessionCache::~TlsSessionCache() { release(); }

void TlsSessionCache::release() {
  if (live_) mbedtls_ssl_session_free(&session_);
  live_ = false;
  facts_.reset();
}

bool TlsSessionCache::store(const mbedtls_ssl_context& ssl, const TlsPeerIdentity& issued_by, loop::TimePoint now) {
  ExportedSession fresh;
  if (mbedtls_ssl_get_session(&ssl, fresh.get()) != 0) return false;
  const ExportedFacts f = exported_facts(*fresh.get());
  const bool tls13 = negotiated_tls13(ssl);
  // TLS 1.3 resumes from tickets only; TLS 1.2 also from a session ID the
  // server may keep in its cache (RFC 5246 §7.4.1.2).
  if (!f.has_ticket && (tls13 || !f.has_session_id)) return false;
  const std::chrono::seconds lifetime = ticket_lifetime(f.has_ticket ? f.lifetime_hint : 0, tls13);
  if (lifetime <= ticket_expiry_margin) return false;
  if (live_ && facts_ && facts_->issued_by == issued_by) {
    const dns::ByteView had = resumption_key(session_), got = resumption_key(*fresh.get());
    // The same session again (resumed, no new ticket): its lifetime still
    // counts from when it was issued, not from now.
    if (had.size() == got.size() && std::equal(had.begin(), had.end(), got.begin())) return true;
  }
  release();
  session_ = fresh.release();
  live_ = true;
  facts_ = TicketFacts{issued_by, now, lifetime};
  return true;
}

TicketVerdict TlsSessionCache::offer(mbedtls_ssl_context& ssl, const TlsPeerIdentity& dialling, loop::TimePoint now) {
  const TicketVerdict v = may_offer_ticket(facts_, dialling, now);
  if (v == TicketVerdict::other_upstream || v == TicketVerdict::expired) release();
  if (v != TicketVerdict::offer) return v;
  // mbedtls_ssl_set_session copies; a failure (allocation) just means a full
  // handshake, which is what we would do without a cache.
  if (mbedtls_ssl_set_session(&ssl, &session_) != 0) return TicketVerdict::none_stored;
  return TicketVerdict::offer;
}

void TlsSessionCache::forget() { release(); }

}  // namespace nxdns::upstream
