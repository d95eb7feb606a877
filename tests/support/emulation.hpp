#pragma once
// Whether the tests run under an emulator (the aarch64 CI stage runs every
// target binary under qemu-user and sets NXDNS_EMULATED=1). Emulation
// stretches CPU-bound steps such as a TLS handshake by 10-50x; tests relax
// time limits with it, never what they check.
#include <cstdlib>
#include <string>

namespace nxdns::test {

inline bool emulated() {
  const char* e = std::getenv("NXDNS_EMULATED");
  return e && std::string(e) == "1";
}

}  // namespace nxdns::test
