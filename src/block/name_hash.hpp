#pragma once
// The 64-bit key a blocklist table stores instead of a name.
//
// A name's hash is chained from the root down, one label at a time:
//   h(root) = root_hash,  h(label.parent) = extend_hash(h(parent), label)
// so a query's hashes for ALL its suffixes (the name, its parent, ... its
// top-level domain) come from one right-to-left pass over its labels, each
// octet read once; a subtree rule is found by looking up each of them.
// The text form of a rule and the wire form of a query give the same hash
// for the same lower-case labels, so nothing converts names at lookup.
//
// Collisions. extend_hash absorbs the label length and every 8 octets
// through splitmix64's finaliser (a bijection with full avalanche), so for
// names that nobody chose to collide the hashes behave like independent
// uniform 64-bit values. A lookup tests at most 2 x (labels + 1) keys
// against tables of N rules: with N = 1,000,000 and a 4-label name that is
// ~10 x 10^6 / 2^64 ~ 5 x 10^-13 per query: at 100,000 queries a day, one
// false match every ~50,000 years. Two rules of one table sharing a hash
// (then one is reported for both) has probability N^2 / 2^65 ~ 3 x 10^-8
// for a million rules. The hash is not keyed: a list author could craft a
// collision, but whoever writes a list can simply list the name.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace nxdns::block {

// Where every chain starts. Any fixed value would do; this is the
// fraction of sqrt(2) (SHA-512's first initial word).
inline constexpr std::uint64_t root_hash = 0x6a09e667f3bcc908ULL;

// splitmix64's output function (Steele, Lea, Flood 2014).
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// h(label.parent). `label` is lower case already (the callers fold case
// once, where they copy the name).
inline std::uint64_t extend_hash(std::uint64_t parent, const char* label, std::size_t len) {
  // The length first: "ab" + "c" and "a" + "bc" then differ even when the
  // zero-padded chunks would agree.
  std::uint64_t h = mix64(parent ^ (static_cast<std::uint64_t>(len) * 0x9e3779b97f4a7c15ULL));
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    std::uint64_t chunk;
    std::memcpy(&chunk, label + i, 8);
    h = mix64(h ^ chunk);
  }
  if (i < len) {
    std::uint64_t chunk = 0;
    std::memcpy(&chunk, label + i, len - i);
    h = mix64(h ^ chunk);
  }
  return h;
}

// The hash of a lower-case presentation name without the trailing dot
// ("ads.example.com"); "" is the root.
inline std::uint64_t name_hash(std::string_view lower) {
  std::uint64_t h = root_hash;
  std::size_t end = lower.size();
  while (end > 0) {
    const std::size_t dot = lower.rfind('.', end - 1);
    const std::size_t start = dot == std::string_view::npos ? 0 : dot + 1;
    h = extend_hash(h, lower.data() + start, end - start);
    if (dot == std::string_view::npos) break;
    end = dot;
  }
  return h;
}

}  // namespace nxdns::block
