#!/usr/bin/env bash
# The one list of mbedTLS 3.6 configuration edits that make nxdns's TLS 1.3
# client handshake cheaper, applied to an unpacked mbedTLS 3.6 source tree
# before it is configured: by `scripts/build-mbedtls3.sh --fast-ecc` and by
# the Nix override (nix/mbedtls.nix).
#
#   bash scripts/mbedtls-fast-ecc.sh SRC_DIR
#
# Needs python3 (mbedTLS's scripts/config.py). Idempotent.
#
# The edit: X25519 shared secrets from Project Everest's verified Curve25519
# code (HACL*, shipped in 3rdparty/everest) instead of the generic bignum
# Montgomery ladder. PSA's ECDH, which TLS 1.3 uses, runs through the ECDH
# context that picks Everest for Curve25519; key generation stays on the
# ladder. Measured: 7 M instructions less per full or resumed TLS 1.3
# handshake that uses X25519 (docs/performance.md, "Handshake CPU").
# Licence: the Everest code is Apache-2.0 only, so a library built with it
# can no longer be taken under mbedTLS's GPL-2.0-or-later option.
#
# Not here, because measured or read to change nothing or to cost more: the
# p256-m driver (refused beside other curves once PK/X.509/TLS are built,
# and 4.8x slower on 64-bit CPUs), MBEDTLS_ECP_WINDOW_SIZE (a 256-bit comb
# already picks its optimum), MBEDTLS_ECP_FIXED_POINT_OPTIM and
# MBEDTLS_ECP_NIST_OPTIM (on by default).
set -euo pipefail

src=${1:?usage: mbedtls-fast-ecc.sh SRC_DIR}
config_h="$src/include/mbedtls/mbedtls_config.h"
[[ -f "$config_h" && -f "$src/scripts/config.py" ]] ||
  { echo "mbedtls-fast-ecc: $src is not an mbedTLS 3.x source tree" >&2; exit 1; }
[[ -f "$src/3rdparty/everest/library/everest.c" ]] ||
  { echo "mbedtls-fast-ecc: $src has no 3rdparty/everest" >&2; exit 1; }

python3 "$src/scripts/config.py" -f "$config_h" set MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED

# Debian's source package drops 3rdparty/ from the CMake build (its config
# enables neither Everest nor p256-m); without it libmbedcrypto would call
# Everest's functions and not contain them. Upstream's tree (what nixpkgs
# builds) has the line already.
cmakelists="$src/CMakeLists.txt"
if ! grep -q '^add_subdirectory(3rdparty)$' "$cmakelists"; then
  grep -q '^add_subdirectory(library)$' "$cmakelists" ||
    { echo "mbedtls-fast-ecc: no add_subdirectory(library) in $cmakelists" >&2; exit 1; }
  sed -i 's/^add_subdirectory(library)$/add_subdirectory(3rdparty)\n\nadd_subdirectory(library)/' "$cmakelists"
fi
