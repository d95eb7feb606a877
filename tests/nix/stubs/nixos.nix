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
#     (nixos/modules/system/boot/networkd.nix), as NixOS does.
#
# A option not declared here is an error in the module under test, as an
# option NixOS lacks would be: declare it (from nixpkgs) when a module needs it.
{ config, lib, ... }:

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
    };
  };

  assertion = {
    options = {
      assertion = mkOption { type = types.bool; };
      message = mkOption { type = types.str; };
    };
  };

  fileSystem = {
    options.options = mkOption {
      type = types.nonEmptyListOf types.nonEmptyStr;
      default = [ "defaults" ];
    };
  };
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
    # nixos/modules/tasks/network-interfaces-systemd.nix
    (lib.mkIf config.networking.useNetworkd { systemd.network.enable = true; })
    # nixos/modules/system/boot/networkd.nix
    (lib.mkIf config.systemd.network.enable { services.resolved.enable = lib.mkDefault true; })
  ];
}
