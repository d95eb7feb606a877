# The NixOS options that the nxdns module, hardware/common.nix, pi3.nix,
# pi4.nix, clock.nix and appliance.nix set or read, declared as strictly as
# NixOS declares them (written from nixpkgs' nixos/modules and
# nixos/lib/systemd-*.nix), so those files are evaluated with nixpkgs' `lib`
# alone (lib.evalModules, no package set, no NixOS) and fail here where they
# would fail in a real system build:
#
#   - types as NixOS gives them (bool, lines, enums, strMatching, coercedTo);
#   - booleans merge as NixOS merges them: two definitions at the same
#     priority that disagree are "conflicting definition values";
#   - systemd units as NixOS checks them: unit names in wantedBy/after/...
#     match NixOS's unitNameType; serviceConfig values merge as NixOS's
#     unitOption (lists concatenate, scalars must agree) and Type/Restart are
#     checked against their systemd enums as NixOS's checkService does --
#     plus the enums of the other directives the module sets
#     (systemd.exec(5), systemd.service(5)), which NixOS leaves to systemd
#     to reject at boot;
#   - the defaults that interact: networking.useNetworkd enables
#     systemd.network, which sets services.resolved.enable = mkDefault true
#     (nixos/modules/system/boot/networkd.nix), as NixOS does;
#   - what NixOS adds to an image's initrd and file systems by itself: the
#     generic initrd modules while boot.initrd.includeDefaultModules is on
#     (system/boot/kernel.nix), the installer's drivers while
#     hardware.enableAllHardware is on (hardware/all-hardware.nix), every
#     fileSystems type in boot.supportedFilesystems (tasks/filesystems.nix),
#     ext4 in the initrd for an ext4 file system (tasks/filesystems/ext.nix),
#     perl/rsync/strace in environment.defaultPackages (config/system-path.nix);
#   - /etc/hosts as config/networking.nix writes it, from networking.hosts
#     and networking.extraHosts (an environment.etc entry);
#   - services.chrony as services/networking/ntp/chrony.nix declares it, and
#     what it does when enabled: chronyd ordered after nss-lookup.target,
#     timesyncd forced off.
#
# A option not declared here is an error in the module under test, as an
# option NixOS lacks would be: declare it (from nixpkgs) when a module needs it.
{
  config,
  lib,
  pkgs,
  ...
}:

let
  inherit (lib) mkOption types;

  # nixos/lib/systemd-lib.nix: lists concatenate; anything else must be equal.
  unitOption = lib.mkOptionType {
    name = "systemd option";
    merge =
      loc: defs:
      let
        defs' = lib.filterOverrides defs;
      in
      if lib.any (def: lib.isList def.value) defs' then
        lib.concatMap (def: lib.toList def.value) defs'
      else
        lib.mergeEqualOption loc defs';
  };

  # nixos/lib/systemd-lib.nix unitNameType.
  unitName = types.strMatching "[a-zA-Z0-9@%:_.\\-]+[.](service|socket|device|mount|automount|swap|target|path|timer|scope|slice)";
  unitNames = mkOption {
    type = types.listOf unitName;
    default = [ ];
  };

  # Directive -> the values systemd accepts. Type and Restart as NixOS's
  # checkService; the rest from systemd.exec(5) / systemd.service(5).
  serviceEnums = {
    Type = [ "exec" "simple" "forking" "oneshot" "dbus" "notify" "notify-reload" "idle" ];
    Restart = [ "no" "on-success" "on-failure" "on-abnormal" "on-watchdog" "on-abort" "always" ];
    NotifyAccess = [ "none" "main" "exec" "all" ];
    ProtectSystem = [ true false "full" "strict" ];
    ProtectHome = [ true false "read-only" "tmpfs" ];
    ProtectProc = [ "noaccess" "invisible" "ptraceable" "default" ];
    ProcSubset = [ "all" "pid" ];
    DevicePolicy = [ "auto" "closed" "strict" ];
    SystemCallErrorNumber = null; # any errno name: not enumerated here
  };
  validServiceConfig =
    attrs:
    lib.all (
      k: !(serviceEnums ? ${k}) || serviceEnums.${k} == null || builtins.elem attrs.${k} serviceEnums.${k}
    ) (builtins.attrNames attrs);
  serviceConfigType =
    types.addCheck (types.attrsOf unitOption) validServiceConfig
    // {
      description = "systemd [Service] settings (Type, Restart, Protect*, ... checked against systemd's values)";
    };

  service = {
    options = {
      enable = mkOption {
        type = types.bool;
        default = true;
      };
      description = mkOption {
        type = types.singleLineStr;
        default = "";
      };
      wantedBy = unitNames;
      requiredBy = unitNames;
      wants = unitNames;
      requires = unitNames;
      after = unitNames;
      before = unitNames;
      conflicts = unitNames;
      environment = mkOption {
        type = types.attrsOf (types.nullOr (types.oneOf [ types.str types.path types.package ]));
        default = { };
      };
      serviceConfig = mkOption {
        type = serviceConfigType;
        default = { };
      };
      unitConfig = mkOption {
        type = types.attrsOf unitOption;
        default = { };
      };
      script = mkOption {
        type = types.lines;
        default = "";
      };
      path = mkOption {
        type = types.listOf (types.oneOf [ types.package types.str ]);
        default = [ ];
      };
      # nixos/lib/systemd-unit-options.nix
      restartTriggers = mkOption {
        type = types.listOf unitOption;
        default = [ ];
      };
      reloadTriggers = mkOption {
        type = types.listOf unitOption;
        default = [ ];
      };
      restartIfChanged = mkOption {
        type = types.bool;
        default = true;
      };
      reloadIfChanged = mkOption {
        type = types.bool;
        default = false;
      };
    };
  };

  # nixos/modules/system/etc/etc.nix (the parts a module sets or reads).
  etcFile =
    { name, ... }:
    {
      options = {
        enable = mkOption {
          type = types.bool;
          default = true;
        };
        target = mkOption {
          type = types.str;
          default = name;
        };
        source = mkOption { type = types.path; };
        mode = mkOption {
          type = types.str;
          default = "symlink";
        };
      };
    };

  assertion = {
    options = {
      assertion = mkOption { type = types.bool; };
      message = mkOption { type = types.str; };
    };
  };

  fileSystem = {
    options = {
      options = mkOption {
        type = types.nonEmptyListOf types.nonEmptyStr;
        default = [ "defaults" ];
      };
      device = mkOption {
        type = types.nullOr types.nonEmptyStr;
        default = null;
      };
      fsType = mkOption {
        type = types.nonEmptyStr;
        default = "auto";
      };
    };
  };

  bool = default: mkOption {
    type = types.bool;
    inherit default;
  };
  # A few of the generic modules system/boot/kernel.nix adds (the SATA and
  # PC keyboard ones are what an ARM image has no use for).
  defaultInitrdModules = [
    "ahci"
    "sata_nv"
    "sd_mod"
    "sr_mod"
    "mmc_block"
    "ehci_pci"
    "xhci_pci"
    "usbhid"
    "hid_generic"
  ];
  # A few of hardware/all-hardware.nix's.
  allHardwareModules = [
    "ahci"
    "ata_piix"
    "3w-9xxx"
    "nvme"
    "virtio_pci"
    "vmxnet3"
  ];
in
{
  options = {
    assertions = mkOption {
      type = types.listOf (types.submodule assertion);
      default = [ ];
    };
    warnings = mkOption {
      type = types.listOf types.str;
      default = [ ];
    };

    environment.systemPackages = mkOption {
      type = types.listOf types.package;
      default = [ ];
    };
    environment.etc = mkOption {
      type = types.attrsOf (types.submodule etcFile);
      default = { };
    };

    networking = {
      hostName = mkOption {
        # nixos/modules/tasks/network-interfaces.nix (RFC 1123 label)
        type = types.strMatching "^$|^[[:alnum:]]([[:alnum:]_-]{0,61}[[:alnum:]])?$";
        default = "nixos";
      };
      useDHCP = mkOption {
        type = types.bool;
        default = true;
      };
      useNetworkd = mkOption {
        type = types.bool;
        default = false;
      };
      firewall.allowedTCPPorts = mkOption {
        type = types.listOf types.port;
        default = [ ];
      };
      firewall.allowedUDPPorts = mkOption {
        type = types.listOf types.port;
        default = [ ];
      };
      nameservers = mkOption {
        type = types.listOf types.str;
        default = [ ];
      };
      timeServers = mkOption {
        type = types.listOf types.str;
        default = [
          "0.nixos.pool.ntp.org"
          "1.nixos.pool.ntp.org"
          "2.nixos.pool.ntp.org"
          "3.nixos.pool.ntp.org"
        ];
      };
      hosts = mkOption {
        type = types.attrsOf (types.listOf types.str);
        default = { };
      };
      extraHosts = mkOption {
        type = types.lines;
        default = "";
      };
      dhcpcd.extraConfig = mkOption {
        type = types.lines;
        default = "";
      };
    };

    services.resolved.enable = mkOption {
      type = types.bool;
      default = false;
    };
    # nixos/modules/system/boot/timesyncd.nix
    services.timesyncd = {
      enable = mkOption {
        type = types.bool;
        default = true;
      };
      servers = mkOption {
        type = types.nullOr (types.listOf types.str);
        default = null;
      };
      fallbackServers = mkOption {
        type = types.nullOr (types.listOf types.str);
        default = config.networking.timeServers;
      };
      extraConfig = mkOption {
        type = types.lines;
        default = "";
      };
    };
    # nixos/modules/services/networking/ntp/chrony.nix
    services.chrony = {
      enable = bool false;
      package = mkOption {
        type = types.package;
        default = pkgs.chrony;
      };
      servers = mkOption {
        type = types.listOf types.str;
        default = config.networking.timeServers;
      };
      serverOption = mkOption {
        type = types.enum [ "iburst" "offline" ];
        default = "iburst";
      };
      enableNTS = bool false;
      initstepslew.enabled = bool true;
      enableRTCTrimming = bool true;
      extraFlags = mkOption {
        type = types.listOf types.str;
        default = [ ];
      };
      extraConfig = mkOption {
        type = types.lines;
        default = "";
      };
    };
    services.journald.extraConfig = mkOption {
      type = types.lines;
      default = "";
    };
    # nixos/modules/services/networking/ssh/sshd.nix
    services.openssh = {
      enable = mkOption {
        type = types.bool;
        default = false;
      };
      settings = mkOption {
        default = { };
        type = types.submodule {
          freeformType = types.attrsOf unitOption;
          options = {
            PasswordAuthentication = mkOption {
              type = types.nullOr types.bool;
              default = true;
            };
            KbdInteractiveAuthentication = mkOption {
              type = types.nullOr types.bool;
              default = true;
            };
            PermitRootLogin = mkOption {
              type = types.nullOr (types.enum [ "yes" "without-password" "prohibit-password" "forced-commands-only" "no" ]);
              default = "prohibit-password";
            };
          };
        };
      };
    };

    systemd.services = mkOption {
      type = types.attrsOf (types.submodule service);
      default = { };
    };
    systemd.network.enable = mkOption {
      type = types.bool;
      default = false;
    };
    # nixos/modules/system/boot/systemd.nix: [Manager] of system.conf
    systemd.settings.Manager = mkOption {
      type = types.attrsOf unitOption;
      default = { };
    };

    boot.supportedFilesystems = mkOption {
      # nixos/modules/tasks/filesystems.nix: a list is coerced to { fs = true; }
      type = types.coercedTo (types.listOf types.str) (
        enabled: lib.listToAttrs (map (fs: lib.nameValuePair fs true) enabled)
      ) (types.attrsOf types.bool);
      default = { };
    };
    boot.initrd.availableKernelModules = mkOption {
      type = types.listOf types.str;
      default = [ ];
    };
    boot.initrd.includeDefaultModules = bool true;
    boot.kernelParams = mkOption {
      # nixos/modules/system/boot/kernel.nix
      type = types.listOf (types.strMatching ''([^"[:space:]]|"[^"]*")+'');
      default = [ ];
    };
    boot.loader.grub.enable = bool true;
    boot.loader.generic-extlinux-compatible = {
      enable = bool false;
      populateCmd = mkOption {
        type = types.str;
        readOnly = true;
        default = "/nix/store/extlinux-conf-builder/bin/extlinux-conf-builder";
      };
    };
    hardware.enableAllHardware = bool false;
    hardware.enableRedistributableFirmware = bool false;
    environment.defaultPackages = mkOption {
      type = types.listOf types.package;
      default = [
        pkgs.perl
        pkgs.rsync
        pkgs.strace
      ];
    };
    system.build.toplevel = mkOption {
      type = types.str;
      default = "/nix/store/0000000000000000000000000000000-nixos-system";
    };
    boot.tmp.useTmpfs = mkOption {
      type = types.bool;
      default = false;
    };
    fileSystems = mkOption {
      type = types.attrsOf (types.submodule fileSystem);
      default = { };
    };
    zramSwap = {
      enable = mkOption {
        type = types.bool;
        default = false;
      };
      memoryPercent = mkOption {
        type = types.int;
        default = 50;
      };
    };
    documentation.enable = mkOption {
      type = types.bool;
      default = true;
    };

    users.users = mkOption {
      type = types.attrsOf (
        types.submodule {
          options.openssh.authorizedKeys.keys = mkOption {
            type = types.listOf types.singleLineStr;
            default = [ ];
          };
        }
      );
      default = { };
    };
    system.stateVersion = mkOption { type = types.str; };
  };

  config = lib.mkMerge [
    (lib.mkIf config.services.chrony.enable {
      services.timesyncd.enable = lib.mkForce false;
      systemd.services.chronyd = {
        wantedBy = [ "multi-user.target" ];
        wants = [ "time-sync.target" ];
        before = [ "time-sync.target" ];
        after = [
          "network.target"
          "nss-lookup.target"
        ];
        conflicts = [ "systemd-timesyncd.service" ];
      };
    })
    (lib.mkIf config.boot.initrd.includeDefaultModules { boot.initrd.availableKernelModules = defaultInitrdModules; })
    (lib.mkIf config.hardware.enableAllHardware {
      boot.initrd.availableKernelModules = allHardwareModules;
      hardware.enableRedistributableFirmware = true;
    })
    {
      boot.supportedFilesystems = map (fs: fs.fsType) (builtins.attrValues config.fileSystems);
    }
    (lib.mkIf (builtins.any (fs: fs.fsType == "ext4") (builtins.attrValues config.fileSystems)) {
      boot.initrd.availableKernelModules = [ "ext4" ];
    })
    # nixos/modules/config/networking.nix: /etc/hosts is written from
    # networking.hosts and networking.extraHosts.
    {
      environment.etc.hosts.source = pkgs.writeText "hosts" (
        lib.concatStrings (
          lib.mapAttrsToList (ip: names: "${ip} ${lib.concatStringsSep " " names}\n") (
            lib.filterAttrs (_: names: names != [ ]) config.networking.hosts
          )
        )
        + config.networking.extraHosts
      );
    }
    # nixos/modules/tasks/network-interfaces-systemd.nix
    (lib.mkIf config.networking.useNetworkd { systemd.network.enable = true; })
    # nixos/modules/system/boot/networkd.nix
    (lib.mkIf config.systemd.network.enable { services.resolved.enable = lib.mkDefault true; })
  ];
}
