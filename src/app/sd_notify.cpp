#include "app/sd_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "loop/event_handles.hpp"

namespace nxdns::app {

bool sd_notify(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path) return false;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const std::size_t n = std::strlen(path);
  if (n >= sizeof sa.sun_path) return false;
  std::memcpy(sa.sun_path, path, n);
  // "@name" is an abstract socket: leading NUL on the wire.
  if (sa.sun_path[0] == '@') sa.sun_path[0] = '\0';
  loop::UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return false;
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n);
  return ::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&sa), len) ==
         static_cast<ssize_t>(state.size());
}

}  // namespace nxdns::app
