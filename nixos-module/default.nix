# NixOS module: services.nxdns.
#
# From a flake:   imports = [ nxdns.nixosModules.default ];
# Without flakes: imports = [ /path/to/nxdns/nixos-module ];
#
# Every option is described in docs/how-to/nixos-module.md.
{
  config,
  lib,
  pkgs,
  ...
}:

let
  inherit (lib)
    mkOption
    mkEnableOption
    mkIf
    mkMerge
    mkDefault
    types
    literalExpression
    optional
    ;

  cfg = config.services.nxdns;
  helpers = import ./lib.nix { inherit lib; };
  settingsFormat = pkgs.formats.yaml { };
  blocking = import ./blocking.nix {
    inherit lib settingsFormat;
    defaultStateDir = defaultListsDir;
  };

  # pkgs.nxdns exists when the flake's overlay is applied; otherwise build
  # this tree's package.nix with the system's own pkgs (cross-aware: for the
  # cross-built Pi image this is the aarch64 build).
  defaultPackage = pkgs.nxdns or (pkgs.callPackage ../package.nix { });

  # The build-time check runs the daemon's own validator. It must run on the
  # build machine: when cross-compiling, that is the build platform's nxdns.
  canRunHostBinaries = pkgs.stdenv.buildPlatform.canExecute pkgs.stdenv.hostPlatform;
  checker =
    if canRunHostBinaries then
      cfg.package
    else
      pkgs.buildPackages.nxdns or (pkgs.buildPackages.callPackage ../package.nix { });

  # hosts_files as the daemon gets them: the user's entries, then /etc/hosts
  # when hostsFromNetworking, each once (the daemon rejects a file listed
  # twice). Left out when empty, like every unset key. A Nix path entry is
  # copied to the store when rendered: only strings name files on the host.
  hostsFiles = lib.unique (cfg.settings.hosts_files ++ optional cfg.hostsFromNetworking "/etc/hosts");
  hostPathHostsFiles = builtins.filter builtins.isString hostsFiles;
  blockingSection = blocking.render cfg.settings.blocking;
  renderedSettings = helpers.dropNulls (
    removeAttrs cfg.settings [
      "hosts_files"
      "blocking"
    ]
    // lib.optionalAttrs (hostsFiles != [ ]) { hosts_files = hostsFiles; }
    // lib.optionalAttrs (blockingSection != null) { blocking = blockingSection; }
  );
  generatedConfig = settingsFormat.generate "nxdns-unchecked.yaml" renderedSettings;

  # The file the daemon runs with is the file that passed `nxdns check`:
  # a configuration the daemon would reject fails the system build instead
  # of the boot. --offline: no network in the build sandbox.
  checkedConfig =
    pkgs.runCommand "nxdns.yaml"
      {
        preferLocalBuild = true;
        allowSubstitutes = false;
      }
      ''
        ${checker}/bin/nxdns check --offline -c ${generatedConfig}
        cp ${generatedConfig} "$out"
      '';

  configFile = if cfg.checkConfig then checkedConfig else generatedConfig;

  # The daemon runs with a stable path, so a configuration change swaps the
  # file under it and reloads the daemon in place (reloadTriggers) instead
  # of changing ExecStart, which would restart it: no DNS blip, TLS sessions
  # and the cache kept (docs/how-to/nixos-module.md).
  runtimeConfig = "/etc/nxdns/nxdns.yaml";
  settingOr = path: default: lib.attrByPath path default cfg.settings;
  # What the daemon cannot change in place (its reload says "needs a
  # restart"): a change here restarts the unit (restart wins over reload).
  restartOnlySettings = {
    http_enabled = settingOr [ "http" "enabled" ] true;
    http_listen = settingOr [ "http" "listen" ] "127.0.0.1:8053";
    cache_enabled = settingOr [ "cache" "enabled" ] true;
    # Read once, at start (the daemon's reload says "needs a restart").
    cache_persist_file = settingOr [ "cache" "persist_file" ] null;
    cache_persist_interval = settingOr [ "cache" "persist_interval" ] 900;
  };

  # A file that NixOS writes (an environment.etc entry; /etc/hosts is
  # networking.hosts and networking.extraHosts) changes on a switch while
  # the configuration file stays the same. The daemon reads hosts files and
  # file blocklists at start and on every reload, so their content is a
  # reload trigger.
  etcSources = lib.concatMap (
    f:
    let
      name = lib.removePrefix "/etc/" f;
      entry = config.environment.etc.${name};
    in
    lib.optional (lib.hasPrefix "/etc/" f && config.environment.etc ? ${name} && entry.enable) entry.source
  );

  # ProtectHome= and PrivateTmp= give the unit empty directories of its own
  # in place of these: a file the daemon must read there (a hosts file, a
  # blocklist) is missing for it, and it would refuse to start.
  hiddenPrefixes = [
    "/home/"
    "/root/"
    "/run/user/"
    "/tmp/"
    "/var/tmp/"
  ];
  readableBySandbox =
    option: files:
    let
      hidden = builtins.filter (f: builtins.any (p: lib.hasPrefix p f) hiddenPrefixes) files;
    in
    {
      assertion = hidden == [ ];
      message = "services.nxdns.${option}: ${lib.concatStringsSep ", " hidden} cannot be read by nxdns.service: ProtectHome= and PrivateTmp= hide /home, /root, /run/user, /tmp and /var/tmp from it. Put the file under /etc (environment.etc).";
    };

  # home_router: auto finds the default gateway (getifaddrs(3)) and follows
  # route and address changes: both speak netlink. Off, or a configured
  # address, needs neither, and the family stays closed.
  homeRouterAuto = settingOr [ "home_router" ] "auto" == "auto";

  # The unit's StateDirectory (systemd creates it before the daemon starts;
  # with DynamicUser it is /var/lib/private/nxdns, reached through the
  # /var/lib/nxdns symlink, and kept across restarts and reboots). It holds
  # the cache file and, in lists/, the copies of URL blocklists.
  stateDirectory = "nxdns";
  defaultPersistFile = "/var/lib/${stateDirectory}/cache";
  defaultListsDir = "/var/lib/${stateDirectory}/lists";
  # `nxdns reload` over the loopback web surface waits for the daemon's
  # verdict, so `systemctl reload nxdns` (and nixos-rebuild switch) fails
  # with the daemon's FILE:LINE:COL error when the file is not applied.
  # Without the surface, SIGHUP: the result is only in the journal.
  execReload =
    if restartOnlySettings.http_enabled then
      "${cfg.package}/bin/nxdns reload --http ${restartOnlySettings.http_listen}"
    else
      "${cfg.package}/bin/nxdns reload --pid $MAINPID";

  upstreamModule = {
    freeformType = settingsFormat.type;
    options = {
      url = mkOption {
        type = types.strMatching "(tls|https)://.+";
        example = "tls://9.9.9.9:853";
        description = ''
          `tls://IP[:port]` (DNS over TLS, port 853 by default) or
          `https://HOST[:port]/PATH` (DNS over HTTPS, port 443 by default).
          A `tls://` host must be an IP address: looking up a name would need
          DNS, which may be this daemon.
        '';
      };
      tls_name = mkOption {
        type = types.nullOr types.str;
        default = null;
        example = "dns.quad9.net";
        description = ''
          Name the server's certificate must carry, also sent as SNI.
          Required when the URL host is an IP address; for an `https://` URL
          with a host name it defaults to that name.
        '';
      };
      address = mkOption {
        type = types.nullOr types.str;
        default = null;
        example = "1.1.1.1";
        description = ''
          `https://` URLs with a host name only, and then required: the IP
          address to connect to (no port).
        '';
      };
      method = mkOption {
        type = types.nullOr (
          types.enum [
            "post"
            "get"
          ]
        );
        default = null;
        description = "`https://` only: the RFC 8484 request method (the daemon's default is post).";
      };
      priority = mkOption {
        type = types.ints.between (-1000000) 1000000;
        default = 0;
        description = "Lower is preferred; equal priorities keep list order.";
      };
      enabled = mkOption {
        type = types.bool;
        default = true;
        description = "Disabled entries are validated but never used.";
      };
      ca_file = mkOption {
        type = types.nullOr types.path;
        default = null;
        example = literalExpression "./home-ca.pem";
        description = ''
          PEM file of CA certificates to verify this upstream with instead of
          the system trust store. A Nix path is copied to the store; a string
          must be an absolute path readable by the service.
        '';
      };
    };
  };

  settingsModule = {
    freeformType = settingsFormat.type;
    options = {
      listen = mkOption {
        type = types.nonEmptyListOf types.str;
        default = [
          "0.0.0.0:53"
          "[::]:53"
        ];
        example = [
          "192.168.1.2:53"
          "127.0.0.1:53"
        ];
        description = ''
          Addresses to answer plain DNS on (UDP and TCP each): `IP:port` or
          `[IPv6]:port`, port 53 by default. A wildcard and a specific address
          of the same family and port cannot be combined.
        '';
      };
      upstreams = mkOption {
        type = types.listOf (types.submodule upstreamModule);
        default = [ ];
        description = "Encrypted resolvers to forward to, tried by priority. At least one must be enabled.";
      };
      budgets = mkOption {
        default = { };
        description = "Time limits for one client query, in milliseconds.";
        type = types.submodule {
          freeformType = settingsFormat.type;
          options = {
            attempt_ms = mkOption {
              type = types.ints.between 100 30000;
              default = 2000;
              description = "Longest single exchange with one upstream before failing over.";
            };
            total_ms = mkOption {
              type = types.ints.between 200 60000;
              default = 5000;
              description = "Longest a whole query may take, queueing and failover included; then SERVFAIL.";
            };
          };
        };
      };
      http = mkOption {
        default = { };
        description = "The web surface: /metrics (Prometheus) and /api/health.";
        type = types.submodule {
          freeformType = settingsFormat.type;
          options = {
            enabled = mkOption {
              type = types.bool;
              default = true;
              description = "Serve /metrics and /api/health.";
            };
            listen = mkOption {
              type = types.str;
              default = "127.0.0.1:8053";
              description = "`IP:port` of the web listener. Not opened in the firewall by this module.";
            };
          };
        };
      };
      blocking = blocking.option;
      hosts_files = mkOption {
        type = types.listOf types.path;
        default = [ ];
        example = [ "/etc/nxdns/hosts" ];
        description = ''
          Files in hosts(5) format whose names nxdns answers itself (A, AAAA
          and PTR records; docs/reference/config.md#hosts_files), read at
          start and on every reload. Absolute paths the service can read:
          not under /home, /root, /run/user, /tmp or /var/tmp, which its
          sandbox hides. A file written with `environment.etc` reloads the
          daemon when its content changes. `hostsFromNetworking` adds
          /etc/hosts.
        '';
      };
      cache = mkOption {
        default = { };
        description = "The answer cache (docs/reference/config.md#cache).";
        type = types.submodule {
          freeformType = settingsFormat.type;
          options.persist_file = mkOption {
            type = types.nullOr types.str;
            default = defaultPersistFile;
            defaultText = literalExpression ''"/var/lib/nxdns/cache"'';
            description = ''
              File the answer cache is saved to (at most every
              `persist_interval`, and at shutdown) and loaded from at start,
              so that a restart or a reboot without WAN still answers the
              names the household asked before (docs/how-to/restarts.md).
              The default lies in the unit's StateDirectory; `null` keeps
              the cache in memory only.
            '';
          };
        };
      };
      log = mkOption {
        default = { };
        description = "Logging.";
        type = types.submodule {
          freeformType = settingsFormat.type;
          options.level = mkOption {
            type = types.enum [
              "debug"
              "info"
              "warn"
              "error"
            ];
            default = "info";
            description = "Least severe level written to the journal.";
          };
        };
      };
    };
  };

  upstreamAssertions = lib.concatLists (
    lib.imap0 (
      i: u:
      let
        at = "services.nxdns.settings.upstreams.${toString i}";
        parsed = helpers.parseUpstreamUrl u.url;
        host = if parsed == null then "" else parsed.host;
        isTls = parsed != null && parsed.scheme == "tls";
        isHttps = parsed != null && parsed.scheme == "https";
        hostIsIP = parsed != null && helpers.isIP host;
      in
      [
        {
          assertion = parsed != null;
          message = "${at}.url: cannot parse \"${u.url}\"; expected tls://IP[:port] or https://HOST[:port]/PATH.";
        }
        {
          assertion = !isTls || hostIsIP;
          message = "${at}.url: a tls:// upstream must name an IP address (resolving \"${host}\" would need DNS); put the name in tls_name.";
        }
        {
          assertion = !hostIsIP || u.tls_name != null;
          message = "${at}.tls_name: required because the URL host is an IP address; give the name on the server's certificate.";
        }
        {
          assertion = !isHttps || hostIsIP || u.address != null;
          message = "${at}.address: required because the URL host \"${host}\" is a name; give its IP address.";
        }
        {
          assertion = isHttps || (u.address == null && u.method == null);
          message = "${at}: address and method are only for https:// upstreams.";
        }
      ]
    ) cfg.settings.upstreams
  );
in
{
  options.services.nxdns = {
    enable = mkEnableOption "nxdns, a DNS forwarder to DNS-over-TLS and DNS-over-HTTPS upstreams";

    package = lib.mkPackageOption { nxdns = defaultPackage; } "nxdns" {
      extraDescription = ''
        The default is `pkgs.nxdns` when the nxdns overlay is applied, and
        otherwise this source tree's `package.nix` built with the system's
        `pkgs`.
      '';
    };

    settings = mkOption {
      default = { };
      type = types.submodule settingsModule;
      example = literalExpression ''
        {
          listen = [ "0.0.0.0:53" "[::]:53" ];
          upstreams = [
            { url = "tls://9.9.9.9:853"; tls_name = "dns.quad9.net"; }
            { url = "https://cloudflare-dns.com/dns-query"; address = "1.1.1.1"; priority = 10; }
          ];
          budgets.total_ms = 5000;
          http.listen = "127.0.0.1:8053";
        }
      '';
      description = ''
        The daemon's configuration, rendered to YAML (see
        docs/reference/config.md). Keys without a typed option pass through
        unchanged; unset optional keys are left out of the file. The file is
        validated with `nxdns check --offline` when the system is built.
      '';
    };

    openFirewall = mkOption {
      type = types.bool;
      default = false;
      description = ''
        Open the DNS ports of `settings.listen` (TCP and UDP) in the firewall,
        on every interface: anyone who can reach the Pi can then send it
        queries. nxdns itself still answers only the clients its
        `access_control` allows (by default loopback, RFC 1918, 100.64.0.0/10,
        link-local and ULA ranges) and REFUSED to everyone else, so a Pi with
        a public address does not become an open resolver unless
        `settings.access_control` allows it.
        The web port (`settings.http.listen`) is never opened by this option.
      '';
    };

    useAsSystemResolver = mkOption {
      type = types.bool;
      default = false;
      description = ''
        Make this host resolve through nxdns: `networking.nameservers`
        gets 127.0.0.1 (and ::1 when nxdns listens there), systemd-resolved
        is disabled, and dhcpcd no longer writes DHCP-supplied name servers
        to resolv.conf (they would bypass encryption whenever nxdns answers
        SERVFAIL). Needs a listen entry that covers 127.0.0.1:53.
      '';
    };

    hostsFromNetworking = mkOption {
      type = types.bool;
      default = false;
      description = ''
        Answer the names of this host's /etc/hosts, that is
        `networking.hosts` and `networking.extraHosts`, from nxdns itself
        (A, AAAA and PTR records): /etc/hosts is added to
        `settings.hosts_files`, after the files listed there. A switch that
        changes /etc/hosts reloads the daemon, which then serves the new
        names.
      '';
    };

    blocklists = mkOption {
      type = types.listOf (types.either (types.strMatching "https://.+") types.path);
      default = [ ];
      example = [
        "https://example.org/hosts.txt"
        "/etc/nxdns/blocklist.txt"
      ];
      description = ''
        Blocklists, each an `https://` URL (fetched by the daemon, its last
        good copy kept in `settings.blocking.state_dir`) or an absolute path
        on this host: added after `settings.blocking.lists` as
        `{ url = ...; }` or `{ file = ...; }`. The other blocking settings
        (`allow`, `answer`, `groups`, `refresh`) are in `settings.blocking`.
      '';
    };

    checkConfig = mkOption {
      type = types.bool;
      default = true;
      description = ''
        Validate the rendered file with `nxdns check --offline` at build
        time. When cross-compiling, the build platform's stock nxdns runs
        the check, not `package`.
      '';
    };

    configFile = mkOption {
      type = types.path;
      readOnly = true;
      default = configFile;
      defaultText = literalExpression "the YAML rendered from settings (checked when checkConfig)";
      description = "The configuration file the daemon runs with (read-only).";
    };
  };

  config = mkIf cfg.enable (mkMerge [
    {
      assertions = [
        {
          assertion = builtins.any (u: u.enabled) cfg.settings.upstreams;
          message = "services.nxdns.settings.upstreams: no enabled upstream; nxdns has nowhere to forward queries. Add an entry such as { url = \"tls://9.9.9.9:853\"; tls_name = \"dns.quad9.net\"; }.";
        }
        {
          assertion = cfg.settings.budgets.total_ms >= cfg.settings.budgets.attempt_ms;
          message = "services.nxdns.settings.budgets.total_ms (${toString cfg.settings.budgets.total_ms}) must be at least attempt_ms (${toString cfg.settings.budgets.attempt_ms}).";
        }
        {
          assertion = builtins.all (e: helpers.parseEndpoint 53 e != null) cfg.settings.listen;
          message = "services.nxdns.settings.listen: every entry must be IP[:port] or [IPv6][:port], got ${builtins.toJSON cfg.settings.listen}.";
        }
        (readableBySandbox "settings.hosts_files" hostPathHostsFiles)
        (readableBySandbox "settings.blocking.lists" (
          blocking.hostListFiles cfg.settings.blocking ++ blocking.hostCaFiles cfg.settings.blocking
        ))
      ]
      ++ upstreamAssertions
      ++ blocking.assertions cfg.settings.blocking;

      environment.systemPackages = [ cfg.package ];

      environment.etc."nxdns/nxdns.yaml".source = configFile;

      services.nxdns.settings.blocking.lists = lib.mkAfter (map blocking.entryOf cfg.blocklists);

      networking.firewall = mkIf cfg.openFirewall {
        allowedTCPPorts = helpers.listenPorts cfg.settings.listen;
        allowedUDPPorts = helpers.listenPorts cfg.settings.listen;
      };

      systemd.services.nxdns = {
        description = "nxdns DNS forwarder (DNS over TLS / DNS over HTTPS)";
        wantedBy = [ "multi-user.target" ];
        wants = [
          "network-online.target"
          "nss-lookup.target"
        ];
        # time-set.target: the saved clock (if any) has been applied, so the
        # first certificate checks do not run against 1970.
        after = [
          "network-online.target"
          "time-set.target"
        ];
        before = [ "nss-lookup.target" ];

        # A new configuration file, hosts file or file blocklist reloads; a
        # new package or a setting that cannot change in place restarts.
        reloadTriggers = [
          configFile
        ]
        ++ etcSources (hostPathHostsFiles ++ blocking.hostListFiles cfg.settings.blocking);
        restartTriggers = [ (builtins.toJSON restartOnlySettings) ];

        # mbedTLS verifies with the file named by the daemon; libcurl (DoH)
        # goes through OpenSSL's default paths, which honour SSL_CERT_FILE.
        environment.SSL_CERT_FILE = "/etc/ssl/certs/ca-certificates.crt";

        serviceConfig = {
          # The daemon sends READY=1 on NOTIFY_SOCKET once every listener is
          # bound, so units ordered after nss-lookup.target find it serving;
          # around a reload it sends RELOADING=1 with MONOTONIC_USEC, then
          # READY=1. Type=notify with a synchronous ExecReload rather than
          # Type=notify-reload: notify-reload only signals and waits, and
          # reports success even when the daemon rejected the file.
          Type = "notify";
          NotifyAccess = "main";
          ExecStart = "${cfg.package}/bin/nxdns run -c ${runtimeConfig}";
          ExecReload = execReload;
          Restart = "on-failure";
          RestartSec = "5s";
          # SIGTERM drains in-flight queries before exit.
          TimeoutStopSec = "15s";

          DynamicUser = true;
          # Where the cache file (settings.cache.persist_file) and the URL
          # blocklists' copies (settings.blocking.state_dir) live: the only
          # place the unit may write (ProtectSystem=strict).
          StateDirectory = stateDirectory;
          StateDirectoryMode = "0700";
          # Port 53 is the only privilege it needs.
          AmbientCapabilities = [ "CAP_NET_BIND_SERVICE" ];
          CapabilityBoundingSet = [ "CAP_NET_BIND_SERVICE" ];
          NoNewPrivileges = true;

          ProtectSystem = "strict";
          ProtectHome = true;
          PrivateTmp = true;
          PrivateDevices = true;
          PrivateMounts = true;
          DevicePolicy = "closed";
          ProtectKernelTunables = true;
          ProtectKernelModules = true;
          ProtectKernelLogs = true;
          ProtectControlGroups = true;
          ProtectClock = true;
          ProtectHostname = true;
          ProtectProc = "invisible";
          # Hides /proc/net (a top-level link to self/net), not the
          # process's own /proc/thread-self/net, where the home router's
          # default route is read.
          ProcSubset = "pid";
          RestrictAddressFamilies = [
            "AF_INET"
            "AF_INET6"
            "AF_UNIX"
          ]
          ++ optional homeRouterAuto "AF_NETLINK";
          RestrictNamespaces = true;
          LockPersonality = true;
          MemoryDenyWriteExecute = true;
          RestrictRealtime = true;
          RestrictSUIDSGID = true;
          RemoveIPC = true;
          SystemCallArchitectures = "native";
          SystemCallFilter = [
            "@system-service"
            "~@privileged"
            "~@resources"
          ];
          SystemCallErrorNumber = "EPERM";
          UMask = "0077";
        };
      };
    }

    (mkIf cfg.useAsSystemResolver {
      assertions = [
        {
          assertion = helpers.servesLoopback "127.0.0.1" cfg.settings.listen;
          message = "services.nxdns.useAsSystemResolver needs a listen entry covering 127.0.0.1:53 (\"0.0.0.0:53\" or \"127.0.0.1:53\"); resolv.conf cannot name another port.";
        }
        {
          assertion = !config.services.resolved.enable;
          message = "services.nxdns.useAsSystemResolver: systemd-resolved is enabled; it would own resolv.conf and port 53 on 127.0.0.53. Disable it (services.resolved.enable = false).";
        }
      ];
      networking.nameservers = [
        "127.0.0.1"
      ]
      ++ optional (helpers.servesLoopback "::1" cfg.settings.listen) "::1";
      # Above mkDefault (1000), below a plain definition (100): networkd sets
      # services.resolved.enable = mkDefault true, and two mkDefaults that
      # disagree are "conflicting definition values" -- networking.useNetworkd
      # would break the build instead of giving nxdns the resolver. Enabling
      # resolved by hand still wins and meets the assertion above.
      services.resolved.enable = lib.mkOverride 900 false;
      networking.dhcpcd.extraConfig = ''
        # nxdns is this host's resolver (services.nxdns.useAsSystemResolver).
        nohook resolv.conf
      '';
    })
  ]);
}
