# NixOS VM test: the clock path of a Pi without RTC (hardware/clock.nix),
# on two VMs.
#
#   upstream   chrony as an NTS server (NTS-KE on TCP 4460, NTP on UDP 123;
#              certificate from a test CA made at build time) and unbound
#              serving DNS over TLS with the same certificate
#   appliance  the nxdns module and hardware/clock.nix as the Pi has them:
#              chrony with NTS only (authselectmode require), the NTS server
#              pinned by name in /etc/hosts (nxdns.pi.ntsServers), nxdns held
#              back until the first synchronisation; the test CA added to
#              chrony's trusted certificates
#
# NTS here is real NTS (the server's certificate is verified against its
# name), not plain NTP: only the CA differs from the field.
#
# Checked: nxdns starts after chrony's first authenticated synchronisation,
# not after the wait's timeout, and answers; a clock set back 400 days (the
# test certificate then looks not yet valid) with no saved clock and no NTS
# cookies is set again through a fresh NTS-KE (nocerttimecheck), after which
# nxdns answers again without a restart.
#
# Type-checked like burst.nix (scripts/nix-checks.sh): keep every function
# annotated.
#
# Run: nix build .#checks.x86_64-linux.vm-clock -L   (needs KVM)
{ pkgs, nxdnsModule }:

let
  tlsName = "upstream.nxdns.test";
  ntsName = "ntp.nxdns.test";

  pki = import ./test-pki.nix {
    inherit pkgs;
    names = [
      tlsName
      ntsName
    ];
  };
in
pkgs.testers.runNixOSTest {
  name = "nxdns-clock";

  nodes = {
    upstream =
      { ... }:
      {
        networking.firewall.allowedTCPPorts = [
          853
          4460
        ];
        networking.firewall.allowedUDPPorts = [ 123 ];
        services.chrony = {
          enable = true;
          # No Internet in the test: this VM's own clock is the reference.
          servers = [ ];
          extraConfig = ''
            local stratum 8
            allow all
            ntsserverkey ${pki}/server.key
            ntsservercert ${pki}/server.pem
          '';
        };
        services.unbound = {
          enable = true;
          enableRootTrustAnchor = false;
          resolveLocalQueries = false;
          settings.server = {
            interface = [ "0.0.0.0@853" ];
            tls-port = 853;
            tls-service-key = "${pki}/server.key";
            tls-service-pem = "${pki}/server.pem";
            access-control = [ "0.0.0.0/0 allow" ];
            local-zone = [ ''"clock.test." redirect'' ];
            local-data = [ ''"clock.test. 300 IN A 192.0.2.53"'' ];
          };
        };
      };

    appliance =
      { nodes, pkgs, ... }:
      {
        environment.systemPackages = [ pkgs.dnsutils ];
        imports = [
          nxdnsModule
          ../hardware/clock.nix
        ];
        services.nxdns = {
          enable = true;
          settings.upstreams = [
            {
              url = "tls://${nodes.upstream.networking.primaryIPAddress}:853";
              tls_name = tlsName;
              ca_file = "${pki}/ca.pem";
            }
          ];
          # clock.test lives under "test", which nxdns answers itself by
          # default (RFC 6761); here the upstream serves it.
          settings.forward_special_zones = [ "test" ];
        };
        nxdns.pi.ntsServers.${ntsName} = [ nodes.upstream.networking.primaryIPAddress ];
        # The field trusts the system's CAs (certificate set 0); the test
        # adds its own CA to that set.
        services.chrony.extraConfig = ''
          ntstrustedcerts ${pki}/ca.pem
        '';
      };
  };

  testScript =
    { nodes, ... }:
    let
      upstreamIP = nodes.upstream.networking.primaryIPAddress;
    in
    ''
      import re

      UPSTREAM = "${upstreamIP}"
      SET_BACK_DAYS = 400


      def field(pattern: str, text: str) -> str:
          """The first group of the first match of `pattern` (multi-line) in `text`."""
          m = re.search(pattern, text, re.M)
          assert m is not None, f"/{pattern}/ not found in:\n{text}"
          return m.group(1)


      def monotonic_us(unit: str, prop: str) -> int:
          return int(appliance.succeed(f"systemctl show -p {prop} --value {unit}").strip())


      def skew_s() -> int:
          """Appliance clock minus upstream clock, in seconds."""
          here = int(appliance.succeed("date +%s").strip())
          there = int(upstream.succeed("date +%s").strip())
          return here - there


      def answers() -> None:
          appliance.wait_until_succeeds(
              "dig +tries=1 +time=5 @127.0.0.1 clock.test A | grep -q 192.0.2.53", timeout=60
          )


      def authenticated() -> None:
          data = appliance.succeed("chronyc -n authdata")
          line = field(rf"^({re.escape(UPSTREAM)}\s.*)$", data)
          assert " NTS " in f" {line} ", f"the source is not authenticated by NTS:\n{data}"


      start_all()
      upstream.wait_for_unit("chronyd.service")
      upstream.wait_for_open_port(4460)
      upstream.wait_for_unit("unbound.service")
      upstream.wait_for_open_port(853)

      with subtest("boot: nxdns starts after the first authenticated synchronisation"):
          appliance.wait_for_unit("nxdns.service")
          wait_log = appliance.succeed("journalctl -b -u nxdns-time-wait.service --no-pager")
          assert "starting nxdns anyway" not in wait_log, f"the wait timed out:\n{wait_log}"
          synced = monotonic_us("nxdns-time-wait.service", "ActiveEnterTimestampMonotonic")
          started = monotonic_us("nxdns.service", "ExecMainStartTimestampMonotonic")
          assert 0 < synced <= started, f"nxdns started at {started} us, the wait ended at {synced} us"
          authenticated()
          assert field(r"^Leap status\s*:\s*(.*)$", appliance.succeed("chronyc tracking")) == "Normal"
          answers()

      with subtest("a clock set back, nothing saved: NTS sets it (nocerttimecheck), nxdns recovers"):
          appliance.succeed("systemctl stop chronyd.service")
          # No drift file (chronyd -s would restore the clock from it) and no
          # NTS cookies (they would skip the certificate check): a first boot.
          appliance.succeed("rm -f /var/lib/chrony/chrony.drift /var/lib/chrony/*.nts")
          appliance.succeed(f"date -s @$(( $(date +%s) - {SET_BACK_DAYS} * 86400 ))")
          assert skew_s() < -(SET_BACK_DAYS - 1) * 86400, "the clock was not set back"
          appliance.succeed("systemctl start chronyd.service")
          appliance.wait_until_succeeds("chronyc waitsync 1 0 0 1", timeout=90)
          skew = skew_s()
          assert abs(skew) <= 5, f"after the synchronisation the clock is {skew} s off"
          authenticated()
          # The daemon's clock-step watcher verifies the upstream again.
          answers()
    '';
}
