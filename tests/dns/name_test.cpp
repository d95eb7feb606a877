// Names: decompression (read_name), comparison, and the two text forms.
#include <string>

#include "dns/message.hpp"
#include "packets.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::dns;
using namespace nxdns::dns::test;

TEST_GROUP(Name){};

TEST(Name, ReadNameFollowsPointerAndReportsNextAfterIt) {
  // 12: example.com ; then "www" + pointer to 12
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  append(msg, wname("example.com"));
  const std::size_t at = msg.size();
  raw(msg, {3, 'w', 'w', 'w', 0xC0, 12, 0xAA});
  Bytes out;
  const NameRead r = read_name(msg, at, out);
  CHECK_PARSE_ERROR(ParseError::none, r.error);
  CHECK_EQUAL(at + 6, r.next);
  CHECK_BYTES(wname("www.example.com"), out);
}

TEST(Name, ReadNameChainedPointers) {
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  append(msg, wname("com"));                // 12
  const std::size_t ex = msg.size();
  raw(msg, {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0xC0, 12});
  const std::size_t www = msg.size();
  raw(msg, {3, 'w', 'w', 'w', 0xC0, static_cast<std::uint8_t>(ex)});
  Bytes out;
  const NameRead r = read_name(msg, www, out);
  CHECK_PARSE_ERROR(ParseError::none, r.error);
  CHECK_EQUAL(msg.size(), r.next);
  CHECK_BYTES(wname("www.example.com"), out);
}

TEST(Name, ReadNameClearsOutputFirstAndOnError) {
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  append(msg, wname("a"));
  Bytes out{9, 9, 9};
  CHECK_PARSE_ERROR(ParseError::none, read_name(msg, 12, out).error);
  CHECK_BYTES(wname("a"), out);
  msg.push_back(0xC0);
  msg.push_back(0xFF);
  CHECK_PARSE_ERROR(ParseError::bad_pointer, read_name(msg, msg.size() - 2, out).error);
  CHECK_TRUE(out.empty());
}

TEST(Name, ReadNameOffsetPastEndIsTruncated) {
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  Bytes out;
  CHECK_PARSE_ERROR(ParseError::truncated, read_name(msg, 12, out).error);
  CHECK_PARSE_ERROR(ParseError::truncated, read_name(msg, 1000, out).error);
}

TEST(Name, PointerIntoOwnLabelsRejected) {
  // "a" at 12, then a pointer at 14 back to 12: before the pointer, but it
  // would re-read the same labels forever.
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  raw(msg, {1, 'a', 0xC0, 12});
  Bytes out;
  CHECK_PARSE_ERROR(ParseError::bad_pointer, read_name(msg, 12, out).error);
}

TEST(Name, PointerIntoEarlierNameMiddleAccepted) {
  // Pointing at a suffix of an earlier name is ordinary compression.
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  append(msg, wname("www.example.com"));
  const std::size_t at = msg.size();
  raw(msg, {0xC0, 16});  // "example.com"
  Bytes out;
  CHECK_PARSE_ERROR(ParseError::none, read_name(msg, at, out).error);
  CHECK_BYTES(wname("example.com"), out);
}

TEST(Name, LongPointerChainHitsHopLimit) {
  // Each pointer targets the previous one: strictly decreasing, so legal by
  // the ordering rule alone; the hop limit still stops 200 of them.
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  append(msg, wname("a"));
  std::size_t prev = 12;
  for (int i = 0; i < 200; ++i) {
    const std::size_t here = msg.size();
    u16(msg, static_cast<std::uint16_t>(0xC000 | prev));
    prev = here;
  }
  Bytes out;
  CHECK_PARSE_ERROR(ParseError::bad_pointer, read_name(msg, prev, out).error);
  // A short chain is fine.
  std::size_t tenth = 12 + 3 + 2 * 9;
  CHECK_PARSE_ERROR(ParseError::none, read_name(msg, tenth, out).error);
  CHECK_BYTES(wname("a"), out);
}

TEST(Name, CompressedNameOver255Rejected) {
  // 4 labels of 63 spread over two pieces joined by a pointer.
  Bytes msg = header(1, 0, 0, 0, 0, 0);
  for (int i = 0; i < 2; ++i) {
    msg.push_back(63);
    msg.insert(msg.end(), 63, 'x');
  }
  msg.push_back(0);
  const std::size_t at = msg.size();
  for (int i = 0; i < 2; ++i) {
    msg.push_back(63);
    msg.insert(msg.end(), 63, 'y');
  }
  u16(msg, 0xC00C);
  Bytes out;
  CHECK_PARSE_ERROR(ParseError::name_too_long, read_name(msg, at, out).error);
}

TEST(Name, NamesEqualFoldsAsciiOnly) {
  CHECK_TRUE(names_equal(wname("WWW.Example.COM"), wname("www.example.com")));
  CHECK_FALSE(names_equal(wname("www.example.com"), wname("www.example.org")));
  CHECK_FALSE(names_equal(wname("www.example.com"), wname("ww.wexample.com")));
  CHECK_FALSE(names_equal(wname("example.com"), wname("www.example.com")));
  // Only A-Z fold: 0xC4 vs 0xE4 (Latin-1 Ä/ä) are different octets.
  CHECK_FALSE(names_equal(Bytes{1, 0xC4, 0}, Bytes{1, 0xE4, 0}));
  // '@' (0x40) and '`' (0x60) sit next to the letters; they do not fold.
  CHECK_FALSE(names_equal(Bytes{1, '@', 0}, Bytes{1, '`', 0}));
  CHECK_TRUE(names_equal(Bytes{0}, Bytes{0}));
}

TEST(Name, NamesEqualRejectsMalformed) {
  CHECK_FALSE(names_equal(Bytes{}, Bytes{}));
  CHECK_FALSE(names_equal(Bytes{3, 'a'}, Bytes{3, 'a'}));
  CHECK_FALSE(names_equal(Bytes{1, 'a', 0, 7}, Bytes{1, 'a', 0, 7}));
}

TEST(Name, NameToTextPlain) {
  STRCMP_EQUAL("www.example.com.", name_to_text(wname("www.example.com")).c_str());
  STRCMP_EQUAL(".", name_to_text(Bytes{0}).c_str());
}

TEST(Name, NameToTextEscapes) {
  // a label "a.b", one with a backslash, one with a space and a control byte
  const Bytes n{3, 'a', '.', 'b', 2, '\\', 'x', 3, ' ', 0x07, 0xFF, 0};
  STRCMP_EQUAL("a\\.b.\\\\x.\\032\\007\\255.", name_to_text(n).c_str());
}

TEST(Name, NameToTextMarksMalformed) {
  STRCMP_EQUAL("a.<malformed>", name_to_text(Bytes{1, 'a', 5, 'b'}).c_str());
  STRCMP_EQUAL("<malformed>", name_to_text(Bytes{}).c_str());
}

TEST(Name, NameFromTextBasics) {
  const auto plain = name_from_text("www.example.com");
  const auto dotted = name_from_text("www.example.com.");
  const auto root = name_from_text(".");
  CHECK_TRUE(plain && dotted && root);
  CHECK_BYTES(wname("www.example.com"), *plain);
  CHECK_BYTES(wname("www.example.com"), *dotted);
  CHECK_BYTES(Bytes{0}, *root);
}

TEST(Name, NameFromTextEscapesRoundTrip) {
  const Bytes n{3, 'a', '.', 'b', 2, '\\', 'x', 3, ' ', 0x07, 0xFF, 0};
  const auto back = name_from_text(name_to_text(n));
  CHECK_TRUE(back.has_value());
  CHECK_BYTES(n, *back);
}

TEST(Name, NameFromTextRejects) {
  CHECK_FALSE(name_from_text("").has_value());
  CHECK_FALSE(name_from_text("a..b").has_value());
  CHECK_FALSE(name_from_text(".a").has_value());
  CHECK_FALSE(name_from_text("a\\").has_value());
  CHECK_FALSE(name_from_text("a\\25").has_value());
  CHECK_FALSE(name_from_text("a\\256").has_value());
  CHECK_FALSE(name_from_text("a\\2x5").has_value());
}

TEST(Name, NameFromTextSaysWhy) {
  struct Row {
    std::string text;
    const char* why;
  };
  std::string long_name;
  for (int i = 0; i < 5; ++i) long_name += std::string(60, 'b') + ".";
  const Row rows[] = {
      {"", "empty name"},
      {"a..b", "empty label"},
      {".a", "empty label"},
      {std::string(64, 'a') + ".com", "label longer than 63 octets"},
      {"com." + std::string(64, 'a'), "label longer than 63 octets"},
      {long_name, "name longer than 255 octets"},
      {long_name.substr(0, long_name.size() - 1), "name longer than 255 octets"},
      {"a\\", "bad escape"},
      {"a\\25", "bad escape"},
      {"a\\256", "bad escape"},
      {"a\\2x5", "bad escape"},
  };
  for (const Row& r : rows) {
    std::string why = "unchanged";
    CHECK_FALSE(name_from_text(r.text, &why).has_value());
    STRCMP_EQUAL_TEXT(r.why, why.c_str(), r.text.c_str());
  }
  std::string why = "unchanged";
  CHECK_TRUE(name_from_text("ok.example", &why).has_value());
  STRCMP_EQUAL("unchanged", why.c_str());
}

TEST(Name, NameFromTextLabelLimit) {
  const std::string l63(63, 'a');
  const std::string l64(64, 'a');
  CHECK_TRUE(name_from_text(l63 + ".com").has_value());
  CHECK_FALSE(name_from_text(l64 + ".com").has_value());
  CHECK_FALSE(name_from_text(l64).has_value());
}

TEST(Name, NameFromTextNameLimit) {
  // 3 x 63-octet labels + one 61 = 255 wire octets with the root.
  const std::string l63(63, 'a');
  const std::string ok = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'b');
  const auto n = name_from_text(ok);
  CHECK_TRUE(n.has_value());
  CHECK_EQUAL(255u, n->size());
  CHECK_FALSE(name_from_text(ok + "b").has_value());
  CHECK_FALSE(name_from_text(ok + ".c").has_value());
}
