#include "block/list_fetch_result.hpp"

namespace nxdns::block {

const char* describe(FetchOutcome o) {
  switch (o) {
    case FetchOutcome::updated: return "updated";
    case FetchOutcome::not_modified: return "not_modified";
    case FetchOutcome::failed: return "failed";
  }
  return "unknown";
}

void record(ListFetchState& s, const FetchResult& r) {
  s.last_attempt_unix = r.finished_unix;
  s.have_copy = r.have_copy;
  s.bytes = r.bytes;
  switch (r.outcome) {
    case FetchOutcome::updated:
    case FetchOutcome::not_modified:
      ++(r.outcome == FetchOutcome::updated ? s.updates : s.not_modified);
      s.last_success_unix = r.finished_unix;
      s.last_error.clear();
      s.consecutive_failures = 0;
      return;
    case FetchOutcome::failed:
      ++s.failures;
      ++s.consecutive_failures;
      s.last_error = r.detail;
      return;
  }
}

}  // namespace nxdns::block
