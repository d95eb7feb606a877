# NixOS VM test: the deployment and the field defect's scenario end to end,
# on three VMs.
#
#   upstream   unbound serving DNS over TLS (certificate from a test CA made
#              below), answering every name under burst.test, with 20 ms of
#              added latency on its interface (netem)
#   appliance  the nxdns module as shipped (DynamicUser, CAP_NET_BIND_SERVICE
#              only, port 53) with that one DoT upstream
#   client     `nxdns burst --gate cold|warm` (30 concurrent unique names;
#              the gates are nxdns burst's own table), /metrics through
#              promtool, dig
#
# Also: SIGTERM drains a query in flight and exits cleanly; a WAN flap
# (the driver's block()/unblock() on the upstream's link) gives SERVFAIL
# within the budget, then answers again without a restart.
#
# The script is type-checked (the driver's mypy step, offline by
# scripts/nix-checks.sh): keep every function annotated.
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
    # Type-checked by the NixOS test driver (mypy --no-implicit-optional, the
    # machines typed as the driver's Machine class) and, offline, by
    # scripts/nix-checks.sh against tests/nix/driver/: every function is
    # annotated so that mypy checks its body too, and every re.search result
    # goes through `field`, which asserts the match before using it.
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
      CAP_NET_BIND_SERVICE = 1 << 10


      def field(pattern: str, text: str) -> str:
          """The first group of the first match of `pattern` (multi-line) in `text`."""
          m = re.search(pattern, text, re.M)
          assert m is not None, f"/{pattern}/ not found in:\n{text}"
          return m.group(1)


      def burst(gate: str, extra: str = "") -> str:
          # The thresholds are nxdns burst's own (one table, --gate NAME),
          # the same ones tests/integration/burst_acceptance.sh and nxdns
          # demo use; the tool exits non-zero when the gate fails.
          out = client.succeed(
              f"nxdns burst --server {APPLIANCE}:53 --names 30 {extra} --gate {gate} 2>&1"
          )
          print(out)
          return out


      def dig(name: str) -> str:
          return client.succeed(f"dig +tries=1 +time=10 @{APPLIANCE} {name} A 2>&1")


      def query_ms(dig_output: str) -> int:
          return int(field(r"^;; Query time: (\d+) msec", dig_output))


      def unit_property(name: str) -> str:
          return appliance.succeed(f"systemctl show -p {name} --value nxdns.service").strip()


      def answers_again(name: str) -> None:
          client.wait_until_succeeds(
              f"dig +tries=1 +time=10 @{APPLIANCE} {name} A | grep -q 'status: NOERROR'",
              timeout=120,
          )


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

      with subtest("the unit as shipped: dynamic user, CAP_NET_BIND_SERVICE only, port 53"):
          assert unit_property("DynamicUser") == "yes", "DynamicUser is off"
          status = appliance.succeed(f"cat /proc/{unit_property('MainPID')}/status")
          uid = field(r"^Uid:\s+(\d+)", status)
          assert uid != "0", f"nxdns runs as root:\n{status}"
          for cap in ("CapEff", "CapPrm", "CapBnd"):
              value = int(field(rf"^{cap}:\s+([0-9a-f]+)", status), 16)
              assert value == CAP_NET_BIND_SERVICE, (
                  f"{cap} is {value:#x}, want CAP_NET_BIND_SERVICE ({CAP_NET_BIND_SERVICE:#x}) only"
              )
          assert field(r"^NoNewPrivs:\s+(\d)", status) == "1", "NoNewPrivs is not set"
          # The privileged port is bound by the unprivileged process itself.
          sockets = appliance.succeed("ss -Hlnup 'sport = :53'; ss -Hlntp 'sport = :53'")
          assert f"pid={unit_property('MainPID')}," in sockets, f"nxdns does not hold port 53:\n{sockets}"
          print(appliance.succeed("systemd-analyze security nxdns.service | tail -n 1"))

      with subtest("SIGTERM: a fresh start has no upstream session"):
          appliance.succeed("systemctl stop nxdns.service")
          assert unit_property("Result") == "success", f"stopping nxdns: Result={unit_property('Result')}"
          appliance.succeed("systemctl start nxdns.service")
          appliance.wait_for_unit("nxdns.service")

      with subtest("cold burst: 30 unique names, no session yet, no staircase"):
          burst("cold", "--cold")

      with subtest("warm burst: sessions reused, ~ one query's latency"):
          burst("warm")

      with subtest("/metrics shows the upstream queue and passes promtool"):
          metrics = client.succeed(f"curl -sf http://{APPLIANCE}:8053/metrics")
          values = {s: float(field(rf"^{s}\{{[^}}]*\}} (\S+)", metrics)) for s in SERIES}
          print(values)
          assert values["nxdns_upstream_slots"] == 8, f"slots: {values}"
          # Nothing is in flight between bursts.
          assert values["nxdns_upstream_in_flight"] == 0, f"in flight: {values}"
          client.succeed(f"curl -sf http://{APPLIANCE}:8053/metrics | promtool check metrics")

      with subtest("the appliance resolves through nxdns (useAsSystemResolver)"):
          appliance.succeed("grep -q '^nameserver 127.0.0.1' /etc/resolv.conf")
          appliance.succeed("getent ahostsv4 system-resolver.burst.test | grep -q 192.0.2.53")

      with subtest("SIGTERM drains: a query in flight is answered, then a clean exit"):
          dig("drain-warmup.burst.test")  # a session is open
          # 1.5 s per upstream answer: the query is surely in flight when
          # SIGTERM arrives, and well inside the drain deadline (total + 0.5 s).
          upstream.succeed("tc qdisc change dev eth1 root netem delay 1500ms")
          client.succeed(
              f"(dig +tries=1 +time=10 @{APPLIANCE} in-flight.burst.test A > /tmp/drain.out 2>&1 &)"
          )
          client.succeed("sleep 0.5")  # the query reached the upstream
          appliance.succeed("systemctl stop nxdns.service")
          assert unit_property("Result") == "success", f"after the drain: Result={unit_property('Result')}"
          client.wait_until_succeeds("grep -q 'status: NOERROR' /tmp/drain.out", timeout=15)
          print(client.succeed("cat /tmp/drain.out"))
          log = appliance.succeed("journalctl -u nxdns.service --no-pager | grep 'draining' | tail -n 1")
          assert int(field(r"draining (\d+) in-flight", log)) >= 1, f"no query was drained: {log}"
          upstream.succeed("tc qdisc change dev eth1 root netem delay 20ms")
          appliance.succeed("systemctl start nxdns.service")
          appliance.wait_for_unit("nxdns.service")
          answers_again("after-drain.burst.test")

      with subtest("WAN flap: upstream link down, SERVFAIL within the budget, then answers again"):
          pid = unit_property("MainPID")
          restarts = unit_property("NRestarts")
          dig("before-flap.burst.test")
          upstream.block()
          out = dig("while-blocked.burst.test")
          print(out)
          assert "status: SERVFAIL" in out, f"expected SERVFAIL:\n{out}"
          ms = query_ms(out)
          assert ms <= TOTAL_MS + 250, f"SERVFAIL after {ms} ms, budget {TOTAL_MS} ms"
          upstream.unblock()
          answers_again("after-flap.burst.test")
          out = dig("after-flap-2.burst.test")
          assert "192.0.2.53" in out, f"no answer after the link came back:\n{out}"
          assert unit_property("MainPID") == pid, "nxdns was restarted"
          assert unit_property("NRestarts") == restarts, f"NRestarts went from {restarts} to {unit_property('NRestarts')}"

      with subtest("upstream restarted: answers again without restarting nxdns"):
          pid = unit_property("MainPID")
          upstream.succeed("systemctl stop unbound.service")
          out = dig("while-down.burst.test")
          assert "status: SERVFAIL" in out, f"expected SERVFAIL:\n{out}"
          assert query_ms(out) <= TOTAL_MS + 250, f"SERVFAIL after {query_ms(out)} ms, budget {TOTAL_MS} ms"
          upstream.succeed("systemctl start unbound.service")
          upstream.wait_for_open_port(853)
          answers_again("after-restart.burst.test")
          assert unit_property("MainPID") == pid, "nxdns was restarted"
    '';
}
