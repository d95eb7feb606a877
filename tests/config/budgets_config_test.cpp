// The `budgets:` section: the total budget never below the attempt budget.
#include <string>

#include "config/config.hpp"
#include "config_test_support.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns::config::test_support;

TEST_GROUP(BudgetsConfig){};

TEST(BudgetsConfig, TotalBudgetBelowAttempt) {
  STRCMP_EQUAL("test.yaml:4:39: budgets.total_ms: must be at least attempt_ms (3000), got 2500",
               error_of(kUp + "budgets: {attempt_ms: 3000, total_ms: 2500}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:21: budgets.total_ms: must be at least attempt_ms (2000, the default), got 1500",
               error_of(kUp + "budgets: {total_ms: 1500}\n").c_str());
  STRCMP_EQUAL("test.yaml:4:23: budgets.attempt_ms: must not exceed total_ms (5000, the default), got 8000",
               error_of(kUp + "budgets: {attempt_ms: 8000}\n").c_str());
  // Equal is fine: one attempt may use the whole budget.
  LONGS_EQUAL(3000, must_load(kUp + "budgets: {attempt_ms: 3000, total_ms: 3000}\n").budgets.total.count());
}
