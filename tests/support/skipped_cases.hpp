#pragma once
// A CppUTest case that cannot run here (a program from outside the build,
// such as nghttpx or promtool, is missing, or the fixture programs cannot be
// executed) says so with SKIP_CASE and returns. CppUTest has no skip of its
// own: such a case would count as passed. The shared main() instead ends a
// run in which any case skipped, and none failed, with exit status 77, the
// SKIP_RETURN_CODE of every cpputest.* ctest entry, so ctest lists the entry
// as Skipped and scripts/test.sh counts it (and fails it under CI=true).
#include <cstdio>

namespace nxdns::test {

// ctest's SKIP_RETURN_CODE for every test of this tree.
inline constexpr int kSkipStatus = 77;

// Records that the current case could not run, and why.
void skip_case(const char* why);

// main()'s verdict: `rc` when a case failed or none skipped, else
// kSkipStatus, after naming every skipped case on `out`.
int run_status(int rc, std::FILE* out);

}  // namespace nxdns::test

// Ends the current case as skipped. A macro because it must return from the
// TEST body.
#define SKIP_CASE(why)             \
  do {                             \
    ::nxdns::test::skip_case(why); \
    return;                        \
  } while (0)
