#pragma once
// DNS IDs for the wire (RFC 5452 §9.2: unpredictable), drawn from the TLS
// random generator in batches. One CTR-DRBG call costs about as much for 128
// bytes as for 2 (the per-call update and reseed bookkeeping dominate), so
// a call per 2-byte ID would pay that bookkeeping on every forwarded query
// (bench/callgrind_per_answer.sh profiles the forwarding path). Batching
// changes only the number of generator calls: every ID is still two bytes
// straight from the generator, used once.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace nxdns::upstream {

class WireIdBatch {
 public:
  // Fills `n` bytes at `out` with random bytes; false when the generator
  // failed (nothing is taken from a failed fill).
  using Fill = std::function<bool(void* out, std::size_t n)>;
  static constexpr std::size_t batch = 64;

  explicit WireIdBatch(Fill fill) : fill_(std::move(fill)) {}

  // The next unused ID, refilling the batch when it is spent; nullopt when
  // the generator fails (the next call tries again).
  std::optional<std::uint16_t> next();

 private:
  Fill fill_;
  std::array<std::uint16_t, batch> ids_{};
  std::size_t used_ = batch;  // empty until the first call
};

}  // namespace nxdns::upstream
