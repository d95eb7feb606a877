# Raspberry Pi 3 Model B / B+ (64-bit). The same generic image boots it (its
# config.txt section loads the Pi 3 U-Boot). 1 GiB of RAM: activation of a new
# system generation (nixos-rebuild --target-host) can peak above what a
# DNS forwarder needs, so compressed swap in RAM absorbs it instead of the
# OOM killer, and /tmp stays on the card.
{ lib, ... }:

{
  imports = [ ./common.nix ];

  networking.hostName = lib.mkDefault "nxdns-pi3";

  zramSwap = {
    enable = lib.mkDefault true;
    memoryPercent = lib.mkDefault 50;
  };
}
