#!/usr/bin/env bash
# The "nix" stage of scripts/test.sh, for machines without a Nix daemon,
# without nixpkgs and without network (Debian's nix-bin 2.8 is enough):
#
#   1. every .nix file in the tree parses (nix-instantiate --parse);
#   2. the Nix evaluation tests (tests/nix/: the NixOS module and its unit,
#      the Pi profiles hardware/common.nix, sd-image.nix, pi3.nix, pi4.nix,
#      clock.nix and
#      the site configuration, evaluated with lib.evalModules against option
#      declarations as strict as NixOS's; package.nix; the shape of
#      flake.nix's outputs) run against a nixpkgs `lib`;
#   3. the VM tests' Python scripts are rendered and checked as the NixOS
#      test driver checks them before it boots anything: pyflakes, and mypy
#      --no-implicit-optional against a typed stub of the driver's machine
#      API (tests/nix/check_vm_scripts.py, tests/nix/driver/); negative
#      fixtures (tests/nix/fixtures/vm-script-*.py) must be rejected;
#   4. with that lib, `nix flake check --no-build` on the flake, its nixpkgs
#      input replaced by a stand-in (real lib, stub packages), so this Nix's
#      own flake checker validates the outputs (Nix 2.8 on Debian 12).
#
# Steps 2 to 4 need nixpkgs' lib/ directory and nothing else from nixpkgs,
# looked for in this order:
#   NXDNS_NIXPKGS_LIB=/path        a nixpkgs (or nixpkgs.lib) checkout, or its lib/
#   $ROOT/../shared/nixpkgs-lib    the read-only copy CI places beside the clone
#   /var/cache/nxdns/nixpkgs-lib   a machine-wide copy
# It is used where it is and never copied into the tree. Without one, steps
# 2 and 4 print "skipped: no nixpkgs lib" -- and under CI=true that is a
# failure, not a skip. Step 3 needs only mypy and pyflakes (Debian
# python3-mypy, python3-pyflakes): missing, they fail the stage.
#
# Exit status: 0 when everything that ran passed (outside CI, steps 2 and 4
# may have been skipped, as printed); non-zero on any failure.
#
# Usage: bash scripts/nix-checks.sh
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# Debian's nix-bin warns about the missing nixbld group on every call; the
# checks never build anything, so there is no build user to configure.
export NIX_CONFIG="build-users-group =${NIX_CONFIG:+
$NIX_CONFIG}"
CACHE_LIB=/var/cache/nxdns/nixpkgs-lib
SHARED_LIB=$(cd "$ROOT/.." && pwd)/shared/nixpkgs-lib

if ! command -v nix-instantiate >/dev/null 2>&1; then
  echo "nix-instantiate not found (Debian: apt-get install nix-bin; scripts/install-deps.sh does)"
  exit 1
fi
echo "$(nix-instantiate --version)"

# ---- 1. parse ---------------------------------------------------------------
# Local build trees and VCS data are not part of the source.
mapfile -t files < <(find . \( -path './build*' -o -path './.git' -o -path './.cache' -o -path './result*' \) -prune \
  -o -type f -name '*.nix' -print | sort)
parse_failed=0
for f in "${files[@]}"; do
  if ! out=$(nix-instantiate --parse "$f" 2>&1 >/dev/null); then
    echo "PARSE ERROR $f"
    echo "$out" | sed 's/^/  /'
    parse_failed=$((parse_failed + 1))
  fi
done
echo "parse: ${#files[@]} .nix files, $parse_failed failed"
if [ "${#files[@]}" = 0 ]; then
  echo "no .nix files found under $ROOT"
  exit 1
fi

# Nix 2.8 (Debian 12) lacks one builtin that nixpkgs lib 26.11 calls without
# a fallback: builtins.readFileType (Nix 2.14). Found by comparing the
# builtins the lib names with `builtins.attrNames builtins` of this Nix:
# also missing are builtins.warn (lib.warn falls back to trace) and nothing
# else. readFileType is lib.filesystem.pathType, so lib.fileset,
# lib.pathIsDirectory / pathIsRegularFile and lib.sources' git helpers
# (commitIdFromGitRepo, pathIsGitRepo) throw on Nix 2.8. The flake must
# evaluate there, so the tree must not call them.
if grep -nE '^[^#]*(lib\.fileset|readFileType|pathType|pathIsDirectory|pathIsRegularFile|commitIdFromGitRepo|pathIsGitRepo)' "${files[@]}"; then
  echo "a lib function that needs builtins.readFileType is used above: Nix 2.8 cannot evaluate it (use lib.cleanSourceWith, builtins.pathExists)"
  parse_failed=$((parse_failed + 1))
fi

# ---- 2. evaluation tests ------------------------------------------------------
find_lib() {
  local c
  for c in "${NXDNS_NIXPKGS_LIB:-}" "$SHARED_LIB" "$CACHE_LIB"; do
    [ -n "$c" ] || continue
    if [ -f "$c/lib/default.nix" ] && [ -f "$c/lib/modules.nix" ]; then
      echo "$c/lib"
      return 0
    fi
    if [ -f "$c/default.nix" ] && [ -f "$c/modules.nix" ]; then
      echo "$c"
      return 0
    fi
    if [ -n "${NXDNS_NIXPKGS_LIB:-}" ] && [ "$c" = "$NXDNS_NIXPKGS_LIB" ]; then
      echo "NXDNS_NIXPKGS_LIB=$c holds no nixpkgs lib (expected lib/modules.nix or modules.nix)" >&2
      return 2
    fi
  done
  return 1
}

eval_failed=0
libdir=$(find_lib)
case $? in
  0)
    version=$(nix-instantiate --eval --expr "(import $libdir).version" 2>/dev/null | tr -d '"')
    echo "evaluation tests: nixpkgs lib $version at $libdir"
    if ! json=$(nix-instantiate --eval --strict --json "$ROOT/tests/nix" --arg lib "import $libdir" 2>&1); then
      echo "$json"
      echo "evaluation tests: the test suite itself failed to evaluate"
      eval_failed=1
    else
      python3 - "$json" <<'EOF' || eval_failed=1
import json, sys
r = json.loads(sys.argv[1])
for f in r["failures"]:
    print(f"FAIL {f['name']}\n  expected: {f['expected']}\n  result:   {f['result']}")
n, bad = r["total"], len(r["failures"])
print(f"evaluation tests: {n - bad} of {n} passed")
sys.exit(1 if bad else 0)
EOF
    fi
    # ---- 3. the VM tests' scripts, checked as the test driver checks them
    if scripts=$(nix-instantiate --eval --strict --json "$ROOT/tests/nix/vm-test-scripts.nix" --arg lib "import $libdir" 2>&1); then
      /usr/bin/python3 "$ROOT/tests/nix/check_vm_scripts.py" <<<"$scripts" || eval_failed=1
    else
      echo "$scripts"
      echo "vm test scripts: failed to render"
      eval_failed=1
    fi
    ;;
  2)
    echo "evaluation tests: FAILED: NXDNS_NIXPKGS_LIB does not point at a nixpkgs lib"
    eval_failed=1
    ;;
  *)
    if [ "${CI:-}" = true ]; then
      echo "evaluation tests: FAILED: no nixpkgs lib at $SHARED_LIB or $CACHE_LIB, and NXDNS_NIXPKGS_LIB" \
        "is unset; in CI the lib must be there (a fresh clone with shared/ beside it)"
      eval_failed=1
    else
      echo "evaluation tests: skipped: no nixpkgs lib (set NXDNS_NIXPKGS_LIB=/path/to/nixpkgs," \
        "or put one at $SHARED_LIB or $CACHE_LIB); they run in 'nix flake check' as checks.<system>.module-eval"
    fi
    ;;
esac

# Negative fixtures: scripts the test driver would refuse; the checker must
# refuse each one, or a broken check would pass every script. Needs no lib.
if ! /usr/bin/python3 "$ROOT/tests/nix/check_vm_scripts.py" --expect-reject "$ROOT"/tests/nix/fixtures/vm-script-*.py; then
  echo "vm test script check: FAILED: it accepts a script the NixOS test driver rejects"
  eval_failed=1
fi

# ---- 4. the flake's outputs under this Nix's own flake checker -------------
# `nix flake check --no-build` with the nixpkgs input replaced by a stand-in
# (the same lib, stub packages): Nix itself validates the output schema
# (nixosModules, overlays, apps, checks, nixosConfigurations, ...) and
# evaluates checks.<system>.module-eval in pure mode. Copies of the tree go
# to a temporary directory and the local store.
flake_failed=0
if [ -n "${libdir:-}" ]; then
  tmp=$(mktemp -d)
  # The lib may be a read-only copy (the one CI places beside the clone): make
  # the copy removable.
  trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/nixpkgs" "$tmp/src"
  cp "$ROOT/tests/nix/stubs/nixpkgs-flake/flake.nix" "$ROOT/tests/nix/stubs/pkgs.nix" "$tmp/nixpkgs/"
  cp -r "$libdir" "$tmp/nixpkgs/lib"
  tar -C "$ROOT" --exclude='./build*' --exclude=./.git --exclude=./.cache --exclude='./result*' -cf - . | tar -C "$tmp/src" -xf -
  rm -f "$tmp/src/flake.lock"
  if out=$(NIX_CONFIG="$NIX_CONFIG
experimental-features = nix-command flakes" nix flake check --no-build \
      --override-input nixpkgs "path:$tmp/nixpkgs" "path:$tmp/src" 2>&1); then
    echo "flake check (--no-build, stub nixpkgs): outputs valid"
  else
    echo "$out" | grep -v "^warning: not writing modified lock file\|^• Added input\|^    'path:" | sed 's/^/  /'
    echo "flake check (--no-build, stub nixpkgs): FAILED"
    flake_failed=1
  fi
else
  if [ "${CI:-}" = true ]; then
    echo "flake check (--no-build, stub nixpkgs): FAILED: needs the nixpkgs lib (see above)"
    flake_failed=1
  else
    echo "flake check (--no-build, stub nixpkgs): skipped: needs the nixpkgs lib (see above)"
  fi
fi

echo "not run here: package build, VM tests, SD image (need Nix with nixpkgs, and KVM for the VM tests):" \
  "nix flake check -L"
[ "$parse_failed" = 0 ] && [ "$eval_failed" = 0 ] && [ "$flake_failed" = 0 ]
