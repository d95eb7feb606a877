#pragma once
// An HTTP/1.0 client for tests, driven by the same libevent loop as the
// server under test (no threads: CppUTest's leak detector is not
// thread-safe, and a single loop is what the daemon runs anyway). It sends
// a raw request, reads until the server closes, and splits the response.
#include <event2/event.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>

#include "loop/event_handles.hpp"
#include "net/endpoint.hpp"

namespace nxdns::test {

class LoopHttpClient {
 public:
  LoopHttpClient(event_base* base, const net::Endpoint& server, std::string request) : request_(std::move(request)) {
    fd_.reset(::socket(server.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd_) {
      failed_ = true;
      return;
    }
    if (::connect(fd_.get(), server.sa(), server.len) != 0 && errno != EINPROGRESS) {
      failed_ = true;
      return;
    }
    ev_.reset(event_new(base, fd_.get(), EV_READ | EV_WRITE | EV_PERSIST, &LoopHttpClient::on_event, this));
    event_add(ev_.get(), nullptr);
    started_ = std::chrono::steady_clock::now();
  }

  bool done() const { return done_ || failed_; }
  bool failed() const { return failed_; }
  const std::string& raw() const { return raw_; }
  double elapsed_ms() const { return elapsed_ms_; }

  int status() const {
    const auto sp = raw_.find(' ');
    return raw_.rfind("HTTP/", 0) == 0 && sp != std::string::npos ? std::atoi(raw_.c_str() + sp + 1) : 0;
  }
  std::string headers() const {
    const auto end = raw_.find("\r\n\r\n");
    return end == std::string::npos ? raw_ : raw_.substr(0, end + 2);
  }
  // Case-insensitive header lookup; "" when absent.
  std::string header(const std::string& name) const {
    const std::string h = headers();
    std::size_t pos = 0;
    while ((pos = h.find("\r\n", pos)) != std::string::npos) {
      pos += 2;
      const auto colon = h.find(':', pos);
      const auto eol = h.find("\r\n", pos);
      if (colon == std::string::npos || eol == std::string::npos || colon > eol) continue;
      std::string k = h.substr(pos, colon - pos);
      if (k.size() == name.size() && ::strncasecmp(k.c_str(), name.c_str(), k.size()) == 0) {
        std::string v = h.substr(colon + 1, eol - colon - 1);
        while (!v.empty() && v.front() == ' ') v.erase(v.begin());
        return v;
      }
    }
    return "";
  }
  std::string body() const {
    const auto end = raw_.find("\r\n\r\n");
    return end == std::string::npos ? "" : raw_.substr(end + 4);
  }

 private:
  static void on_event(evutil_socket_t, short what, void* arg) {
    auto* self = static_cast<LoopHttpClient*>(arg);
    if ((what & EV_WRITE) && self->sent_ < self->request_.size()) {
      const ssize_t n = ::send(self->fd_.get(), self->request_.data() + self->sent_, self->request_.size() - self->sent_,
                               MSG_NOSIGNAL);
      if (n > 0) self->sent_ += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN) return self->finish(true);
      if (self->sent_ == self->request_.size()) {
        // Only reads from now on.
        event_del(self->ev_.get());
        event_assign(self->ev_.get(), event_get_base(self->ev_.get()), self->fd_.get(), EV_READ | EV_PERSIST,
                     &LoopHttpClient::on_event, self);
        event_add(self->ev_.get(), nullptr);
      }
    }
    if (what & EV_READ) {
      char buf[16384];
      for (;;) {
        const ssize_t n = ::recv(self->fd_.get(), buf, sizeof buf, 0);
        if (n > 0) {
          self->raw_.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0) return self->finish(false);
        if (errno == EAGAIN) return;
        return self->finish(!self->raw_.empty() ? false : true);
      }
    }
  }
  void finish(bool failed) {
    ev_.reset();
    fd_.reset();
    failed_ = failed;
    done_ = true;
    elapsed_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
  }

  std::string request_;
  std::size_t sent_ = 0;
  std::string raw_;
  loop::UniqueFd fd_;
  loop::EventPtr ev_;
  bool done_ = false, failed_ = false;
  std::chrono::steady_clock::time_point started_{};
  double elapsed_ms_ = 0;
};

// The test servers listen on loopback, where "localhost" is one of their
// own names (web/host_check.hpp).
inline std::string get_request(const std::string& path, const std::string& method = "GET",
                               const std::string& host = "localhost") {
  return method + " " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n";
}

}  // namespace nxdns::test
