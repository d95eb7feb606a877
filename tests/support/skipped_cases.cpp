// The record behind SKIP_CASE. Fixed-size static storage: CppUTest's leak
// detector charges any heap block still held when a case ends to that case,
// so a growing container here would fail the very case that skipped.
#include "support/skipped_cases.hpp"

#include <cstddef>
#include <cstdio>

#include <CppUTest/Utest.h>

namespace nxdns::test {
namespace {

struct Skipped {
  char name[192];
  char why[256];
};

// Enough for every case of one executable that needs the same program; a
// longer list is counted in full and named in part.
constexpr std::size_t kNamed = 64;
Skipped g_named[kNamed];
std::size_t g_count = 0;

}  // namespace

void skip_case(const char* why) {
  if (g_count < kNamed) {
    Skipped& s = g_named[g_count];
    UtestShell* current = UtestShell::getCurrent();
    std::snprintf(s.name, sizeof s.name, "%s.%s", current->getGroup().asCharString(),
                  current->getName().asCharString());
    std::snprintf(s.why, sizeof s.why, "%s", why ? why : "");
  }
  ++g_count;
}

int run_status(int rc, std::FILE* out) {
  if (g_count == 0) return rc;
  for (std::size_t i = 0; i < g_count && i < kNamed; ++i) {
    std::fprintf(out, "SKIPPED CASE: %s: %s\n", g_named[i].name, g_named[i].why);
  }
  if (g_count > kNamed) std::fprintf(out, "SKIPPED CASE: ... and %zu more\n", g_count - kNamed);
  if (rc != 0) return rc;  // a failure wins over a skip
  std::fprintf(out, "SKIPPED: %zu case(s) could not run here (listed above); every case that ran passed\n", g_count);
  return kSkipStatus;
}

}  // namespace nxdns::test
