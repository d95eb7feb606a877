# nxdns, built with CMake against nixpkgs' libraries.
#
#   nix build .#nxdns                    (from the flake)
#   nix-build -E 'with import <nixpkgs> {}; callPackage ./package.nix {}'
#
# doCheck runs the unit tests (ctest label "unit": CppUTest and cmocka). The
# loopback integration tests (label "integration") need dig/kdig and fixed
# listening addresses, so they are not registered here; the NixOS VM tests in
# vm-tests/ cover that ground on KVM machines.
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
in
stdenv.mkDerivation (finalAttrs: {
  pname = "nxdns";
  inherit version;

  src = lib.cleanSourceWith {
    name = "nxdns-source";
    src = lib.cleanSource ./.;
    filter = wanted;
  };

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

  meta = {
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
