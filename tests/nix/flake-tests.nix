# The shape of flake.nix's outputs, evaluated with the outputs function
# called on a stand-in nixpkgs (real `lib`, stub package sets, a stub
# nixosSystem that records its modules). Catches a misspelt or missing
# output, a wrong platform pairing for the Pi, or outputs.nix code that
# does not evaluate under the Nix at hand (Debian's 2.8 included).
{ lib }:

let
  systems = [
    "x86_64-linux"
    "aarch64-linux"
  ];

  nixpkgs = {
    lib = lib // {
      nixosSystem = args: {
        inherit args;
        config.system.build = {
          sdImage = {
            type = "derivation";
            name = "sd-image";
            fromModules = args.modules;
          };
        };
      };
    };
    legacyPackages = lib.genAttrs systems (system: import ./stubs/pkgs.nix { inherit lib system; });
  };

  flake = import ../../flake.nix;
  self = flake.outputs { inherit self nixpkgs; } // {
    outPath = toString ../..;
  };

  names = builtins.attrNames;
  # The attribute-set modules given to nixosSystem, merged (the platform
  # settings live in one of them).
  plainModules = name: lib.foldl' lib.recursiveUpdate { } (builtins.filter builtins.isAttrs self.nixosConfigurations.${name}.args.modules);
in
{
  testInputsOnlyNixpkgs = {
    expr = names flake.inputs;
    expected = [ "nixpkgs" ];
  };

  testOutputs = {
    expr = names self;
    expected = [
      "apps"
      "checks"
      "devShells"
      "nixosConfigurations"
      "nixosModules"
      "outPath"
      "overlays"
      "packages"
    ];
  };

  testPackagesX86 = {
    expr = names self.packages.x86_64-linux;
    expected = [
      "default"
      "nxdns"
      "nxdns-aarch64"
      "pi-sd-image"
      "pi3-sd-image"
    ];
  };

  testPackagesAarch64 = {
    expr = names self.packages.aarch64-linux;
    expected = [
      "default"
      "nxdns"
      "pi-sd-image"
    ];
  };

  # The package comes from the overlay (package.nix), per system; the
  # aarch64 one on x86_64 from the cross package set.
  testPackageFromOverlay = {
    expr = with self.packages.x86_64-linux; {
      file = baseNameOf nxdns.fromPath;
      inherit (nxdns) system;
      sameAsDefault = default == nxdns;
      cross = nxdns-aarch64.system;
    };
    expected = {
      file = "package.nix";
      system = "x86_64-linux";
      sameAsDefault = true;
      cross = "aarch64-multiplatform";
    };
  };

  testChecks = {
    expr = map (s: names self.checks.${s}) systems;
    expected = [
      [
        "module-eval"
        "nxdns"
        "vm-burst"
        "vm-clock"
        "vm-local-names"
      ]
      [
        "module-eval"
        "nxdns"
        "vm-burst"
        "vm-clock"
        "vm-local-names"
      ]
    ];
  };

  testVmTestName = {
    expr = map (c: self.checks.x86_64-linux.${c}.test.name or null) [
      "vm-burst"
      "vm-clock"
      "vm-local-names"
    ];
    expected = [
      "nxdns-burst"
      "nxdns-clock"
      "nxdns-local-names"
    ];
  };

  testNixosModuleIsAFunction = {
    expr = builtins.isFunction self.nixosModules.default;
    expected = true;
  };

  # (Functions never compare equal in Nix: the overlay is counted, not compared.)
  testPiIsCrossBuilt = {
    expr = map (n: let p = (plainModules n).nixpkgs or { }; in p // { overlays = builtins.length (p.overlays or [ ]); }) [
      "pi"
      "pi3"
      "pi-native"
    ];
    expected = [
      {
        buildPlatform = "x86_64-linux";
        hostPlatform = "aarch64-linux";
        overlays = 1;
      }
      {
        buildPlatform = "x86_64-linux";
        hostPlatform = "aarch64-linux";
        overlays = 1;
      }
      {
        hostPlatform = "aarch64-linux";
        overlays = 1;
      }
    ];
  };

  testPiUsesModuleAndBoard = {
    expr =
      let
        ms = self.nixosConfigurations.pi.args.modules;
      in
      {
        module = builtins.length (builtins.filter builtins.isFunction ms) == 1;
        board = builtins.elem ../../hardware/pi4.nix ms;
        site = builtins.elem ../../hardware/appliance.nix ms;
        pi3 = builtins.elem ../../hardware/pi3.nix self.nixosConfigurations.pi3.args.modules;
      };
    expected = {
      module = true;
      board = true;
      site = true;
      pi3 = true;
    };
  };

  testSdImageIsThePiConfigs = {
    expr = [
      (self.packages.x86_64-linux.pi-sd-image.fromModules == self.nixosConfigurations.pi.args.modules)
      (self.packages.aarch64-linux.pi-sd-image.fromModules == self.nixosConfigurations.pi-native.args.modules)
    ];
    expected = [
      true
      true
    ];
  };

  testApp = {
    expr =
      let
        app = self.apps.x86_64-linux.default;
      in
      {
        inherit (app) type;
        program = lib.hasPrefix "${builtins.storeDir}/" app.program && lib.hasSuffix "-nxdns-demo" app.program;
        described = app.meta ? description;
      };
    expected = {
      type = "app";
      program = true;
      described = true;
    };
  };

  testDevShell = {
    expr = builtins.elem self.packages.x86_64-linux.nxdns self.devShells.x86_64-linux.default.args.inputsFrom;
    expected = true;
  };

  # The package's passthru.tests (package.nix's vmTests) are the flake's
  # VM checks, under their short names.
  testPackagePassthruVmTests = {
    expr =
      let
        given = self.packages.x86_64-linux.nxdns.args.vmTests;
      in
      {
        names = names given;
        burst = given.burst.test.name == self.checks.x86_64-linux.vm-burst.test.name;
        clock = given.clock.test.name == self.checks.x86_64-linux.vm-clock.test.name;
        local-names = (given.local-names.test.name or null) == (self.checks.x86_64-linux.vm-local-names.test.name or "");
      };
    expected = {
      names = [
        "burst"
        "clock"
        "local-names"
      ];
      burst = true;
      clock = true;
      local-names = true;
    };
  };
}
