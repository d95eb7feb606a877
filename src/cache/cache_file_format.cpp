#include "cache/cache_file_format.hpp"

#include <algorithm>
#include <array>
#include <iterator>

#include "dns/wire.hpp"
#include "log/log.hpp"

namespace nxdns::cache {

namespace {

constexpr std::uint8_t magic[8] = {'N', 'X', 'D', 'N', 'S', 'C', 'F', '\n'};
constexpr std::size_t off_version = 8, off_entries = 12, off_written = 16, off_payload = 24, off_checksum = 32;
constexpr std::size_t entry_head = 12;

void store_be(std::uint8_t* at, std::uint64_t v, std::size_t octets) {
  for (std::size_t i = 0; i < octets; ++i) at[i] = static_cast<std::uint8_t>(v >> (8 * (octets - 1 - i)));
}
std::uint64_t load_be(dns::ByteView b, std::size_t at, std::size_t octets) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < octets; ++i) v = (v << 8) | b[at + i];
  return v;
}

DecodedCacheFile refuse(CacheFileError e, std::string why) {
  DecodedCacheFile d;
  d.error = e;
  d.why = std::move(why);
  return d;
}

}  // namespace

std::uint64_t fnv1a64(dns::ByteView data, std::uint64_t state) {
  for (const std::uint8_t c : data) {
    state ^= c;
    state *= 0x100000001b3ULL;
  }
  return state;
}

CacheFileWriter::CacheFileWriter(std::size_t expected_payload) {
  bytes_.reserve(cache_file_header_size + expected_payload);
  bytes_.assign(cache_file_header_size, 0);
}

void CacheFileWriter::add(std::string_view packed_key, dns::ByteView answer, std::uint32_t ttl_seconds,
                          std::uint32_t age_seconds) {
  if (packed_key.empty() || packed_key.size() > 0xFFFF || answer.size() > 0xFFFF) return;
  std::array<std::uint8_t, entry_head> head;
  store_be(&head[0], packed_key.size(), 2);
  store_be(&head[2], answer.size(), 2);
  store_be(&head[4], ttl_seconds, 4);
  store_be(&head[8], age_seconds, 4);
  bytes_.insert(bytes_.end(), head.begin(), head.end());
  bytes_.insert(bytes_.end(), packed_key.begin(), packed_key.end());
  bytes_.insert(bytes_.end(), answer.begin(), answer.end());
  ++entries_;
}

dns::Bytes CacheFileWriter::finish(std::int64_t written_unix) {
  std::copy(std::begin(magic), std::end(magic), bytes_.begin());
  store_be(&bytes_[off_version], cache_file_version, 4);
  store_be(&bytes_[off_entries], entries_, 4);
  store_be(&bytes_[off_written], static_cast<std::uint64_t>(written_unix), 8);
  store_be(&bytes_[off_payload], payload_size(), 8);
  const dns::ByteView all(bytes_);
  const std::uint64_t sum = fnv1a64(all.subspan(cache_file_header_size), fnv1a64(all.first(off_checksum)));
  store_be(&bytes_[off_checksum], sum, 8);
  dns::Bytes out = std::move(bytes_);
  bytes_.assign(cache_file_header_size, 0);
  entries_ = 0;
  return out;
}

DecodedCacheFile decode_cache_file(dns::ByteView file, std::size_t max_payload) {
  using E = CacheFileError;
  if (file.empty()) return refuse(E::empty, "the file is empty");
  // A prefix of the magic is still a torn file of ours, not a foreign one.
  const std::size_t magic_seen = std::min(file.size(), sizeof magic);
  if (!std::equal(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(magic_seen), std::begin(magic)))
    return refuse(E::foreign, "not an nxdns cache file (no NXDNSCF magic)");
  if (file.size() < cache_file_header_size)
    return refuse(E::short_header, log::cat("torn: ", file.size(), " octets, shorter than the ", cache_file_header_size,
                                            "-octet header"));
  const auto version = static_cast<std::uint32_t>(load_be(file, off_version, 4));
  if (version != cache_file_version)
    return refuse(E::other_version,
                  log::cat("format version ", version, ", this nxdns reads version ", cache_file_version));
  const std::uint64_t payload = load_be(file, off_payload, 8);
  const std::size_t have = file.size() - cache_file_header_size;
  if (payload > max_payload)
    return refuse(E::too_large, log::cat("its entries take ", payload, " octets, more than cache.max_bytes (",
                                         max_payload, ")"));
  if (have < payload)
    return refuse(E::truncated, log::cat("truncated: ", have, " of ", payload, " payload octets"));
  if (have > payload)
    return refuse(E::trailing, log::cat(have - payload, " octets past the ", payload, " the header announces"));
  const std::uint64_t sum = fnv1a64(file.subspan(cache_file_header_size), fnv1a64(file.first(off_checksum)));
  if (sum != load_be(file, off_checksum, 8))
    return refuse(E::checksum, "checksum mismatch (corrupted, or a write torn inside the entries)");

  DecodedCacheFile d;
  d.written_unix = static_cast<std::int64_t>(load_be(file, off_written, 8));
  const auto count = static_cast<std::uint32_t>(load_be(file, off_entries, 4));
  // A count the payload could not hold is not believed for the reserve.
  d.entries.reserve(std::min<std::size_t>(count, payload / entry_head));
  std::size_t at = cache_file_header_size;
  while (at < file.size()) {
    if (!dns::wire::has(file, at, entry_head))
      return refuse(E::bad_entry, log::cat("entry ", d.entries.size(), " overruns the payload"));
    CacheFileEntry e;
    const auto key_len = static_cast<std::size_t>(load_be(file, at, 2));
    const auto answer_len = static_cast<std::size_t>(load_be(file, at + 2, 2));
    e.ttl_seconds = static_cast<std::uint32_t>(load_be(file, at + 4, 4));
    e.age_seconds = static_cast<std::uint32_t>(load_be(file, at + 8, 4));
    at += entry_head;
    if (key_len == 0 || !dns::wire::has(file, at, key_len + answer_len))
      return refuse(E::bad_entry, log::cat("entry ", d.entries.size(), " overruns the payload"));
    e.key = std::string_view(reinterpret_cast<const char*>(file.data() + at), key_len);
    e.answer = file.subspan(at + key_len, answer_len);
    at += key_len + answer_len;
    d.entries.push_back(e);
  }
  if (d.entries.size() != count)
    return refuse(E::count, log::cat("the header counts ", count, " entries, the payload holds ", d.entries.size()));
  return d;
}

}  // namespace nxdns::cache
