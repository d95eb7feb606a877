// Host name syntax (tls_name, upstream URLs, http.allowed_hosts and the web
// surface's Host check) and the form names are compared in.
#include "net/host_name.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using nxdns::net::is_host_name;
using nxdns::net::normalize_host_name;

TEST_GROUP(HostName){};

TEST(HostName, Syntax) {
  CHECK(is_host_name("dns.example"));
  CHECK(is_host_name("a"));
  CHECK(is_host_name("x-1.example"));
  CHECK(is_host_name("1a.example"));
  CHECK(is_host_name(std::string(63, 'a') + ".example"));
  CHECK_FALSE(is_host_name(std::string(64, 'a') + ".example"));
  CHECK_FALSE(is_host_name(""));
  CHECK_FALSE(is_host_name("dns.example."));
  CHECK_FALSE(is_host_name(".dns.example"));
  CHECK_FALSE(is_host_name("dns..example"));
  CHECK_FALSE(is_host_name("-dns.example"));
  CHECK_FALSE(is_host_name("dns-.example"));
  CHECK_FALSE(is_host_name("dns_x.example"));
  CHECK_FALSE(is_host_name("1.2.3"));  // a mistyped IPv4, not a name
  CHECK_FALSE(is_host_name("192.168.1.256"));
  std::string long_name;
  for (int i = 0; i < 4; ++i) long_name += std::string(63, 'a') + ".";
  long_name.pop_back();  // 255 characters
  CHECK_FALSE(is_host_name(long_name));
}

TEST(HostName, NormalizedLowercaseWithoutTheRootDot) {
  STRCMP_EQUAL("pi.home.arpa", normalize_host_name("Pi.HOME.arpa.").value_or("?").c_str());
  STRCMP_EQUAL("localhost", normalize_host_name("LocalHost").value_or("?").c_str());
  CHECK_FALSE(normalize_host_name(".").has_value());
  CHECK_FALSE(normalize_host_name("pi..").has_value());
  CHECK_FALSE(normalize_host_name("pi lan").has_value());
  CHECK_FALSE(normalize_host_name("127.0.0.1").has_value());
}
