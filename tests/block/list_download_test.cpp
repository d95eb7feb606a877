// The resolve entry that pins a list's host to the addresses the daemon's
// resolver gave: curl matches it against the URL's host and port.
#include "block/list_download.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::block;

TEST_GROUP(ListDownload){};

TEST(ListDownload, ResolveEntryPinsHostAndPortToEveryAddress) {
  const ListUrl u = *parse_list_url("https://Lists.Example:8443/x", nullptr);
  STRCMP_EQUAL("lists.example:8443:192.0.2.1", resolve_entry(u, {"192.0.2.1"}).c_str());
  STRCMP_EQUAL("lists.example:8443:192.0.2.1,[2001:db8::1]", resolve_entry(u, {"192.0.2.1", "2001:db8::1"}).c_str());
}
