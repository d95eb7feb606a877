#pragma once
// RFC 7766 §8 / RFC 1035 §4.2.2 framing of client queries on TCP: a two-octet
// length, then the message. Pure: it looks at the bytes a connection has
// buffered and says what the next frame is, without consuming anything, so
// the rules that decide when a hostile stream is cut off are tested and
// fuzzed apart from the socket code (server/tcp_connection.cpp).
#include <cstddef>
#include <cstdint>

#include "dns/message.hpp"

namespace nxdns::server {

// The two-octet length prefix that precedes every message on the stream.
inline constexpr std::size_t tcp_length_prefix = 2;

struct FrameScan {
  enum class Kind : std::uint8_t {
    // Not enough bytes buffered yet to decide: the prefix is incomplete, or
    // the message it announces has not fully arrived.
    need_more,
    // A complete message at buffered[offset, offset + length).
    frame,
    // The prefix announces 0 octets: no DNS message is that short, and a
    // stream of them would cost us a wakeup each for nothing.
    zero_length,
    // The prefix announces more than max_frame octets (`length` holds the
    // announced size). Decided from the prefix alone: we never buffer a
    // hostile frame's body to find out.
    too_large,
  };
  Kind kind = Kind::need_more;
  std::size_t offset = 0;  // where the message starts (frame only)
  std::size_t length = 0;  // message length (frame), announced length (too_large), else 0

  // Bytes the caller consumes for a frame: prefix and message.
  std::size_t consumed() const { return kind == Kind::frame ? offset + length : 0; }
};

// Looks at the start of `buffered` only. A prefix that announces a length
// within [1, max_frame] yields `frame` once the whole message is buffered
// and `need_more` before; bytes beyond the first frame are left for the next
// call. max_frame above 65535 behaves as 65535 (the prefix cannot say more).
FrameScan next_frame(dns::ByteView buffered, std::size_t max_frame);

const char* describe(FrameScan::Kind k);

}  // namespace nxdns::server
