#pragma once
// What the config tests share: the source name their documents load under,
// a minimal upstream block, "this must fail / must load" helpers, and a
// scratch directory for files a document names.
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "config/config.hpp"

#include <CppUTest/TestHarness.h>

namespace nxdns::config::test_support {

inline const char* const kSrc = "test.yaml";

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
// An error text that must name a key, a file or a line: on failure the
// whole text is shown.
#define CHECK_CONTAINS(s, part) CHECK_TEXT(::nxdns::config::test_support::contains((s), (part)), (s).c_str())

// A minimal valid upstream block, two lines.
inline const std::string kUp =
    "upstreams:\n"
    "  - url: \"tls://127.0.0.1:853\"\n"
    "    tls_name: \"dot.test\"\n";

inline std::string error_of(const std::string& yaml, const LoadOptions& opts = {}) {
  try {
    (void)load_string(yaml, kSrc, opts);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL(("expected an error for:\n" + yaml).c_str());
  return {};
}

inline Config must_load(const std::string& yaml, const LoadOptions& opts = {}) {
  try {
    return load_string(yaml, kSrc, opts);
  } catch (const Error& e) {
    FAIL((std::string("unexpected error: ") + e.what()).c_str());
  }
  return {};
}

// A scratch directory, removed with everything in it after each test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/nxdns-config-test-XXXXXX";
    const char* p = mkdtemp(tmpl);
    if (!p) FAIL("mkdtemp");
    path = p;
  }
  ~TempDir() {
    const std::string cmd = "rm -rf '" + path + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", path.c_str());
  }
  std::string write(const std::string& name, const std::string& body) const {
    const std::string p = path + "/" + name;
    std::ofstream(p) << body;
    return p;
  }
};

}  // namespace nxdns::config::test_support
