#include <curl/curl.h>
#include <event2/event.h>
#include <mbedtls/version.h>
#include <microhttpd.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "nxdns/version.hpp"

namespace nxdns::cli {

int version_command() {
  char mbed[32] = {};
  mbedtls_version_get_string(mbed);
  std::printf("nxdns %s\nmbedtls %s\nlibcurl %s\nlibevent %s\nlibmicrohttpd %s\n", nxdns::version, mbed,
              curl_version_info(CURLVERSION_NOW)->version, event_get_version(), MHD_get_version());
  return exit_ok;
}

}  // namespace nxdns::cli
