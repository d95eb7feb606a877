# A Raspberry Pi has no battery-backed real-time clock. It boots with the
# clock wherever the software puts it, DoT certificate checks fail while that
# is before a certificate's notBefore, and the usual way to set the clock
# (NTP to *.pool.ntp.org) needs DNS, which on this appliance is nxdns, which
# needs a valid certificate check. The loop is cut in four places:
#
#  1. A floor: at boot, before anything looks at the time, the clock is raised
#     to `nxdns.pi.clockFloor` (the flake passes the commit time of the tree
#     the image was built from) if it is earlier. A fresh image never starts
#     in 1970.
#  2. A persisted clock (the fake-hwclock idea), done by systemd-timesyncd
#     itself: it saves the time to /var/lib/systemd/timesync/clock every
#     minute and at shutdown, and at start moves the clock forward to that
#     file's time. time-set.target is reached after that; nxdns is ordered
#     after it (in the module). After a normal reboot the clock is right to a
#     few seconds; after power loss, behind by the time the Pi was off.
#  3. NTP without DNS: the time servers are IP addresses, so the first sync
#     needs neither nxdns nor any other resolver.
#  4. A bounded wait: nxdns starts after the first NTP sync, or after
#     `nxdns.pi.clockWaitSec` seconds without one (no uplink yet, NTP
#     blocked), whichever comes first. It then starts anyway: certificate
#     checks that fail for a wrong clock fail only until timesyncd sets it,
#     and the upstream health backoff retries on its own.
{
  config,
  lib,
  ...
}:

let
  inherit (lib) mkOption mkIf types;
  cfg = config.nxdns.pi;
in
{
  options.nxdns.pi = {
    timeServers = mkOption {
      type = types.listOf types.str;
      # Cloudflare (anycast, no leap smear) and NIST Gaithersburg. Addresses,
      # not names: see 3. above. Prefer the router's NTP service if it has one.
      default = [
        "162.159.200.1"
        "162.159.200.123"
        "129.6.15.28"
        "129.6.15.29"
      ];
      description = ''
        NTP servers for systemd-timesyncd, as IP addresses so that setting
        the clock needs no DNS. Becomes `networking.timeServers`.
      '';
    };

    clockWaitSec = mkOption {
      type = types.ints.between 0 600;
      default = 30;
      description = ''
        Longest time nxdns waits at boot for the first NTP synchronisation
        before it starts anyway. 0 disables the wait.
      '';
    };

    clockFloor = mkOption {
      type = types.ints.unsigned;
      default = 0;
      description = ''
        Unix time the clock is raised to early at boot when it is earlier.
        0 disables the floor. The flake sets the commit time of its tree.
      '';
    };
  };

  config = {
    networking.timeServers = lib.mkDefault cfg.timeServers;
    services.timesyncd.enable = lib.mkDefault true;

    systemd.services.nxdns-clock-floor = mkIf (cfg.clockFloor > 0) {
      description = "Raise the clock to the image's floor (no RTC)";
      wantedBy = [ "sysinit.target" ];
      before = [
        "sysinit.target"
        "time-set.target"
        "systemd-timesyncd.service"
        "shutdown.target"
      ];
      conflicts = [ "shutdown.target" ];
      unitConfig.DefaultDependencies = false;
      serviceConfig = {
        Type = "oneshot";
        RemainAfterExit = true;
      };
      script = ''
        floor=${toString cfg.clockFloor}
        now=$(date +%s)
        if [ "$now" -lt "$floor" ]; then
          date -u -s "@$floor" >/dev/null
          echo "clock was $now, raised to the image floor $floor; NTP will correct it"
        fi
      '';
    };

    systemd.services.nxdns-time-wait = mkIf (cfg.clockWaitSec > 0 && config.services.timesyncd.enable) {
      description = "Wait (bounded) for the first NTP synchronisation before nxdns";
      after = [ "systemd-timesyncd.service" ];
      wants = [ "time-sync.target" ];
      before = [ "time-sync.target" ];
      serviceConfig = {
        Type = "oneshot";
        RemainAfterExit = true;
        TimeoutStartSec = "${toString (cfg.clockWaitSec + 15)}s";
      };
      # timesyncd touches this file on every successful synchronisation
      # (systemd-timesyncd.service(8)).
      script = ''
        for _ in $(seq ${toString cfg.clockWaitSec}); do
          if [ -e /run/systemd/timesync/synchronized ]; then exit 0; fi
          sleep 1
        done
        echo "no NTP synchronisation within ${toString cfg.clockWaitSec} s; starting nxdns anyway (DoT certificate checks fail until the clock is set)"
      '';
    };

    systemd.services.nxdns = mkIf (config.services.nxdns.enable && cfg.clockWaitSec > 0 && config.services.timesyncd.enable) {
      wants = [ "nxdns-time-wait.service" ];
      after = [
        "nxdns-time-wait.service"
        "time-sync.target"
      ];
    };
  };
}
