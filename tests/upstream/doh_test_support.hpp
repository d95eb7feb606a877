#pragma once
// Out-of-process servers for the DoH tests: the repository's fixtures
// (nxdns-test-pki, nxdns-fixture-doh, nxdns-delay-relay) and, for a real
// HTTP/2 path, Debian's nghttpx in front of the fixture. libmicrohttpd
// speaks HTTP/1.1 only and the test binary links no HTTP/2 server, so these
// run as child processes, every one on loopback, stopped by the test.
//
// Fixtures are found in $NXDNS_FIXTURE_DIR, else in the build tree beside
// this test binary (<build>/tests/fixtures); nghttpx on PATH or in
// /usr/sbin. Header-only: the upstream test binary is one glob of
// *_test.cpp and needs no build change for this.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/emulation.hpp"

#include "loop/event_handles.hpp"

extern char** environ;

namespace nxdns::test {

// A child process stopped (SIGTERM, then SIGKILL) when this goes away.
class TestProcess {
 public:
  TestProcess() = default;
  TestProcess(const TestProcess&) = delete;
  TestProcess& operator=(const TestProcess&) = delete;
  ~TestProcess() { stop(); }

  // stdout and stderr go to `log_path` (appended). Returns 0 or the
  // posix_spawn error (ENOEXEC: a cross-compiled fixture under qemu-user
  // without binfmt_misc).
  int start(const std::vector<std::string>& argv, const std::string& log_path) {
    stop();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = -1;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return rc;
    pid_ = pid;
    return 0;
  }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  // Exit status, or -1 when it had to be killed or was not running.
  int stop() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 300; ++i) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// A directory that removes itself.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/nxdns-doh-test-XXXXXX";
    if (::mkdtemp(tmpl)) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }

inline std::string fixture_dir() {
  if (const char* d = std::getenv("NXDNS_FIXTURE_DIR"); d && *d) return d;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (exe.parent_path().parent_path() / "fixtures").string();
}

inline std::string fixture_program(const std::string& name) {
  const std::string p = fixture_dir() + "/" + name;
  return executable(p) ? p : std::string();
}

// Cross builds run this test binary under qemu-user; the fixtures are
// cross-compiled too and need the same emulator when no binfmt_misc handler
// exists. $NXDNS_EMULATOR (e.g. "qemu-aarch64 -L /usr/aarch64-linux-gnu",
// as the integration tests get it) is put in front of a fixture's argv.
inline std::vector<std::string> with_emulator(std::vector<std::string> argv) {
  const char* emu = std::getenv("NXDNS_EMULATOR");
  if (!emu || !*emu) return argv;
  std::vector<std::string> out;
  std::stringstream ss(emu);
  std::string word;
  while (ss >> word) out.push_back(word);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

inline std::string find_nghttpx() {
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (executable(dir + "/nghttpx")) return dir + "/nghttpx";
    }
  }
  for (const char* p : {"/usr/sbin/nghttpx", "/usr/local/sbin/nghttpx"}) {
    if (executable(p)) return p;
  }
  return {};
}

// Polls `path` until it holds a port number (max `ms`).
inline std::optional<std::uint16_t> wait_port_file(const std::string& path, int ms = 5000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    const std::string s = read_text(path);
    if (!s.empty() && s.back() == '\n') {
      const unsigned long v = std::strtoul(s.c_str(), nullptr, 10);
      if (v > 0 && v < 65536) return static_cast<std::uint16_t>(v);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

// A loopback port with nothing listening on it right now.
inline std::uint16_t free_loopback_port() {
  loop::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return 0;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

inline bool can_connect(std::uint16_t port) {
  loop::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(port);
  return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
}

inline bool wait_listening(std::uint16_t port, int ms = 5000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (can_connect(port)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// One counter from the fixture's stats JSON ({"name":N,...}); -1 if absent.
inline long long json_counter(const std::string& json, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const auto at = json.find(key);
  if (at == std::string::npos) return -1;
  return std::strtoll(json.c_str() + at + key.size(), nullptr, 10);
}

}  // namespace nxdns::test
