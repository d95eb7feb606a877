// libcurl opened at run time (upstream/curl_library): the daemon's table
// works, and a missing or wrong library is a one-line reason naming the
// file, never a crash or a half-filled table.
#include "upstream/curl_library.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;

TEST_GROUP(CurlLibrary){};

TEST(CurlLibrary, LoadsTheBuildTimeLibraryWithEveryEntryPoint) {
  std::string why;
  const upstream::CurlLibrary* lib = upstream::load_curl_library(&why);
  CHECK_TEXT(lib != nullptr, why.c_str());
  CHECK_TRUE(upstream::curl_library_loaded());
  CHECK_TRUE(&upstream::curl_lib() == lib);
  const curl_version_info_data* v = lib->version_info(CURLVERSION_NOW);
  CHECK_TRUE(v != nullptr && v->version != nullptr);
  STRCMP_EQUAL(v->version, lib->version().c_str());
  // A handle made and freed through the table, as the transports do.
  CURL* e = lib->easy_init();
  CHECK_TRUE(e != nullptr);
  LONGS_EQUAL(CURLE_OK, lib->easy_setopt(e, CURLOPT_URL, "https://dns.test/dns-query"));
  lib->easy_cleanup(e);
  CHECK_TRUE(lib->symbol("curl_easy_init") != nullptr);
  CHECK_TRUE(lib->symbol("nxdns_no_such_symbol") == nullptr);
  // Loading again returns the same table.
  CHECK_TRUE(upstream::load_curl_library(nullptr) == lib);
}

TEST(CurlLibrary, MissingFileNamesBothPlacesTried) {
  std::string why;
  const auto lib = upstream::open_curl_library("/nonexistent/nxdns/libcurl.so.4", "libnxdns-absent.so.9", &why);
  CHECK_FALSE(lib.has_value());
  CHECK_TEXT(why.find("/nonexistent/nxdns/libcurl.so.4") != std::string::npos, why.c_str());
  CHECK_TEXT(why.find("libnxdns-absent.so.9") != std::string::npos, why.c_str());
  CHECK_TEXT(why.find("DoH") != std::string::npos, why.c_str());
}

TEST(CurlLibrary, LibraryThatIsNotCurlIsRefusedByName) {
  std::string why;
  // Present in every process, and without any curl entry point.
  const auto lib = upstream::open_curl_library("libc.so.6", nullptr, &why);
  CHECK_FALSE(lib.has_value());
  CHECK_TEXT(why.find("libc.so.6 lacks curl_global_init") != std::string::npos, why.c_str());
}
