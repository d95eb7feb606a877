#include "cli/burst.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "dns/message.hpp"
#include "loop/event_handles.hpp"

namespace nxdns::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - t0).count();
}

struct Probe {
  loop::UniqueFd fd;
  dns::Bytes query;
  std::uint16_t id = 0;
  QueryTiming timing;
};

std::string random_label(std::mt19937_64& rng) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 12; ++i) s += hex[rng() % 16];
  return s;
}

bool open_probe(const net::Endpoint& server, const std::string& name, std::mt19937_64& rng, Probe& p,
                std::string* error) {
  p.fd = loop::UniqueFd(::socket(server.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!p.fd) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  if (::connect(p.fd.get(), server.sa(), server.len) != 0) {
    *error = std::string("connect ") + server.to_string() + ": " + std::strerror(errno);
    return false;
  }
  auto wire = dns::name_from_text(name);
  if (!wire) {
    *error = "bad name " + name;
    return false;
  }
  p.id = static_cast<std::uint16_t>(rng());
  p.query = dns::make_query(p.id, *wire, 1, std::uint16_t{1232});
  return true;
}

// Sends every probe at once and collects answers until all are in or the
// timeout passes. Times are relative to t0.
void exchange_all(std::vector<Probe>& probes, int timeout_ms, Clock::time_point t0) {
  for (auto& p : probes) {
    p.timing.sent_ms = ms_since(t0, Clock::now());
    if (::send(p.fd.get(), p.query.data(), p.query.size(), 0) < 0) p.timing.rcode = -2;
  }
  const auto deadline = t0 + std::chrono::milliseconds(timeout_ms);
  std::vector<pollfd> pfds;
  std::uint8_t buf[65536];
  for (;;) {
    pfds.clear();
    std::vector<Probe*> owners;
    for (auto& p : probes) {
      if (p.timing.rcode == -1) {
        pfds.push_back(pollfd{p.fd.get(), POLLIN, 0});
        owners.push_back(&p);
      }
    }
    if (pfds.empty()) return;
    const double left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left <= 0) return;
    const int n = ::poll(pfds.data(), pfds.size(), static_cast<int>(std::ceil(left)));
    if (n < 0 && errno != EINTR) return;
    const auto now = Clock::now();
    for (std::size_t i = 0; i < pfds.size(); ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLERR))) continue;
      const ssize_t got = ::recv(pfds[i].fd, buf, sizeof buf, 0);
      if (got < 0) {
        // ICMP port unreachable: nothing listens there.
        if (errno != EAGAIN && errno != EINTR) owners[i]->timing.rcode = -2;
        continue;
      }
      dns::ByteView reply(buf, static_cast<std::size_t>(got));
      auto q = dns::parse_query(owners[i]->query);
      // Ignore stray datagrams that do not answer our question.
      if (!q.query || dns::validate_response(*q.query, reply) != dns::ResponseError::none) continue;
      owners[i]->timing.done_ms = ms_since(t0, now);
      owners[i]->timing.rcode = reply[3] & 0x0F;
    }
  }
}

const char* rcode_name(int rc) {
  switch (rc) {
    case -2: return "ERROR";
    case -1: return "TIMEOUT";
    case 0: return "NOERROR";
    case 1: return "FORMERR";
    case 2: return "SERVFAIL";
    case 3: return "NXDOMAIN";
    case 4: return "NOTIMP";
    case 5: return "REFUSED";
    default: return "RCODE?";
  }
}

}  // namespace

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double staircase_score(std::vector<double> completion_ms, double single_ms) {
  const std::size_t n = completion_ms.size();
  if (n < 2 || single_ms <= 0) return 0;
  std::sort(completion_ms.begin(), completion_ms.end());
  double mean_x = (static_cast<double>(n) - 1) / 2.0, mean_y = 0;
  for (double y : completion_ms) mean_y += y;
  mean_y /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = static_cast<double>(i) - mean_x;
    sxy += dx * (completion_ms[i] - mean_y);
    sxx += dx * dx;
  }
  return (sxy / sxx) / single_ms;
}

std::optional<BurstReport> run_burst(const BurstOptions& o, std::string* error) {
  std::mt19937_64 rng(std::random_device{}());
  BurstReport r;
  const std::string run_tag = random_label(rng).substr(0, 6);

  // The ratio's denominator: the median of three sequential warm queries,
  // so one unlucky scheduling blip does not scale the whole verdict.
  auto single = [&]() -> bool {
    std::vector<double> times;
    for (int i = 0; i < 3; ++i) {
      std::vector<Probe> one(1);
      if (!open_probe(o.server, "single-" + random_label(rng) + "." + o.zone, rng, one[0], error)) return false;
      const auto t0 = Clock::now();
      exchange_all(one, o.timeout_ms, t0);
      if (one[0].timing.rcode != 0 && one[0].timing.rcode != 3) {
        r.single_rcode = one[0].timing.rcode;
        r.single_ms = one[0].timing.done_ms;
        return true;  // judged as a failed single
      }
      r.single_rcode = one[0].timing.rcode;
      times.push_back(one[0].timing.done_ms);
    }
    r.single_ms = percentile(times, 0.5);
    return true;
  };
  // A warm measurement needs a session to exist: the single query goes
  // first (and is what the ratio divides by). For a cold burst the burst
  // goes first and the single query after it, on the now-warm path.
  if (!o.cold && !single()) return std::nullopt;

  std::vector<Probe> probes(static_cast<std::size_t>(o.names));
  for (int i = 0; i < o.names; ++i) {
    const std::string name = run_tag + "-" + std::to_string(i) + "-" + random_label(rng) + "." + o.zone;
    if (!open_probe(o.server, name, rng, probes[static_cast<std::size_t>(i)], error)) return std::nullopt;
    probes[static_cast<std::size_t>(i)].timing.index = i;
  }
  const auto t0 = Clock::now();
  exchange_all(probes, o.timeout_ms, t0);

  if (o.cold && !single()) return std::nullopt;

  std::vector<double> done;
  for (auto& p : probes) {
    r.queries.push_back(p.timing);
    if (p.timing.rcode == -1) {
      ++r.timeouts;
      r.wall_ms = std::max(r.wall_ms, static_cast<double>(o.timeout_ms));
      continue;
    }
    if (p.timing.rcode == 2) ++r.servfail;
    else if (p.timing.rcode != 0 && p.timing.rcode != 3) ++r.other_errors;
    if (p.timing.done_ms >= 0) {
      done.push_back(p.timing.done_ms);
      r.wall_ms = std::max(r.wall_ms, p.timing.done_ms);
    }
  }
  r.p50_ms = percentile(done, 0.5);
  r.max_ms = done.empty() ? 0 : *std::max_element(done.begin(), done.end());
  r.ratio = r.single_ms > 0 ? r.wall_ms / r.single_ms : 0;
  r.staircase = staircase_score(done, r.single_ms);
  return r;
}

std::string render_timeline(const BurstReport& r, int width) {
  std::ostringstream os;
  std::vector<QueryTiming> q = r.queries;
  std::sort(q.begin(), q.end(), [](const QueryTiming& a, const QueryTiming& b) {
    const double da = a.done_ms < 0 ? 1e18 : a.done_ms, db = b.done_ms < 0 ? 1e18 : b.done_ms;
    return da < db;
  });
  const double scale = r.wall_ms > 0 ? width / r.wall_ms : 0;
  for (const auto& t : q) {
    const int start = static_cast<int>(std::lround(t.sent_ms * scale));
    const int end = t.done_ms < 0 ? width : static_cast<int>(std::lround(t.done_ms * scale));
    std::string bar(static_cast<std::size_t>(width), ' ');
    for (int i = std::max(0, start); i < std::min(width, std::max(end, start + 1)); ++i) bar[static_cast<std::size_t>(i)] = '=';
    char line[160];
    std::snprintf(line, sizeof line, "  q%-3d |%s| %8.1f ms %s\n", t.index, bar.c_str(), t.done_ms < 0 ? 0.0 : t.done_ms,
                  rcode_name(t.rcode));
    os << line;
  }
  return os.str();
}

std::string render_summary(const BurstReport& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "  single %.1f ms (%s) | burst of %zu: wall %.1f ms, p50 %.1f ms, max %.1f ms\n"
                "  ratio wall/single %.2f | staircase %.2f | SERVFAIL %d | timeouts %d | other errors %d\n",
                r.single_ms, rcode_name(r.single_rcode), r.queries.size(), r.wall_ms, r.p50_ms, r.max_ms, r.ratio,
                r.staircase, r.servfail, r.timeouts, r.other_errors);
  return buf;
}

std::string render_json(const BurstReport& r) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(3);
  os << "{\"single_ms\":" << r.single_ms << ",\"single_rcode\":" << r.single_rcode << ",\"names\":" << r.queries.size()
     << ",\"wall_ms\":" << r.wall_ms << ",\"p50_ms\":" << r.p50_ms << ",\"max_ms\":" << r.max_ms
     << ",\"ratio\":" << r.ratio << ",\"staircase\":" << r.staircase << ",\"servfail\":" << r.servfail
     << ",\"timeouts\":" << r.timeouts << ",\"other_errors\":" << r.other_errors << ",\"queries\":[";
  for (std::size_t i = 0; i < r.queries.size(); ++i) {
    const auto& q = r.queries[i];
    os << (i ? "," : "") << "{\"index\":" << q.index << ",\"sent_ms\":" << q.sent_ms << ",\"done_ms\":" << q.done_ms
       << ",\"rcode\":" << q.rcode << "}";
  }
  os << "]}";
  return os.str();
}

Verdict judge(const BurstReport& r, std::optional<double> max_ratio, std::optional<double> max_stair) {
  Verdict v;
  auto fail = [&v](std::string s) {
    v.pass = false;
    v.reasons.push_back(std::move(s));
  };
  char buf[160];
  if (r.servfail) fail(std::to_string(r.servfail) + " SERVFAIL");
  if (r.timeouts) fail(std::to_string(r.timeouts) + " timed out");
  if (r.other_errors) fail(std::to_string(r.other_errors) + " other error answers");
  if (r.single_rcode != 0 && r.single_rcode != 3) fail(std::string("single query got ") + rcode_name(r.single_rcode));
  if (max_ratio && r.ratio > *max_ratio) {
    std::snprintf(buf, sizeof buf, "ratio %.2f > %.2f", r.ratio, *max_ratio);
    fail(buf);
  }
  if (max_stair && r.staircase > *max_stair) {
    std::snprintf(buf, sizeof buf, "staircase %.2f > %.2f", r.staircase, *max_stair);
    fail(buf);
  }
  return v;
}

}  // namespace nxdns::cli
