#pragma once
// Whole-file I/O for the files the daemon keeps (the cache file, the
// blocklist copies and their validators): a replacement that a crash or a
// power cut at any instant leaves either old or new, never torn, and a read
// bounded before a byte is allocated. Blocking; callers keep it off the
// serving loop or run it before serving.
#include <cstddef>
#include <optional>
#include <string>

#include "dns/message.hpp"

namespace nxdns::cache {

// A new PATH written in pieces (a download streamed to disk): PATH.tmp in
// the same directory (mode 0600: the cache file lists the names this
// household looked up), then commit() fsyncs it, renames it over PATH and
// fsyncs the directory, so the rename itself survives a power cut. Until
// commit() succeeds PATH is untouched; PATH.tmp is removed on every failure
// and when the replacement dies uncommitted. Errors are one line: the step
// and errno's text. One writer per PATH at a time (PATH.tmp is truncated
// when opened).
class FileReplacement {
 public:
  explicit FileReplacement(std::string path);
  ~FileReplacement();
  FileReplacement(const FileReplacement&) = delete;
  FileReplacement& operator=(const FileReplacement&) = delete;

  // nullopt on success, else why. Opening refuses a symbolic link at
  // PATH.tmp (O_NOFOLLOW): the directory may be shared with other writers.
  std::optional<std::string> open();
  std::optional<std::string> write(dns::ByteView bytes);
  std::optional<std::string> commit();
  // Removes PATH.tmp (a failed download); PATH stays as it was.
  void abandon() noexcept;

 private:
  std::optional<std::string> fail(const char* step);

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  bool pending_ = false;  // PATH.tmp exists and is ours to remove
};

// The whole of PATH replaced by `bytes` through a FileReplacement. nullopt
// on success, else why.
std::optional<std::string> replace_file(const std::string& path, dns::ByteView bytes);

struct FileRead {
  enum class Status : std::uint8_t { ok, missing, too_large, failed };
  Status status = Status::failed;
  dns::Bytes bytes;
  std::string why;  // missing, too_large, failed
};
// The whole of a regular file of at most `max_size` octets.
FileRead read_whole_file(const std::string& path, std::size_t max_size);

}  // namespace nxdns::cache
