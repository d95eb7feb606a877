# Stand-in for nixpkgs' nixos/modules/installer/sd-card/sd-image-aarch64.nix
# (passed as modulesPath by tests/nix/module-tests.nix): the options of the
# SD image that hardware/common.nix sets, with NixOS's types
# (nixos/modules/image/file-options.nix, installer/sd-card/sd-image.nix).
{ lib, ... }:

{
  options = {
    image.baseName = lib.mkOption {
      type = lib.types.str;
      default = "nixos-image";
    };
    sdImage.compressImage = lib.mkOption {
      type = lib.types.bool;
      default = true;
    };
  };
}
