{
  description = "nxdns: a DNS forwarder for a Raspberry Pi (plain DNS in, DNS over TLS/HTTPS out)";

  # No flake.lock is committed: the first `nix build` / `nix flake check` on a
  # machine with network access writes one (pinning this branch's current
  # commit); commit it from there. See README, "Nix".
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-26.05";

  outputs =
    { self, nixpkgs }:
    let
      lib = nixpkgs.lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: lib.genAttrs systems f;

      pkgsFor = system: nixpkgs.legacyPackages.${system}.appendOverlays [ self.overlays.default ];

      # The appliance: board profile + site configuration + the module.
      # `platforms` is either a cross build (x86_64 builds, aarch64 runs) or
      # a native aarch64 build (binary cache; needs an aarch64 builder or
      # binfmt emulation on the building machine).
      piSystem =
        { board, platforms }:
        lib.nixosSystem {
          modules = [
            self.nixosModules.default
            board
            ./hardware/appliance.nix
            platforms
            {
              nixpkgs.overlays = [ self.overlays.default ];
              # A floor for the clock of a Pi without a battery-backed RTC:
              # never earlier than the commit this image was built from.
              nxdns.pi.clockFloor = self.lastModified or 0;
            }
          ];
        };
      crossFromX86 = {
        nixpkgs.buildPlatform = "x86_64-linux";
        nixpkgs.hostPlatform = "aarch64-linux";
      };
      nativeAarch64 = {
        nixpkgs.hostPlatform = "aarch64-linux";
      };

      # The NixOS VM tests (KVM), for a package set that has nxdns: the
      # flake's checks and the package's passthru.tests are these.
      vmTestsFor = pkgs: {
        burst = import ./vm-tests/burst.nix {
          inherit pkgs;
          nxdnsModule = self.nixosModules.default;
        };
        clock = import ./vm-tests/clock.nix {
          inherit pkgs;
          nxdnsModule = self.nixosModules.default;
        };
        local-names = import ./vm-tests/local-names.nix {
          inherit pkgs;
          nxdnsModule = self.nixosModules.default;
        };
      };
    in
    {
      overlays.default = final: prev: {
        # mbedTLS with the handshake-CPU edits (nix/mbedtls.nix), for nxdns only.
        nxdns = final.callPackage ./package.nix {
          vmTests = vmTestsFor final;
          mbedtls = final.callPackage ./nix/mbedtls.nix { };
        };
      };

      # Nix 2.8 (Debian 12) rejects a bare path here; a module value works everywhere.
      nixosModules.default = import ./nixos-module;

      nixosConfigurations = {
        pi = piSystem {
          board = ./hardware/pi4.nix;
          platforms = crossFromX86;
        };
        pi3 = piSystem {
          board = ./hardware/pi3.nix;
          platforms = crossFromX86;
        };
        pi-native = piSystem {
          board = ./hardware/pi4.nix;
          platforms = nativeAarch64;
        };
      };

      packages = forAllSystems (
        system:
        let
          pkgs = pkgsFor system;
        in
        {
          nxdns = pkgs.nxdns;
          default = pkgs.nxdns;
        }
        // lib.optionalAttrs (system == "x86_64-linux") {
          nxdns-aarch64 = pkgs.pkgsCross.aarch64-multiplatform.nxdns;
          pi-sd-image = self.nixosConfigurations.pi.config.system.build.sdImage;
          pi3-sd-image = self.nixosConfigurations.pi3.config.system.build.sdImage;
        }
        // lib.optionalAttrs (system == "aarch64-linux") {
          pi-sd-image = self.nixosConfigurations.pi-native.config.system.build.sdImage;
        }
      );

      checks = forAllSystems (
        system:
        let
          pkgs = pkgsFor system;
        in
        {
          # The package build runs the unit tests (doCheck).
          nxdns = pkgs.nxdns;
          module-eval = import ./tests/nix/check.nix {
            inherit pkgs;
            inherit (pkgs) lib;
          };
          vm-burst = (vmTestsFor pkgs).burst;
          vm-clock = (vmTestsFor pkgs).clock;
          vm-local-names = (vmTestsFor pkgs).local-names;
        }
      );

      devShells = forAllSystems (
        system:
        let
          pkgs = pkgsFor system;
        in
        {
          default = pkgs.mkShell {
            inputsFrom = [ pkgs.nxdns ];
            packages = [
              pkgs.cpputest
              pkgs.cmocka
              pkgs.gdb
              pkgs.clang-tools
              pkgs.dnsutils # dig, for the integration tests
              pkgs.knot-dns # kdig
              pkgs.prometheus.cli # promtool check metrics
              pkgs.openssl
            ];
          };
        }
      );

      apps = forAllSystems (
        system:
        let
          pkgs = pkgsFor system;
          demo = pkgs.writeShellScript "nxdns-demo" ''
            exec ${pkgs.nxdns}/bin/nxdns demo "$@"
          '';
        in
        {
          default = {
            type = "app";
            program = "${demo}";
            meta.description = "Run the loopback demo: fixture upstream, daemon, cold and warm bursts";
          };
        }
      );
    };
}
