#pragma once
// Blocking as the operator sees it: each list with its size, age and the
// queries it blocked, the table's cost, and the last load's outcome (the
// "blocking" part of /api/health, the status page, /metrics).
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "web/json.hpp"

namespace nxdns::web {

struct BlockListStatus {
  std::string name;  // path, or the redacted URL
  bool url = false;
  bool allow_list = false;
  std::uint64_t rules = 0;     // in the table in use
  std::uint64_t rejected = 0;  // lines not used (junk, modifiers DNS cannot honour, ...)
  std::optional<std::time_t> loaded_unix;  // when the table holding it was built
  std::uint64_t blocked = 0;   // queries blocked by its rules
  // URL lists: the fetches (block::ListFetchState).
  std::optional<std::int64_t> fetched_unix;  // last success (a new copy or 304)
  std::string fetch_error;                   // latest failure, "" after a success
  std::uint64_t fetch_failures = 0;
};

struct BlockingStatus {
  bool enabled = false;  // at least one list configured
  std::vector<BlockListStatus> lists;
  std::uint64_t rules = 0;  // distinct, in the table in use
  std::size_t memory_bytes = 0;
  bool building = false;
  std::uint64_t builds = 0, build_failures = 0;
  std::optional<std::string> last_error;
  double last_build_seconds = 0.0;
  std::uint64_t allowed_by_rule = 0;
};

// `blocked`: queries answered as blocked (the engine's route count).
void write_blocking(JsonWriter& w, const BlockingStatus& s, std::uint64_t blocked);

}  // namespace nxdns::web
