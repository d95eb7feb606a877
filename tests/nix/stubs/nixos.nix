# The few NixOS options the nxdns module, hardware/clock.nix and
# hardware/appliance.nix touch,
# declared with the same types NixOS gives them (or close enough to catch
# the same mistakes), so the modules can be evaluated with nixpkgs' `lib`
# alone: lib.evalModules, no nixpkgs package set, no NixOS.
{ lib, ... }:

let
  inherit (lib) mkOption types;

  # systemd unit settings: scalars, or lists of them (lists concatenate
  # across definitions, scalars must agree, as in NixOS).
  unitScalar = types.oneOf [
    types.bool
    types.int
    types.str
    types.path
  ];
  unitValue = types.either unitScalar (types.listOf unitScalar);
  unitNames = mkOption {
    type = types.listOf types.str;
    default = [ ];
  };

  service = {
    options = {
      description = mkOption {
        type = types.str;
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
        type = types.attrsOf types.str;
        default = { };
      };
      serviceConfig = mkOption {
        type = types.attrsOf unitValue;
        default = { };
      };
      unitConfig = mkOption {
        type = types.attrsOf unitValue;
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
    services.timesyncd.enable = mkOption {
      type = types.bool;
      default = true;
    };

    systemd.services = mkOption {
      type = types.attrsOf (types.submodule service);
      default = { };
    };

    # For hardware/appliance.nix.
    users.users = mkOption {
      type = types.attrsOf (
        types.submodule {
          options.openssh.authorizedKeys.keys = mkOption {
            type = types.listOf types.str;
            default = [ ];
          };
        }
      );
      default = { };
    };
    system.stateVersion = mkOption { type = types.str; };
  };
}
