// When a download may replace a list's copy, as a table: every row names
// the situation it stands for. And how results fold into a list's state.
#include "block/list_fetch_result.hpp"
#include "block/list_transfer_verdict.hpp"

#include "log/log.hpp"

#include <string>

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::block;

namespace {

TransferFacts ok_200(std::uint64_t n = 100) {
  TransferFacts f;
  f.http_status = 200;
  f.received = n;
  f.content_length = static_cast<std::int64_t>(n);
  f.max_bytes = 1000;
  return f;
}

struct Row {
  const char* situation;
  TransferFacts facts;
  FetchOutcome want;
  const char* why_part;
};

template <class F>
TransferFacts with(F&& change, TransferFacts f = ok_200()) {
  change(f);
  return f;
}

void check(const Row& r) {
  const TransferVerdict v = judge_transfer(r.facts);
  if (v.outcome != r.want || v.why.find(r.why_part) == std::string::npos) {
    FAIL(log::cat(r.situation, ": got ", describe(v.outcome), " (", v.why, "), want ", describe(r.want), " (",
                  r.why_part, ")")
             .c_str());
  }
}

}  // namespace

TEST_GROUP(ListTransferVerdict){};

TEST(ListTransferVerdict, OnlyAWholeOkResponseReplacesTheCopy) {
  const Row rows[] = {
      {"complete 200 with Content-Length", ok_200(), FetchOutcome::updated, "updated, 100 octets"},
      {"complete 200 without Content-Length", with([](TransferFacts& f) { f.content_length = -1; }),
       FetchOutcome::updated, "updated"},
      {"empty 200", ok_200(0), FetchOutcome::updated, "updated, 0 octets"},
      {"exactly at the limit", ok_200(1000), FetchOutcome::updated, "updated"},
      {"short of its Content-Length", with([](TransferFacts& f) { f.content_length = 150; }), FetchOutcome::failed,
       "where Content-Length said 150"},
      {"longer than its Content-Length", with([](TransferFacts& f) { f.content_length = 50; }), FetchOutcome::failed,
       "where Content-Length said 50"},
      {"cut by the server", with([](TransferFacts& f) { f.code = CURLE_PARTIAL_FILE; }), FetchOutcome::failed,
       "before the whole list arrived"},
      {"timed out mid-body", with([](TransferFacts& f) { f.code = CURLE_OPERATION_TIMEDOUT; }),
       FetchOutcome::failed, "timed out"},
      {"over the limit (write callback)", with([](TransferFacts& f) { f.over_limit = true; f.code = CURLE_WRITE_ERROR; }),
       FetchOutcome::failed, "larger than 1000 octets"},
      {"over the limit (Content-Length)", with([](TransferFacts& f) { f.code = CURLE_FILESIZE_EXCEEDED; }),
       FetchOutcome::failed, "larger than 1000 octets"},
      {"disk full", with([](TransferFacts& f) { f.write_error = "write: No space left on device"; f.code = CURLE_WRITE_ERROR; }),
       FetchOutcome::failed, "cannot write the copy: write: No space left"},
      {"stopped for shutdown", with([](TransferFacts& f) { f.stopped = true; f.code = CURLE_ABORTED_BY_CALLBACK; }),
       FetchOutcome::failed, "shutting down"},
      {"no response line at all", with([](TransferFacts& f) { f.http_status = 0; f.code = CURLE_COULDNT_CONNECT; f.curl_error = "Failed to connect"; }),
       FetchOutcome::failed, "cannot connect (Failed to connect)"},
      {"certificate refused", with([](TransferFacts& f) { f.http_status = 0; f.code = CURLE_PEER_FAILED_VERIFICATION; }),
       FetchOutcome::failed, "certificate"},
      {"curl said nothing", with([](TransferFacts& f) { f.http_status = 0; f.code = CURLE_SEND_ERROR; }),
       FetchOutcome::failed, "curl error 55"},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListTransferVerdict, StatusesOtherThan200Or304Fail) {
  const Row rows[] = {
      {"server error", with([](TransferFacts& f) { f.http_status = 500; }), FetchOutcome::failed, "HTTP status 500"},
      {"not found", with([](TransferFacts& f) { f.http_status = 404; }), FetchOutcome::failed, "HTTP status 404"},
      {"no content", with([](TransferFacts& f) { f.http_status = 204; }), FetchOutcome::failed, "HTTP status 204"},
      {"partial content", with([](TransferFacts& f) { f.http_status = 206; }), FetchOutcome::failed, "HTTP status 206"},
      {"an error page over the limit says its status",
       with([](TransferFacts& f) { f.http_status = 503; f.over_limit = true; }), FetchOutcome::failed,
       "HTTP status 503"},
      {"redirect names where", with([](TransferFacts& f) { f.http_status = 301; f.location = "https://b.example"; }),
       FetchOutcome::failed, "redirected to https://b.example; redirects are not followed"},
      {"redirect without a usable Location", with([](TransferFacts& f) { f.http_status = 307; }),
       FetchOutcome::failed, "redirected to an unusable URL"},
  };
  for (const Row& r : rows) check(r);
}

TEST(ListTransferVerdict, A304KeepsTheCopyOnlyWhenTheRequestWasConditional) {
  const Row rows[] = {
      {"304 to a conditional request",
       with([](TransferFacts& f) { f.http_status = 304; f.conditional = true; f.received = 0; f.content_length = -1; }),
       FetchOutcome::not_modified, "not modified"},
      {"304 to an unconditional request",
       with([](TransferFacts& f) { f.http_status = 304; f.received = 0; f.content_length = -1; }),
       FetchOutcome::failed, "asked for the whole list"},
      {"304 cut short is still a failure",
       with([](TransferFacts& f) { f.http_status = 304; f.conditional = true; f.code = CURLE_RECV_ERROR; }),
       FetchOutcome::failed, "before the whole list arrived"},
  };
  for (const Row& r : rows) check(r);
}

TEST_GROUP(ListFetchState){};

TEST(ListFetchState, FoldsSuccessesAndFailures) {
  ListFetchState s;
  FetchResult r;
  r.outcome = FetchOutcome::updated;
  r.have_copy = true;
  r.bytes = 10;
  r.finished_unix = 100;
  record(s, r);
  CHECK_TRUE(s.last_success_unix == 100);
  CHECK_TRUE(s.last_attempt_unix == 100);
  LONGS_EQUAL(10, s.bytes);
  LONGS_EQUAL(1, s.updates);

  r.outcome = FetchOutcome::failed;
  r.detail = "https://lists.example: HTTP status 500";
  r.finished_unix = 200;
  record(s, r);
  r.finished_unix = 300;
  record(s, r);
  CHECK_TRUE(s.last_success_unix == 100);
  CHECK_TRUE(s.last_attempt_unix == 300);
  LONGS_EQUAL(2, s.consecutive_failures);
  LONGS_EQUAL(2, s.failures);
  STRCMP_EQUAL(r.detail.c_str(), s.last_error.c_str());
  CHECK_TRUE(s.have_copy);  // the failure kept the copy

  r.outcome = FetchOutcome::not_modified;
  r.finished_unix = 400;
  record(s, r);
  CHECK_TRUE(s.last_success_unix == 400);
  LONGS_EQUAL(0, s.consecutive_failures);
  CHECK_TRUE(s.last_error.empty());
  LONGS_EQUAL(1, s.not_modified);
  LONGS_EQUAL(2, s.failures);
}
