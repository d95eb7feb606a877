#pragma once
// A DNS message that a stream transport can frame: TCP to clients (RFC 7766
// §8) and DoT to upstreams (RFC 7858 §3.3) both precede each message with a
// two-octet length (RFC 1035 §4.2.2). The framers take the prefix only from
// this type, and its one constructor refuses a message the prefix cannot
// state: 65,536 octets would go out as length 0 and desynchronise every
// exchange sharing the stream, so such a message cannot exist here at all.
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "dns/message.hpp"

namespace nxdns::dns {

class StreamMessage {
 public:
  // nullopt for an empty message or one over max_stream_message octets.
  static std::optional<StreamMessage> from(Bytes message) {
    if (message.empty() || message.size() > max_stream_message) return std::nullopt;
    return StreamMessage(std::move(message));
  }

  std::array<std::uint8_t, 2> prefix() const {
    return {static_cast<std::uint8_t>(msg_.size() >> 8), static_cast<std::uint8_t>(msg_.size() & 0xFF)};
  }
  ByteView message() const { return msg_; }
  std::size_t size() const { return msg_.size(); }
  // The message without its frame (e.g. kept to validate the response).
  Bytes release() && { return std::move(msg_); }

 private:
  explicit StreamMessage(Bytes m) : msg_(std::move(m)) {}
  Bytes msg_;
};

}  // namespace nxdns::dns
