#include "cache/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <utility>

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

FileReplacement::FileReplacement(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {}

FileReplacement::~FileReplacement() { abandon(); }

std::optional<std::string> FileReplacement::fail(const char* step) {
  const int err = errno;
  abandon();
  return log::cat(step, ": ", errno_text(err));
}

std::optional<std::string> FileReplacement::open() {
  abandon();
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) return log::cat("cannot create ", tmp_, ": ", errno_text(errno));
  pending_ = true;
  return std::nullopt;
}

std::optional<std::string> FileReplacement::write(dns::ByteView bytes) {
  if (fd_ < 0) return std::string("write: the file is not open");
  if (!write_all(fd_, bytes)) return fail("write");
  return std::nullopt;
}

std::optional<std::string> FileReplacement::commit() {
  if (fd_ < 0) return std::string("commit: the file is not open");
  // The data must be on the card before the rename makes it the file:
  // otherwise a power cut can leave the new name on an empty file.
  if (::fsync(fd_) != 0) return fail("fsync");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return fail("close");
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) return fail("rename");
  pending_ = false;
  // The rename is an entry in the directory: it lasts once that is synced.
  loop::UniqueFd dir(::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return log::cat("open directory: ", errno_text(errno));
  if (::fsync(dir.get()) != 0) return log::cat("fsync directory: ", errno_text(errno));
  return std::nullopt;
}

void FileReplacement::abandon() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (pending_) ::unlink(tmp_.c_str());
  pending_ = false;
}

std::optional<std::string> replace_file(const std::string& path, dns::ByteView bytes) {
  FileReplacement f(path);
  if (auto e = f.open()) return e;
  if (auto e = f.write(bytes)) return e;
  return f.commit();
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
