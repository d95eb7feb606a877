# Evaluation tests for hardware/clock.nix (time on a Pi without RTC:
# floor, saved clock, NTS without DNS, bounded wait), in lib.runTests form,
# against the same stand-ins for NixOS and nixpkgs as module-tests.nix.
{ lib }:

let
  evalClock =
    modules:
    (lib.evalModules {
      modules = [
        ./stubs/nixos.nix
        ../../nixos-module
        ../../hardware/clock.nix
        { _module.args.pkgs = import ./stubs/pkgs.nix { inherit lib; }; }
      ]
      ++ modules;
    }).config;

  good = {
    services.nxdns = {
      enable = true;
      settings.upstreams = [
        {
          url = "tls://9.9.9.9:853";
          tls_name = "dns.quad9.net";
        }
      ];
    };
  };

  failedAssertions =
    config: map (a: a.message) (builtins.filter (a: !a.assertion) config.assertions);
  failsWith =
    regex: config: builtins.any (m: builtins.match regex m != null) (failedAssertions config);
  hasInfix = lib.hasInfix;
  lines = s: builtins.filter (l: l != "") (lib.splitString "\n" s);
in
{
  # Point 3: chrony, NTS on every server, only authenticated sources, the
  # names pinned in /etc/hosts; timesyncd (plain NTP) off.
  testClockNtsByPinnedName = {
    expr =
      let
        c = evalClock [ good ];
      in
      {
        inherit (c.services.chrony) enable enableNTS servers;
        hosts = c.networking.hosts;
        timesyncd = c.services.timesyncd.enable;
        config = lines c.services.chrony.extraConfig;
        initstepslew = c.services.chrony.initstepslew.enabled;
        savedClock = c.services.chrony.extraFlags;
        failed = failedAssertions c;
      };
    expected = {
      enable = true;
      enableNTS = true;
      servers = [ "time.cloudflare.com" ];
      hosts = {
        "162.159.200.1" = [ "time.cloudflare.com" ];
        "162.159.200.123" = [ "time.cloudflare.com" ];
      };
      timesyncd = false;
      config = [
        "authselectmode require"
        "nocerttimecheck 1"
        "makestep 1 3"
      ];
      initstepslew = false;
      savedClock = [ "-s" ];
      failed = [ ];
    };
  };

  testClockNtsServersOverridable = {
    expr =
      let
        c = evalClock [
          good
          {
            nxdns.pi.ntsServers = {
              "ntp.example" = [ "192.0.2.7" ];
              "ntp2.example" = [
                "192.0.2.8"
                "2001:db8::8"
              ];
            };
          }
        ];
      in
      {
        inherit (c.services.chrony) servers;
        hosts = c.networking.hosts;
      };
    expected = {
      servers = [
        "ntp.example"
        "ntp2.example"
      ];
      hosts = {
        "192.0.2.7" = [ "ntp.example" ];
        "192.0.2.8" = [ "ntp2.example" ];
        "2001:db8::8" = [ "ntp2.example" ];
      };
    };
  };

  # A name chrony would have to resolve brings the DNS-before-clock loop
  # back; an address or a pinned name does not.
  testClockRejectsUnpinnedServerName = {
    expr = failsWith ".*services.chrony.servers.*pool.ntp.org.*need DNS.*" (evalClock [
      good
      { services.chrony.servers = [ "time.cloudflare.com" "192.0.2.1" "0.pool.ntp.org" ]; }
    ]);
    expected = true;
  };

  testClockRejectsNameAsAddress = {
    expr = failsWith ".*nxdns.pi.ntsServers.*ntp.example.*not IP addresses.*" (evalClock [
      good
      { nxdns.pi.ntsServers."nts.example" = [ "ntp.example" ]; }
    ]);
    expected = true;
  };

  # NixOS orders chronyd after nss-lookup.target; nxdns is before it and
  # after the wait, which is after chronyd: without the override, a cycle.
  testClockNoOrderingCycle = {
    expr =
      let
        c = evalClock [ good ];
      in
      {
        chronydAfter = c.systemd.services.chronyd.after;
        nxdnsBeforeLookup = builtins.elem "nss-lookup.target" c.systemd.services.nxdns.before;
        chronydBeforeTimeSet = builtins.elem "time-set.target" c.systemd.services.chronyd.before;
      };
    expected = {
      chronydAfter = [ "network.target" ];
      nxdnsBeforeLookup = true;
      chronydBeforeTimeSet = true;
    };
  };

  testClockNxdnsWaitsBounded = {
    expr =
      let
        c = evalClock [ good ];
        wait = c.systemd.services.nxdns-time-wait;
        nx = c.systemd.services.nxdns;
      in
      {
        nxdnsAfter = builtins.all (u: builtins.elem u nx.after) [
          "nxdns-time-wait.service"
          "time-sync.target"
          "time-set.target"
        ];
        nxdnsWants = builtins.elem "nxdns-time-wait.service" nx.wants;
        waitAfter = wait.after;
        waitBefore = wait.before;
        timeout = wait.serviceConfig.TimeoutStartSec;
        bounded = hasInfix "chronyc waitsync 30 0 0 1" wait.script;
        chronyc = map (p: p.name) wait.path;
      };
    expected = {
      nxdnsAfter = true;
      nxdnsWants = true;
      waitAfter = [
        "chronyd.service"
        "network-online.target"
      ];
      waitBefore = [ "time-sync.target" ];
      timeout = "45s";
      bounded = true;
      chronyc = [ "chrony" ];
    };
  };

  testClockWaitOff = {
    expr =
      let
        c = evalClock [
          good
          { nxdns.pi.clockWaitSec = 0; }
        ];
      in
      {
        unit = c.systemd.services ? nxdns-time-wait;
        ordered = builtins.elem "nxdns-time-wait.service" c.systemd.services.nxdns.after;
      };
    expected = {
      unit = false;
      ordered = false;
    };
  };

  testClockWaitNeedsChrony = {
    expr =
      (evalClock [
        good
        { services.chrony.enable = false; }
      ]).systemd.services ? nxdns-time-wait;
    expected = false;
  };

  testClockFloor = {
    expr =
      let
        c = evalClock [ { nxdns.pi.clockFloor = 1750000000; } ];
        floor = c.systemd.services.nxdns-clock-floor;
      in
      {
        setsFloor = hasInfix "floor=1750000000" floor.script;
        early = floor.unitConfig.DefaultDependencies == false;
        beforeChrony = builtins.all (u: builtins.elem u floor.before) [
          "time-set.target"
          "chronyd.service"
        ];
      };
    expected = {
      setsFloor = true;
      early = true;
      beforeChrony = true;
    };
  };

  testClockFloorOffByDefault = {
    expr = (evalClock [ ]).systemd.services ? nxdns-clock-floor;
    expected = false;
  };
}
