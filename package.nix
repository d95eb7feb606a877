# nxdns, built with CMake against nixpkgs' libraries.
#
#   nix build .#nxdns                    (from the flake)
#   nix-build -E 'with import <nixpkgs> {}; callPackage ./package.nix {}'
#
# doCheck runs the unit tests (ctest label "unit": CppUTest and cmocka). The
# loopback integration tests (label "integration") need dig/kdig and fixed
# listening addresses, so they are not registered here; the NixOS VM tests in
# vm-tests/ cover that ground on KVM machines (passthru.tests, given by the
# flake as `vmTests`).
{
  lib,
  stdenv,
  cmake,
  pkg-config,
  libevent,
  mbedtls,
  curl,
  yaml-cpp,
  libmicrohttpd,
  cpputest,
  cmocka,
  # name -> VM test derivation; the flake passes vm-tests/ here so that
  # `nix build .#nxdns.tests.burst` and nixpkgs-style tooling find them.
  vmTests ? { },
}:

let
  # Only what the build reads (an allow-list of top-level entries, so local
  # build-* trees never enter the store). Editing docs or the Nix files must
  # not change the package's hash, rebuild the daemon or re-run its tests.
  # lib.fileset would say this more briefly, but Nix 2.8 (Debian 12) lacks
  # builtins.readFileType, so the flake sticks to cleanSourceWith.
  root = toString ./.;
  topLevel = [
    "CMakeLists.txt"
    "cmake"
    "src"
    "tests"
    "examples"
  ];
  wanted =
    name: type:
    let
      rel = lib.removePrefix (root + "/") (toString name);
      top = builtins.head (lib.splitString "/" rel);
    in
    builtins.elem top topLevel && rel != "tests/nix" && !(lib.hasPrefix "tests/nix/" rel);

  # The version lives in one place: CMakeLists.txt's project() line.
  cmakeLists = builtins.readFile ./CMakeLists.txt;
  versionMatch = builtins.match ".*project\\(nxdns VERSION ([0-9.]+)[ )].*" cmakeLists;
  version = if versionMatch == null then "0.0.0" else builtins.head versionMatch;

  # The code speaks the mbedTLS 2.28 and 3.6 APIs (behind version guards).
  # mbedTLS 4 removes the legacy crypto and X.509 calls it makes, so a
  # nixpkgs whose `mbedtls` is 4.x must fail here, at evaluation, with the
  # remedy, not hours later in a cross build. In nixpkgs 26.05 `mbedtls` is
  # 3.6 LTS and 4.x is the separate `mbedtls_4`.
  mbedtlsMajor = lib.versions.major (mbedtls.version or "0");
in
assert lib.assertMsg (builtins.elem mbedtlsMajor [ "2" "3" ])
  "nxdns needs mbedTLS 2.28 or 3.6; this nixpkgs gives mbedtls ${mbedtls.version or "(no version)"}: call package.nix with `mbedtls` set to a 3.6 package";
stdenv.mkDerivation (finalAttrs: {
  pname = "nxdns";
  inherit version;

  src = lib.cleanSourceWith {
    name = "nxdns-source";
    src = lib.cleanSource ./.;
    filter = wanted;
  };

  # Build tools in nativeBuildInputs, libraries in buildInputs, and nothing
  # found by accident across the two: what a cross build (x86_64 -> aarch64)
  # needs to be right.
  strictDeps = true;

  nativeBuildInputs = [
    cmake
    pkg-config
  ];

  buildInputs = [
    libevent
    mbedtls
    curl
    yaml-cpp
    libmicrohttpd
  ];

  # The test frameworks are only looked for when tests are built, which is
  # exactly when they can run: not when cross-compiling (aarch64 from x86_64).
  checkInputs = [
    cpputest
    cmocka
  ];

  doCheck = stdenv.buildPlatform.canExecute stdenv.hostPlatform;

  cmakeFlags = [
    (lib.cmakeBool "NXDNS_BUILD_TESTS" finalAttrs.doCheck)
    (lib.cmakeBool "NXDNS_INTEGRATION_TESTS" false)
    (lib.cmakeBool "NXDNS_FUZZ" false)
    # Warnings stay warnings here: a newer compiler or library in nixpkgs
    # must not turn a deprecation into a failed build. CI builds with -Werror.
    (lib.cmakeBool "NXDNS_WERROR" false)
  ];

  checkPhase = ''
    runHook preCheck
    ctest -L unit --output-on-failure --timeout 300 -j "$NIX_BUILD_CORES"
    runHook postCheck
  '';

  postInstall = ''
    install -Dm644 "$src/examples/nxdns.yaml" "$out/share/doc/nxdns/nxdns.yaml"
  '';

  passthru.tests = vmTests;

  meta = {
    # No license and no homepage are declared: the repository carries no
    # LICENSE file and has no published home. maintainers is empty because
    # the package lives in this repository, not in nixpkgs' maintainer list.
    maintainers = [ ];
    description = "DNS forwarder for a home appliance: plain DNS in, DNS over TLS and HTTPS out";
    longDescription = ''
      nxdns answers plain DNS (UDP and TCP) on the LAN and forwards each query
      to encrypted upstream resolvers over DNS over TLS (RFC 7858) or DNS over
      HTTPS (RFC 8484), with per-upstream concurrency, TLS session reuse and
      Prometheus metrics that show the upstream queue.
    '';
    mainProgram = "nxdns";
    platforms = lib.platforms.linux;
  };
})
