#include "upstream/dot_session.hpp"

namespace nxdns::upstream {

const char* describe(SessionState s) {
  switch (s) {
    case SessionState::closed: return "closed";
    case SessionState::connecting: return "connecting";
    case SessionState::handshaking: return "handshaking";
    case SessionState::ready: return "ready";
    case SessionState::draining: return "draining";
  }
  return "unknown";
}

}  // namespace nxdns::upstream
