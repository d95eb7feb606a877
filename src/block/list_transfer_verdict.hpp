#pragma once
// Whether one list download may replace the copy, decided from what the
// transfer reported: a pure function of plain facts, so every rule has a
// row in a table test (tests/block/list_transfer_verdict_test.cpp).
//
// Only a complete 200 response replaces the copy: curl reported no error,
// the body was written whole, it is within the size limit, and it has as
// many octets as a Content-Length said. A 304 keeps the copy, and only when
// the request was conditional. Everything else fails, with the first of
// these reasons that applies: stopped for shutdown, the copy could not be
// written, an HTTP status other than 200/304 (a redirect names where it
// pointed: redirects are not followed), over the size limit, a transfer
// error (time-outs, a cut connection, certificates), a short body.
#include <curl/curl.h>

#include <cstdint>
#include <string>

#include "block/list_fetch_result.hpp"

namespace nxdns::block {

struct TransferFacts {
  CURLcode code = CURLE_OK;
  std::string curl_error;         // curl's error buffer ("" when it said nothing)
  long http_status = 0;           // 0: no response line arrived
  bool conditional = false;       // validators were sent
  std::uint64_t received = 0;     // body octets received
  std::int64_t content_length = -1;  // -1: the response gave none
  std::uint64_t max_bytes = 0;
  bool over_limit = false;        // the body passed max_bytes and the transfer was stopped
  std::string write_error;        // "" or why the copy could not be written
  bool stopped = false;           // the fetcher is being destroyed
  std::string location;           // a redirect's Location, already reduced to a label
};

struct TransferVerdict {
  FetchOutcome outcome = FetchOutcome::failed;
  std::string why;  // one line, without the list's label
};

TransferVerdict judge_transfer(const TransferFacts& f);

}  // namespace nxdns::block
