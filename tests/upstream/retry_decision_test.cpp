// The one-redial rule as a table: every row names the situation it stands
// for, so a failing row says which promise broke.
#include "upstream/retry_decision.hpp"

#include "log/log.hpp"

#include <vector>

#include <CppUTest/TestHarness.h>

using nxdns::upstream::Cause;
using nxdns::upstream::retry_decision;
using nxdns::upstream::RetryDecision;

namespace {

struct Row {
  const char* situation;
  bool reused;
  bool bytes_received;
  Cause cause;
  RetryDecision expected;
};

constexpr Cause lifecycle[] = {Cause::eof, Cause::tls_closed, Cause::connection_reset, Cause::broken_pipe,
                               Cause::session_closed};
constexpr Cause not_lifecycle[] = {Cause::connect_failed, Cause::handshake_failed, Cause::certificate,
                                   Cause::certificate_clock_behind,
                                   Cause::tls_protocol, Cause::bad_response, Cause::response_too_large,
                                   Cause::http_status, Cause::bad_content_type, Cause::error_answer,
                                   Cause::attempt_timeout, Cause::local_resource, Cause::cancelled};

void check(const Row& r) {
  const RetryDecision got = retry_decision(r.reused, r.bytes_received, r.cause);
  if (got != r.expected) {
    FAIL(nxdns::log::cat(r.situation, ": cause ", describe(r.cause), " reused=", r.reused,
                         " bytes=", r.bytes_received, " gave ", describe(got), ", want ", describe(r.expected))
             .c_str());
  }
}

}  // namespace

TEST_GROUP(RetryDecision){};

TEST(RetryDecision, ReusedUntouchedLifecycleFailureRetries) {
  for (Cause c : lifecycle) check({"stale reused session", true, false, c, RetryDecision::retry});
}

TEST(RetryDecision, FreshDialFailureIsFinalWhateverTheCause) {
  for (Cause c : lifecycle) check({"fresh dial, lifecycle", false, false, c, RetryDecision::final});
  for (Cause c : not_lifecycle) check({"fresh dial, other", false, false, c, RetryDecision::final});
}

TEST(RetryDecision, RetryOwnFailureIsFinal) {
  // The redial runs on a freshly dialed session, so its own failure is
  // judged with reused=false: final, whatever ended it.
  for (Cause c : lifecycle) check({"the redial's own failure", false, false, c, RetryDecision::final});
}

TEST(RetryDecision, AnyResponseByteMakesItFinal) {
  for (Cause c : lifecycle) check({"reused, partial frame pending", true, true, c, RetryDecision::final});
  for (Cause c : not_lifecycle) check({"reused, bytes, other", true, true, c, RetryDecision::final});
}

TEST(RetryDecision, NonLifecycleCausesAreFinalEvenOnUntouchedReusedSession) {
  for (Cause c : not_lifecycle) check({"reused, no bytes, not lifecycle", true, false, c, RetryDecision::final});
}

TEST(RetryDecision, CoversEveryCause) {
  // A new Cause must be classified on purpose: lifecycle + the rest + ok
  // account for all of them.
  const std::size_t listed = sizeof lifecycle / sizeof lifecycle[0] + sizeof not_lifecycle / sizeof not_lifecycle[0];
  LONGS_EQUAL(nxdns::upstream::cause_count - 1, listed);
  check({"ok is not a failure", true, false, Cause::ok, RetryDecision::final});
  for (Cause c : lifecycle) CHECK_TRUE(nxdns::upstream::is_connection_lifecycle(c));
  for (Cause c : not_lifecycle) CHECK_FALSE(nxdns::upstream::is_connection_lifecycle(c));
}
