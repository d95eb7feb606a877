#include "upstream/transport.hpp"

namespace nxdns::upstream {

const char* describe(Cause c) {
  switch (c) {
    case Cause::ok: return "ok";
    case Cause::eof: return "eof";
    case Cause::tls_closed: return "tls_closed";
    case Cause::connection_reset: return "connection_reset";
    case Cause::broken_pipe: return "broken_pipe";
    case Cause::session_closed: return "session_closed";
    case Cause::connect_failed: return "connect_failed";
    case Cause::handshake_failed: return "handshake_failed";
    case Cause::certificate: return "certificate";
    case Cause::certificate_clock_behind: return "certificate_clock_behind";
    case Cause::tls_protocol: return "tls_protocol";
    case Cause::bad_response: return "bad_response";
    case Cause::response_too_large: return "response_too_large";
    case Cause::http_status: return "http_status";
    case Cause::bad_content_type: return "bad_content_type";
    case Cause::error_answer: return "error_answer";
    case Cause::attempt_timeout: return "attempt_timeout";
    case Cause::local_resource: return "local_resource";
    case Cause::cancelled: return "cancelled";
  }
  return "unknown";
}

bool is_connection_lifecycle(Cause c) {
  return c == Cause::eof || c == Cause::tls_closed || c == Cause::connection_reset || c == Cause::broken_pipe ||
         c == Cause::session_closed;
}

}  // namespace nxdns::upstream
