# Stand-in for nixpkgs' nixos/modules/installer/sd-card/sd-image-aarch64.nix:
# as the real one, it brings the installer's profiles/base.nix along with
# sd-image.nix. The Pi profiles must not import it (module-tests.nix checks
# that nothing of base.nix reaches them).
{ lib, ... }:

{
  imports = [
    ../../profiles/base.nix
    ./sd-image.nix
  ];
  boot.loader.grub.enable = false;
  boot.loader.generic-extlinux-compatible.enable = true;
}
