// next_frame(): the TCP query framing rules (RFC 7766 §8) apart from sockets.
#include <cstdint>
#include <vector>

#include "server/limits.hpp"
#include "server/tcp_framing.hpp"

#include <CppUTest/TestHarness.h>

using nxdns::dns::Bytes;
using nxdns::dns::ByteView;
using nxdns::server::FrameScan;
using nxdns::server::max_tcp_query_frame;
using nxdns::server::next_frame;

namespace {

using Kind = FrameScan::Kind;

Bytes framed(std::size_t len, std::uint8_t fill = 0xAB) {
  Bytes b{static_cast<std::uint8_t>(len >> 8), static_cast<std::uint8_t>(len)};
  b.insert(b.end(), len, fill);
  return b;
}

FrameScan scan(const Bytes& b, std::size_t max = max_tcp_query_frame) { return next_frame(ByteView(b), max); }

// Feeds `stream` one byte at a time, consuming every frame as soon as it is
// complete (what TcpConnection does); returns the frames' lengths, or stops
// at the first rejection and reports it in `rejected`.
std::vector<std::size_t> drip(const Bytes& stream, std::size_t max, Kind* rejected) {
  std::vector<std::size_t> frames;
  Bytes buffered;
  *rejected = Kind::need_more;
  for (std::uint8_t byte : stream) {
    buffered.push_back(byte);
    for (;;) {
      const FrameScan s = next_frame(ByteView(buffered), max);
      if (s.kind == Kind::need_more) break;
      if (s.kind != Kind::frame) {
        *rejected = s.kind;
        return frames;
      }
      frames.push_back(s.length);
      buffered.erase(buffered.begin(), buffered.begin() + static_cast<std::ptrdiff_t>(s.consumed()));
    }
  }
  return frames;
}

}  // namespace

TEST_GROUP(TcpFraming){};

TEST(TcpFraming, EmptyAndLonePrefixByteNeedMore) {
  CHECK(scan({}).kind == Kind::need_more);
  CHECK(scan({0x00}).kind == Kind::need_more);
  CHECK(scan({0x01}).kind == Kind::need_more);
  CHECK_EQUAL(0u, scan({0x01}).consumed());
}

TEST(TcpFraming, PrefixWithoutTheWholeMessageNeedsMore) {
  Bytes b = framed(40);
  b.pop_back();
  const FrameScan s = scan(b);
  CHECK(s.kind == Kind::need_more);
  CHECK_EQUAL(0u, s.length);
  CHECK_EQUAL(0u, s.consumed());
  CHECK(scan({0x00, 0x28}).kind == Kind::need_more);
}

TEST(TcpFraming, CompleteMessageIsAFrameAfterThePrefix) {
  const Bytes b = framed(40);
  const FrameScan s = scan(b);
  CHECK(s.kind == Kind::frame);
  CHECK_EQUAL(2u, s.offset);
  CHECK_EQUAL(40u, s.length);
  CHECK_EQUAL(42u, s.consumed());
}

TEST(TcpFraming, BytesBehindTheFirstFrameAreLeftForTheNextScan) {
  Bytes b = framed(12, 0x11);
  const Bytes second = framed(30, 0x22);
  b.insert(b.end(), second.begin(), second.end());
  b.push_back(0x00);  // half of a third prefix
  FrameScan s = scan(b);
  CHECK(s.kind == Kind::frame);
  CHECK_EQUAL(12u, s.length);
  CHECK_EQUAL(0x11, b[s.offset]);
  const Bytes rest(b.begin() + static_cast<std::ptrdiff_t>(s.consumed()), b.end());
  s = scan(rest);
  CHECK(s.kind == Kind::frame);
  CHECK_EQUAL(30u, s.length);
  CHECK_EQUAL(0x22, rest[s.offset]);
  const Bytes tail(rest.begin() + static_cast<std::ptrdiff_t>(s.consumed()), rest.end());
  CHECK(scan(tail).kind == Kind::need_more);
}

TEST(TcpFraming, ZeroLengthIsRejectedFromThePrefixAlone) {
  CHECK(scan({0x00, 0x00}).kind == Kind::zero_length);
  CHECK(scan({0x00, 0x00, 0x00, 0x0C}).kind == Kind::zero_length);
  CHECK_EQUAL(0u, scan({0x00, 0x00}).consumed());
}

TEST(TcpFraming, LengthAboveTheCapIsRejectedWithoutWaitingForTheBody) {
  const std::size_t over = max_tcp_query_frame + 1;
  const FrameScan s = scan({static_cast<std::uint8_t>(over >> 8), static_cast<std::uint8_t>(over)});
  CHECK(s.kind == Kind::too_large);
  CHECK_EQUAL(over, s.length);
  CHECK_EQUAL(0u, s.consumed());
  const FrameScan most = scan({0xFF, 0xFF});
  CHECK(most.kind == Kind::too_large);
  CHECK_EQUAL(65535u, most.length);
}

TEST(TcpFraming, LengthExactlyAtTheCapIsAFrame) {
  const Bytes b = framed(max_tcp_query_frame);
  Bytes short_one(b.begin(), b.end() - 1);
  CHECK(scan(short_one).kind == Kind::need_more);
  const FrameScan s = scan(b);
  CHECK(s.kind == Kind::frame);
  CHECK_EQUAL(max_tcp_query_frame, s.length);
}

TEST(TcpFraming, CapIsACallerParameter) {
  const Bytes b = framed(100);
  CHECK(scan(b, 99).kind == Kind::too_large);
  CHECK(scan(b, 100).kind == Kind::frame);
  // Nothing on the wire can exceed 65535: a larger cap accepts everything.
  CHECK(scan({0xFF, 0xFF}, 1u << 20).kind == Kind::need_more);
  CHECK(scan(framed(1), 0).kind == Kind::too_large);
}

TEST(TcpFraming, ByteByByteDeliveryYieldsTheSameFramesAsOneRead) {
  Bytes stream;
  const std::vector<std::size_t> lens{12, 1, 255, 256, 4096, 29};
  for (std::size_t n : lens) {
    const Bytes f = framed(n, static_cast<std::uint8_t>(n));
    stream.insert(stream.end(), f.begin(), f.end());
  }
  Kind rejected = Kind::frame;
  const auto frames = drip(stream, max_tcp_query_frame, &rejected);
  CHECK(rejected == Kind::need_more);
  CHECK_EQUAL(lens.size(), frames.size());
  for (std::size_t i = 0; i < lens.size(); ++i) CHECK_EQUAL(lens[i], frames[i]);
}

TEST(TcpFraming, RejectionEndsTheStreamAtTheOffendingPrefix) {
  Bytes stream = framed(12);
  const Bytes big{0x10, 0x01};  // 4097
  stream.insert(stream.end(), big.begin(), big.end());
  const Bytes after = framed(12);
  stream.insert(stream.end(), after.begin(), after.end());
  Kind rejected = Kind::need_more;
  const auto frames = drip(stream, max_tcp_query_frame, &rejected);
  CHECK(rejected == Kind::too_large);
  CHECK_EQUAL(1u, frames.size());

  Bytes zero = framed(5);
  zero.push_back(0);
  zero.push_back(0);
  CHECK_EQUAL(1u, drip(zero, max_tcp_query_frame, &rejected).size());
  CHECK(rejected == Kind::zero_length);
}

TEST(TcpFraming, KindsAreDescribed) {
  STRCMP_EQUAL("frame too large", nxdns::server::describe(Kind::too_large));
  STRCMP_EQUAL("zero-length frame", nxdns::server::describe(Kind::zero_length));
  STRCMP_EQUAL("frame", nxdns::server::describe(Kind::frame));
  STRCMP_EQUAL("need more bytes", nxdns::server::describe(Kind::need_more));
}
