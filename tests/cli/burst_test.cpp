#include <vector>

#include "cli/burst.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::cli;

TEST_GROUP(Burst){};

TEST(Burst, SerialStaircaseScoresOne) {
  // 30 queries finishing one single-latency apart: the field defect.
  std::vector<double> done;
  for (int i = 1; i <= 30; ++i) done.push_back(92.0 * i);
  DOUBLES_EQUAL(1.0, staircase_score(done, 92.0), 1e-9);
}

TEST(Burst, ParallelCompletionScoresNearZero) {
  std::vector<double> done;
  for (int i = 0; i < 30; ++i) done.push_back(41.0 + 0.05 * i);
  CHECK_TRUE(staircase_score(done, 40.0) < 0.01);
}

TEST(Burst, FourWavesOfEightScoreAboutAQuarter) {
  std::vector<double> done;
  for (int i = 0; i < 32; ++i) done.push_back(40.0 * (1 + i / 8));
  const double s = staircase_score(done, 40.0);
  CHECK_TRUE(s > 0.1 && s < 0.2);
}

TEST(Burst, ScoreIgnoresInputOrder) {
  std::vector<double> a{10, 20, 30, 40}, b{40, 10, 30, 20};
  DOUBLES_EQUAL(staircase_score(a, 10), staircase_score(b, 10), 1e-12);
}

TEST(Burst, Percentiles) {
  DOUBLES_EQUAL(2.5, percentile({4, 1, 3, 2}, 0.5), 1e-12);
  DOUBLES_EQUAL(4.0, percentile({4, 1, 3, 2}, 1.0), 1e-12);
  DOUBLES_EQUAL(0.0, percentile({}, 0.5), 0);
}

TEST(Burst, VerdictFailsOnServfailTimeoutRatioAndStair) {
  BurstReport r;
  r.single_rcode = 0;
  r.ratio = 1.2;
  r.staircase = 0.05;
  CHECK_TRUE(judge(r, 1.5, 0.2).pass);
  r.servfail = 1;
  auto v = judge(r, 1.5, 0.2);
  CHECK_FALSE(v.pass);
  STRCMP_EQUAL("1 SERVFAIL", v.reasons[0].c_str());
  r.servfail = 0;
  r.timeouts = 2;
  CHECK_FALSE(judge(r, std::nullopt, std::nullopt).pass);
  r.timeouts = 0;
  r.ratio = 1.6;
  CHECK_FALSE(judge(r, 1.5, std::nullopt).pass);
  CHECK_TRUE(judge(r, std::nullopt, std::nullopt).pass);
  r.staircase = 0.3;
  CHECK_FALSE(judge(r, std::nullopt, 0.2).pass);
}

TEST(Burst, JsonCarriesTheVerdictInputs) {
  BurstReport r;
  r.single_ms = 40;
  r.wall_ms = 42;
  r.ratio = 1.05;
  r.queries.push_back(QueryTiming{0, 0.1, 41.5, 0});
  const std::string j = render_json(r);
  STRCMP_CONTAINS("\"ratio\":1.050", j.c_str());
  STRCMP_CONTAINS("\"queries\":[{\"index\":0,", j.c_str());
}
