#include "cli/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace nxdns::cli {

bool ChildProcess::start(const std::vector<std::string>& argv, const std::string& log_path, std::string* why) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const int rc = posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    pid_ = -1;
    *why = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return false;
  }
  return true;
}

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int ChildProcess::stop(int grace_ms) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int st = 0;
  for (int waited = 0; waited < grace_ms; waited += 10) {
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &st, 0);
  pid_ = -1;
  return -1;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return buf;
}

std::string find_helper_program(const std::string& name) {
  auto executable = [](const std::string& p) { return ::access(p.c_str(), X_OK) == 0; };
  if (const char* dir = std::getenv("NXDNS_FIXTURE_DIR"); dir && *dir) {
    const std::string p = std::string(dir) + "/" + name;
    return executable(p) ? p : std::string();
  }
  std::string exe = self_exe();
  const std::string exe_dir = exe.substr(0, exe.rfind('/'));
  for (const std::string& cand : {exe_dir + "/../libexec/nxdns/" + name, exe_dir + "/../../tests/fixtures/" + name}) {
    if (executable(cand)) return cand;
  }
  return {};
}

}  // namespace nxdns::cli
