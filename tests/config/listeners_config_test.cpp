// The `listen:` and `http:` sections: bad, duplicate and overlapping
// addresses, and the web listener never taking a DNS port.
#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::config::test_support;

TEST_GROUP(ListenersConfig){};

TEST(ListenersConfig, BadListenAddresses) {
  STRCMP_EQUAL(
      "test.yaml:6:5: listen[1]: bad address \"localhost:53\": not an IP address (host names are not accepted "
      "here; use an IP literal)",
      error_of(kUp + "listen:\n  - \"127.0.0.1:53\"\n  - \"localhost:53\"\n").c_str());
  STRCMP_EQUAL("test.yaml:4:10: listen[0]: bad address \"::1\": IPv6 addresses need brackets, e.g. [::1]:53",
               error_of(kUp + "listen: [\"::1\"]\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:10: listen[0]: bad address \"127.0.0.1:0\": port must be a decimal number from 1 to 65535",
      error_of(kUp + "listen: [\"127.0.0.1:0\"]\n").c_str());
  STRCMP_EQUAL("test.yaml:4:9: listen: must list at least one address", error_of(kUp + "listen: []\n").c_str());
  STRCMP_EQUAL("test.yaml:5:11: http.listen: bad address \"[::1\": missing ']' after IPv6 address",
               error_of(kUp + "http:\n  listen: \"[::1\"\n").c_str());
}

TEST(ListenersConfig, DuplicateAndOverlappingListeners) {
  STRCMP_EQUAL("test.yaml:4:23: listen[1]: 127.0.0.1:53 is listed twice (first as listen[0])",
               error_of(kUp + "listen: [\"127.0.0.1\", \"127.0.0.1:53\"]\n").c_str());
  STRCMP_EQUAL("test.yaml:4:22: listen[1]: [::1]:53 is listed twice (first as listen[0])",
               error_of(kUp + "listen: [\"[::1]:53\", \"[0::1]\"]\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:24: listen[1]: 127.0.0.1:53 overlaps listen[0] 0.0.0.0:53 (a wildcard address takes the port "
      "on every address of its family)",
      error_of(kUp + "listen: [\"0.0.0.0:53\", \"127.0.0.1:53\"]\n").c_str());
  // Different ports, or different families, do not overlap.
  LONGS_EQUAL(3, must_load(kUp + "listen: [\"0.0.0.0:53\", \"127.0.0.1:5353\", \"[::1]:53\"]\n").listen.size());
}

TEST(ListenersConfig, WebListenerMustNotTakeADnsPort) {
  STRCMP_EQUAL(
      "test.yaml:6:11: http.listen: 127.0.0.1:5300 conflicts with listen[0] 0.0.0.0:5300 (both need TCP on that "
      "port)",
      error_of(kUp + "listen: [\"0.0.0.0:5300\"]\nhttp:\n  listen: \"127.0.0.1:5300\"\n").c_str());
  STRCMP_EQUAL(
      "test.yaml:4:10: listen[0]: 127.0.0.1:8053 conflicts with the web listener's default http.listen "
      "127.0.0.1:8053 (both need TCP on that port); move one of them",
      error_of(kUp + "listen: [\"127.0.0.1:8053\"]\n").c_str());
  // A disabled web listener binds nothing.
  CHECK_FALSE(must_load(kUp + "listen: [\"127.0.0.1:8053\"]\nhttp: {enabled: false}\n").http.enabled);
}
