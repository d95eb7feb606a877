# Raspberry Pi 4 Model B (and Pi 400 / CM4, which the same firmware files
# boot). The mainline kernel from nixpkgs drives its Ethernet (bcmgenet), SD
# card and USB; the firmware partition of the generic image carries the
# Pi 4 device trees, armstub and U-Boot (see sd-image-aarch64.nix).
{ lib, ... }:

{
  imports = [ ./common.nix ];

  networking.hostName = lib.mkDefault "nxdns-pi";

  # 1 to 8 GiB of RAM: nothing to tune for a DNS forwarder. A tmpfs /tmp
  # spares the SD card.
  boot.tmp.useTmpfs = lib.mkDefault true;
}
