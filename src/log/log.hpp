#pragma once
// Leveled logging to stderr. Under systemd (JOURNAL_STREAM set) lines carry a
// <N> syslog priority prefix and no timestamp (journald adds its own);
// elsewhere a level word and a wall-clock timestamp.
//
// GCC 12 (Debian 12) has no <format>, so messages are built with cat().
#include <sstream>
#include <string>
#include <string_view>

namespace nxdns::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

void set_level(Level l);
Level level();
bool enabled(Level l);
void write(Level l, std::string_view msg);
// Tests capture lines through a sink; nullptr restores stderr.
using Sink = void (*)(Level, std::string_view, void* ctx);
void set_sink(Sink s, void* ctx);

template <class... A>
std::string cat(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

template <class... A>
void debug(const A&... a) {
  if (enabled(Level::debug)) write(Level::debug, cat(a...));
}
template <class... A>
void info(const A&... a) {
  if (enabled(Level::info)) write(Level::info, cat(a...));
}
template <class... A>
void warn(const A&... a) {
  if (enabled(Level::warn)) write(Level::warn, cat(a...));
}
template <class... A>
void error(const A&... a) {
  if (enabled(Level::error)) write(Level::error, cat(a...));
}

}  // namespace nxdns::log
