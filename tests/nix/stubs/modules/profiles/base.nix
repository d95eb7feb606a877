# Stand-in for nixpkgs' nixos/modules/profiles/base.nix (what installation
# media carry): rescue tools and every common file system, ZFS included.
{ lib, pkgs, ... }:

{
  environment.systemPackages = [
    pkgs.parted
    pkgs.ddrescue
    pkgs.cryptsetup
  ];
  boot.supportedFilesystems = lib.mkMerge [
    [
      "btrfs"
      "cifs"
      "f2fs"
      "ntfs"
      "vfat"
      "xfs"
    ]
    { zfs = lib.mkDefault true; }
  ];
}
