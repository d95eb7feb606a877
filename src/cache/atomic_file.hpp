#pragma once
// Whole-file I/O for the cache file: a replacement that a crash or a power
// cut at any instant leaves either old or new, never torn, and a read
// bounded before a byte is allocated. Blocking; callers keep it off the
// serving loop or run it before serving.
#include <cstddef>
#include <optional>
#include <string>

#include "dns/message.hpp"

namespace nxdns::cache {

// Writes PATH.tmp in the same directory (mode 0600: the file lists the
// names this household looked up), fsyncs it, renames it over PATH and
// fsyncs the directory, so the rename itself survives a power cut. nullopt
// on success, else why (with the step and errno), and PATH.tmp is removed.
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
