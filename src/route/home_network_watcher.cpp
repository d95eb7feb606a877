// Following the home network as it changes: a DHCP lease renewed with a new
// router, a Wi-Fi that came up after nxdns started, a cable moved to another
// LAN. The kernel announces route and address changes on rtnetlink; the
// messages only say "look again", the reading itself is
// discover_home_network's, so what is followed is exactly what a fresh
// start would find.
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "log/log.hpp"
#include "loop/event_handles.hpp"
#include "route/home_network.hpp"

namespace nxdns::route {

struct HomeNetworkWatcher::Impl {
  Impl(HomeNetworkWatcher& owner, event_base* base, loop::Scheduler& sched,
       std::function<void(const HomeNetwork&)> changed, Discover discover)
      : owner(owner), base(base), changed(std::move(changed)), discover(std::move(discover)), timer(sched) {}

  // Opens and subscribes the socket; false (and nothing held) when the
  // kernel or the sandbox refuses.
  bool open_netlink() {
    loop::UniqueFd s(socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!s) return fail_netlink("socket");
    sockaddr_nl sa{};
    sa.nl_family = AF_NETLINK;
    // IPv4 routes for the gateway; both address families for the subnets
    // whose reverse zones go to the router; links, because an interface set
    // down takes its IPv4 routes with it without a word on the route group
    // (the kernel flushes them unannounced), and its addresses stop
    // counting. Link messages also come with Wi-Fi scans: one look a
    // second at most, whatever their number.
    sa.nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_LINK;
    if (bind(s.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) return fail_netlink("bind");
    loop::EventPtr ev(event_new(base, s.get(), EV_READ | EV_PERSIST, &Impl::on_readable, this));
    if (!ev || event_add(ev.get(), nullptr) != 0) {
      log::warn("home network: cannot watch the netlink socket (libevent); re-reading every minute");
      return false;
    }
    fd = std::move(s);
    readable = std::move(ev);
    return true;
  }

  bool fail_netlink(const char* what) {
    log::warn("home network: netlink ", what, ": ", std::strerror(errno), "; re-reading every minute");
    return false;
  }

  void poll() {
    timer.arm(poll_period, [this] { poll(); });
    rediscover();
  }

  void start_polling() {
    readable.reset();
    fd.reset();
    timer.arm(poll_period, [this] { poll(); });
  }

  static void on_readable(evutil_socket_t, short, void* arg) { static_cast<Impl*>(arg)->drain(); }

  // Reads until the socket is empty: a message left behind would wake the
  // loop again at once, and the contents do not matter, only that something
  // changed. Settling starts at the first message of a burst and is not
  // pushed back by later ones, so a network that keeps changing is still
  // re-read once a second.
  void drain() {
    // NLMSG_GOODSIZE: the largest message the kernel sends here. A longer
    // one would only be truncated, which reading nothing of it allows.
    char buf[8192];
    bool seen = false;
    for (;;) {
      const ssize_t n = recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n >= 0) {
        seen = true;
        continue;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == ENOBUFS) {
        // The receive buffer overflowed and the kernel dropped messages:
        // which ones is unknown, so the answer is to look again. The socket
        // stays subscribed and goes on delivering.
        ++overflows;
        seen = true;
        continue;
      }
      log::warn("home network: netlink recv: ", std::strerror(errno), "; re-reading every minute");
      start_polling();
      rediscover();
      return;
    }
    if (seen && !timer.armed()) timer.arm(settle_delay, [this] { rediscover(); });
  }

  void rediscover() {
    HomeNetwork now = discover();
    if (now == owner.current_) return;
    owner.current_ = std::move(now);
    if (changed) changed(owner.current_);
  }

  HomeNetworkWatcher& owner;
  event_base* base;
  std::function<void(const HomeNetwork&)> changed;
  Discover discover;
  std::uint64_t overflows = 0;
  // The event goes before the socket it watches.
  loop::UniqueFd fd;
  loop::EventPtr readable;
  loop::Timer timer;  // the settling delay, or the poll period
};

HomeNetworkWatcher::HomeNetworkWatcher(event_base* base, loop::Scheduler& sched, HomeNetwork initial,
                                       std::function<void(const HomeNetwork&)> changed)
    : HomeNetworkWatcher(base, sched, std::move(initial), std::move(changed), &discover_home_network) {}

HomeNetworkWatcher::HomeNetworkWatcher(event_base* base, loop::Scheduler& sched, HomeNetwork initial,
                                       std::function<void(const HomeNetwork&)> changed, Discover discover,
                                       Follow follow)
    : impl_(std::make_unique<Impl>(*this, base, sched, std::move(changed), std::move(discover))),
      current_(std::move(initial)) {
  if (follow == Follow::netlink && impl_->open_netlink()) {
    // A change between the caller's discovery and the subscription above
    // announced itself to nobody: one look after settling catches it.
    impl_->timer.arm(settle_delay, [impl = impl_.get()] { impl->rediscover(); });
  } else {
    impl_->start_polling();
  }
}

HomeNetworkWatcher::~HomeNetworkWatcher() = default;

bool HomeNetworkWatcher::follows_netlink() const { return static_cast<bool>(impl_->fd); }

std::uint64_t HomeNetworkWatcher::overflows() const { return impl_->overflows; }

}  // namespace nxdns::route
