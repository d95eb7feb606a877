// libFuzzer target for the TCP query framing (server/tcp_framing.hpp).
// Input layout: [cap hi][cap lo][chunking seed][stream bytes...].
//   cap: the max_frame passed to next_frame (0 means the daemon's own cap,
//        max_tcp_query_frame, so most inputs exercise the real setting);
//   chunking seed: how the stream is cut into reads for the incremental run.
// Checked (a violation traps, so the fuzzer reports it like a crash):
//   - each scan agrees with the RFC 7766 rule computed independently here;
//   - the verdict depends only on the first 2 + cap bytes (TcpConnection
//     shows next_frame no more than that);
//   - consuming the stream in arbitrary reads gives exactly the frames and
//     the final verdict of consuming it in one read (no split, slowloris or
//     coalesced delivery changes what the server sees);
//   - the daemon's cap is the client query cap, and every frame it accepts
//     re-frames (dns::StreamMessage, the outgoing framer) to the very
//     prefix it arrived with; a message the prefix cannot state (sizes taken
//     from the input, up to 128 KiB) is refused by construction.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dns/stream_message.hpp"
#include "server/limits.hpp"
#include "server/tcp_framing.hpp"

using nxdns::dns::ByteView;
using nxdns::server::FrameScan;
using nxdns::server::next_frame;

namespace {

using Kind = FrameScan::Kind;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void check_scan(ByteView buf, std::size_t cap, const FrameScan& s) {
  const std::size_t shown = std::min(buf.size(), nxdns::server::tcp_length_prefix + cap);
  const FrameScan bounded = next_frame(buf.first(shown), cap);
  require(bounded.kind == s.kind && bounded.offset == s.offset && bounded.length == s.length);
  if (buf.size() < 2) {
    require(s.kind == Kind::need_more && s.length == 0 && s.consumed() == 0);
    return;
  }
  const std::size_t len = (std::size_t{buf[0]} << 8) | buf[1];
  switch (s.kind) {
    case Kind::zero_length: require(len == 0 && s.consumed() == 0); break;
    case Kind::too_large: require(len > cap && s.length == len && s.consumed() == 0); break;
    case Kind::frame:
      require(len >= 1 && len <= cap && s.offset == 2 && s.length == len && s.consumed() == len + 2);
      require(s.consumed() <= buf.size());
      break;
    case Kind::need_more: require(len >= 1 && len <= cap && buf.size() < len + 2 && s.consumed() == 0); break;
  }
}

struct Outcome {
  std::vector<std::pair<std::size_t, std::size_t>> frames;  // stream offset, length
  Kind end = Kind::need_more;
  std::size_t leftover = 0;
};

// Consumes frames from `buffered` (whose first byte is at stream offset
// `base`) until a verdict other than `frame`; returns false on a rejection.
bool drain(std::vector<std::uint8_t>& buffered, std::size_t& base, std::size_t cap, Outcome& out) {
  for (;;) {
    const FrameScan s = next_frame(ByteView(buffered), cap);
    check_scan(ByteView(buffered), cap, s);
    if (s.kind == Kind::frame) {
      out.frames.emplace_back(base + s.offset, s.length);
      buffered.erase(buffered.begin(), buffered.begin() + static_cast<std::ptrdiff_t>(s.consumed()));
      base += s.consumed();
      continue;
    }
    out.end = s.kind;
    return s.kind == Kind::need_more;
  }
}

Outcome consume(ByteView stream, std::size_t cap, std::uint8_t seed) {
  Outcome out;
  std::vector<std::uint8_t> buffered;
  std::size_t base = 0;
  std::size_t pos = 0;
  std::uint32_t x = seed * 2654435761u + 1;
  while (pos < stream.size()) {
    std::size_t n = stream.size() - pos;
    if (seed != 0) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      // Mostly tiny reads (the dribbling client), sometimes large ones.
      n = std::min<std::size_t>(n, (x & 3) ? (x >> 8) % 4 + 1 : (x >> 8) % 700 + 1);
    }
    buffered.insert(buffered.end(), stream.begin() + static_cast<std::ptrdiff_t>(pos),
                    stream.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
    if (!drain(buffered, base, cap, out)) break;
  }
  out.leftover = buffered.size();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  std::size_t cap = (std::size_t{data[0]} << 8) | data[1];
  if (cap == 0) cap = nxdns::server::max_tcp_query_frame;
  const std::uint8_t seed = data[2];
  const ByteView stream(data + 3, size - 3);

  const Outcome whole = consume(stream, cap, 0);
  const Outcome pieces = consume(stream, cap, seed == 0 ? 1 : seed);
  require(whole.frames == pieces.frames);
  require(whole.end == pieces.end);
  // A rejection stops reading; before one, both runs hold the same tail.
  if (whole.end == Kind::need_more) require(whole.leftover == pieces.leftover);
  // Frames tile the stream from its start, without gaps.
  std::size_t expect = 2;
  for (const auto& [off, len] : whole.frames) {
    require(off == expect);
    expect = off + len + 2;
    const auto framed = nxdns::dns::StreamMessage::from(
        std::vector<std::uint8_t>(stream.begin() + static_cast<std::ptrdiff_t>(off),
                                  stream.begin() + static_cast<std::ptrdiff_t>(off + len)));
    require(framed && framed->prefix()[0] == stream[off - 2] && framed->prefix()[1] == stream[off - 1]);
  }
  static_assert(nxdns::server::max_tcp_query_frame == nxdns::dns::max_client_query);
  require(cap != nxdns::server::max_tcp_query_frame || whole.frames.size() == 0 ||
          std::all_of(whole.frames.begin(), whole.frames.end(),
                      [](const auto& f) { return f.second <= nxdns::dns::max_client_query; }));
  const std::size_t want = (std::size_t{data[1]} << 9) ^ (std::size_t{data[2]} << 1) ^ size;
  const std::size_t wanted = want % (2 * nxdns::dns::max_stream_message + 2);
  const bool framable = nxdns::dns::StreamMessage::from(std::vector<std::uint8_t>(wanted, 0)).has_value();
  require(framable == (wanted >= 1 && wanted <= nxdns::dns::max_stream_message));
  return 0;
}
