#include "cli/http_get.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>

#include "loop/event_handles.hpp"
#include "web/action_guard.hpp"

namespace nxdns::cli {

namespace {
std::optional<HttpResponse> http_request(const char* method, const net::Endpoint& server, const std::string& path,
                                         int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  loop::UniqueFd fd(::socket(server.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return std::nullopt;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd.get(), server.sa(), server.len) != 0) return std::nullopt;
  // An operator action must carry the header a web page cannot send
  // without a CORS preflight (web/action_guard.hpp).
  const std::string body_len = std::string(method) == "POST"
                                   ? std::string("Content-Length: 0\r\n") + web::action_request_header + ": 1\r\n"
                                   : "";
  const std::string req = std::string(method) + " " + path + " HTTP/1.0\r\nHost: " + server.to_string() +
                          "\r\nConnection: close\r\n" + body_len + "\r\n";
  if (::send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return std::nullopt;
  std::string raw;
  char buf[8192];
  while (Clock::now() < deadline) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) return std::nullopt;
    raw.append(buf, static_cast<std::size_t>(n));
  }
  const auto sp = raw.find(' ');
  const auto hdr_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/", 0) != 0 || sp == std::string::npos || hdr_end == std::string::npos) return std::nullopt;
  HttpResponse r;
  r.status = std::atoi(raw.c_str() + sp + 1);
  r.body = raw.substr(hdr_end + 4);
  return r;
}
}  // namespace

std::optional<HttpResponse> http_get(const net::Endpoint& server, const std::string& path, int timeout_ms) {
  return http_request("GET", server, path, timeout_ms);
}

std::optional<HttpResponse> http_post(const net::Endpoint& server, const std::string& path, int timeout_ms) {
  return http_request("POST", server, path, timeout_ms);
}

std::string url_encode(std::string_view v) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xF]);
    }
  }
  return out;
}

}  // namespace nxdns::cli
