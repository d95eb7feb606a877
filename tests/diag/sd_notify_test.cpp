// systemd readiness (Type=notify): sd_notify() sends its state string as one
// datagram to $NOTIFY_SOCKET. The test plays systemd: it binds an AF_UNIX
// datagram socket at a temporary path (and an abstract one), points
// NOTIFY_SOCKET at it and reads back what arrived.
#include "app/sd_notify.hpp"

#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "loop/event_handles.hpp"

#include <CppUTest/TestHarness.h>

using namespace nxdns;

namespace {

// Receives one datagram within `ms`; "" when nothing came.
std::string receive(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1) return "";
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

}  // namespace

TEST_GROUP(SdNotify) {
  std::string dir, path;
  loop::UniqueFd fd;
  std::string saved;
  bool had_saved = false;

  void setup() override {
    if (const char* s = ::getenv("NOTIFY_SOCKET")) {
      saved = s;
      had_saved = true;
    }
    char tmpl[] = "/tmp/nxdns-notify-XXXXXX";
    CHECK_TRUE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/notify";
  }
  void teardown() override {
    fd.reset();
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
    if (had_saved) ::setenv("NOTIFY_SOCKET", saved.c_str(), 1);
    else ::unsetenv("NOTIFY_SOCKET");
  }

  // Binds the "systemd" end at `name` ('@' prefix: abstract namespace).
  void bind_at(const std::string& name) {
    fd.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    CHECK_TRUE(static_cast<bool>(fd));
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, name.data(), name.size());
    if (name[0] == '@') sa.sun_path[0] = '\0';
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    CHECK_EQUAL(0, ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), len));
  }
};

TEST(SdNotify, ReadyReachesTheNotifySocket) {
  bind_at(path);
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);
  CHECK_TRUE(app::sd_notify("READY=1"));
  STRCMP_EQUAL("READY=1", receive(fd.get(), 1000).c_str());
  CHECK_TRUE(app::sd_notify("STOPPING=1"));
  STRCMP_EQUAL("STOPPING=1", receive(fd.get(), 1000).c_str());
}

TEST(SdNotify, AbstractSocketNamesWork) {
  const std::string name = "@nxdns-test-notify-" + std::to_string(::getpid());
  bind_at(name);
  ::setenv("NOTIFY_SOCKET", name.c_str(), 1);
  CHECK_TRUE(app::sd_notify("READY=1"));
  STRCMP_EQUAL("READY=1", receive(fd.get(), 1000).c_str());
}

TEST(SdNotify, NoSocketMeansNoOp) {
  ::unsetenv("NOTIFY_SOCKET");
  CHECK_FALSE(app::sd_notify("READY=1"));
  ::setenv("NOTIFY_SOCKET", "", 1);
  CHECK_FALSE(app::sd_notify("READY=1"));
}

TEST(SdNotify, NobodyListeningIsReportedNotFatal) {
  ::setenv("NOTIFY_SOCKET", path.c_str(), 1);  // nothing bound there
  CHECK_FALSE(app::sd_notify("READY=1"));
}
