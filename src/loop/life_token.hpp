#pragma once
// How a callback knows that the object it was queued for still exists: the
// one liveness idiom of nxdns.
#include <cstdint>
#include <memory>

namespace nxdns::loop {

// A callback queued on the loop (a zero-delay timer, a transport's
// completion, the engine's reply to a listener, a resolver's answer) may run
// after the object that queued it was destroyed, or after that object closed
// the thing the callback belongs to (a connection) and opened another in its
// place. Capturing `this` alone would then act on freed memory, or on the
// wrong connection. The object holds a LifeToken; the callback captures a
// Watch taken when it was queued and acts only while the watch is alive. So
// does a handler that calls out (to a listener, to a completion) and may
// find its object gone when the call returns.
//
// revoke() ends the current term: watches taken before it are dead from
// then on, watches taken after it watch the new term. An object reused for
// one connection after another revokes when each connection closes.
// Destroying the token ends its last term.
//
// Records that an owner keeps in a table and that its callbacks reach by id
// (the engine's client queries, the pool's requests, the cache's flights, a
// transport's exchanges) need no token: the owner outlives those callbacks,
// and a record that finished or was cancelled is simply not found.
//
// One thread: a token and its watches belong to the loop's thread.
class LifeToken {
 public:
  class Watch {
   public:
    Watch() = default;  // watches nothing: never alive
    bool alive() const noexcept { return current_ && *current_ == term_; }

   private:
    friend class LifeToken;
    Watch(std::shared_ptr<const std::uint64_t> current, std::uint64_t term) noexcept
        : current_(std::move(current)), term_(term) {}
    std::shared_ptr<const std::uint64_t> current_;
    std::uint64_t term_ = 0;
  };

  // The one allocation, here: watch() and revoke() allocate nothing and
  // cannot fail, so a close path may call them.
  LifeToken() : current_(std::make_shared<std::uint64_t>(0)) {}
  ~LifeToken() { revoke(); }
  LifeToken(const LifeToken&) = delete;
  LifeToken& operator=(const LifeToken&) = delete;

  Watch watch() const noexcept { return Watch(current_, *current_); }
  void revoke() noexcept { ++*current_; }

 private:
  // The term now; watches share it, so it outlives the token for them.
  std::shared_ptr<std::uint64_t> current_;
};

}  // namespace nxdns::loop
