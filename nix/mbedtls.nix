# nixpkgs' mbedTLS 3.6 with nxdns's handshake-CPU edits
# (scripts/mbedtls-fast-ecc.sh, the same list `scripts/build-mbedtls3.sh
# --fast-ecc` applies): X25519 shared secrets from Everest's Curve25519 code.
# Only nxdns links it (flake.nix passes it to package.nix); every other
# package keeps nixpkgs' mbedtls. The edits run before CMake configures,
# in the source root, so both the library and its installed
# mbedtls_config.h carry them.
{
  lib,
  mbedtls,
}:

assert lib.assertMsg (lib.versions.majorMinor mbedtls.version == "3.6")
  "nix/mbedtls.nix: the edits are written for mbedTLS 3.6, got ${mbedtls.version}";

mbedtls.overrideAttrs (old: {
  preConfigure = (old.preConfigure or "") + ''
    $SHELL ${../scripts/mbedtls-fast-ecc.sh} .
  '';
})
