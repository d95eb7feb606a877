#pragma once
#include <string_view>

namespace nxdns::app {

// Sends a state string ("READY=1", "STOPPING=1") to systemd when the service
// runs with Type=notify (NOTIFY_SOCKET set). A no-op elsewhere. Implemented
// on a plain AF_UNIX datagram socket: no libsystemd dependency.
bool sd_notify(std::string_view state);

}  // namespace nxdns::app
