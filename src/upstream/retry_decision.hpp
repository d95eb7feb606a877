#pragma once
// The one-redial rule for DoT session reuse, as a pure function so that the
// whole matrix is table-testable without a wire.
#include "upstream/transport.hpp"

namespace nxdns::upstream {

enum class RetryDecision : std::uint8_t { retry, final };

// An exchange whose session died gets exactly one more try, on a freshly
// dialed session, only when all three hold:
//  - `reused`: the session had completed its handshake before this exchange
//    was placed on it. A fresh dial that fails says something about the
//    upstream; a stale reused one only says the server closed an idle
//    connection (RFC 7858 §3.4 lets it), which we could not see in time.
//  - `!response_bytes_received`: no byte of the answer arrived. With
//    pipelining a response cannot be attributed before its frame completes,
//    so this is "no partial frame was pending when the session died"; once a
//    byte of an answer may have arrived, the query was evidently processed
//    and a resend is a second query, not a recovery.
//  - `cause` is a connection-lifecycle error (EOF, close_notify/truncation,
//    reset, broken pipe, sibling teardown). A TLS alert, a certificate
//    problem, a bad answer, a local resource failure or a cancellation is
//    never cured by redialing.
// The retry's own failure is final: the transport tracks per exchange that
// the redial was used (and the redial runs on a fresh session, so `reused` is
// false for it anyway).
RetryDecision retry_decision(bool reused, bool response_bytes_received, Cause cause);

const char* describe(RetryDecision d);

}  // namespace nxdns::upstream
