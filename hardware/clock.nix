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
#     Enforced: an assertion rejects a name in networking.timeServers,
#     services.timesyncd.servers or .fallbackServers (and a null fallback
#     list, which means systemd's compiled-in list of names).
#  4. A bounded wait: nxdns starts after the first NTP sync, or after
#     `nxdns.pi.clockWaitSec` seconds without one (NTP blocked, servers
#     down), whichever comes first. The wait starts when the network is
#     online, because timesyncd sends nothing before that
#     (manager_network_event_handler in systemd's timesyncd-manager.c), and
#     by default covers one pass over the server list: timesyncd gives a
#     silent server 10 s (TIMEOUT_USEC) before it tries the next, and after
#     the last one it waits 30 s or more (its poll interval, from 32 s up,
#     or ConnectionRetrySec=) before a second pass. A shorter wait is
#     warned about. After the wait nxdns starts anyway, and a certificate
#     rejected because the clock is behind its notBefore is reported as such
#     (log, /api/health, nxdns_upstream_tls_clock_behind_total) and verified
#     again as soon as the clock steps (the daemon's clock-step watcher).
{
  config,
  lib,
  ...
}:

let
  inherit (lib) mkOption mkIf types;
  cfg = config.nxdns.pi;
  helpers = import ../nixos-module/lib.nix { inherit lib; };

  # timesyncd-manager.c: TIMEOUT_USEC, how long one server may stay silent.
  serverTimeoutSec = 10;
  onePassSec = serverTimeoutSec * builtins.length cfg.timeServers;

  # Every list timesyncd reads, with the option it came from; null lists
  # are not read (except the fallback, checked on its own below).
  timeLists = lib.filterAttrs (_: v: v != null) {
    "networking.timeServers" = config.networking.timeServers;
    "services.timesyncd.servers" = config.services.timesyncd.servers;
    "services.timesyncd.fallbackServers" = config.services.timesyncd.fallbackServers;
  };
  nameAssertions = lib.mapAttrsToList (
    option: servers:
    let
      names = builtins.filter (s: !helpers.isIP s) servers;
    in
    {
      assertion = names == [ ];
      message = "${option}: ${builtins.toJSON names} must be IP addresses on an nxdns appliance without RTC (hardware/clock.nix): resolving an NTP server name needs DNS, DNS here is nxdns, and nxdns needs a set clock to verify certificates.";
    }
  ) timeLists;
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
      default = onePassSec + 5;
      defaultText = "10 s per entry of timeServers, + 5 s";
      description = ''
        Longest time nxdns waits for the first NTP synchronisation, counted
        from network-online, before it starts anyway. The default lets
        systemd-timesyncd try every server once (it gives each 10 s). 0
        disables the wait.
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

    assertions = mkIf config.services.timesyncd.enable (
      nameAssertions
      ++ [
        {
          assertion = config.services.timesyncd.fallbackServers != null;
          message = "services.timesyncd.fallbackServers: null would make timesyncd fall back to systemd's compiled-in servers, which are names (see hardware/clock.nix); give IP addresses or [ ].";
        }
      ]
    );
    warnings = lib.optional (cfg.clockWaitSec > 0 && cfg.clockWaitSec < onePassSec) ''
      nxdns.pi.clockWaitSec = ${toString cfg.clockWaitSec} is shorter than one pass of
      systemd-timesyncd over nxdns.pi.timeServers (${toString onePassSec} s: 10 s per server);
      nxdns may start before the servers further down the list were tried.
    '';

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
      # timesyncd sends its first request when the network is online; a
      # wait counted from earlier could end before any server was asked.
      after = [
        "systemd-timesyncd.service"
        "network-online.target"
      ];
      wants = [
        "time-sync.target"
        "network-online.target"
      ];
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
        echo "no NTP synchronisation within ${toString cfg.clockWaitSec} s of network-online; starting nxdns anyway (certificates newer than the clock fail verification, reported as clock-behind, until timesyncd sets it)"
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
