#pragma once
// An answer read from the cache file, checked as an upstream answer is
// before it is stored (CachingPool's flight completion): it must be a
// response whose one question is the key's (name case-insensitively, type,
// class: what validate_response checks against the query), answer_ttl must
// call it cacheable under the clamps in force now, and its record TTLs are
// clamped as a fresh answer's are. The file's checksum proves only that the
// file is the one written; nothing in it is served on that alone. Pure
// (table-tested in tests/cache/loaded_answer_test.cpp).
#include <cstdint>
#include <optional>
#include <string_view>

#include "cache/answer_ttl.hpp"
#include "cache/key.hpp"
#include "dns/message.hpp"

namespace nxdns::cache {

enum class LoadRefusal : std::uint8_t {
  none,
  malformed,       // no single readable question, or records that do not walk
  key_mismatch,    // the key is not the one its question files it under
  not_cacheable,   // answer_ttl's verdict (error rcode, TC, TTL 0, referral, ...)
};
const char* describe(LoadRefusal r);

struct LoadedAnswer {
  Key key;
  dns::Bytes answer;  // record TTLs clamped as on store
  std::uint32_t ttl_seconds = 0;  // answer_ttl's, never more than the file's
  bool negative = false;
};

struct LoadCheck {
  LoadRefusal refusal = LoadRefusal::none;
  std::optional<LoadedAnswer> answer;  // set exactly when refusal is none
};

// `file_ttl` is the TTL the file claims; the entry keeps the smaller of it
// and what the answer itself allows under `clamp`.
LoadCheck check_loaded_answer(std::string_view packed_key, dns::ByteView answer, std::uint32_t file_ttl,
                              const TtlClamp& clamp);

}  // namespace nxdns::cache
