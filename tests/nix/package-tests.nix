# package.nix called with a stub stdenv (mkDerivation returns its argument
# set, with finalAttrs tied) and placeholder inputs: the CMake flags, the
# test selection, native vs. cross, and the source filter.
{ lib }:

let
  call =
    {
      canExecute ? true,
      mbedtlsVersion ? "3.6.7",
      extra ? { },
    }:
    import ../../package.nix ({
      inherit lib;
      stdenv = {
        mkDerivation = f: lib.fix f;
        buildPlatform.canExecute = _: canExecute;
        hostPlatform = { };
      };
      cmake = "cmake";
      pkg-config = "pkg-config";
      libevent = "libevent";
      mbedtls = {
        pname = "mbedtls";
        version = mbedtlsVersion;
      };
      curl = "curl";
      yaml-cpp = "yaml-cpp";
      libmicrohttpd = "libmicrohttpd";
      cpputest = "cpputest";
      cmocka = "cmocka";
    } // extra);
  native = call { };
  cross = call { canExecute = false; };

  root = toString ../..;
  keeps = rel: type: native.src.filter "${root}/${rel}" type;
in
{
  testPackageVersionFromCMakeLists = {
    expr = builtins.match "[0-9]+\\.[0-9]+\\.[0-9]+" native.version != null && native.version != "0.0.0";
    expected = true;
  };

  testPackageInputs = {
    expr = {
      inherit (native) nativeBuildInputs buildInputs checkInputs;
    };
    expected = {
      nativeBuildInputs = [
        "cmake"
        "pkg-config"
      ];
      buildInputs = [
        "libevent"
        {
          pname = "mbedtls";
          version = "3.6.7";
        }
        "curl"
        "yaml-cpp"
        "libmicrohttpd"
      ];
      checkInputs = [
        "cpputest"
        "cmocka"
      ];
    };
  };

  testPackageNativeRunsUnitTests = {
    expr = {
      inherit (native) doCheck;
      flags = builtins.filter (f: lib.hasInfix "TESTS" f) native.cmakeFlags;
      unitOnly = lib.hasInfix "ctest -L unit" native.checkPhase;
    };
    expected = {
      doCheck = true;
      flags = [
        "-DNXDNS_BUILD_TESTS:BOOL=TRUE"
        "-DNXDNS_INTEGRATION_TESTS:BOOL=FALSE"
      ];
      unitOnly = true;
    };
  };

  # Cross (aarch64 from x86_64): nothing to run, so the test frameworks are
  # not even looked for at configure time.
  testPackageCrossBuildsNoTests = {
    expr = {
      inherit (cross) doCheck;
      flags = builtins.filter (f: lib.hasInfix "BUILD_TESTS" f) cross.cmakeFlags;
    };
    expected = {
      doCheck = false;
      flags = [ "-DNXDNS_BUILD_TESTS:BOOL=FALSE" ];
    };
  };

  testPackageSourceFilter = {
    expr = {
      keep = map (p: keeps p "directory") [
        "src"
        "tests"
        "tests/config"
        "cmake"
        "examples"
        "src/build-info"
      ];
      keepFile = keeps "CMakeLists.txt" "regular";
      drop = map (p: keeps p "directory") [
        "docs"
        "nixos-module"
        "vm-tests"
        "hardware"
        "tests/nix"
        "build"
        "build-ci"
      ];
      dropFile = map (p: keeps p "regular") [
        "flake.nix"
        "package.nix"
        "README.md"
        "tests/nix/default.nix"
      ];
    };
    expected = {
      keep = [
        true
        true
        true
        true
        true
        true
      ];
      keepFile = true;
      drop = [
        false
        false
        false
        false
        false
        false
        false
      ];
      dropFile = [
        false
        false
        false
        false
      ];
    };
  };

  # Cross builds put build tools and target libraries in different places;
  # strictDeps makes a library listed as a tool (or the reverse) fail
  # natively too, not only under cross.
  testPackageStrictDeps = {
    expr = native.strictDeps;
    expected = true;
  };

  # mbedTLS 4 lacks the API the daemon uses: a nixpkgs that gives 4.x as
  # `mbedtls` fails at evaluation, 2.28 and 3.6 pass.
  testPackageMbedtlsVersions = {
    expr = map (v: (builtins.tryEval (call { mbedtlsVersion = v; }).pname).success) [
      "2.28.8"
      "3.6.7"
      "4.1.0"
    ];
    expected = [
      true
      true
      false
    ];
  };

  testPackageMeta = {
    expr = {
      inherit (native.meta) mainProgram maintainers;
      platforms = native.meta.platforms == lib.platforms.linux;
      described = builtins.stringLength native.meta.description > 0;
      # No LICENSE file in the repository: nothing is claimed.
      license = native.meta ? license;
    };
    expected = {
      mainProgram = "nxdns";
      maintainers = [ ];
      platforms = true;
      described = true;
      license = false;
    };
  };

  # passthru.tests is what the flake hands over as vmTests, unchanged.
  testPackagePassthruTests = {
    expr = [
      native.passthru.tests
      (call { extra.vmTests.burst = "vm-burst"; }).passthru.tests
    ];
    expected = [
      { }
      { burst = "vm-burst"; }
    ];
  };
}
