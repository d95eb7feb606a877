# settings.blocking of the NixOS module: the typed options, the section as
# the daemon gets it, and what the module checks about the lists. Imported
# by default.nix, which owns the unit and its sandbox.
{
  lib,
  settingsFormat,
  # Where URL lists' copies go by default: inside the unit's StateDirectory,
  # the one place ProtectSystem=strict lets the daemon write and a place
  # that survives reboots.
  defaultStateDir,
}:

let
  inherit (lib) mkOption types literalExpression;

  listModule = {
    freeformType = settingsFormat.type;
    options = {
      file = mkOption {
        type = types.nullOr types.path;
        default = null;
        example = "/etc/nxdns/blocklist.txt";
        description = ''
          A list on this host: an absolute path the service can read (not
          under /home, /root, /run/user, /tmp or /var/tmp, which its sandbox
          hides), read at start and on every reload. A Nix path is copied to
          the store. Give exactly one of `file` and `url`.
        '';
      };
      url = mkOption {
        type = types.nullOr (types.strMatching "https://.+");
        default = null;
        example = "https://example.org/hosts.txt";
        description = ''
          A list the daemon fetches over HTTPS (never in the clear), at start,
          every `refresh` and on a reload; its last good copy is kept in
          `state_dir`. Give exactly one of `file` and `url`.
        '';
      };
      ca_file = mkOption {
        type = types.nullOr types.path;
        default = null;
        example = literalExpression "./lists-ca.pem";
        description = ''
          `url` lists only: PEM CA certificates to verify the list's server
          with instead of the system's. A Nix path is copied to the store; a
          string must be an absolute path readable by the service.
        '';
      };
    };
  };

  groupModule = {
    freeformType = settingsFormat.type;
    options = {
      clients = mkOption {
        type = types.nonEmptyListOf types.str;
        example = [ "192.168.1.0/28" ];
        description = "Client prefixes (CIDR) of this group; each prefix may appear in one group only.";
      };
      blocking = mkOption {
        type = types.bool;
        example = false;
        description = "Whether the lists apply to these clients.";
      };
    };
  };

  # Keys the module always has a value for. Alone they leave the section
  # out of the file: a configuration without blocking gets no `blocking:`.
  moduleDefaulted = [
    "refresh"
    "answer"
    "state_dir"
  ];
in
{
  option = mkOption {
    default = { };
    description = ''
      Blocklists (docs/reference/config.md#blocking): names in the lists get
      `answer` instead of being forwarded. Left out of the file until a list
      (or `allow`, `groups`) is given.
    '';
    type = types.submodule {
      freeformType = settingsFormat.type;
      options = {
        lists = mkOption {
          type = types.listOf (types.submodule listModule);
          default = [ ];
          example = literalExpression ''
            [
              { url = "https://example.org/hosts.txt"; }
              { file = "/etc/nxdns/blocklist.txt"; }
            ]
          '';
          description = ''
            The lists: hosts files, domain lists and adblock-style DNS lists,
            mixed freely (docs/how-to/blocking.md). `services.nxdns.blocklists`
            adds to them.
          '';
        };
        refresh = mkOption {
          type = types.strMatching "[0-9]+[smhd]?";
          default = "24h";
          example = "12h";
          description = ''
            How often `url` lists are fetched again: `90s`, `30m`, `24h`, `7d`
            or seconds, from 15 minutes to 7 days.
          '';
        };
        allow = mkOption {
          type = types.listOf types.str;
          default = [ ];
          example = [ "allowed.example" ];
          description = "Names never blocked, with every name below them.";
        };
        answer = mkOption {
          type = types.enum [
            "nxdomain"
            "null"
            "refused"
          ];
          default = "nxdomain";
          description = ''
            What a blocked name gets: `"nxdomain"`, `"null"` (the string:
            A 0.0.0.0 and AAAA ::) or `"refused"`.
          '';
        };
        groups = mkOption {
          type = types.listOf (types.submodule groupModule);
          default = [ ];
          example = literalExpression ''[ { clients = [ "192.168.1.0/28" ]; blocking = false; } ]'';
          description = ''
            Client groups by prefix, deciding whether blocking applies; the
            longest prefix wins and a client in no group is filtered.
          '';
        };
        state_dir = mkOption {
          type = types.strMatching "/.+";
          default = defaultStateDir;
          defaultText = literalExpression ''"/var/lib/nxdns/lists"'';
          description = ''
            Directory where the last good copy of each `url` list is kept, so
            that a restart or a reboot without WAN still blocks. The default
            lies in the unit's StateDirectory, the only place the service may
            write.
          '';
        };
      };
    };
  };

  # The section as the daemon gets it, or null when there is none: empty
  # lists left out, each list once (the daemon rejects a list given twice,
  # and `blocklists` may repeat one of settings.blocking.lists). Nulls are
  # dropped later, with the rest of the file.
  render =
    b:
    let
      set = lib.filterAttrs (_: v: v != null && v != [ ]) b;
    in
    if removeAttrs set moduleDefaulted == { } then
      null
    else
      set // lib.optionalAttrs (set ? lists) { lists = lib.unique set.lists; };

  # A services.nxdns.blocklists entry as a settings.blocking.lists entry.
  entryOf =
    x: if builtins.isString x && lib.hasPrefix "https://" x then { url = x; } else { file = x; };

  # Strings naming files on the host (a Nix path is a store copy, readable):
  # the lists the daemon reads at start and on every reload, and the CA
  # files it reads when fetching.
  hostListFiles = b: builtins.filter builtins.isString (map (l: l.file) b.lists);
  hostCaFiles = b: builtins.filter builtins.isString (map (l: l.ca_file) b.lists);

  assertions =
    b:
    lib.concatLists (
      lib.imap0 (
        i: l:
        let
          at = "services.nxdns.settings.blocking.lists.${toString i}";
        in
        [
          {
            assertion = (l.file == null) != (l.url == null);
            message = "${at}: give exactly one of file and url (this entry has ${
              if l.file == null then "neither" else "both"
            }).";
          }
          {
            assertion = l.ca_file == null || l.url != null;
            message = "${at}.ca_file: only for url lists; a file list is read from disk, not fetched.";
          }
        ]
      ) b.lists
    );
}
