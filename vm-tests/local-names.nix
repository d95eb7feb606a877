# NixOS VM test: the LAN's own names (docs/how-to/local-names.md), on three
# VMs of one test VLAN (192.168.1.0/24, a private range: what
# `home_router: auto` requires of a router's address).
#
#   router     the household router: dnsmasq serving the LAN's names
#              (printer.lan and its PTR) over plain DNS; and, standing in
#              for the resolver on the internet, unbound serving DNS over
#              TLS (certificate from a test CA made at build time)
#   appliance  the nxdns module with `home_router: auto` and the router as
#              its only default gateway; hostsFromNetworking serves its
#              /etc/hosts (the test driver's node names and one
#              networking.hosts entry); a specialisation adds a name to
#              networking.hosts (the reload case)
#   client     dig
#
# Checked: printer.lan and its PTR come from the router through nxdns and
# never reach the upstream; a name that exists nowhere (x.invalid) is
# answered here without an upstream query; `nxdns why` names the home
# router; names of /etc/hosts are answered here, authoritatively; a switch
# that changes networking.hosts reloads nxdns (same process), which then
# serves the new name; with the router's DNS stopped, other.lan gets
# NXDOMAIN within one LAN attempt (not the upstream budget's SERVFAIL), the
# health API says the router does not serve DNS, and names of /etc/hosts
# still answer; with it started again, printer.lan answers again. Every
# "went upstream or not" is read from the daemon's counters.
#
# Type-checked like burst.nix (scripts/nix-checks.sh): keep every function
# annotated.
#
# Run: nix build .#checks.x86_64-linux.vm-local-names -L   (needs KVM)
{ pkgs, nxdnsModule }:

let
  tlsName = "upstream.nxdns.test";

  pki = import ./test-pki.nix {
    inherit pkgs;
    names = [ tlsName ];
  };

  # Addresses on the test VLAN that no VM holds: names, not hosts.
  printerIP = "192.168.1.30";
  nasIP = "192.168.1.20";
  scannerIP = "192.168.1.21";

  # The default total budget: what a query that waits for an upstream
  # failure would take.
  totalMs = 5000;
  # One attempt at a LAN server (docs/reference/config.md#local_zones):
  # the longest a name of a router that does not answer DNS may take.
  lanAttemptMs = 1000;
in
pkgs.testers.runNixOSTest {
  name = "nxdns-local-names";

  nodes = {
    router =
      { ... }:
      {
        networking.firewall.allowedTCPPorts = [
          53
          853
        ];
        networking.firewall.allowedUDPPorts = [ 53 ];
        services.dnsmasq = {
          enable = true;
          # The router's own resolv.conf is none of this test's business.
          resolveLocalQueries = false;
          settings = {
            # No Internet in the test: nothing to forward to.
            no-resolv = true;
            # Names here are answered from dnsmasq's own data only, with
            # NXDOMAIN for the rest, as a home router does for its LAN.
            local = [
              "/lan/"
              "/home.arpa/"
              "/1.168.192.in-addr.arpa/"
            ];
            # A and PTR, as a DHCP lease would give them.
            host-record = [ "printer.lan,${printerIP}" ];
          };
        };
        services.unbound = {
          enable = true;
          enableRootTrustAnchor = false; # no Internet in the test
          resolveLocalQueries = false;
          settings.server = {
            interface = [ "0.0.0.0@853" ];
            tls-port = 853;
            tls-service-key = "${pki}/server.key";
            tls-service-pem = "${pki}/server.pem";
            access-control = [ "0.0.0.0/0 allow" ];
            local-zone = [ ''"example.net." static'' ];
            local-data = [ ''"www.example.net. 300 IN A 192.0.2.80"'' ];
          };
        };
      };

    appliance =
      { nodes, pkgs, ... }:
      {
        imports = [ nxdnsModule ];
        services.nxdns = {
          enable = true;
          openFirewall = true;
          hostsFromNetworking = true;
          settings = {
            listen = [ "0.0.0.0:53" ];
            upstreams = [
              {
                url = "tls://${nodes.router.networking.primaryIPAddress}:853";
                tls_name = tlsName;
                ca_file = "${pki}/ca.pem";
              }
            ];
            # The default, spelled out: it is what this test is about.
            home_router = "auto";
          };
        };
        networking.hosts.${nasIP} = [ "nas.home.arpa" ];
        # The router is the one default route (the test driver sets none;
        # without DHCP the QEMU user network on eth0 adds none either), so
        # the gateway nxdns finds is the router, whatever the metrics.
        networking.useDHCP = false;
        networking.defaultGateway = {
          address = nodes.router.networking.primaryIPAddress;
          interface = "eth1";
        };
        environment.systemPackages = [ pkgs.curl ];
        # The reload case switches into the specialisation and back.
        system.switch.enable = true;
        specialisation.more-hosts.configuration = {
          networking.hosts.${scannerIP} = [ "scanner.home.arpa" ];
        };
      };

    client =
      { pkgs, ... }:
      {
        environment.systemPackages = [ pkgs.dnsutils ];
      };
  };

  testScript =
    { nodes, ... }:
    ''
      import json
      import re
      from typing import Any

      APPLIANCE = "${nodes.appliance.networking.primaryIPAddress}"
      ROUTER = "${nodes.router.networking.primaryIPAddress}"
      CLIENT = "${nodes.client.networking.primaryIPAddress}"
      PRINTER = "${printerIP}"
      NAS = "${nasIP}"
      SCANNER = "${scannerIP}"
      TOTAL_MS = ${toString totalMs}
      LAN_ATTEMPT_MS = ${toString lanAttemptMs}
      # A loaded CI host's scheduling on top of one LAN attempt; still far
      # below the total budget that an upstream-style failure would take.
      MARGIN_MS = 500


      def field(pattern: str, text: str) -> str:
          """The first group of the first match of `pattern` (multi-line) in `text`."""
          m = re.search(pattern, text, re.M)
          assert m is not None, f"/{pattern}/ not found in:\n{text}"
          return m.group(1)


      def metric(text: str, name: str, **labels: str) -> float:
          """The sum of the series `name` whose labels include `labels` (at least one)."""
          found = []
          for line in text.splitlines():
              m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
              if m is None or m.group(1) != name:
                  continue
              have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
              if all(have.get(k) == v for k, v in labels.items()):
                  found.append(float(m.group(3)))
          assert found, f"no {name} {labels} in /metrics:\n{text}"
          return sum(found)


      def counters() -> dict[str, float]:
          """What says where queries went, from one scrape."""
          text = appliance.succeed("curl -sf http://127.0.0.1:8053/metrics")
          return {
              # Exchanges with the DoT upstream, on any connection.
              "upstream_exchanges": metric(text, "nxdns_upstream_exchanges_total", upstream="0"),
              "routed_upstream": metric(text, "nxdns_routed_queries_total", route="upstream"),
              "routed_lan": metric(text, "nxdns_routed_queries_total", route="lan"),
              "routed_negative": metric(text, "nxdns_routed_queries_total", route="negative"),
              "routed_records": metric(text, "nxdns_routed_queries_total", route="records"),
              "lan_fallbacks": metric(text, "nxdns_lan_fallbacks_total"),
          }


      def health() -> dict[str, Any]:
          # No -f: the body says why when the code is not 200.
          body: dict[str, Any] = json.loads(appliance.succeed("curl -s http://127.0.0.1:8053/api/health"))
          return body


      def home_router_entry() -> dict[str, Any]:
          """The health API's LAN server entry of the home router (the only LAN server here)."""
          servers: list[dict[str, Any]] = health()["local_names"]["lan_servers"]
          assert len(servers) == 1 and servers[0]["home_router"], f"expected the home router alone: {servers}"
          return servers[0]


      def dig(args: str) -> str:
          return client.succeed(f"dig +tries=1 +time=10 @{APPLIANCE} {args} 2>&1")


      def status(out: str) -> str:
          return field(r"status: ([A-Z]+)", out)


      def records(out: str, rtype: str) -> list[str]:
          """The data of the answer's records of type `rtype`."""
          return re.findall(rf"^\S+\s+\d+\s+IN\s+{rtype}\s+(\S+)$", out, re.M)


      def flags(out: str) -> list[str]:
          return field(r"^;; flags: ([a-z ]+);", out).split()


      def query_ms(out: str) -> int:
          return int(field(r"^;; Query time: (\d+) msec", out))


      def main_pid() -> str:
          return appliance.succeed("systemctl show -p MainPID --value nxdns.service").strip()


      def router_found(last_try: bool) -> bool:
          text: str = health()["local_names"]["home_router"]
          if last_try:
              print(f"home_router: {text}")
          return f"{ROUTER}:53" in text and "found" in text


      def router_serves_dns(want: bool) -> None:
          def check(last_try: bool) -> bool:
              entry = home_router_entry()
              if last_try:
                  print(f"home router entry: {entry}")
              return bool(entry["serves_dns"]) == want

          retry(check, timeout=60)


      start_all()
      router.wait_for_unit("dnsmasq.service")
      router.wait_for_unit("unbound.service")
      router.wait_for_open_port(853)
      appliance.wait_for_unit("nxdns.service")
      appliance.wait_for_open_port(53)
      client.wait_for_unit("multi-user.target")

      with subtest("the appliance's one default route is the router, on the LAN"):
          routes = appliance.succeed("ip -4 route show default").strip().splitlines()
          assert len(routes) == 1 and re.match(rf"default via {re.escape(ROUTER)} dev eth1\b", routes[0]), routes

      with subtest("home_router: auto finds the router, under the unit's sandbox"):
          retry(router_found, timeout=60)
          router_serves_dns(True)

      with subtest("the upstream answers names that are not the LAN's"):
          out = dig("www.example.net A")
          assert status(out) == "NOERROR" and records(out, "A") == ["192.0.2.80"], out

      with subtest("printer.lan and its PTR: the router's answers, and nothing upstream"):
          before = counters()
          out = dig("printer.lan A")
          assert status(out) == "NOERROR" and records(out, "A") == [PRINTER], out
          out = dig(f"-x {PRINTER}")
          assert status(out) == "NOERROR" and records(out, "PTR") == ["printer.lan."], out
          after = counters()
          assert after["routed_lan"] == before["routed_lan"] + 2, f"{before} -> {after}"
          assert after["upstream_exchanges"] == before["upstream_exchanges"], f"went upstream: {before} -> {after}"
          assert after["routed_upstream"] == before["routed_upstream"], f"routed upstream: {before} -> {after}"

      with subtest("x.invalid: NXDOMAIN from nxdns itself, no upstream query"):
          before = counters()
          out = dig("x.invalid A")
          assert status(out) == "NXDOMAIN", out
          after = counters()
          assert after["routed_negative"] == before["routed_negative"] + 1, f"{before} -> {after}"
          assert after["upstream_exchanges"] == before["upstream_exchanges"], f"went upstream: {before} -> {after}"
          assert after["routed_lan"] == before["routed_lan"], f"went to the router: {before} -> {after}"

      with subtest("nxdns why printer.lan names the home router"):
          why = json.loads(appliance.succeed("nxdns why --json printer.lan"))
          print(why)
          assert why["route"] == "lan" and why["source"] == "home_router", why
          assert f"{ROUTER}:53" in why["servers"], why
          print(appliance.succeed("nxdns why printer.lan"))

      with subtest("hostsFromNetworking: /etc/hosts is answered here, authoritatively"):
          before = counters()
          out = dig("client A")
          assert records(out, "A") == [CLIENT] and "aa" in flags(out), out
          out = dig(f"-x {CLIENT}")
          assert records(out, "PTR") == ["client."] and "aa" in flags(out), out
          # A hosts entry beats the zone the router is asked for.
          out = dig("nas.home.arpa A")
          assert records(out, "A") == [NAS] and "aa" in flags(out), out
          after = counters()
          assert after["routed_records"] == before["routed_records"] + 3, f"{before} -> {after}"
          assert after["routed_lan"] == before["routed_lan"], f"went to the router: {before} -> {after}"

      with subtest("a switch that changes networking.hosts reloads nxdns, which serves the new name"):
          pid = main_pid()
          assert SCANNER not in records(dig("scanner.home.arpa A"), "A")
          appliance.succeed("/run/booted-system/specialisation/more-hosts/bin/switch-to-configuration test")
          out = dig("scanner.home.arpa A")
          assert records(out, "A") == [SCANNER] and "aa" in flags(out), out
          assert main_pid() == pid, "the switch restarted nxdns instead of reloading it"
          appliance.succeed("/run/booted-system/bin/switch-to-configuration test")
          assert SCANNER not in records(dig("scanner.home.arpa A"), "A"), "the name outlived the switch back"
          assert main_pid() == pid, "switching back restarted nxdns"

      with subtest("the router's DNS stopped: NXDOMAIN within one LAN attempt, and the status says so"):
          router.succeed("systemctl stop dnsmasq.service")
          before = counters()
          out = dig("other.lan A")
          print(out)
          assert status(out) == "NXDOMAIN", out
          ms = query_ms(out)
          assert ms <= LAN_ATTEMPT_MS + MARGIN_MS < TOTAL_MS, (
              f"NXDOMAIN after {ms} ms: more than one LAN attempt ({LAN_ATTEMPT_MS} ms)"
          )
          after = counters()
          assert after["lan_fallbacks"] == before["lan_fallbacks"] + 1, f"{before} -> {after}"
          assert after["upstream_exchanges"] == before["upstream_exchanges"], f"went upstream: {before} -> {after}"
          router_serves_dns(False)
          out = dig("another.lan A")
          assert status(out) == "NXDOMAIN" and query_ms(out) <= LAN_ATTEMPT_MS + MARGIN_MS, out
          # Names of /etc/hosts do not need the router.
          assert records(dig("client A"), "A") == [CLIENT]

      with subtest("the router's DNS back: printer.lan answers again, nxdns not restarted"):
          pid = main_pid()
          router.succeed("systemctl start dnsmasq.service")
          router.wait_for_open_port(53)
          client.wait_until_succeeds(
              f"dig +tries=1 +time=10 @{APPLIANCE} printer.lan A | grep -q '{PRINTER}'", timeout=60
          )
          router_serves_dns(True)
          assert main_pid() == pid, "nxdns was restarted"
    '';
}
