#pragma once
// The two POSIX helpers the loader needs to open files it must not trust
// (the config file itself, each upstream's ca_file): an owning descriptor
// and errno as text. Internal to config/.
#include <unistd.h>

#include <string>
#include <system_error>

namespace nxdns::config::detail {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

inline std::string errno_text(int err) { return std::generic_category().message(err); }

}  // namespace nxdns::config::detail
