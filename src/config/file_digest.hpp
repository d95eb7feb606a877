#pragma once
// The SHA-256 of a file's contents, read through a descriptor the loader
// opened. Recorded for each ca_file, so that a reload can tell new trust
// anchors written over the same path from unchanged ones
// (app/reload_plan.hpp): a path, a size or an mtime alone can stay the same
// while the certificates change. Internal to config/.
#include <optional>

#include "config/config.hpp"

namespace nxdns::config::detail {

// Reads `fd` to its end. nullopt, with the read's errno in *err, when a
// read fails.
std::optional<Sha256> sha256_of_fd(int fd, int* err);

}  // namespace nxdns::config::detail
