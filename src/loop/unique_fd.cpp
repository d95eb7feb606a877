#include "loop/event_handles.hpp"

#include <unistd.h>

namespace nxdns::loop {

void UniqueFd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

}  // namespace nxdns::loop
