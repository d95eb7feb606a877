# What every Raspberry Pi running nxdns shares: nixpkgs' generic aarch64 SD
# image (Raspberry Pi firmware + U-Boot for the Pi 3 and the Pi 4, extlinux,
# root partition grown to the card on first boot), the no-RTC clock handling,
# and settings for an unattended appliance on an SD card.
{
  config,
  lib,
  modulesPath,
  ...
}:

{
  imports = [
    "${modulesPath}/installer/sd-card/sd-image-aarch64.nix"
    ./clock.nix
  ];

  # The image: result/sd-image/<hostname>.img.zst (nxdns-pi.img.zst)
  # Above a mkDefault elsewhere, below anything set by hand.
  image.baseName = lib.mkOverride 900 config.networking.hostName;
  sdImage.compressImage = lib.mkDefault true;

  # The generic image profile enables ZFS where available; an appliance does
  # not need it, and it is the slowest and most fragile part of a cross build.
  boot.supportedFilesystems.zfs = lib.mkForce false;
  # Manuals are not read on an appliance; skip building them.
  documentation.enable = lib.mkDefault false;

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
