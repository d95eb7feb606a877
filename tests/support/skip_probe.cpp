// Not a test of nxdns: three cases that pass, skip and fail on purpose, so
// that tests/integration/cpputest_skips.sh can check the skip contract of
// the shared main() (support/skipped_cases.hpp) on a real CppUTest binary.
// Never registered with ctest itself: its skipping case is meant to skip.
#include "support/skipped_cases.hpp"

#include <CppUTest/TestHarness.h>

TEST_GROUP(SkipProbe){};

TEST(SkipProbe, RunsHere) { CHECK_TRUE(true); }

TEST(SkipProbe, CannotRunHere) {
  SKIP_CASE("the probe's requirement is missing");
  FAIL("SKIP_CASE let the case go on");
}

TEST(SkipProbe, FailsHere) { FAIL("a real failure"); }
