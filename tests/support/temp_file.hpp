#pragma once
// A file with the given contents under /tmp that deletes itself: a CA file
// or a broken certificate for a test that needs a path, not text.
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace nxdns::test {

class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char tmpl[] = "/tmp/nxdns-test-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    path_ = tmpl;
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    ::close(fd);
    if (n != static_cast<ssize_t>(contents.size())) {
      ::unlink(path_.c_str());
      throw std::runtime_error("temp write failed");
    }
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace nxdns::test
