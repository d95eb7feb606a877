// The list fetcher against a loopback HTTPS list server
// (nxdns-fixture-list-server): what reaches the disk after each kind of
// answer, which requests are conditional, which address is dialled, and
// that a failure of any kind leaves the previous copy and its validators as
// they were. The server's counters say what went over the wire.
#include "block/list_fetcher_fixture.hpp"

#include <chrono>

using namespace nxdns;
using namespace nxdns::test;

TEST_GROUP_BASE(ListFetcher, ListFetcherFixture){};

TEST(ListFetcher, FirstFetchKeepsTheBodyAndItsETag) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult r = fetch_ok(url());
  STRCMP_EQUAL(copy_of(url()).c_str(), r.path.c_str());
  CHECK_TRUE(r.have_copy);
  LONGS_EQUAL(body().size(), r.bytes);
  LONGS_EQUAL(body().size(), r.received);
  CHECK_TRUE(r.finished_unix > 0);
  STRCMP_EQUAL(body().c_str(), read_text(r.path).c_str());
  const auto meta = block::read_copy_meta(r.path);
  CHECK_TRUE(meta.has_value());
  // The ETag the server sent is the one kept (the fixture derives it from
  // the body, so it is not a constant either side could make up).
  CHECK_TRUE(meta->etag.size() > 2);
  LONGS_EQUAL(body().size(), meta->bytes);
  LONGS_EQUAL(1, stat("requests"));
  LONGS_EQUAL(0, stat("if_none_match"));
  CHECK_TRUE(files() == copy_and_meta(url()));
  // 0600: a list may say what this household chose to block.
  struct stat st {};
  ::stat(r.path.c_str(), &st);
  LONGS_EQUAL(0600, st.st_mode & 0777);
}

TEST(ListFetcher, SecondFetchAsksIfNoneMatchAndA304KeepsTheCopy) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult first = fetch_ok(url());
  const FileStamp copy_before = stamp(first.path);
  const FileStamp meta_before = stamp(block::meta_path(first.path));
  const std::string meta_text = read_text(block::meta_path(first.path));

  const FetchResult r = fetch_ok(url(), FetchOutcome::not_modified);
  LONGS_EQUAL(2, stat("requests"));
  LONGS_EQUAL(1, stat("if_none_match"));
  LONGS_EQUAL(1, stat("not_modified"));
  LONGS_EQUAL(1, stat("bodies"));
  CHECK_TRUE(r.have_copy);
  LONGS_EQUAL(body().size(), r.bytes);
  LONGS_EQUAL(0, r.received);
  CHECK_TRUE(copy_before == stamp(r.path));
  CHECK_TRUE(meta_before == stamp(block::meta_path(r.path)));
  STRCMP_EQUAL(meta_text.c_str(), read_text(block::meta_path(r.path)).c_str());
  STRCMP_EQUAL(body().c_str(), read_text(r.path).c_str());
}

TEST(ListFetcher, AChangedListReplacesTheCopyAndItsETag) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult first = fetch_ok(url());
  const std::string old_etag = block::read_copy_meta(first.path)->etag;
  write_body("0.0.0.0 ads.example\n0.0.0.0 new.example\n0.0.0.0 more.example\n");
  const FetchResult r = fetch_ok(url());
  LONGS_EQUAL(1, stat("if_none_match"));  // asked conditionally, and the list had changed
  STRCMP_EQUAL(body().c_str(), read_text(r.path).c_str());
  const auto meta = block::read_copy_meta(r.path);
  CHECK_TRUE(meta.has_value());
  CHECK_TRUE(meta->etag != old_etag);
  LONGS_EQUAL(body().size(), meta->bytes);
  CHECK_TRUE(files() == copy_and_meta(url()));
}

TEST(ListFetcher, LastModifiedAloneMakesTheNextFetchConditional) {
  REQUIRE_FIXTURES();
  start_server({"--no-etag", "--last-modified", "Tue, 14 Nov 2023 22:13:20 GMT"});
  const FetchResult first = fetch_ok(url());
  STRCMP_EQUAL("Tue, 14 Nov 2023 22:13:20 GMT", block::read_copy_meta(first.path)->last_modified.c_str());
  fetch_ok(url(), FetchOutcome::not_modified);
  LONGS_EQUAL(0, stat("if_none_match"));
  LONGS_EQUAL(1, stat("if_modified_since"));
  LONGS_EQUAL(1, stat("not_modified"));
}

TEST(ListFetcher, ANewFetcherFindsTheCopyAndAsksConditionally) {
  REQUIRE_FIXTURES();
  start_server();
  fetch_ok(url());
  fetcher.reset();  // a restart: only the directory is left
  fetch_ok(url(), FetchOutcome::not_modified);
  LONGS_EQUAL(1, stat("if_none_match"));
}

TEST(ListFetcher, ACopyRemovedByHandIsFetchedWhole) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult first = fetch_ok(url());
  ::unlink(first.path.c_str());
  // Its validators are still there, but describe a copy that is gone: a 304
  // would leave the daemon with no list at all.
  const FetchResult r = fetch_ok(url());
  LONGS_EQUAL(0, stat("if_none_match"));
  STRCMP_EQUAL(body().c_str(), read_text(r.path).c_str());
}

TEST(ListFetcher, AServerErrorKeepsThePreviousCopyAndSaysSo) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult first = fetch_ok(url());
  const std::string good = body();
  const std::string meta_text = read_text(block::meta_path(first.path));
  write_body("something else entirely\n");
  restart_server({"--status", "500"});
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "HTTP status 500"), r.detail.c_str());
  CHECK_TRUE(r.have_copy);
  LONGS_EQUAL(good.size(), r.bytes);
  STRCMP_EQUAL(good.c_str(), read_text(first.path).c_str());
  STRCMP_EQUAL(meta_text.c_str(), read_text(block::meta_path(first.path)).c_str());
  CHECK_TRUE(files() == copy_and_meta(url()));
  const block::ListFetchState* s = fetcher->state(url());
  CHECK_TRUE(s != nullptr);
  LONGS_EQUAL(1, s->consecutive_failures);
  CHECK_TRUE(s->last_success_unix.has_value());
  STRCMP_EQUAL(r.detail.c_str(), s->last_error.c_str());
}

TEST(ListFetcher, AStalledTransferTimesOutAndKeepsThePreviousCopy) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult first = fetch_ok(url());
  const std::string good = body();
  write_body(std::string(4000, 'x'));
  restart_server({"--stall-after", "100"});
  opts.total_timeout = std::chrono::milliseconds(emulated() ? 10000 : 3000);
  fetcher.reset();
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "timed out"), r.detail.c_str());
  LONGS_EQUAL(1, stat("bodies"));  // the server did begin the reply
  STRCMP_EQUAL(good.c_str(), read_text(first.path).c_str());
  CHECK_TRUE(files() == copy_and_meta(url()));  // no temporary file left
}

TEST(ListFetcher, ABodyCutMidWayKeepsThePreviousCopyAndLeavesNoTemporaryFile) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult first = fetch_ok(url());
  const std::string good = body();
  const std::string meta_text = read_text(block::meta_path(first.path));
  write_body(std::string(20000, 'y'));
  restart_server({"--close-mid-body"});
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "before the whole list arrived"), r.detail.c_str());
  CHECK_TRUE(r.received > 0);
  CHECK_TRUE(r.received < 20000);
  STRCMP_EQUAL(good.c_str(), read_text(first.path).c_str());
  STRCMP_EQUAL(meta_text.c_str(), read_text(block::meta_path(first.path)).c_str());
  CHECK_TRUE(files() == copy_and_meta(url()));
}

TEST(ListFetcher, ABodyOverTheLimitFails) {
  REQUIRE_FIXTURES();
  opts.max_bytes = 1000;
  write_body(std::string(5000, 'z'));
  start_server();
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "larger than 1000"), r.detail.c_str());
  LONGS_EQUAL(0, r.received);  // refused from its Content-Length, before the body
  CHECK_FALSE(r.have_copy);
  CHECK_TRUE(files().empty());
}

TEST(ListFetcher, AChunkedBodyOverTheLimitIsStoppedAndKeepsThePreviousCopy) {
  REQUIRE_FIXTURES();
  opts.max_bytes = 1000;
  start_server({"--chunked"});
  const FetchResult first = fetch_ok(url());  // a chunked list within the limit is fine
  const std::string good = body();
  write_body(std::string(200000, 'z'));
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "larger than 1000"), r.detail.c_str());
  // Stopped at the limit, not read to the end.
  CHECK_TRUE(r.received > 1000);
  CHECK_TRUE(r.received < 200000);
  STRCMP_EQUAL(good.c_str(), read_text(first.path).c_str());
  CHECK_TRUE(files() == copy_and_meta(url()));
}

TEST(ListFetcher, ACertificateForAnotherNameIsRefused) {
  REQUIRE_FIXTURES();
  start_server();
  // other.test pinned to the server that holds a certificate for lists.test.
  const FetchResult r = fetch(url("other.test"));
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "certificate"), r.detail.c_str());
  CHECK_TRUE(asked == std::vector<std::string>{"other.test"});
  LONGS_EQUAL(0, stat("requests"));
  CHECK_TRUE(files().empty());
}

TEST(ListFetcher, WithoutItsCaFileTheTestCertificateIsNotTrusted) {
  REQUIRE_FIXTURES();
  start_server();
  RemoteList s = source(url());
  s.ca_file.reset();  // the system's trust store does not hold the test CA
  const FetchResult r = fetch(s);
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "certificate"), r.detail.c_str());
  LONGS_EQUAL(0, stat("requests"));
}

TEST(ListFetcher, TheInjectedResolverDecidesTheAddress) {
  REQUIRE_FIXTURES();
  // /etc/hosts says localhost is 127.0.0.1; the server listens on 127.0.0.2
  // only, which only the daemon's resolver says. A fetch that asked the
  // system would dial 127.0.0.1 and fail.
  make_pki("pki-localhost", "localhost");
  start_server({}, "127.0.0.2", 0, "pki-localhost");
  resolve_to = "127.0.0.2";
  RemoteList s = source(url("localhost"));
  s.ca_file = dir->file("pki-localhost/ca.pem");
  const FetchResult r = fetch(s);
  if (r.outcome != FetchOutcome::updated) FAIL(r.detail.c_str());
  CHECK_TRUE(asked == std::vector<std::string>{"localhost"});
  STRCMP_EQUAL(body().c_str(), read_text(r.path).c_str());
}

TEST(ListFetcher, AResolverAnswerInsideTheCallWorksToo) {
  REQUIRE_FIXTURES();
  start_server();
  resolver_inline = true;
  fetch_ok(url());
  fetch_ok(url(), FetchOutcome::not_modified);
  CHECK_TRUE((asked == std::vector<std::string>{"lists.test", "lists.test"}));
}

TEST(ListFetcher, NoAddressFromTheResolverFailsClearly) {
  REQUIRE_FIXTURES();
  start_server();
  resolve_to.clear();
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "resolver found no address for lists.test"), r.detail.c_str());
  LONGS_EQUAL(0, stat("requests"));
}

TEST(ListFetcher, AResolverThatNeverAnswersTimesOut) {
  REQUIRE_FIXTURES();
  start_server();
  resolver_silent = true;
  opts.resolve_timeout = std::chrono::milliseconds(200);
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "gave no answer for lists.test"), r.detail.c_str());
  LONGS_EQUAL(0, stat("requests"));
}

TEST(ListFetcher, ARedirectIsNotFollowedAndNamesOnlyItsHost) {
  REQUIRE_FIXTURES();
  start_server({"--redirect-to", "https://elsewhere.test/s3cret/hosts.txt?token=abc"});
  const FetchResult r = fetch(url());
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "redirected to https://elsewhere.test;"), r.detail.c_str());
  CHECK_FALSE(contains(r.detail, "s3cret"));
  CHECK_FALSE(contains(r.detail, "token"));
  CHECK_TRUE(asked == std::vector<std::string>{"lists.test"});
  LONGS_EQUAL(1, stat("requests"));
  CHECK_TRUE(files().empty());
}

TEST(ListFetcher, NeitherDetailNorFilesHoldTheUrlsPathOrQuery) {
  REQUIRE_FIXTURES();
  start_server({"--path", "/s3cret/hosts.txt"});
  const std::string u = url("lists.test", "/s3cret/hosts.txt?key=abc");
  const FetchResult ok = fetch_ok(u);
  CHECK_TEXT(contains(ok.detail, log::cat("https://lists.test:", port, ": updated")), ok.detail.c_str());
  restart_server({"--path", "/s3cret/hosts.txt", "--status", "503"});
  const FetchResult bad = fetch(u);
  CHECK_TRUE(bad.outcome == FetchOutcome::failed);
  for (const std::string& text : {ok.detail, bad.detail, read_text(block::meta_path(ok.path))}) {
    CHECK_FALSE(contains(text, "s3cret"));
    CHECK_FALSE(contains(text, "key=abc"));
  }
  for (const std::string& name : files()) CHECK_FALSE(contains(name, "s3cret"));
}

TEST(ListFetcher, TheCallersLabelNamesTheList) {
  REQUIRE_FIXTURES();
  start_server();
  RemoteList s = source(url());
  s.label = "https://lists.test/hosts.txt";
  const FetchResult r = fetch(s);
  CHECK_TEXT(r.detail.rfind("https://lists.test/hosts.txt: ", 0) == 0, r.detail.c_str());
}

TEST(ListFetcher, AnUnusableUrlFailsWithoutAsking) {
  REQUIRE_FIXTURES();
  start_server();
  const FetchResult r = fetch(log::cat("http://lists.test:", port, "/hosts.txt"));
  CHECK_TRUE(r.outcome == FetchOutcome::failed);
  CHECK_TEXT(contains(r.detail, "https://"), r.detail.c_str());
  CHECK_TRUE(asked.empty());
  LONGS_EQUAL(0, stat("requests"));
}

TEST(ListFetcher, FetchesOfAListAlreadyWaitingJoinIt) {
  REQUIRE_FIXTURES();
  start_server();
  make_fetcher();
  std::vector<FetchResult> got;
  const auto keep = [&](const FetchResult& r) { got.push_back(r); };
  fetcher->fetch(source(url()), keep);
  fetcher->fetch(source(url()), keep);
  CHECK_TRUE(got.empty());  // never inside fetch()
  CHECK_TRUE(driver->until([&] { return got.size() == 2; }, 30000));
  CHECK_TRUE(got[0].outcome == FetchOutcome::updated);
  CHECK_TRUE(got[1].outcome == FetchOutcome::updated);
  LONGS_EQUAL(1, stat("requests"));
  CHECK_TRUE(fetcher->idle());
}

TEST(ListFetcher, AFetchOfTheListInProgressRunsAgainAfterIt) {
  REQUIRE_FIXTURES();
  start_server();
  resolver_silent = true;
  make_fetcher();
  std::vector<FetchResult> got;
  const auto keep = [&](const FetchResult& r) { got.push_back(r); };
  fetcher->fetch(source(url()), keep);
  CHECK_TRUE(driver->until([&] { return held != nullptr; }, 5000));  // the first is under way
  fetcher->fetch(source(url()), keep);
  fetcher->fetch(source(url()), keep);  // joins the second
  resolver_silent = false;
  held({*net::make_endpoint("127.0.0.1", 53)});
  CHECK_TRUE(driver->until([&] { return got.size() == 3; }, 30000));
  CHECK_TRUE(got[0].outcome == FetchOutcome::updated);
  CHECK_TRUE(got[1].outcome == FetchOutcome::not_modified);
  CHECK_TRUE(got[2].outcome == FetchOutcome::not_modified);
  LONGS_EQUAL(2, stat("requests"));
  LONGS_EQUAL(2, asked.size());
  CHECK_TRUE(fetcher->idle());
}

TEST(ListFetcher, DestroyingTheFetcherStopsADownloadSoon) {
  REQUIRE_FIXTURES();
  write_body(std::string(4000, 'x'));
  start_server({"--stall-after", "100"});
  opts.total_timeout = std::chrono::seconds(120);
  opts.stall_timeout = std::chrono::seconds(120);
  make_fetcher();
  int calls = 0;
  fetcher->fetch(source(url()), [&](const FetchResult&) { ++calls; });
  CHECK_TRUE(driver->until([&] { return stat("bodies") == 1; }, 30000));
  const auto t0 = std::chrono::steady_clock::now();
  fetcher.reset();
  const auto took = std::chrono::steady_clock::now() - t0;
  // Far below the 120 s the transfer was allowed: the stop flag ended it.
  CHECK_TRUE(took < std::chrono::seconds(60));
  driver->run_for(200);
  LONGS_EQUAL(0, calls);
  CHECK_TRUE(files().empty());
}
