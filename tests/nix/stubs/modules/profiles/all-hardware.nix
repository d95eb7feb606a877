# Stand-in for nixpkgs' nixos/modules/profiles/all-hardware.nix as older
# nixpkgs has it (the installer's initrd drivers and all redistributable
# firmware, unconditionally); sd-image.nix imports it. Newer nixpkgs has the
# same behind hardware.enableAllHardware (stubs/nixos.nix models that).
{ ... }:

{
  boot.initrd.availableKernelModules = [
    "ahci"
    "ata_piix"
    "3w-9xxx"
    "virtio_pci"
    "hv_storvsc"
  ];
  hardware.enableRedistributableFirmware = true;
}
