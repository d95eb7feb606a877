// WireIdBatch (wire_id_batch.hpp): random DNS IDs, one generator call per batch.
#include "upstream/wire_id_batch.hpp"

namespace nxdns::upstream {

std::optional<std::uint16_t> WireIdBatch::next() {
  if (used_ == ids_.size()) {
    if (!fill_(ids_.data(), sizeof ids_)) return std::nullopt;
    used_ = 0;
  }
  // Each ID is handed out once: a spent one is never seen again.
  return ids_[used_++];
}

}  // namespace nxdns::upstream
