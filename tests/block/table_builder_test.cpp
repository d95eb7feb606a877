// block/table_builder: a worker thread builds, the loop takes the table.
// The loop here is the fake scheduler, advanced by the test in 10 ms steps
// (the builder's poll); the worker is a real thread, so each wait is
// bounded by a deadline, never by an expected duration.
#include "block/table_builder.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dns/message.hpp"
#include "log/log.hpp"
#include "support/fake_scheduler.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;
using namespace nxdns::block;
using namespace std::chrono_literals;

namespace {

// Generous: a deadline, not a measurement (a slow CI machine just waits).
constexpr auto kWithin = 20s;

ListSource body(const char* name, std::string text) {
  return ListSource{name, false, std::make_shared<const std::string>(std::move(text)), {}};
}

Verdict verdict(const BlockTable& t, const char* name) { return t.decide(*dns::name_from_text(name)).verdict; }

}  // namespace

TEST_GROUP(TableBuilder) {
  test::FakeScheduler sched;
  std::vector<BuildResult> results;
  std::vector<std::thread::id> delivered_on;
  std::unique_ptr<TableBuilder> builder;
  std::filesystem::path dir;

  void setup() override {
    builder = std::make_unique<TableBuilder>(sched, [this](const BuildResult& r) {
      results.push_back(r);
      delivered_on.push_back(std::this_thread::get_id());
    });
    dir = std::filesystem::temp_directory_path() / log::cat("nxdns-block-test.", ::getpid());
    std::filesystem::create_directories(dir);
  }
  void teardown() override {
    builder.reset();
    std::filesystem::remove_all(dir);
  }

  // Turns the loop until `n` results were delivered.
  bool until_results(std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + kWithin;
    while (results.size() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      sched.advance(10ms);
      std::this_thread::sleep_for(1ms);
    }
    return true;
  }

  std::string write_file(const char* name, const std::string& text) {
    const std::filesystem::path p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

TEST(TableBuilder, HandsTheFinishedTableToTheLoop) {
  CHECK_EQUAL(0u, builder->table()->rules());
  builder->request({body("ads", "0.0.0.0 ads.example.com\n||tracker.example^\n")});
  CHECK_TRUE(builder->building());
  CHECK_EQUAL(0u, results.size());  // never inside request()
  CHECK_TRUE(until_results(1));
  CHECK_FALSE(builder->building());
  CHECK_TRUE(delivered_on[0] == std::this_thread::get_id());  // on the loop, not on the worker
  CHECK_FALSE(results[0].error.has_value());
  CHECK_TRUE(results[0].table == builder->table());
  CHECK_TRUE(verdict(*builder->table(), "ads.example.com") == Verdict::blocked);
  CHECK_TRUE(verdict(*builder->table(), "x.tracker.example") == Verdict::blocked);
  CHECK_EQUAL(1u, builder->stats().builds);
}

TEST(TableBuilder, StreamsFilesAcrossReads) {
  // ~300 KiB: lines cross the 64 KiB read boundaries.
  std::string text = "# a big list\r\n";
  for (int i = 0; i < 10000; ++i) text += log::cat("0.0.0.0 host-number-", i, ".ads.example.com\r\n");
  const std::string path = write_file("big.hosts", text);
  builder->request({ListSource{path, false, nullptr, {}}, ListSource{write_file("allow.txt", "host-number-7.ads.example.com\n"), true, nullptr, {}}});
  CHECK_TRUE(until_results(1));
  const BlockTable& t = *builder->table();
  CHECK_EQUAL(10000u, t.rules(RuleKind::exact, false));
  CHECK_EQUAL(10001u, t.lists()[0].counts.lines);
  for (int i = 0; i < 10000; ++i) {
    const std::string n = log::cat("host-number-", i, ".ads.example.com");
    const Decision d = t.decide(*dns::name_from_text(n));
    if (d.verdict != (i == 7 ? Verdict::allowed : Verdict::blocked) || (i != 7 && d.line != static_cast<std::uint32_t>(i + 2)))
      FAIL(n.c_str());
  }
  STRCMP_EQUAL(path.c_str(), t.lists()[0].name.c_str());
  CHECK_TRUE(t.lists()[1].allow_list);
}

TEST(TableBuilder, RequestsDuringABuildAreCoalescedIntoOne) {
  // The first build is "running" until the loop collects it, so the two
  // requests below arrive during it whatever the worker's speed.
  builder->request({body("a", "a.example\n")});
  builder->request({body("b", "b.example\n")});
  builder->request({body("c", "c.example\n")});
  CHECK_TRUE(until_results(2));
  sched.advance(100ms);
  CHECK_EQUAL(2u, results.size());
  CHECK_FALSE(builder->building());
  const TableBuilder::Stats s = builder->stats();
  CHECK_EQUAL(3u, s.requests);
  CHECK_EQUAL(2u, s.builds);
  CHECK_EQUAL(1u, s.coalesced);
  // The newest request is the table in use; the one it replaced never ran.
  CHECK_TRUE(verdict(*builder->table(), "c.example") == Verdict::blocked);
  CHECK_TRUE(verdict(*builder->table(), "b.example") == Verdict::not_listed);
  CHECK_TRUE(verdict(*builder->table(), "a.example") == Verdict::not_listed);
  CHECK_TRUE(verdict(*results[0].table, "a.example") == Verdict::blocked);
}

TEST(TableBuilder, AMissingFileIsNamedAndThePreviousTableKept) {
  builder->request({body("good", "ads.example\n")});
  CHECK_TRUE(until_results(1));
  const std::shared_ptr<const BlockTable> before = builder->table();

  const std::string missing = (dir / "no-such.hosts").string();
  builder->request({body("good", "ads.example\nmore.example\n"), ListSource{missing, false, nullptr, {}}});
  CHECK_TRUE(until_results(2));
  CHECK_TRUE(results[1].table == nullptr);
  CHECK_TRUE(results[1].error.has_value());
  STRCMP_EQUAL((missing + ": No such file or directory").c_str(), results[1].error->c_str());
  CHECK_TRUE(builder->table() == before);
  CHECK_TRUE(verdict(*builder->table(), "more.example") == Verdict::not_listed);
  CHECK_EQUAL(1u, builder->stats().failures);

  // A directory where a file should be is an error of its own.
  builder->request({ListSource{dir.string(), false, nullptr, {}}});
  CHECK_TRUE(until_results(3));
  STRCMP_EQUAL((dir.string() + ": Is a directory").c_str(), results[2].error->c_str());
  CHECK_TRUE(builder->table() == before);
}

TEST(TableBuilder, MoreListsThanATableHoldsFailTheBuild) {
  std::vector<ListSource> lists;
  for (std::size_t i = 0; i <= max_lists; ++i) lists.push_back(body("x", "x.example\n"));
  lists.back().name = "the-extra-one";
  builder->request(lists);
  CHECK_TRUE(until_results(1));
  STRCMP_EQUAL("the-extra-one: more than 256 lists", results[0].error.value_or("").c_str());
  lists.pop_back();
  builder->request(lists);
  CHECK_TRUE(until_results(2));
  CHECK_EQUAL(256u, builder->table()->lists().size());
}

TEST(TableBuilder, DestroyedDuringABuildStopsAndNeverCallsBack) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += log::cat("0.0.0.0 n", i, ".example.com\n");
  builder->request({body("big", std::move(text))});
  builder.reset();  // joins the worker; the loop never delivers
  sched.advance(1s);
  CHECK_EQUAL(0u, results.size());
}

TEST(TableBuilder, BuildTableStopsWhenAsked) {
  std::atomic<bool> stop{true};
  const BuildResult r = build_table({body("a", "a.example\n")}, &stop);
  CHECK_TRUE(r.table == nullptr);
  STRCMP_EQUAL("stopped", r.error.value_or("").c_str());
}
