# Stand-in for nixpkgs' nixos/modules/installer/sd-card/sd-image.nix (passed
# as modulesPath by tests/nix/module-tests.nix): the options hardware/
# sd-image.nix sets, with NixOS's types (installer/sd-card/sd-image.nix,
# image/file-options.nix), and what the real module does that the profile
# must undo or build on: it imports profiles/all-hardware.nix, switches
# hardware.enableAllHardware on, and declares the two file systems.
{ lib, ... }:

let
  inherit (lib) mkOption types;
in
{
  imports = [ ../../profiles/all-hardware.nix ];

  options = {
    image.baseName = mkOption {
      type = types.str;
      default = "nixos-image";
    };
    sdImage = {
      compressImage = mkOption {
        type = types.bool;
        default = true;
      };
      firmwareSize = mkOption {
        type = types.int;
        default = 30;
      };
      # No type in nixpkgs either (a string of shell commands).
      populateFirmwareCommands = mkOption { };
      populateRootCommands = mkOption { };
    };
  };

  config = {
    hardware.enableAllHardware = true;
    fileSystems = {
      "/boot/firmware" = {
        device = "/dev/disk/by-label/FIRMWARE";
        fsType = "vfat";
        options = [
          "nofail"
          "noauto"
        ];
      };
      "/" = {
        device = "/dev/disk/by-label/NIXOS_SD";
        fsType = "ext4";
      };
    };
  };
}
