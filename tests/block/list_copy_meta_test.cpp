// The validators file beside a list's copy: what is written reads back,
// and anything that is not such a file (or holds a value that could add a
// line or a header) reads as none, which makes the next fetch
// unconditional.
#include "block/list_copy_meta.hpp"

#include "log/log.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::block;

namespace {

CopyMeta sample() {
  CopyMeta m;
  m.source = "https://lists.example";
  m.bytes = 123456;
  m.fetched_unix = 1700000000;
  m.etag = "W/\"5e-abc\"";
  m.last_modified = "Tue, 14 Nov 2023 22:13:20 GMT";
  return m;
}

}  // namespace

TEST_GROUP(ListCopyMeta){};

TEST(ListCopyMeta, WhatIsWrittenReadsBack) {
  const CopyMeta m = sample();
  const auto back = decode_copy_meta(encode_copy_meta(m));
  CHECK_TRUE(back.has_value());
  STRCMP_EQUAL(m.source.c_str(), back->source.c_str());
  LONGS_EQUAL(m.bytes, back->bytes);
  LONGS_EQUAL(m.fetched_unix, back->fetched_unix);
  STRCMP_EQUAL(m.etag.c_str(), back->etag.c_str());
  STRCMP_EQUAL(m.last_modified.c_str(), back->last_modified.c_str());
}

TEST(ListCopyMeta, ValidatorsAreOptional) {
  CopyMeta m = sample();
  m.etag.clear();
  m.last_modified.clear();
  const std::string text = encode_copy_meta(m);
  CHECK_TRUE(text.find("etag") == std::string::npos);
  const auto back = decode_copy_meta(text);
  CHECK_TRUE(back.has_value());
  CHECK_TRUE(back->etag.empty());
  CHECK_TRUE(back->last_modified.empty());
}

TEST(ListCopyMeta, AValidatorThatCouldAddALineIsNotWritten) {
  CopyMeta m = sample();
  m.etag = "\"a\"\nIf-None-Match: *";
  m.last_modified = std::string(2000, 'x');
  const auto back = decode_copy_meta(encode_copy_meta(m));
  CHECK_TRUE(back.has_value());
  CHECK_TRUE(back->etag.empty());
  CHECK_TRUE(back->last_modified.empty());
}

TEST(ListCopyMeta, StorableValidatorsArePrintableAsciiOfBoundedLength) {
  CHECK_TRUE(storable_validator("\"abc\""));
  CHECK_TRUE(storable_validator("W/\"x y\""));
  CHECK_TRUE(storable_validator(std::string(1024, 'a')));
  CHECK_FALSE(storable_validator(""));
  CHECK_FALSE(storable_validator(std::string(1025, 'a')));
  CHECK_FALSE(storable_validator("\"a\"\r"));
  CHECK_FALSE(storable_validator("\"a\tb\""));
  CHECK_FALSE(storable_validator("\"\xc3\xa9\""));
}

TEST(ListCopyMeta, AnythingElseReadsAsNone) {
  const std::string good = encode_copy_meta(sample());
  const char* rows[] = {
      "",
      "nxdns-list-copy 2\nbytes 1\nfetched 1\n",                // another version
      "bytes 1\nfetched 1\n",                                   // no first line
      "nxdns-list-copy 1\nfetched 1\n",                         // no size
      "nxdns-list-copy 1\nbytes 1\n",                           // no time
      "nxdns-list-copy 1\nbytes -1\nfetched 1\n",               // not a size
      "nxdns-list-copy 1\nbytes 1x\nfetched 1\n",               // not a number
      "nxdns-list-copy 1\nbytes 1\nfetched 1\netag \"a",        // torn: no last newline
      "nxdns-list-copy 1\nbytes 1\nfetched 1\nbroken\n",        // a line without a value
      "nxdns-list-copy 1\nbytes 1\nfetched 1\netag \x01\n",     // not storable
  };
  for (const char* text : rows) {
    if (decode_copy_meta(text)) FAIL(log::cat("decoded: ", text).c_str());
  }
  CHECK_TRUE(decode_copy_meta(good).has_value());
}

TEST(ListCopyMeta, KeysOfALaterWriterAreSkipped) {
  const auto m = decode_copy_meta("nxdns-list-copy 1\nbytes 5\nfetched 9\nsha256 abcd\netag \"e\"\n");
  CHECK_TRUE(m.has_value());
  LONGS_EQUAL(5, m->bytes);
  STRCMP_EQUAL("\"e\"", m->etag.c_str());
}

TEST(ListCopyMeta, LivesBesideTheCopy) {
  STRCMP_EQUAL("/var/lib/nxdns/lists/ab.list.meta", meta_path("/var/lib/nxdns/lists/ab.list").c_str());
}
