#pragma once
// What one fetch of a downloaded list did (FetchResult, handed to the loop)
// and what the status page and /metrics say about a list over time
// (ListFetchState, folded from the results by record()).
#include <cstdint>
#include <optional>
#include <string>

namespace nxdns::block {

enum class FetchOutcome : std::uint8_t {
  updated,       // a complete 200 response replaced the copy
  not_modified,  // 304 to a conditional request: the copy is current
  failed,        // anything else: the copy (if any) and its validators are as they were
};
const char* describe(FetchOutcome o);

struct FetchResult {
  FetchOutcome outcome = FetchOutcome::failed;
  // One line for the log and the status page. Names the list by its label
  // (a redacted URL) and never holds the URL's path or query.
  std::string detail;
  std::string path;              // the copy's file, whether or not it exists
  bool have_copy = false;        // a copy exists at `path` after this fetch
  std::uint64_t bytes = 0;       // the copy's size after this fetch (0 without one)
  std::uint64_t received = 0;    // body octets this fetch received (also when it failed)
  std::int64_t finished_unix = 0;  // wall clock when the fetch ended
};

struct ListFetchState {
  std::optional<std::int64_t> last_success_unix;  // updated or not_modified
  std::optional<std::int64_t> last_attempt_unix;  // any outcome
  std::string last_error;                         // detail of the latest failure; "" after a success
  std::uint64_t consecutive_failures = 0;
  bool have_copy = false;
  std::uint64_t bytes = 0;  // the copy's size
  // Totals since the daemon started, for counters on /metrics.
  std::uint64_t updates = 0;
  std::uint64_t not_modified = 0;
  std::uint64_t failures = 0;
};

// Folds one result into a list's state.
void record(ListFetchState& s, const FetchResult& r);

}  // namespace nxdns::block
