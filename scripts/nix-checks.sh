#!/usr/bin/env bash
# The "nix" stage of scripts/test.sh, for machines without a Nix daemon,
# without nixpkgs and without network (Debian's nix-bin 2.8 is enough):
#
#   1. every .nix file in the tree parses (nix-instantiate --parse);
#   2. the Nix evaluation tests (tests/nix/: the NixOS module, the no-RTC
#      clock profile, the Pi's site configuration, package.nix, the shape of
#      flake.nix's outputs) run against a nixpkgs `lib` checkout, if one is
#      on this machine; the VM tests' Python scripts are rendered and
#      compiled (and linted with pyflakes where python3-pyflakes is installed);
#   3. with that lib, `nix flake check --no-build` on the flake, its nixpkgs
#      input replaced by a stand-in (real lib, stub packages), so this Nix's
#      own flake checker validates the outputs (Nix 2.8 on Debian 12).
#
# Steps 2 and 3 need nixpkgs' lib/ directory and nothing else from nixpkgs. CI
# machines cannot fetch it, so they run only where a checkout exists:
#   NXDNS_NIXPKGS_LIB=/path     a nixpkgs (or nixpkgs.lib) checkout, or its lib/
#   /var/cache/nxdns/nixpkgs-lib  the same, looked for when the variable is unset
# Without one, steps 2 and 3 print "skipped: no nixpkgs lib" and the stage
# still passes on step 1. The same tests always run in `nix flake check`
# (checks.<system>.module-eval), and the VM tests only there (KVM).
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

# Nix 2.8 (Debian 12) has no builtins.readFileType, which lib.fileset needs;
# the flake must evaluate there, so the tree must not use it.
if grep -nE '^[^#]*lib\.fileset' "${files[@]}"; then
  echo "lib.fileset is used above: Nix 2.8 cannot evaluate it (use lib.cleanSourceWith)"
  parse_failed=$((parse_failed + 1))
fi

# ---- 2. evaluation tests ------------------------------------------------------
find_lib() {
  local c
  for c in "${NXDNS_NIXPKGS_LIB:-}" "$CACHE_LIB"; do
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
    # The VM tests' Python scripts: syntax (and pyflakes, when installed),
    # with the test driver's globals declared as the driver does.
    if scripts=$(nix-instantiate --eval --strict --json "$ROOT/tests/nix/vm-test-scripts.nix" --arg lib "import $libdir" 2>&1); then
      python3 - "$scripts" <<'EOF' || eval_failed=1
import json, os, subprocess, sys, tempfile
bad = 0
for name, t in json.loads(sys.argv[1]).items():
    header = "from typing import Any\n" + "".join(
        f"{g}: Any = None\n" for g in ["start_all", "subtest", "machines", *t["machines"]])
    source = header + t["script"]
    try:
        compile(source, f"vm-tests/{name}.nix:testScript", "exec")
    except SyntaxError as e:
        print(f"vm test script {name}: {e}")
        bad += 1
        continue
    with tempfile.NamedTemporaryFile("w", suffix=f"-{name}.py", delete=False) as f:
        f.write(source)
    lint = subprocess.run(["/usr/bin/python3", "-m", "pyflakes", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    if lint.returncode == 0:
        print(f"vm test script {name}: compiles, pyflakes clean")
    elif "No module named pyflakes" in lint.stderr:
        print(f"vm test script {name}: compiles (pyflakes not installed)")
    else:
        print(f"vm test script {name}: pyflakes:\n{lint.stdout}{lint.stderr}")
        bad += 1
sys.exit(1 if bad else 0)
EOF
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
    echo "evaluation tests: skipped: no nixpkgs lib (set NXDNS_NIXPKGS_LIB=/path/to/nixpkgs," \
      "or put a checkout at $CACHE_LIB); they run in 'nix flake check' as checks.<system>.module-eval"
    ;;
esac

# ---- 3. the flake's outputs under this Nix's own flake checker -------------
# `nix flake check --no-build` with the nixpkgs input replaced by a stand-in
# (the same lib, stub packages): Nix itself validates the output schema
# (nixosModules, overlays, apps, checks, nixosConfigurations, ...) and
# evaluates checks.<system>.module-eval in pure mode. Copies of the tree go
# to a temporary directory and the local store.
flake_failed=0
if [ -n "${libdir:-}" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
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
  echo "flake check (--no-build, stub nixpkgs): skipped: needs the nixpkgs lib (see above)"
fi

echo "not run here: package build, VM tests, SD image (need Nix with nixpkgs, and KVM for the VM tests):" \
  "nix flake check -L"
[ "$parse_failed" = 0 ] && [ "$eval_failed" = 0 ] && [ "$flake_failed" = 0 ]
