# The SD card image for a Raspberry Pi 3 or 4, built on nixpkgs'
# installer/sd-card/sd-image.nix (partitioning, root file system, growing the
# root partition on first boot) with the Pi's own firmware partition and
# boot chain, and nothing of the installer:
#
#   firmware partition  the Pi's closed boot firmware (bootcode.bin for the
#                       Pi 3, start*.elf, fixup*.dat), config.txt, U-Boot
#                       for each board, the Pi 4's armstub and device trees
#   root partition      /boot/extlinux/extlinux.conf, which U-Boot reads, and
#                       the system closure
#
# sd-image-aarch64.nix does the same for the Pi, but it imports
# profiles/base.nix (installer tools: parted, ddrescue, cryptsetup, w3m, ...;
# btrfs, cifs, f2fs, ntfs, xfs and zfs support) and leaves sd-image.nix's
# all-hardware switch on (SATA, SCSI, virtio, VMware, Hyper-V and other
# boards' drivers in the initrd, all redistributable firmware). An appliance
# that boots one kind of board from one card needs none of it.
{
  config,
  lib,
  pkgs,
  modulesPath,
  ...
}:

let
  # Read by the Pi's firmware before U-Boot. Sections select the board; the
  # U-Boot binary differs between the Pi 3 and the Pi 4.
  configTxt = pkgs.writeText "config.txt" ''
    [pi3]
    kernel=u-boot-rpi3.bin

    [pi4]
    kernel=u-boot-rpi4.bin
    # The Pi 4's interrupt controller (GIC-400) is what the mainline kernel
    # drives; the armstub hands it over.
    enable_gic=1
    armstub=armstub8-gic.bin
    disable_overscan=1

    [cm4]
    kernel=u-boot-rpi4.bin
    enable_gic=1
    armstub=armstub8-gic.bin
    # The CM4's USB port is host-only with this; without it the DWC2
    # controller (device mode) is used instead.
    otg_mode=1

    [all]
    arm_64bit=1
    # U-Boot on the Pi needs the UART enabled (its core clock is fixed by
    # it), whether or not a serial console is attached.
    enable_uart=1
    # The firmware's under-voltage icon would overwrite the kernel's
    # framebuffer console.
    avoid_warnings=1
  '';
  fw = "${pkgs.raspberrypifw}/share/raspberrypi/boot";
in
{
  imports = [ "${modulesPath}/installer/sd-card/sd-image.nix" ];

  # sd-image.nix imports profiles/all-hardware.nix (older nixpkgs: the
  # module list itself) and sets hardware.enableAllHardware (newer: the
  # same list behind a switch). Both are cut off.
  disabledModules = [ "profiles/all-hardware.nix" ];
  hardware.enableAllHardware = lib.mkForce false;
  # The Pi's wired Ethernet and SD card need no firmware files; the
  # firmware partition carries the boot firmware itself.
  hardware.enableRedistributableFirmware = lib.mkDefault false;

  boot.loader.grub.enable = false;
  boot.loader.generic-extlinux-compatible.enable = true;

  # Mainline device trees name the GPIO header's UART (the mini UART that
  # enable_uart turns on) ttyS1 on both boards; ttyAMA0 is the PL011, wired
  # to Bluetooth unless an overlay swaps them. The last console is
  # /dev/console (emergency shell): the screen, as on a desktop Pi.
  boot.kernelParams = [
    "console=ttyS1,115200n8"
    "console=ttyAMA0,115200n8"
    "console=tty0"
  ];

  # The initrd needs the SD card and, for an emergency shell, a USB
  # keyboard; nothing else. Without includeDefaultModules NixOS adds no
  # generic PC modules (SATA, NVMe, virtio); ext4 for the root file system
  # is still added by NixOS's ext module.
  boot.initrd.includeDefaultModules = false;
  boot.initrd.availableKernelModules = [
    "mmc_block"
    "sdhci_iproc" # Pi 4 SD card (emmc2); Pi 3 SDIO
    "bcm2835" # Pi 3 SD card (sdhost)
    "pcie_brcmstb" # Pi 4: the VL805 USB controller sits on PCIe
    "reset_raspberrypi" # Pi 4: loads the VL805's firmware
    "xhci_pci" # Pi 4 USB
    "dwc2" # Pi 3 USB
    "usbhid"
    "hid_generic"
  ];

  # The root file system is ext4 (sd-image.nix), the firmware partition
  # FAT; an appliance mounts nothing else. Forced: a profile or module that
  # adds btrfs, ZFS, NTFS, ... would bring their tools and kernel modules
  # into the image.
  boot.supportedFilesystems = lib.mkForce {
    ext4 = true;
    vfat = true;
  };

  sdImage = {
    # The firmware files are ~20 MiB; sd-image.nix's default leaves room.
    populateFirmwareCommands = ''
      (cd ${fw} && cp bootcode.bin fixup*.dat start*.elf "$NIX_BUILD_TOP/firmware/")
      cp ${configTxt} firmware/config.txt
      cp ${pkgs.ubootRaspberryPi3_64bit}/u-boot.bin firmware/u-boot-rpi3.bin
      cp ${pkgs.ubootRaspberryPi4_64bit}/u-boot.bin firmware/u-boot-rpi4.bin
      cp ${pkgs.raspberrypi-armstubs}/armstub8-gic.bin firmware/armstub8-gic.bin
      cp ${fw}/bcm2711-rpi-4-b.dtb ${fw}/bcm2711-rpi-400.dtb ${fw}/bcm2711-rpi-cm4.dtb firmware/
    '';
    populateRootCommands = ''
      mkdir -p ./files/boot
      ${config.boot.loader.generic-extlinux-compatible.populateCmd} -c ${config.system.build.toplevel} -d ./files/boot
    '';
  };
}
