// The cache file's bytes: what a save writes reads back whole, and every
// way a file can be wrong (torn at any length, any octet flipped, another
// program's file, another format version, a lying header) is refused with
// its reason, never partly believed.
#include "cache/cache_file_format.hpp"
#include "cache/answers.hpp"
#include "cache/key.hpp"

#include <cstring>
#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::cache;
using namespace nxdns::cache::packets;

namespace {

constexpr std::int64_t written = 1796000000;  // 2026-11-30

struct Sample {
  std::string key;
  dns::Bytes answer;
  std::uint32_t ttl, age;
};

std::vector<Sample> samples() {
  std::vector<Sample> v;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "n" + std::to_string(i) + ".example.test";
    v.push_back({make_key(wname(name), t_a, 1, i == 1, i == 2).packed, build({.qname = name, .answer = {{t_a, 300}}}),
                 300u + static_cast<std::uint32_t>(i), 7u * static_cast<std::uint32_t>(i)});
  }
  return v;
}

dns::Bytes sample_file() {
  CacheFileWriter w;
  for (const Sample& s : samples()) w.add(s.key, s.answer, s.ttl, s.age);
  return w.finish(written);
}

CacheFileError error_of(const dns::Bytes& f, std::size_t max_payload = 1 << 20) {
  return decode_cache_file(f, max_payload).error;
}

// The FNV-1a of the header's first 32 octets and the payload, put where it
// belongs: a file whose only fault is what the test changed.
void reseal(dns::Bytes& f) {
  const dns::ByteView all(f);
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (i >= 32 && i < 40) continue;
    h ^= all[i];
    h *= 0x100000001b3ULL;
  }
  for (int i = 0; i < 8; ++i) f[32 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(h >> (56 - 8 * i));
}

void put_be(dns::Bytes& f, std::size_t at, std::uint64_t v, std::size_t octets) {
  for (std::size_t i = 0; i < octets; ++i) f[at + i] = static_cast<std::uint8_t>(v >> (8 * (octets - 1 - i)));
}

}  // namespace

TEST_GROUP(CacheFileFormat){};

TEST(CacheFileFormat, RoundTrip) {
  const dns::Bytes f = sample_file();
  const DecodedCacheFile d = decode_cache_file(f, 1 << 20);
  CHECK(d.error == CacheFileError::none);
  CHECK_TRUE(d.why.empty());
  CHECK_EQUAL(written, d.written_unix);
  const auto want = samples();
  CHECK_EQUAL(want.size(), d.entries.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK_TRUE(d.entries[i].key == want[i].key);
    CHECK_TRUE(std::equal(want[i].answer.begin(), want[i].answer.end(), d.entries[i].answer.begin(),
                          d.entries[i].answer.end()));
    CHECK_EQUAL(want[i].ttl, d.entries[i].ttl_seconds);
    CHECK_EQUAL(want[i].age, d.entries[i].age_seconds);
  }
}

TEST(CacheFileFormat, AnEmptyCacheIsAFileToo) {
  CacheFileWriter w;
  const dns::Bytes f = w.finish(written);
  CHECK_EQUAL(cache_file_header_size, f.size());
  const DecodedCacheFile d = decode_cache_file(f, 0);
  CHECK(d.error == CacheFileError::none);
  CHECK_EQUAL(0u, d.entries.size());
}

TEST(CacheFileFormat, TheWriterIsReusableAfterFinish) {
  CacheFileWriter w;
  w.add("k", dns::Bytes{1, 2, 3}, 1, 0);
  (void)w.finish(written);
  CHECK_EQUAL(0u, w.entries());
  CHECK_EQUAL(0u, w.payload_size());
}

TEST(CacheFileFormat, EveryTruncationIsRefused) {
  // Torn at every length: in the magic, in the header, inside an entry.
  const dns::Bytes f = sample_file();
  for (std::size_t n = 0; n < f.size(); ++n) {
    const dns::Bytes cut(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    const CacheFileError e = error_of(cut);
    if (e == CacheFileError::none) FAIL(("a file cut to " + std::to_string(n) + " octets was accepted").c_str());
    const CacheFileError want =
        n == 0 ? CacheFileError::empty : n < cache_file_header_size ? CacheFileError::short_header : CacheFileError::truncated;
    if (e != want) FAIL(("cut to " + std::to_string(n) + ": " + decode_cache_file(cut, 1 << 20).why).c_str());
  }
}

TEST(CacheFileFormat, AHalfWrittenFileIsRefused) {
  // The size is right (space allocated before the crash), the second half
  // never reached the card: zeros.
  dns::Bytes f = sample_file();
  std::fill(f.begin() + static_cast<std::ptrdiff_t>(f.size() / 2), f.end(), 0);
  CHECK(error_of(f) == CacheFileError::checksum);
}

TEST(CacheFileFormat, EveryFlippedOctetIsRefused) {
  // Header and payload alike: the checksum covers the header's time and
  // counts, the magic and version are checked before it.
  const dns::Bytes f = sample_file();
  for (std::size_t i = 0; i < f.size(); ++i) {
    for (std::uint8_t bit : {0x01, 0x80}) {
      dns::Bytes g = f;
      g[i] ^= bit;
      if (error_of(g) == CacheFileError::none) FAIL(("octet " + std::to_string(i) + " flipped was accepted").c_str());
    }
  }
  dns::Bytes payload = f;
  payload[cache_file_header_size + 20] ^= 0x04;
  STRCMP_CONTAINS("checksum mismatch", decode_cache_file(payload, 1 << 20).why.c_str());
  dns::Bytes when = f;
  when[20] ^= 0x10;  // the written-at time
  CHECK(error_of(when) == CacheFileError::checksum);
}

TEST(CacheFileFormat, AnotherProgramsFileIsForeign) {
  const std::string text = "listen:\n  - 127.0.0.1:53\nupstreams: []\n# a YAML file put here by mistake\n";
  const dns::Bytes f(text.begin(), text.end());
  const DecodedCacheFile d = decode_cache_file(f, 1 << 20);
  CHECK(d.error == CacheFileError::foreign);
  STRCMP_CONTAINS("not an nxdns cache file", d.why.c_str());
  CHECK(error_of(dns::Bytes{'N', 'X', 'D', 'N', 'S', 'C', 'F', '\r'}) == CacheFileError::foreign);
}

TEST(CacheFileFormat, AnotherFormatVersionIsRefusedWhole) {
  dns::Bytes f = sample_file();
  put_be(f, 8, cache_file_version + 1, 4);
  reseal(f);  // a well-formed file of the next version
  const DecodedCacheFile d = decode_cache_file(f, 1 << 20);
  CHECK(d.error == CacheFileError::other_version);
  STRCMP_CONTAINS(("format version " + std::to_string(cache_file_version + 1) + ", this nxdns reads version " +
                   std::to_string(cache_file_version))
                      .c_str(),
                  d.why.c_str());
}

TEST(CacheFileFormat, TrailingOctetsAreRefused) {
  dns::Bytes f = sample_file();
  f.push_back(0);
  CHECK(error_of(f) == CacheFileError::trailing);
}

TEST(CacheFileFormat, APayloadOverTheBoundIsRefused) {
  const dns::Bytes f = sample_file();
  const std::size_t payload = f.size() - cache_file_header_size;
  CHECK(error_of(f, payload) == CacheFileError::none);
  const DecodedCacheFile d = decode_cache_file(f, payload - 1);
  CHECK(d.error == CacheFileError::too_large);
  STRCMP_CONTAINS("more than cache.max_bytes", d.why.c_str());
}

TEST(CacheFileFormat, AHeaderThatMiscountsIsRefused) {
  // Checksums that match: only a writer's bug or a forged file looks like
  // this, and it is still not believed.
  dns::Bytes f = sample_file();
  put_be(f, 12, 4, 4);
  reseal(f);
  CHECK(error_of(f) == CacheFileError::count);
}

TEST(CacheFileFormat, EntriesThatDoNotTileThePayloadAreRefused) {
  dns::Bytes f = sample_file();
  put_be(f, cache_file_header_size + 2, 0xFFFF, 2);  // the first answer's length
  reseal(f);
  CHECK(error_of(f) == CacheFileError::bad_entry);
  dns::Bytes zero_key = sample_file();
  put_be(zero_key, cache_file_header_size, 0, 2);
  reseal(zero_key);
  CHECK(error_of(zero_key) == CacheFileError::bad_entry);
}

TEST(CacheFileFormat, Fnv1aMatchesItsPublishedVectors) {
  // The FNV reference values for "" and "a" (64-bit FNV-1a).
  CHECK_EQUAL(0xcbf29ce484222325ULL, fnv1a64(dns::ByteView{}));
  const std::uint8_t a = 'a';
  CHECK_EQUAL(0xaf63dc4c8601ec8cULL, fnv1a64(dns::ByteView(&a, 1)));
}
