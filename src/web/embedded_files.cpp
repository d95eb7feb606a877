#include "web/embedded_files.hpp"

namespace nxdns::web {

std::optional<std::string_view> embedded_file(std::string_view name) {
  for (const auto& f : embedded_files()) {
    if (f.name == name) return f.bytes;
  }
  return std::nullopt;
}

}  // namespace nxdns::web
