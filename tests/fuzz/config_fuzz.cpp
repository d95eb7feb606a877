// libFuzzer target: arbitrary bytes as a config file.
//
// The contract under test: load_string either returns a Config that honours
// every documented invariant, or throws config::Error whose what() is one
// line. Any other exception escapes on purpose, so the fuzzer reports it as
// a crash. redact_url gets the raw bytes too: whatever the input, its output
// carries no userinfo, query or fragment.
//
// Build (not wired into CMake; run from the source root after configuring
// a build dir, which provides the generated headers):
//   clang++-14 -std=c++20 -g -fsanitize=fuzzer,address,undefined -I src \
//     -I build-config/generated tests/fuzz/config_fuzz.cpp src/config/*.cpp \
//     src/net/*.cpp src/log/*.cpp -lyaml-cpp -o /tmp/config_fuzz
//   /tmp/config_fuzz -max_total_time=60 tests/fuzz/corpus/config
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/config.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool one_line(const char* s) {
  for (; *s; ++s)
    if (static_cast<unsigned char>(*s) < 0x20) return false;
  return true;
}

bool clean_label(const std::string& s) {
  return s.find('@') == std::string::npos && s.find('?') == std::string::npos && s.find('#') == std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check(clean_label(nxdns::config::redact_url(text)));

  // No file checks: ca_file paths would make results depend on this host.
  nxdns::config::LoadOptions opts;
  opts.check_files = false;
  try {
    const nxdns::config::Config c = nxdns::config::load_string(text, "fuzz.yaml", opts);
    check(!c.listen.empty());
    check(!c.upstreams.empty());
    check(c.budgets.attempt.count() >= 100 && c.budgets.attempt <= c.budgets.total &&
          c.budgets.total.count() <= 60000);
    check(c.http.listen.len != 0);
    bool any_enabled = false;
    for (const auto& u : c.upstreams) {
      any_enabled = any_enabled || u.enabled;
      check(u.address.len != 0 && u.address.port() == u.port && u.port != 0);
      check(!u.tls_name.empty());
      check(u.protocol == nxdns::config::Protocol::doh ? !u.path.empty() && u.path[0] == '/' : u.path.empty());
      check(clean_label(nxdns::config::redact_url(u.url)));
      check(u.line >= 1);
    }
    check(any_enabled);
  } catch (const nxdns::config::Error& e) {
    check(one_line(e.what()));
    check(e.line() >= 1 && e.column() >= 1);
    check(!e.key_path().empty());
  }
  return 0;
}
