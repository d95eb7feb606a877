# A stand-in for the nixpkgs flake, for `nix flake check --no-build` on a
# machine without nixpkgs (scripts/nix-checks.sh copies this file, a nixpkgs
# lib/ checkout and ../pkgs.nix into a temporary directory and overrides the
# nixpkgs input with it). lib is the real one; packages are inert stubs;
# nixosSystem yields stub toplevel and sdImage derivations.
{
  outputs =
    { self }:
    let
      lib = import ./lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      inert =
        name:
        derivation {
          inherit name;
          system = "x86_64-linux";
          builder = "/bin/sh";
          args = [
            "-c"
            "exit 1"
          ];
        };
    in
    {
      lib = lib // {
        nixosSystem = args: {
          inherit args;
          config.system.build = {
            toplevel = inert "nixos-system-stub";
            sdImage = inert "sd-image-stub";
          };
        };
      };
      legacyPackages = lib.genAttrs systems (system: import ./pkgs.nix { inherit lib system; });
    };
}
