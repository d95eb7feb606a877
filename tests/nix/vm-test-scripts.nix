# The Python test scripts of vm-tests/, rendered with stub packages and
# made-up node addresses, so scripts/nix-checks.sh can compile (and, where
# pyflakes is installed, lint) them on a machine that cannot run the VMs.
# The NixOS test driver lints them again (pyflakes, mypy) before it starts.
{ lib }:

let
  pkgs = import ./stubs/pkgs.nix { inherit lib; };
  nodes = lib.genAttrs [ "appliance" "client" "router" "upstream" ] (name: {
    networking.primaryIPAddress =
      {
        appliance = "192.168.1.1";
        client = "192.168.1.2";
        router = "192.168.1.3";
        upstream = "192.168.1.4";
      }
      .${name};
  });
  render =
    test: {
      machines = builtins.attrNames test.nodes;
      script = test.testScript { inherit nodes; };
    };
in
{
  burst = render (import ../../vm-tests/burst.nix {
    inherit pkgs;
    nxdnsModule = { };
  }).test;
  clock = render (import ../../vm-tests/clock.nix {
    inherit pkgs;
    nxdnsModule = { };
  }).test;
  local-names = render (import ../../vm-tests/local-names.nix {
    inherit pkgs;
    nxdnsModule = { };
  }).test;
}
