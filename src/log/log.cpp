#include "log/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace nxdns::log {
namespace {

Level g_level = Level::info;
Sink g_sink = nullptr;
void* g_sink_ctx = nullptr;

// journald sets JOURNAL_STREAM for services whose stderr it collects.
bool under_journald() {
  static const bool v = std::getenv("JOURNAL_STREAM") != nullptr;
  return v;
}

int syslog_priority(Level l) {
  switch (l) {
    case Level::debug: return 7;
    case Level::info: return 6;
    case Level::warn: return 4;
    case Level::error: return 3;
  }
  return 6;
}

const char* word(Level l) {
  switch (l) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warn: return "warn";
    case Level::error: return "error";
  }
  return "info";
}

}  // namespace

void set_level(Level l) { g_level = l; }
Level level() { return g_level; }
bool enabled(Level l) { return static_cast<int>(l) >= static_cast<int>(g_level); }

void set_sink(Sink s, void* ctx) {
  g_sink = s;
  g_sink_ctx = ctx;
}

void write(Level l, std::string_view msg) {
  if (g_sink) {
    g_sink(l, msg, g_sink_ctx);
    return;
  }
  if (static_cast<int>(l) < static_cast<int>(g_level)) return;
  if (under_journald()) {
    std::fprintf(stderr, "<%d>%.*s\n", syslog_priority(l), static_cast<int>(msg.size()), msg.data());
    return;
  }
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm tmv{};
  gmtime_r(&ts.tv_sec, &tmv);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tmv);
  std::fprintf(stderr, "%s.%03ldZ %-5s %.*s\n", stamp, ts.tv_nsec / 1000000, word(l),
               static_cast<int>(msg.size()), msg.data());
}

}  // namespace nxdns::log
