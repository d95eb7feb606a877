# A stand-in for the nixpkgs package set: just what the nxdns module, the
# VM test file and flake.nix reach for. Its derivations are real but inert
# (builtins.derivation with a builder that fails; nothing here builds them),
# so option types and `nix flake check --no-build` accept them, and they
# carry what they were made from so the tests can look inside:
#   formats.yaml.generate  -> .text (JSON, a subset of YAML) and .value
#   runCommand             -> .buildCommand and .env
#   callPackage            -> .fromPath
{
  lib,
  system ? "x86_64-linux",
  withNxdns ? true,
  canExecute ? true,
  overlays ? [ ],
}:

let
  fake =
    name: extra:
    derivation {
      inherit name system;
      builder = "/bin/sh";
      args = [
        "-c"
        "echo stub derivation from tests/nix/stubs/pkgs.nix; exit 1"
      ];
    }
    // extra;

  # Same shape as nixpkgs' JSON/YAML value type.
  yamlValue =
    (types: types.nullOr (types.oneOf [
      types.bool
      types.int
      types.float
      types.str
      types.path
      (types.attrsOf yamlValue)
      (types.listOf yamlValue)
    ])) lib.types
    // {
      description = "YAML value";
    };

  base =
    self:
    {
      inherit lib;
      stdenv = {
        buildPlatform = {
          inherit system;
          canExecute = _: canExecute;
        };
        hostPlatform.system = system;
      };

      formats.yaml = _: {
        type = yamlValue;
        generate =
          name: value:
          fake name {
            inherit value;
            text = builtins.toJSON value;
          };
      };

      runCommand =
        name: env: buildCommand:
        fake name { inherit env buildCommand; };
      writeShellScript = name: text: fake name { inherit text; };
      writeText = name: text: fake name { inherit text; };
      mkShell = args: fake "nix-shell" { inherit args; };

      callPackage =
        path: args:
        fake "called-${baseNameOf (toString path)}" {
          fromPath = toString path;
          inherit args;
        };

      testers.runNixOSTest = test: fake "vm-test-${test.name}" { inherit test; };

      buildPackages = import ./pkgs.nix {
        inherit lib withNxdns overlays;
        system = "build-platform";
        canExecute = true;
      };

      pkgsCross.aarch64-multiplatform = import ./pkgs.nix {
        inherit lib withNxdns overlays;
        system = "aarch64-multiplatform";
        canExecute = false;
      };

      appendOverlays =
        more:
        import ./pkgs.nix {
          inherit
            lib
            system
            withNxdns
            canExecute
            ;
          overlays = overlays ++ more;
        };
    }
    // lib.genAttrs [
      "openssl"
      "cpputest"
      "cmocka"
      "gdb"
      "clang-tools"
      "dnsutils"
      "knot-dns"
      "curl"
      "iproute2"
      "chrony"
      # the Pi's boot chain (hardware/sd-image.nix)
      "raspberrypifw"
      "raspberrypi-armstubs"
      "ubootRaspberryPi3_64bit"
      "ubootRaspberryPi4_64bit"
      # NixOS's default packages and the installer's (stubs/nixos.nix,
      # stubs/modules/profiles/base.nix)
      "perl"
      "rsync"
      "strace"
      "parted"
      "ddrescue"
      "cryptsetup"
    ] (n: fake n { })
    // {
      # promtool lives in the cli output.
      prometheus = fake "prometheus" { cli = fake "prometheus-cli" { }; };
    }
    // lib.optionalAttrs withNxdns { nxdns = fake "nxdns-0.1.0" { }; };
in
lib.fix (lib.extends (lib.composeManyExtensions overlays) base)
