# What every Raspberry Pi running nxdns shares: the SD card image
# (sd-image.nix: Raspberry Pi firmware + U-Boot for the Pi 3 and the Pi 4,
# extlinux, root partition grown to the card on first boot, no installer
# tools or all-hardware drivers), the no-RTC clock handling, and settings for
# an unattended appliance on an SD card.
{
  config,
  lib,
  ...
}:

{
  imports = [
    ./sd-image.nix
    ./clock.nix
  ];

  # The image: result/sd-image/<hostname>.img.zst (nxdns-pi.img.zst)
  # Above a mkDefault elsewhere, below anything set by hand.
  image.baseName = lib.mkOverride 900 config.networking.hostName;
  sdImage.compressImage = lib.mkDefault true;

  # Manuals are not read on an appliance; skip building them.
  documentation.enable = lib.mkDefault false;
  # NixOS installs perl, rsync and strace on every system by default; the
  # appliance is administered with nixos-rebuild from another machine.
  environment.defaultPackages = lib.mkDefault [ ];

  # SD cards wear out: no access-time writes, a bounded journal.
  fileSystems."/".options = [ "noatime" ];
  services.journald.extraConfig = ''
    SystemMaxUse=64M
  '';

  # Reboot when the system hangs (bcm2835 watchdog on both boards).
  systemd.settings.Manager.RuntimeWatchdogSec = lib.mkDefault "20s";

  # Remote administration, keys only (keys are set in appliance.nix).
  services.openssh = {
    enable = true;
    settings = {
      PasswordAuthentication = false;
      KbdInteractiveAuthentication = false;
      PermitRootLogin = lib.mkDefault "prohibit-password";
    };
  };

  networking.useDHCP = lib.mkDefault true;
}
