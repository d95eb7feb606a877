# A Raspberry Pi has no battery-backed real-time clock. It boots with the
# clock wherever the software puts it, DoT certificate checks fail while that
# is before a certificate's notBefore, and the usual way to set the clock
# (NTP to *.pool.ntp.org) needs DNS, which on this appliance is nxdns, which
# needs a valid certificate check. Plain NTP is also unauthenticated: anyone
# on the path can move the clock, and a clock moved back makes an expired
# (or revoked and expired) certificate valid again. The loop is cut, and the
# time authenticated, in five places:
#
#  1. A floor: at boot, before anything looks at the time, the clock is raised
#     to `nxdns.pi.clockFloor` (the flake passes the commit time of the tree
#     the image was built from) if it is earlier. A fresh image never starts
#     in 1970.
#  2. A persisted clock: chronyd -s sets the clock, when it starts, to the
#     time its drift file was last written (chronyd(8)); chrony rewrites that
#     file while it runs and when it stops. After a normal reboot the clock
#     is close; after power loss, behind by the time the Pi was off.
#  3. Authenticated time without DNS: chrony with NTS (RFC 8915) to the
#     servers in `nxdns.pi.ntsServers`. Their names are pinned to addresses
#     in /etc/hosts, so chrony finds them without a resolver, and NTS-KE
#     still verifies each server's certificate against its name (chrony
#     verifies an address only when the certificate lists it, which public
#     NTS servers' certificates do not promise). `authselectmode require`:
#     unauthenticated sources never set the clock. `nocerttimecheck 1`: the
#     first NTS-KE handshake may verify the certificate chain and name without
#     its validity dates, since the clock it would compare them with is the
#     one being set; after the first clock update the dates are checked.
#     Enforced: every chrony server is an address or a pinned name.
#  4. A bounded wait: nxdns starts after chrony's first synchronisation, or
#     after `nxdns.pi.clockWaitSec` seconds without one (NTS blocked, servers
#     down), whichever comes first, counted from network-online. Until then
#     port 53 is closed: the answer cache lives in memory and is empty at
#     boot, so there is nothing to serve that needs no upstream.
#  5. After the wait nxdns starts anyway, and a certificate rejected because
#     the clock is behind its notBefore is reported as such (log,
#     /api/health, nxdns_upstream_certificate_clock_behind) and verified
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

  chronyOn = config.services.chrony.enable;
  pinned = builtins.attrNames cfg.ntsServers;
  unresolvable = builtins.filter (s: !helpers.isIP s && !(builtins.elem s pinned)) config.services.chrony.servers;
  badAddresses = lib.filter (a: !helpers.isIP a) (lib.concatLists (builtins.attrValues cfg.ntsServers));

  # /etc/hosts: address -> names.
  hosts = lib.foldlAttrs (
    acc: name: addresses:
    lib.foldl' (a: address: a // { ${address} = (a.${address} or [ ]) ++ [ name ]; }) acc addresses
  ) { } cfg.ntsServers;
in
{
  options.nxdns.pi = {
    ntsServers = mkOption {
      type = types.attrsOf (types.nonEmptyListOf types.str);
      # Cloudflare's NTS service (anycast; no leap smear), at the two
      # addresses time.cloudflare.com resolves to.
      default = {
        "time.cloudflare.com" = [
          "162.159.200.1"
          "162.159.200.123"
        ];
      };
      example = {
        "nts.netnod.se" = [ "192.0.2.10" ];
      };
      description = ''
        NTS (authenticated NTP) servers: the name their certificate carries,
        mapped to their IP addresses. The names go to /etc/hosts with those
        addresses, so chrony reaches them without DNS and verifies each
        certificate against the name. Check a server's addresses when adding
        it; a stale address only makes that server unreachable.
      '';
    };

    clockWaitSec = mkOption {
      type = types.ints.between 0 600;
      # NTS-KE (TCP and TLS: two or three round trips) and the four iburst
      # requests chrony sends 2 s apart before the first update take under
      # 10 s on a working path; 30 s leaves room for a retried handshake.
      default = 30;
      description = ''
        Longest time nxdns waits for chrony's first synchronisation, counted
        from network-online, before it starts anyway. 0 disables the wait.
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
    networking.hosts = hosts;

    services.chrony = {
      enable = lib.mkDefault true;
      enableNTS = true;
      servers = lib.mkDefault pinned;
      # initstepslew measures with plain NTP; makestep below steps on
      # authenticated samples instead.
      initstepslew.enabled = false;
      # No RTC to track or trim.
      enableRTCTrimming = false;
      extraFlags = [ "-s" ];
      extraConfig = ''
        authselectmode require
        nocerttimecheck 1
        makestep 1 3
      '';
    };

    # NixOS orders chronyd after nss-lookup.target, which nxdns (the
    # resolver) is before, and nxdns waits for chronyd: a cycle. chronyd
    # needs no resolver here (point 3 above).
    systemd.services.chronyd = mkIf chronyOn {
      after = lib.mkForce [ "network.target" ];
      before = [ "time-set.target" ];
    };

    assertions = mkIf chronyOn [
      {
        assertion = unresolvable == [ ];
        message = "services.chrony.servers: ${builtins.toJSON unresolvable} need DNS, and DNS on an nxdns appliance without RTC needs a set clock (hardware/clock.nix): give IP addresses, or add the name with its addresses to nxdns.pi.ntsServers.";
      }
      {
        assertion = badAddresses == [ ];
        message = "nxdns.pi.ntsServers: ${builtins.toJSON badAddresses} are not IP addresses.";
      }
    ];

    systemd.services.nxdns-clock-floor = mkIf (cfg.clockFloor > 0) {
      description = "Raise the clock to the image's floor (no RTC)";
      wantedBy = [ "sysinit.target" ];
      before = [
        "sysinit.target"
        "time-set.target"
        "chronyd.service"
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

    systemd.services.nxdns-time-wait = mkIf (cfg.clockWaitSec > 0 && chronyOn) {
      description = "Wait (bounded) for the first authenticated time synchronisation before nxdns";
      after = [
        "chronyd.service"
        "network-online.target"
      ];
      wants = [
        "time-sync.target"
        "network-online.target"
      ];
      before = [ "time-sync.target" ];
      path = [ config.services.chrony.package ];
      serviceConfig = {
        Type = "oneshot";
        RemainAfterExit = true;
        TimeoutStartSec = "${toString (cfg.clockWaitSec + 15)}s";
      };
      # waitsync TRIES 0 0 1: once a second, until chronyd reports itself
      # synchronised (max correction and skew not checked).
      script = ''
        if chronyc waitsync ${toString cfg.clockWaitSec} 0 0 1 >/dev/null; then exit 0; fi
        echo "no authenticated time within ${toString cfg.clockWaitSec} s of network-online; starting nxdns anyway (certificates newer than the clock fail verification, reported as clock-behind, until chrony sets it)"
      '';
    };

    systemd.services.nxdns = mkIf (config.services.nxdns.enable && cfg.clockWaitSec > 0 && chronyOn) {
      wants = [ "nxdns-time-wait.service" ];
      after = [
        "nxdns-time-wait.service"
        "time-sync.target"
      ];
    };
  };
}
