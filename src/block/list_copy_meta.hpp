#pragma once
// What the daemon knows about the copy it keeps of a downloaded list: the
// validators the server sent with it (RFC 9110 §8.8: ETag, Last-Modified),
// so the next fetch can ask "changed since?" (RFC 9110 §13.1) and a list
// that did not change costs one small round trip instead of the whole list.
//
// Kept beside the copy as COPY.meta, a few lines of text:
//   nxdns-list-copy 1
//   source https://lists.example/hosts.txt    (the list's label, for people)
//   bytes 123456                               (the copy's size)
//   fetched 1700000000                         (when it was downloaded, unix)
//   etag "abc"                                 (optional)
//   last-modified Tue, 14 Nov 2023 22:13:20 GMT (optional)
// The validators describe the copy only when its size is `bytes`: a copy
// replaced or removed by hand then gets an unconditional GET, never a 304
// that would keep a file the server did not send.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nxdns::block {

struct CopyMeta {
  std::string source;
  std::uint64_t bytes = 0;
  std::int64_t fetched_unix = 0;
  std::string etag;           // as sent, quotes and W/ included; "" when none
  std::string last_modified;  // as sent; "" when none
};

// A validator the server sent that can be kept and sent back: printable
// ASCII (header field values, RFC 9110 §5.5), at most 1024 octets, so no
// value can add a line to the file or a header to a request.
bool storable_validator(std::string_view v);

std::string encode_copy_meta(const CopyMeta& m);
// nullopt for anything but a file encode_copy_meta wrote (another version,
// a missing size or time, a validator that is not storable).
std::optional<CopyMeta> decode_copy_meta(std::string_view text);

std::string meta_path(const std::string& copy_path);

// Blocking file I/O, for the fetcher's worker thread. The read is nullopt
// when the file is missing, unreadable or not decodable: the next fetch is
// then unconditional. The write replaces the file atomically
// (cache/atomic_file.hpp); nullopt on success, else why.
std::optional<CopyMeta> read_copy_meta(const std::string& copy_path);
std::optional<std::string> write_copy_meta(const std::string& copy_path, const CopyMeta& m);

}  // namespace nxdns::block
