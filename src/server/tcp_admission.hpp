#pragma once
// Whether a new client TCP connection is kept, and on what terms: the
// per-family cap first, then the small budget that clients outside
// access_control share. Pure: counts and the access verdict in, no I/O. An
// allowed connection is then asked about by the client table (its share).
#include <cstdint>

#include "server/access_control.hpp"

namespace nxdns::server {

enum class TcpAdmission : std::uint8_t {
  serve,                // an allowed client: its per-client share decides next
  refuse_once,          // outside access_control: one REFUSED, then closed
  over_cap,             // every connection of the family is open: closed at once
  over_refused_budget,  // refused clients hold their whole budget: closed at once
};

// `open`: connections of the family, refused ones included; `open_refused`:
// those accepted from clients outside access_control.
TcpAdmission tcp_connection_admission(std::uint32_t open, std::uint32_t open_refused, Access access);

const char* describe(TcpAdmission a);

}  // namespace nxdns::server
