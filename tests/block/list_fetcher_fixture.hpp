#pragma once
// The fixture of the list fetcher's loopback tests (list_fetcher_test.cpp):
// a loop, a scratch directory, a throwaway PKI for lists.test, the list
// server (nxdns-fixture-list-server) on loopback, and a ListFetcher whose
// resolver is the test's: it records every host it is asked for and
// answers from the loop with `resolve_to` (none when empty), or never.
//
// No name used here resolves anywhere but through that resolver (lists.test
// and other.test are reserved names, RFC 6761), so a fetch that asked the
// system resolver would fail; the one case that shows the resolver decides
// the address uses "localhost", which /etc/hosts answers without a network.
#include <event2/event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "block/list_copy_meta.hpp"
#include "block/list_fetcher.hpp"
#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "loop/loop_scheduler.hpp"
#include "support/emulation.hpp"
#include "support/loop_driver.hpp"
#include "support/skipped_cases.hpp"
#include "upstream/doh_test_support.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::test {

using block::FetchOutcome;
using block::FetchResult;
using block::ListFetcher;
using block::ListFetcherOptions;
using block::RemoteList;

struct ListFetcherFixture : public Utest {
  loop::EventBasePtr base;
  std::unique_ptr<loop::LoopScheduler> sched;
  std::unique_ptr<LoopDriver> driver;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<TestProcess> server;
  std::unique_ptr<ListFetcher> fetcher;
  std::unique_ptr<loop::Timer> resolver_timer;
  ListFetcherOptions opts;
  std::string no_fixtures;
  std::uint16_t port = 0;
  int server_runs = 0;

  // The resolver: what it was asked, what it answers.
  std::vector<std::string> asked;
  std::string resolve_to = "127.0.0.1";
  bool resolver_silent = false;  // keeps the answer callback in `held` instead
  std::function<void(std::vector<net::Endpoint>)> held;
  bool resolver_inline = false;  // answer inside the call, not from the loop

  void setup() override {
    base.reset(event_base_new());
    sched = std::make_unique<loop::LoopScheduler>(base.get());
    driver = std::make_unique<LoopDriver>(base.get());
    dir = std::make_unique<TempDir>();
    server = std::make_unique<TestProcess>();
    resolver_timer = std::make_unique<loop::Timer>(*sched);
    opts = ListFetcherOptions{};
    opts.directory = dir->file("lists");
    opts.connect_timeout = std::chrono::seconds(5);
    opts.total_timeout = std::chrono::seconds(emulated() ? 60 : 20);
    opts.resolve_timeout = std::chrono::seconds(5);
    for (const char* name : {"nxdns-test-pki", "nxdns-fixture-list-server"}) {
      if (fixture_program(name).empty()) {
        no_fixtures = log::cat(name, " not built in ", fixture_dir(), " (build the fixture targets)");
        return;
      }
    }
    TestProcess probe;
    if (probe.start(with_emulator({fixture_program("nxdns-test-pki"), "--help"}), dir->file("probe.log")) == ENOEXEC) {
      no_fixtures = "fixture programs cannot be executed here (cross build without binfmt_misc)";
      return;
    }
    make_pki("pki", "lists.test");
    write_body("0.0.0.0 ads.example\n0.0.0.0 tracker.example\n");
  }
  void teardown() override {
    fetcher.reset();
    resolver_timer.reset();
    server.reset();
    dir.reset();
    driver.reset();
    sched.reset();
    base.reset();
    asked.clear();
    held = nullptr;
    no_fixtures.clear();
  }

  void make_pki(const std::string& sub, const std::string& name) {
    TestProcess pki;
    const std::string out = dir->file(sub);
    if (pki.start(with_emulator({fixture_program("nxdns-test-pki"), "--out", out, "--name", name}),
                  dir->file("pki.log")) != 0) {
      FAIL("cannot run nxdns-test-pki");
    }
    for (int i = 0; i < 1000 && pki.running(); ++i) usleep(10000);
    if (read_text(out + "/ca.pem").empty()) FAIL("nxdns-test-pki wrote no ca.pem");
  }

  void write_body(const std::string& text) {
    std::ofstream(dir->file("body.txt"), std::ios::binary | std::ios::trunc) << text;
  }
  std::string body() { return read_text(dir->file("body.txt")); }

  // Starts (or restarts, on the same port when `at` is given) the list
  // server with `extra` behaviour flags; returns its port.
  std::uint16_t start_server(std::vector<std::string> extra = {}, const std::string& host = "127.0.0.1",
                             std::uint16_t at = 0, const std::string& pki = "pki") {
    if (!no_fixtures.empty()) FAIL("start_server without REQUIRE_FIXTURES()");
    server->stop();
    const std::string port_file = dir->file(log::cat("server", ++server_runs, ".port"));
    std::vector<std::string> argv = {fixture_program("nxdns-fixture-list-server"),
                                     "--listen", log::cat(host, ":", at),
                                     "--cert", dir->file(pki + "/server.pem"),
                                     "--key", dir->file(pki + "/server.key"),
                                     "--body", dir->file("body.txt"),
                                     "--port-file", port_file,
                                     "--stats-file", dir->file("server.stats")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (server->start(with_emulator(argv), dir->file("server.log")) != 0) FAIL("cannot start the list server");
    const auto p = wait_port_file(port_file, emulated() ? 30000 : 5000);
    if (!p) FAIL(log::cat("the list server did not start: ", read_text(dir->file("server.log"))).c_str());
    port = *p;
    return *p;
  }
  // The same server again, on the same port (so the same URL and copy),
  // behaving as `extra` says.
  void restart_server(std::vector<std::string> extra) { start_server(std::move(extra), "127.0.0.1", port); }

  long long stat(const std::string& name) { return json_counter(read_text(dir->file("server.stats")), name); }

  std::string url(const std::string& host = "lists.test", const std::string& path = "/hosts.txt") {
    return log::cat("https://", host, ":", port, path);
  }
  RemoteList source(const std::string& u) {
    RemoteList s;
    s.url = u;
    s.ca_file = dir->file("pki/ca.pem");
    return s;
  }

  void make_fetcher() {
    fetcher = std::make_unique<ListFetcher>(
        *sched,
        [this](const std::string& host, std::function<void(std::vector<net::Endpoint>)> done) {
          asked.push_back(host);
          if (resolver_silent) {
            held = std::move(done);
            return;
          }
          std::vector<net::Endpoint> out;
          if (!resolve_to.empty()) out.push_back(*net::make_endpoint(resolve_to, 53));
          if (resolver_inline) return done(std::move(out));
          resolver_timer->arm(loop::Duration::zero(), [done = std::move(done), out] { done(out); });
        },
        opts);
  }

  // One fetch through the fetcher, run to its result.
  FetchResult fetch(const RemoteList& s) {
    if (!fetcher) make_fetcher();
    std::optional<FetchResult> got;
    int calls = 0;
    fetcher->fetch(s, [&](const FetchResult& r) {
      ++calls;
      got = r;
    });
    if (!driver->until([&] { return got.has_value(); }, emulated() ? 120000 : 30000)) FAIL("no fetch result");
    LONGS_EQUAL(1, calls);
    return *got;
  }
  FetchResult fetch(const std::string& u) { return fetch(source(u)); }

  FetchResult fetch_ok(const std::string& u, FetchOutcome want = FetchOutcome::updated) {
    const FetchResult r = fetch(u);
    if (r.outcome != want) {
      FAIL(log::cat("want ", block::describe(want), ", got ", block::describe(r.outcome), ": ", r.detail).c_str());
    }
    return r;
  }

  std::string copy_of(const std::string& u) { return fetcher->copy_path(u); }
  // The names in the lists directory, sorted.
  std::set<std::string> files() {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(opts.directory, ec)) out.insert(e.path().filename());
    return out;
  }
  std::set<std::string> copy_and_meta(const std::string& u) {
    const std::string name = std::filesystem::path(copy_of(u)).filename();
    return {name, name + ".meta"};
  }
};

// A file's identity and time: a copy that was not rewritten keeps both.
struct FileStamp {
  ino_t inode = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
inline FileStamp stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_ino, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace nxdns::test

#define REQUIRE_FIXTURES()                                    \
  do {                                                        \
    if (!no_fixtures.empty()) SKIP_CASE(no_fixtures.c_str()); \
  } while (0)
