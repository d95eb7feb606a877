#include "cache/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "log/log.hpp"
#include "loop/event_handles.hpp"

namespace nxdns::cache {

namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool write_all(int fd, dns::ByteView bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::optional<std::string> replace_file(const std::string& path, dns::ByteView bytes) {
  const std::string tmp = path + ".tmp";
  const auto failed = [&tmp](const char* step) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return log::cat(step, ": ", errno_text(err));
  };
  {
    loop::UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return log::cat("cannot create ", tmp, ": ", errno_text(errno));
    if (!write_all(fd.get(), bytes)) return failed("write");
    // The data must be on the card before the rename makes it the file:
    // otherwise a power cut can leave the new name on an empty file.
    if (::fsync(fd.get()) != 0) return failed("fsync");
    if (::close(fd.release()) != 0) return failed("close");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return failed("rename");
  // The rename is an entry in the directory: it lasts once that is synced.
  loop::UniqueFd dir(::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return log::cat("open directory: ", errno_text(errno));
  if (::fsync(dir.get()) != 0) return log::cat("fsync directory: ", errno_text(errno));
  return std::nullopt;
}

FileRead read_whole_file(const std::string& path, std::size_t max_size) {
  FileRead r;
  loop::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    r.status = errno == ENOENT ? FileRead::Status::missing : FileRead::Status::failed;
    r.why = errno == ENOENT ? std::string("no such file") : log::cat("cannot open: ", errno_text(errno));
    return r;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    r.why = log::cat("cannot stat: ", errno_text(errno));
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.why = "not a regular file";
    return r;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_size) {
    r.status = FileRead::Status::too_large;
    r.why = log::cat(size, " octets, more than a file of cache.max_bytes can be (", max_size, ")");
    return r;
  }
  // One octet more than the size: a file that grew meanwhile reads longer
  // than its header says and is refused, not silently cut.
  r.bytes.resize(size + 1);
  std::size_t got = 0;
  while (got < r.bytes.size()) {
    const ssize_t n = ::read(fd.get(), r.bytes.data() + got, r.bytes.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.why = log::cat("read: ", errno_text(errno));
      r.bytes.clear();
      return r;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  r.bytes.resize(got);
  r.status = FileRead::Status::ok;
  return r;
}

}  // namespace nxdns::cache
