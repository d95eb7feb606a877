#pragma once
// RAII owners for libevent handles. Every C handle in nxdns is owned by one of
// these so that teardown order is the reverse of construction and a partially
// built component releases exactly what it acquired.
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include <memory>

namespace nxdns::loop {

struct EventBaseDeleter {
  void operator()(event_base* b) const noexcept { event_base_free(b); }
};
struct EventDeleter {
  void operator()(event* e) const noexcept { event_free(e); }
};
struct BuffereventDeleter {
  void operator()(bufferevent* b) const noexcept { bufferevent_free(b); }
};
struct EvbufferDeleter {
  void operator()(evbuffer* b) const noexcept { evbuffer_free(b); }
};

using EventBasePtr = std::unique_ptr<event_base, EventBaseDeleter>;
using EventPtr = std::unique_ptr<event, EventDeleter>;
using BuffereventPtr = std::unique_ptr<bufferevent, BuffereventDeleter>;
using EvbufferPtr = std::unique_ptr<evbuffer, EvbufferDeleter>;

// A file descriptor that closes itself.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace nxdns::loop
