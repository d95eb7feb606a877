#pragma once
// The bytes of a saved cache (cache.persist_file), and how a file is judged
// before anything in it is believed. Pure: no I/O, no clock.
//
//   header, 40 octets, big-endian:
//      0  magic "NXDNSCF\n"          not an nxdns cache file without it
//      8  format version (4)          cache_file_version
//     12  entries (4)
//     16  written at (8, signed)      Unix seconds, the saving host's wall clock
//     24  payload octets (8)
//     32  checksum (8)                64-bit FNV-1a over octets 0..31, then the payload
//   payload: the entries, oldest first (the order a load puts them back in),
//   each: key length (2), answer length (2), TTL (4), age when written (4),
//   the packed key (cache/key.hpp), the answer as stored.
//
// The checksum covers the header too, so a flipped bit in the time or the
// count is caught like one in an answer. FNV-1a changes its state
// bijectively per octet, so any single changed octet is always detected; a
// torn or truncated file is caught by the length before the checksum is
// computed. The checksum only proves the file is the one written: every
// entry must still pass the checks an upstream answer passes
// (cache/loaded_answer.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dns/message.hpp"

namespace nxdns::cache {

inline constexpr std::size_t cache_file_header_size = 40;
// Raised whenever the layout above changes: a file of another version is
// refused whole, never half-read.
inline constexpr std::uint32_t cache_file_version = 1;

std::uint64_t fnv1a64(dns::ByteView data, std::uint64_t state = 0xcbf29ce484222325ULL);

// Builds a file entry by entry; finish() adds the header. Entries are added
// on the loop (a copy of the store), finish() is the part worth running on
// another thread (one pass of the checksum over everything).
class CacheFileWriter {
 public:
  // `expected_payload` is reserved at once (AnswerStore::bytes() bounds
  // it): growing the buffer as it fills copied it over and over, on the loop.
  explicit CacheFileWriter(std::size_t expected_payload = 0);
  // An entry whose key or answer cannot be described by the 16-bit lengths
  // is left out (neither exists in a store).
  void add(std::string_view packed_key, dns::ByteView answer, std::uint32_t ttl_seconds, std::uint32_t age_seconds);
  std::size_t payload_size() const { return bytes_.size() - cache_file_header_size; }
  std::uint32_t entries() const { return entries_; }
  // The file's bytes. The writer is empty afterwards.
  dns::Bytes finish(std::int64_t written_unix);

 private:
  dns::Bytes bytes_;
  std::uint32_t entries_ = 0;
};

// One entry as the file holds it. Nothing here is verified beyond the
// checksum; the views point into the bytes given to decode_cache_file.
struct CacheFileEntry {
  std::string_view key;
  dns::ByteView answer;
  std::uint32_t ttl_seconds = 0;
  std::uint32_t age_seconds = 0;  // how old the entry was when the file was written
};

enum class CacheFileError : std::uint8_t {
  none,
  empty,
  short_header,   // torn: fewer octets than a header
  foreign,        // no magic: another program's file
  other_version,  // another format version
  truncated,      // fewer payload octets than the header says
  trailing,       // more octets than the header says
  too_large,      // payload over the bound (cache.max_bytes)
  checksum,       // corrupted, or a write torn inside the payload
  bad_entry,      // entries do not tile the payload
  count,          // the header's entry count is not the payload's
};

struct DecodedCacheFile {
  CacheFileError error = CacheFileError::none;
  std::string why;  // for the one log line; empty when error is none
  std::int64_t written_unix = 0;
  std::vector<CacheFileEntry> entries;
};

// `max_payload` bounds what is believed (a file saved under a larger
// cache.max_bytes is refused, not partly loaded).
DecodedCacheFile decode_cache_file(dns::ByteView file, std::size_t max_payload);

}  // namespace nxdns::cache
