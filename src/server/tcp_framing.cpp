#include "server/tcp_framing.hpp"

namespace nxdns::server {

FrameScan next_frame(dns::ByteView buffered, std::size_t max_frame) {
  FrameScan s;
  if (buffered.size() < tcp_length_prefix) return s;
  const std::size_t len = (std::size_t{buffered[0]} << 8) | buffered[1];
  // The prefix alone decides both rejections, so a client cannot make us
  // wait for (or buffer) the body of a frame we will refuse anyway.
  if (len == 0) {
    s.kind = FrameScan::Kind::zero_length;
    return s;
  }
  if (len > max_frame) {
    s.kind = FrameScan::Kind::too_large;
    s.length = len;
    return s;
  }
  if (buffered.size() - tcp_length_prefix < len) return s;
  s.kind = FrameScan::Kind::frame;
  s.offset = tcp_length_prefix;
  s.length = len;
  return s;
}

const char* describe(FrameScan::Kind k) {
  switch (k) {
    case FrameScan::Kind::need_more: return "need more bytes";
    case FrameScan::Kind::frame: return "frame";
    case FrameScan::Kind::zero_length: return "zero-length frame";
    case FrameScan::Kind::too_large: return "frame too large";
  }
  return "unknown";
}

}  // namespace nxdns::server
