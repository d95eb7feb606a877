#include <curl/curl.h>
#include <event2/event.h>
#include <mbedtls/version.h>
#include <microhttpd.h>

#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "nxdns/version.hpp"
#include "upstream/curl_library.hpp"

namespace nxdns::cli {

namespace {

int version_command(const Parsed&) {
  char mbed[32] = {};
  mbedtls_version_get_string(mbed);
  // The daemon opens libcurl only for DoH upstreams; this command opens it
  // to report which one a DoH upstream would get.
  std::string why;
  std::string curl;
  if (const auto* lib = upstream::load_curl_library(&why)) {
    curl = lib->version();
    if (curl.empty()) curl = "unknown";
  } else {
    curl = "unavailable (" + why + ")";
  }
  std::printf("nxdns %s\nmbedtls %s\nlibcurl %s\nlibevent %s\nlibmicrohttpd %s\n", nxdns::version, mbed, curl.c_str(),
              event_get_version(), MHD_get_version());
  return exit_ok;
}

}  // namespace

constinit const CommandSpec version_spec{"version", "print the version and library versions", "nxdns version", {},
                                         "nxdns version", 0, version_command};

}  // namespace nxdns::cli
