// libFuzzer target for the cache file as a start reads it: decode_cache_file
// (header, checksum, entries) and, for every entry of a file it accepts,
// check_loaded_answer (an upstream answer's checks) and layout_of (what the
// store's put walks).
//
// Input: the file's bytes. The checksum stops nearly every mutation at the
// header, so inputs whose first octet is odd are resealed first (the
// checksum recomputed over what the fuzzer wrote), which lets mutations
// reach the entries and the answers in them.
// Invariants checked: nothing crashes or reads out of bounds (ASan/UBSan);
// an accepted file, written again entry by entry with its own time, is the
// same bytes (nothing decoded that the writer would not write); an answer
// the checks accept walks (layout_of) and is filed under its own question.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cache/answer_rewrite.hpp"
#include "cache/cache_file_format.hpp"
#include "cache/loaded_answer.hpp"

using namespace nxdns;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::vector<std::uint8_t> file(data + 1, data + size);
  if ((data[0] & 1) != 0 && file.size() >= cache::cache_file_header_size) {
    const dns::ByteView all(file);
    const std::uint64_t sum =
        cache::fnv1a64(all.subspan(cache::cache_file_header_size), cache::fnv1a64(all.first(32)));
    for (int i = 0; i < 8; ++i) file[32 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sum >> (56 - 8 * i));
  }
  const cache::DecodedCacheFile d = cache::decode_cache_file(file, std::size_t{1} << 20);
  if (d.error != cache::CacheFileError::none) {
    if (d.why.empty()) std::abort();
    return 0;
  }
  cache::CacheFileWriter w;
  for (const cache::CacheFileEntry& e : d.entries) w.add(e.key, e.answer, e.ttl_seconds, e.age_seconds);
  if (w.finish(d.written_unix) != file) std::abort();

  const cache::TtlClamp clamp{data[0] & 2 ? 60u : 0u, data[0] & 4 ? 300u : 86400u};
  for (const cache::CacheFileEntry& e : d.entries) {
    const cache::LoadCheck c = cache::check_loaded_answer(e.key, e.answer, e.ttl_seconds, clamp);
    if (c.answer.has_value() != (c.refusal == cache::LoadRefusal::none)) std::abort();
    if (!c.answer) continue;
    if (c.answer->ttl_seconds > e.ttl_seconds || c.answer->ttl_seconds > clamp.max_ttl) std::abort();
    if (!cache::layout_of(c.answer->answer)) std::abort();
    const auto q = dns::parse_question_of(c.answer->answer);
    if (!q) std::abort();
    const std::uint8_t flags = static_cast<std::uint8_t>(e.key.back());
    if (cache::make_key(q->name, q->qtype, q->qclass, flags & 1, flags & 2).packed != c.answer->key.packed) std::abort();
  }
  return 0;
}
