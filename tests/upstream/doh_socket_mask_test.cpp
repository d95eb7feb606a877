// The socket-action mask of the DoH loop bridge (curl_multi.hpp,
// socket_action_mask) as a table: what the loop reported, what a
// writability probe would say, the mask curl gets, and whether the probe
// was asked at all (only for a readable-only report: one poll per event
// that needs it, none otherwise).
#include "upstream/curl_multi.hpp"

#include <cstdio>

#include <CppUTest/TestHarness.h>

using nxdns::upstream::socket_action_mask;

TEST_GROUP(DohSocketMask){};

TEST(DohSocketMask, ReadableOnlyAlsoReportsWritabilityFromTheProbe) {
  struct Row {
    bool readable, writable, probe_says;
    int want;
    bool probed;
  };
  const Row rows[] = {
      {true, false, true, CURL_CSELECT_IN | CURL_CSELECT_OUT, true},  // the case that interleaved requests
      {true, false, false, CURL_CSELECT_IN, true},                    // send buffer full: say so
      {true, true, false, CURL_CSELECT_IN | CURL_CSELECT_OUT, false}, // both reported: no probe
      {false, true, false, CURL_CSELECT_OUT, false},
      {false, false, true, 0, false},                                 // nothing reported, nothing claimed
  };
  for (const Row& r : rows) {
    bool probed = false;
    const int got = socket_action_mask(r.readable, r.writable, [&] {
      probed = true;
      return r.probe_says;
    });
    char what[96];
    std::snprintf(what, sizeof what, "readable %d writable %d probe %d", r.readable, r.writable, r.probe_says);
    LONGS_EQUAL_TEXT(r.want, got, what);
    CHECK_EQUAL_TEXT(r.probed, probed, what);
  }
}
