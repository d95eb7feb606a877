# Runs the Nix evaluation tests with a given nixpkgs `lib`:
#
#   nix-instantiate --eval --strict --json tests/nix \
#     --arg lib 'import /path/to/nixpkgs/lib'
#
# Result: { total; failures = [ { name; expected; result; } ... ]; } with
# expected/result printed as Nix text. scripts/nix-checks.sh runs this; the
# flake runs it too (checks.<system>.module-eval, via check.nix).
{ lib }:

let
  suites = {
    module = import ./module-tests.nix { inherit lib; };
    blocking = import ./blocking-tests.nix { inherit lib; };
    clock = import ./clock-tests.nix { inherit lib; };
    package = import ./package-tests.nix { inherit lib; };
    flake = import ./flake-tests.nix { inherit lib; };
  };
  show = v: lib.generators.toPretty { multiline = false; } v;
  # A test whose expression throws fails on its own instead of stopping the
  # whole run (tryEval catches throw and assert, which is what the module
  # system raises).
  guard =
    t:
    t
    // {
      expr =
        let
          r = builtins.tryEval (builtins.deepSeq t.expr t.expr);
        in
        if r.success then r.value else "<evaluation threw>";
    };
  run =
    suite: tests:
    map (f: {
      name = "${suite}.${f.name}";
      expected = show f.expected;
      result = show f.result;
    }) (lib.runTests (lib.mapAttrs (_: guard) tests));
in
{
  total = lib.foldl' (n: s: n + builtins.length (builtins.attrNames s)) 0 (builtins.attrValues suites);
  failures = lib.concatLists (lib.mapAttrsToList run suites);
}
