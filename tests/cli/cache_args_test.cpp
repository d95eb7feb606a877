// `nxdns cache flush [NAME]`: the one command with words after it.
#include "cli/args.hpp"
#include "cli/http_get.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::cli::parse;

TEST_GROUP(CacheArgs){};

TEST(CacheArgs, FlushWithAndWithoutAName) {
  auto a = parse({"cache", "flush"});
  CHECK_TRUE(a.parsed.has_value());
  LONGS_EQUAL(1, a.parsed->positionals.size());
  auto b = parse({"cache", "flush", "www.example.com", "--http", "127.0.0.1:8053"});
  CHECK_TRUE(b.parsed.has_value());
  STRCMP_EQUAL("www.example.com", b.parsed->positionals[1].c_str());
  STRCMP_EQUAL("127.0.0.1:8053", b.parsed->get("http").c_str());
  auto c = parse({"cache", "flush", "a", "b"});
  CHECK_FALSE(c.parsed.has_value());
  STRCMP_CONTAINS("unexpected argument 'b'", c.error.c_str());
  // Other commands still take no words.
  CHECK_FALSE(parse({"run", "flush"}).parsed.has_value());
}

TEST(CacheArgs, NameIsPercentEncodedForTheQueryString) {
  STRCMP_EQUAL("www.example.com", nxdns::cli::url_encode("www.example.com").c_str());
  STRCMP_EQUAL("a%20b%26c%3D%2F", nxdns::cli::url_encode("a b&c=/").c_str());
}
