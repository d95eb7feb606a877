#include "server/tcp_admission.hpp"

#include "server/limits.hpp"

namespace nxdns::server {

TcpAdmission tcp_connection_admission(std::uint32_t open, std::uint32_t open_refused, Access access) {
  if (open >= tcp_connection_cap) return TcpAdmission::over_cap;
  if (access == Access::allow) return TcpAdmission::serve;
  // A refused client has nothing to gain from a connection but its REFUSED:
  // together such clients may hold only this few, so a host outside the ACL
  // cannot take the connections the allowed clients need.
  if (open_refused >= tcp_refused_budget) return TcpAdmission::over_refused_budget;
  return TcpAdmission::refuse_once;
}

const char* describe(TcpAdmission a) {
  switch (a) {
    case TcpAdmission::serve: return "serve";
    case TcpAdmission::refuse_once: return "refuse_once";
    case TcpAdmission::over_cap: return "over_cap";
    case TcpAdmission::over_refused_budget: return "over_refused_budget";
  }
  return "unknown";
}

}  // namespace nxdns::server
