// CppUTest entry point shared by every unit-test executable.
//
// CppUTest's leak detector counts every allocation made inside a test that
// is not freed by its end. Some libraries allocate once, on first use, and
// keep it for the process lifetime (yaml-cpp's static tables, iostream
// locale facets, libevent's method table). Those are not leaks of ours, so
// they are warmed up here, before the first test, instead of switching the
// detector off.
//
// A case that could not run (SKIP_CASE) makes the whole run exit 77 unless
// another failed: ctest then lists the entry as Skipped, never as Passed.
#include <event2/event.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

#include "support/skipped_cases.hpp"

// Last: CppUTest's leak-detector macros redefine `new`, which breaks any
// standard header included after them.
#include <CppUTest/CommandLineTestRunner.h>

namespace {
void warm_up_first_use_allocations() {
  {
    YAML::Node n = YAML::Load("a: [1, {b: c}]\nd: \"e\"\n");
    (void)n["a"][1]["b"].as<std::string>();
    (void)n["d"].Mark();
    try {
      (void)YAML::Load("a: [");
    } catch (const YAML::Exception&) {
    }
    try {
      (void)n["d"].as<int>();
    } catch (const YAML::Exception&) {
    }
  }
  {
    std::ostringstream os;
    os << 1.5 << 42 << std::string("x");
  }
  {
    event_base* b = event_base_new();
    event_base_free(b);
  }
}
}  // namespace

int main(int argc, char** argv) {
  warm_up_first_use_allocations();
  const int rc = CommandLineTestRunner::RunAllTests(argc, argv);
  return nxdns::test::run_status(rc, stdout);
}
