#include "upstream/retry_decision.hpp"

namespace nxdns::upstream {

RetryDecision retry_decision(bool reused, bool response_bytes_received, Cause cause) {
  if (reused && !response_bytes_received && is_connection_lifecycle(cause)) return RetryDecision::retry;
  return RetryDecision::final;
}

const char* describe(RetryDecision d) { return d == RetryDecision::retry ? "retry" : "final"; }

}  // namespace nxdns::upstream
