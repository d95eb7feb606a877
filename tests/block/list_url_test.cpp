// Which list URLs the fetcher takes and what it makes of them, as tables,
// and the name of a list's copy.
#include "block/list_url.hpp"

#include "log/log.hpp"

#include <string>
#include <vector>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::block;

namespace {

struct Good {
  const char* url;
  const char* host;
  bool ip;
  unsigned port;
  const char* target;
};

struct Bad {
  const char* url;
  const char* why_part;  // a part of the reason
};

}  // namespace

TEST_GROUP(ListUrl){};

TEST(ListUrl, AcceptsHttpsUrlsAndKeepsPathAndQueryAsWritten) {
  const Good rows[] = {
      {"https://lists.example/hosts.txt", "lists.example", false, 443, "/hosts.txt"},
      {"HTTPS://Lists.Example:8443/a/b.txt", "lists.example", false, 8443, "/a/b.txt"},
      {"https://pgl.example/serverlist.php?hostformat=hosts&showintro=0", "pgl.example", false, 443,
       "/serverlist.php?hostformat=hosts&showintro=0"},
      {"https://192.0.2.7/list", "192.0.2.7", true, 443, "/list"},
      {"https://[2001:db8::7]:4443/list", "2001:db8::7", true, 4443, "/list"},
      {"https://lists.example/%7Euser/list", "lists.example", false, 443, "/%7Euser/list"},
      {"https://lists.example/", "lists.example", false, 443, "/"},
  };
  for (const Good& g : rows) {
    std::string why;
    const auto u = parse_list_url(g.url, &why);
    if (!u) FAIL(log::cat(g.url, " refused: ", why).c_str());
    STRCMP_EQUAL(g.host, u->host.c_str());
    CHECK_EQUAL(g.ip, u->host_is_ip);
    LONGS_EQUAL(g.port, u->port);
    STRCMP_EQUAL(g.target, u->target.c_str());
  }
}

TEST(ListUrl, RefusesWhatItCannotFetchSafelyAndNeverEchoesTheUrl) {
  const Bad rows[] = {
      {"http://lists.example/hosts.txt", "must be https://"},
      {"ftp://lists.example/hosts.txt", "must be https://"},
      {"lists.example/hosts.txt", "not a URL"},
      {"https://user:s3cret@lists.example/hosts.txt", "credentials"},
      {"https://lists.example", "needs a path"},
      {"https://lists.example?x=1", "needs a path"},
      {"https://lists.example/hosts.txt#s3cret", "fragments"},
      {"https://lists.example/a b", "space"},
      {"https://lists.example/a\nb", "control"},
      {"https://lists.example/\xc3\xa9", "non-ASCII"},
      {"https://lists.example/a|b", "percent-encoded"},
      {"https://lists.example/a%2", "percent-encoded"},
      {"https://lists.example:0/x", "port"},
      {"https://lists.example:99999/x", "port"},
      {"https://lists.example:/x", "port"},
      {"https:///x", "no host"},
      {"https://-bad-.example/x", "neither an IP address nor a valid host name"},
      {"https://lists.example./x", "neither an IP address nor a valid host name"},
      {"https://1.2.3/x", "neither an IP address nor a valid host name"},
      {"https://2001:db8::1/x", "brackets"},
      {"https://[192.0.2.1]/x", "IPv6"},
      {"https://[lists.example]/x", "IPv6"},
  };
  for (const Bad& b : rows) {
    std::string why;
    const auto u = parse_list_url(b.url, &why);
    if (u) FAIL(log::cat(b.url, " accepted").c_str());
    CHECK_TEXT(why.find(b.why_part) != std::string::npos, log::cat(b.url, ": ", why).c_str());
    CHECK_TEXT(why.find("s3cret") == std::string::npos, why.c_str());
    CHECK_TEXT(why.find(b.url) == std::string::npos, why.c_str());
  }
}

TEST(ListUrl, HostLabelHasNoPathAndShowsOnlyAnUnusualPort) {
  STRCMP_EQUAL("https://lists.example", host_label(*parse_list_url("https://lists.example/s3cret?k=v", nullptr)).c_str());
  STRCMP_EQUAL("https://lists.example:8443", host_label(*parse_list_url("https://lists.example:8443/x", nullptr)).c_str());
  STRCMP_EQUAL("https://[2001:db8::7]", host_label(*parse_list_url("https://[2001:db8::7]/x", nullptr)).c_str());
}

TEST(ListUrl, CopyNameIsTheUrlsSha256InHex) {
  // The FIPS 180-2 test vector: SHA-256("abc").
  STRCMP_EQUAL("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad.list", list_copy_name("abc").c_str());
  const std::string a = list_copy_name("https://lists.example/hosts.txt");
  const std::string b = list_copy_name("https://lists.example/hosts.txt?v=2");
  CHECK_TRUE(a != b);
  STRCMP_EQUAL(a.c_str(), list_copy_name("https://lists.example/hosts.txt").c_str());
  // Nothing of a hostile URL reaches the file system.
  const std::string hostile = list_copy_name("https://x/../../etc/passwd");
  LONGS_EQUAL(69, hostile.size());
  CHECK_TRUE(hostile.find_first_not_of("0123456789abcdef.list") == std::string::npos);
  CHECK_TRUE(hostile.find('/') == std::string::npos);
}
