# NixOS VM test: the field defect's scenario end to end, on three VMs.
#
#   upstream   unbound serving DNS over TLS (certificate from a test CA made
#              below), answering every name under burst.test, with 20 ms of
#              added latency on its interface (netem)
#   appliance  the nxdns module with that one DoT upstream
#   client     `nxdns burst` (30 concurrent unique names, cold then warm),
#              /metrics scrape, dig
#
# Run: nix build .#checks.x86_64-linux.vm-burst -L   (needs KVM)
# Interactive: nix run .#checks.x86_64-linux.vm-burst.driverInteractive
{ pkgs, nxdnsModule }:

let
  tlsName = "upstream.nxdns.test";

  # A throwaway CA and a server certificate for tlsName, made at build time.
  pki =
    pkgs.runCommand "nxdns-test-pki"
      {
        nativeBuildInputs = [ pkgs.openssl ];
      }
      ''
        mkdir -p "$out"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
          -days 3650 -subj "/CN=nxdns test CA" \
          -addext "basicConstraints=critical,CA:TRUE" \
          -addext "keyUsage=critical,keyCertSign,cRLSign" \
          -keyout ca.key -out "$out/ca.pem"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
          -subj "/CN=${tlsName}" -keyout "$out/server.key" -out server.csr
        cat > server.ext <<EOF
        basicConstraints=critical,CA:FALSE
        keyUsage=critical,digitalSignature
        extendedKeyUsage=serverAuth
        subjectAltName=DNS:${tlsName}
        EOF
        openssl x509 -req -in server.csr -CA "$out/ca.pem" -CAkey ca.key -set_serial 2 \
          -days 3650 -extfile server.ext -out "$out/server.pem"
        openssl verify -CAfile "$out/ca.pem" "$out/server.pem"
      '';

  # The default budgets, spelled out because the test measures against them.
  attemptMs = 2000;
  totalMs = 5000;
in
pkgs.testers.runNixOSTest {
  name = "nxdns-burst";

  nodes = {
    upstream =
      { pkgs, ... }:
      {
        networking.firewall.allowedTCPPorts = [ 853 ];
        environment.systemPackages = [ pkgs.iproute2 ];
        services.unbound = {
          enable = true;
          enableRootTrustAnchor = false; # no Internet in the test
          resolveLocalQueries = false;
          settings.server = {
            interface = [
              "0.0.0.0@853"
              "127.0.0.1@53"
            ];
            tls-port = 853;
            tls-service-key = "${pki}/server.key";
            tls-service-pem = "${pki}/server.pem";
            access-control = [
              "0.0.0.0/0 allow"
            ];
            num-threads = 1;
            # nxdns opens up to 8 sessions per upstream entry.
            incoming-num-tcp = 64;
            # Every name under burst.test (what `nxdns burst` asks for)
            # gets the apex's records.
            local-zone = [ ''"burst.test." redirect'' ];
            local-data = [
              ''"burst.test. 300 IN A 192.0.2.53"''
              ''"burst.test. 300 IN AAAA 2001:db8::53"''
            ];
          };
        };
      };

    appliance =
      { config, nodes, ... }:
      {
        imports = [ nxdnsModule ];
        services.nxdns = {
          enable = true;
          openFirewall = true;
          useAsSystemResolver = true;
          settings = {
            listen = [ "0.0.0.0:53" ];
            upstreams = [
              {
                url = "tls://${nodes.upstream.networking.primaryIPAddress}:853";
                tls_name = tlsName;
                ca_file = "${pki}/ca.pem";
              }
            ];
            budgets = {
              attempt_ms = attemptMs;
              total_ms = totalMs;
            };
            # Scraped from the client in this test; loopback by default.
            http.listen = "${config.networking.primaryIPAddress}:8053";
          };
        };
        networking.firewall.allowedTCPPorts = [ 8053 ];
        # The appliance is its own resolver here; keep anything else on it
        # from opening an upstream session before the cold burst.
        services.timesyncd.enable = false;
      };

    client =
      { pkgs, ... }:
      {
        environment.systemPackages = [
          pkgs.nxdns
          pkgs.curl
          pkgs.dnsutils
          pkgs.prometheus.cli # promtool
        ];
      };
  };

  testScript =
    { nodes, ... }:
    let
      applianceIP = nodes.appliance.networking.primaryIPAddress;
    in
    ''
      import re

      APPLIANCE = "${applianceIP}"
      TOTAL_MS = ${toString totalMs}
      SERIES = [
          "nxdns_upstream_in_flight",
          "nxdns_upstream_slots",
          "nxdns_upstream_queued_total",
          "nxdns_upstream_queued_seconds_total",
          "nxdns_upstream_reuse_recoveries_total",
      ]


      def burst(extra):
          out = client.succeed(
              f"nxdns burst --server {APPLIANCE}:53 --names 30 {extra} 2>&1"
          )
          print(out)
          return out


      def dig(name):
          return client.succeed(
              f"dig +tries=1 +time=10 @{APPLIANCE} {name} A 2>&1"
          )


      def query_ms(dig_output):
          m = re.search(r"^;; Query time: (\d+) msec", dig_output, re.M)
          assert m, f"no query time in dig output:\n{dig_output}"
          return int(m.group(1))


      def main_pid():
          return appliance.succeed("systemctl show -p MainPID --value nxdns.service").strip()


      start_all()
      upstream.wait_for_unit("unbound.service")
      upstream.wait_for_open_port(853)
      # Latency for everything the upstream sends: each TCP, TLS and DNS
      # round trip to it costs 20 ms more.
      upstream.succeed("tc qdisc add dev eth1 root netem delay 20ms")

      # Type=notify: active means the daemon said READY=1.
      appliance.wait_for_unit("nxdns.service")
      appliance.wait_for_open_port(53)
      client.wait_for_unit("multi-user.target")

      with subtest("the unit runs unprivileged with CAP_NET_BIND_SERVICE only"):
          status = appliance.succeed(f"cat /proc/{main_pid()}/status")
          uid = re.search(r"^Uid:\s+(\d+)", status, re.M).group(1)
          assert uid != "0", f"nxdns runs as root:\n{status}"
          for field in ("CapEff", "CapPrm", "CapBnd"):
              value = int(re.search(rf"^{field}:\s+([0-9a-f]+)", status, re.M).group(1), 16)
              assert value == 1 << 10, f"{field} is {value:#x}, want CAP_NET_BIND_SERVICE (0x400) only"
          assert re.search(r"^NoNewPrivs:\s+1", status, re.M), "NoNewPrivs is not set"
          print(appliance.succeed("systemd-analyze security nxdns.service | tail -n 1"))

      with subtest("SIGTERM: clean exit; then a fresh start with no upstream session"):
          appliance.succeed("systemctl stop nxdns.service")
          result = appliance.succeed("systemctl show -p Result --value nxdns.service").strip()
          assert result == "success", f"stopping nxdns: Result={result}"
          appliance.succeed("systemctl start nxdns.service")
          appliance.wait_for_unit("nxdns.service")

      with subtest("cold burst: 30 unique names, no session yet, no staircase"):
          burst("--cold --max-ratio 4.5 --max-stair 0.2")

      with subtest("warm burst: sessions reused, ~ one query's latency"):
          burst("--max-ratio 1.5 --max-stair 0.2")

      with subtest("/metrics shows the upstream queue and passes promtool"):
          metrics = client.succeed(f"curl -sf http://{APPLIANCE}:8053/metrics")
          values = {}
          for series in SERIES:
              m = re.search(rf"^{series}\{{[^}}]*\}} (\S+)", metrics, re.M)
              assert m, f"{series} missing:\n{metrics}"
              values[series] = float(m.group(1))
          print(values)
          assert values["nxdns_upstream_slots"] == 8, f"slots: {values}"
          # Nothing is in flight between bursts.
          assert values["nxdns_upstream_in_flight"] == 0, f"in flight: {values}"
          client.succeed(f"curl -sf http://{APPLIANCE}:8053/metrics | promtool check metrics")

      with subtest("the appliance resolves through nxdns (useAsSystemResolver)"):
          appliance.succeed("grep -q '^nameserver 127.0.0.1' /etc/resolv.conf")
          appliance.succeed("getent ahostsv4 system-resolver.burst.test | grep -q 192.0.2.53")

      with subtest("upstream down: SERVFAIL within the total budget"):
          pid = main_pid()
          restarts = appliance.succeed("systemctl show -p NRestarts --value nxdns.service").strip()
          upstream.succeed("systemctl stop unbound.service")
          out = dig("while-down.burst.test")
          print(out)
          assert "status: SERVFAIL" in out, f"expected SERVFAIL:\n{out}"
          ms = query_ms(out)
          assert ms <= TOTAL_MS + 250, f"SERVFAIL after {ms} ms, budget {TOTAL_MS} ms"

      with subtest("upstream back: answers again without restarting nxdns"):
          upstream.succeed("systemctl start unbound.service")
          upstream.wait_for_open_port(853)
          client.wait_until_succeeds(
              f"dig +tries=1 +time=10 @{APPLIANCE} after-restart.burst.test A | grep -q 'status: NOERROR'",
              timeout=120,
          )
          out = dig("after-restart-2.burst.test")
          assert "192.0.2.53" in out, f"no answer after the upstream came back:\n{out}"
          assert main_pid() == pid, "nxdns was restarted"
          now = appliance.succeed("systemctl show -p NRestarts --value nxdns.service").strip()
          assert now == restarts, f"NRestarts went from {restarts} to {now}"
    '';
}
