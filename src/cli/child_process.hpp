#pragma once
// A child process owned by the demo: started with posix_spawn, its output
// sent to a log file, and stopped (SIGTERM, then SIGKILL) when the owner
// goes away, whichever way the demo exits.
#include <sys/types.h>

#include <string>
#include <vector>

namespace nxdns::cli {

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
  ~ChildProcess() { stop(); }

  // argv[0] is the program path. Returns false and sets `why` on failure.
  bool start(const std::vector<std::string>& argv, const std::string& log_path, std::string* why);
  bool running();
  // SIGTERM, wait up to `grace_ms`, then SIGKILL. Returns the exit status
  // (or -1 when it had to be killed / was not running).
  int stop(int grace_ms = 3000);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// Directory of the running executable (/proc/self/exe).
std::string self_exe();
// Finds one of nxdns's helper programs (the test fixtures the demo uses):
// $NXDNS_FIXTURE_DIR, then <exe>/../libexec/nxdns (installed), then the
// build tree's tests/fixtures. Empty when not found.
std::string find_helper_program(const std::string& name);

}  // namespace nxdns::cli
