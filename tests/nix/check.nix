# checks.<system>.module-eval: the Nix evaluation tests (tests/nix/) as a
# flake check. They run while the check is evaluated; the derivation only
# reports the outcome, and fails the build when any test failed.
{ pkgs, lib }:

let
  results = import ./. { inherit lib; };
  report = lib.concatMapStrings (f: ''
    FAIL ${f.name}
      expected: ${f.expected}
      result:   ${f.result}
  '') results.failures;
in
pkgs.runCommand "nxdns-nix-eval-tests"
  {
    inherit report;
    passAsFile = [ "report" ];
  }
  (
    if results.failures == [ ] then
      ''
        echo "${toString results.total} Nix evaluation tests passed" | tee "$out"
      ''
    else
      ''
        cat "$reportPath"
        echo "${toString (builtins.length results.failures)} of ${toString results.total} Nix evaluation tests failed"
        exit 1
      ''
  )
