# Typed stand-in for the NixOS test driver's package (nixpkgs
# nixos/lib/test-driver/src/test_driver/), for type-checking VM test scripts
# offline. Only signatures: see machine.pyi.
