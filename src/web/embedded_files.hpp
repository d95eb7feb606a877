#pragma once
// Files compiled into the binary at build time (cmake/EmbedFiles.cmake):
// the status page's HTML template, stylesheet, script and icon, and the
// OpenAPI document. The daemon serves them from memory: no file system
// access at run time, nothing loaded from anywhere else.
#include <optional>
#include <span>
#include <string_view>

namespace nxdns::web {

struct EmbeddedFile {
  std::string_view name;   // e.g. "page/index.html"
  std::string_view bytes;  // static storage
};

std::span<const EmbeddedFile> embedded_files();
// nullopt for a name that was not embedded.
std::optional<std::string_view> embedded_file(std::string_view name);

}  // namespace nxdns::web
