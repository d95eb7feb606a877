#pragma once
// The pipelining verdict alone, so that transport.hpp (included by C-boundary
// tests next to cmocka's macros) need not pull in the clock and detector.
#include <cstdint>

namespace nxdns::upstream {

enum class PipeliningVerdict : std::uint8_t {
  unknown,     // no evidence yet, or the last verdict aged out
  pipelining,  // answers to queries outstanding together come back together
  serial,      // answers come one at a time, in order, or some never come
};
const char* describe(PipeliningVerdict v);  // stable snake_case: a metric label and an API value

}  // namespace nxdns::upstream
