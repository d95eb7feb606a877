# Evaluation tests for nixos-module/ and the Pi profiles (hardware/; the clock
# in clock-tests.nix), in lib.runTests
# form (every attribute named test*; { expr; expected; }).
#
# The modules are evaluated with lib.evalModules against small stand-ins for
# NixOS (stubs/nixos.nix) and nixpkgs (stubs/pkgs.nix): what is checked here
# is the module's own logic (options, defaults, rendering, the unit,
# assertions, type errors). That the unit really runs is vm-tests/' job.
{ lib }:

let
  stubPkgs = args: import ./stubs/pkgs.nix ({ inherit lib; } // args);
  defaultPkgs = stubPkgs { };
  helpers = import ../../nixos-module/lib.nix { inherit lib; };

  evalWith =
    pkgs: modules:
    (lib.evalModules {
      # As NixOS passes it; hardware/common.nix imports the SD image module
      # from it (a stand-in with that module's option types).
      specialArgs.modulesPath = toString ./stubs/modules;
      modules = [
        ./stubs/nixos.nix
        ../../nixos-module
        { _module.args.pkgs = pkgs; }
      ]
      ++ modules;
    }).config;
  eval = evalWith defaultPkgs;

  # Options that NixOS's manual (and `nixos-option`, search.nixos.org-style
  # tooling) would show without a description: names, recursing into
  # submodules (settings.upstreams.*.url and the like).
  undocumented =
    prefix: modules:
    let
      options =
        (lib.evalModules {
          specialArgs.modulesPath = toString ./stubs/modules;
          modules = [
            ./stubs/nixos.nix
            ../../nixos-module
            { _module.args.pkgs = defaultPkgs; }
          ]
          ++ modules;
        }).options;
      docs = lib.optionAttrSetToDocList (lib.attrByPath prefix { } options);
    in
    map (o: o.name) (
      builtins.filter (o: o.visible && (o.description or null == null || o.description == "")) docs
    );

  failedAssertions =
    config: map (a: a.message) (builtins.filter (a: !a.assertion) config.assertions);
  # Does any failed assertion's message match the regular expression?
  failsWith =
    regex: config: builtins.any (m: builtins.match regex m != null) (failedAssertions config);

  # Does evaluating (deeply) throw? Type errors in the module system are
  # `throw`s, which tryEval catches.
  throws = v: !(builtins.tryEval (builtins.deepSeq v v)).success;

  quad9 = {
    url = "tls://9.9.9.9:853";
    tls_name = "dns.quad9.net";
  };
  enabled = upstreams: {
    services.nxdns = {
      enable = true;
      settings.upstreams = upstreams;
    };
  };
  good = enabled [ quad9 ];
  unchecked = {
    services.nxdns.checkConfig = false;
  };

  # The document the daemon would read (JSON is YAML; the stub renders JSON).
  rendered = modules: builtins.fromJSON (eval ([ unchecked ] ++ modules)).services.nxdns.configFile.text;
  renderedUpstream = modules: builtins.head (rendered modules).upstreams;

  unit = modules: (eval modules).systemd.services.nxdns;
  serviceConfig = modules: (unit modules).serviceConfig;

  # Store paths in strings carry context, which builtins.match refuses in a
  # pattern; the tests compare text only.
  plain = builtins.unsafeDiscardStringContext;
  hasInfix = infix: s: lib.hasInfix (plain infix) (plain s);
  hasPrefix = prefix: s: lib.hasPrefix (plain prefix) (plain s);
in
{
  # ---- rendering -----------------------------------------------------------

  testDefaultsRendered = {
    expr = rendered [ good ];
    expected = {
      listen = [
        "0.0.0.0:53"
        "[::]:53"
      ];
      upstreams = [
        {
          url = "tls://9.9.9.9:853";
          tls_name = "dns.quad9.net";
          priority = 0;
          enabled = true;
        }
      ];
      budgets = {
        attempt_ms = 2000;
        total_ms = 5000;
      };
      http = {
        enabled = true;
        listen = "127.0.0.1:8053";
      };
      cache.persist_file = "/var/lib/nxdns/cache";
      log.level = "info";
    };
  };

  # The cache is kept across restarts and reboots by default, in the
  # directory systemd keeps for the unit (with DynamicUser:
  # /var/lib/private/nxdns behind the /var/lib/nxdns symlink), the only
  # place ProtectSystem=strict lets it write.
  testCacheFileInTheStateDirectory = {
    expr =
      let
        sc = serviceConfig [ good ];
      in
      {
        file = (rendered [ good ]).cache.persist_file;
        inherit (sc) StateDirectory StateDirectoryMode DynamicUser;
        underIt = lib.hasPrefix "/var/lib/${sc.StateDirectory}/" (rendered [ good ]).cache.persist_file;
      };
    expected = {
      file = "/var/lib/nxdns/cache";
      StateDirectory = "nxdns";
      StateDirectoryMode = "0700";
      DynamicUser = true;
      underIt = true;
    };
  };

  testCacheFileOffOrElsewhere = {
    expr = {
      off = (rendered [
        good
        { services.nxdns.settings.cache.persist_file = null; }
      ]) ? cache;
      moved =
        (rendered [
          good
          { services.nxdns.settings.cache.persist_file = "/var/lib/nxdns/other"; }
        ]).cache.persist_file;
      withOtherCacheKeys =
        (rendered [
          good
          { services.nxdns.settings.cache.max_bytes = 1048576; }
        ]).cache;
    };
    expected = {
      off = true;
      moved = "/var/lib/nxdns/other";
      withOtherCacheKeys = {
        max_bytes = 1048576;
        persist_file = "/var/lib/nxdns/cache";
      };
    };
  };

  # Unset optional keys must be absent, not null (the daemon rejects
  # `key:` with no value and unknown keys).
  testUnsetKeysLeftOut = {
    expr = builtins.attrNames (renderedUpstream [
      (enabled [
        {
          url = "https://cloudflare-dns.com/dns-query";
          address = "1.1.1.1";
        }
      ])
    ]);
    expected = [
      "address"
      "enabled"
      "priority"
      "url"
    ];
  };

  testNoNullAnywhere = {
    expr = hasInfix "null" (eval [
      unchecked
      good
    ]).services.nxdns.configFile.text;
    expected = false;
  };

  testOptionalKeysRendered = {
    expr = renderedUpstream [
      (enabled [
        (
          quad9
          // {
            ca_file = "/etc/nxdns/ca.pem";
            priority = -5;
            enabled = true;
          }
        )
      ])
    ];
    expected = quad9 // {
      ca_file = "/etc/nxdns/ca.pem";
      priority = -5;
      enabled = true;
    };
  };

  testTypedValuesRendered = {
    expr =
      let
        r = rendered [
          good
          {
            services.nxdns.settings = {
              listen = [ "192.168.1.2:53" ];
              budgets.attempt_ms = 1500;
              http.enabled = false;
              log.level = "debug";
            };
          }
        ];
      in
      {
        inherit (r) listen budgets;
        http = r.http.enabled;
        log = r.log.level;
      };
    expected = {
      listen = [ "192.168.1.2:53" ];
      budgets = {
        attempt_ms = 1500;
        total_ms = 5000;
      };
      http = false;
      log = "debug";
    };
  };

  # Freeform: keys the module has no option for pass through (the daemon,
  # via `nxdns check` at build time, decides whether they are valid).
  testFreeformPassThrough = {
    expr =
      let
        r = rendered [
          (enabled [ (quad9 // { future_key = 3; }) ])
          { services.nxdns.settings.future_section.knob = true; }
        ];
      in
      [
        r.future_section
        (builtins.head r.upstreams).future_key
      ];
    expected = [
      { knob = true; }
      3
    ];
  };

  # ---- local names: hosts files ---------------------------------------------

  # hostsFromNetworking serves /etc/hosts (networking.hosts and extraHosts,
  # which NixOS writes there); off by default, and then no hosts_files key
  # at all (the daemon's default: none).
  testHostsFromNetworkingAddsEtcHosts = {
    expr = {
      on = (rendered [
        good
        { services.nxdns.hostsFromNetworking = true; }
      ]).hosts_files;
      off = (rendered [ good ]) ? hosts_files;
    };
    expected = {
      on = [ "/etc/hosts" ];
      off = false;
    };
  };

  # The user's files stay, in their order, /etc/hosts after them, and a file
  # listed twice is written once (the daemon rejects a file listed twice).
  testUserHostsFilesKept = {
    expr =
      let
        files =
          modules:
          (rendered (
            [
              good
              { services.nxdns.hostsFromNetworking = true; }
            ]
            ++ modules
          )).hosts_files;
      in
      {
        mine = files [ { services.nxdns.settings.hosts_files = [ "/etc/nxdns/hosts" ]; } ];
        alsoEtcHosts = files [
          {
            services.nxdns.settings.hosts_files = [
              "/etc/hosts"
              "/etc/nxdns/hosts"
            ];
          }
        ];
        # Two modules' definitions add up, as a list option's do.
        twoModules = files [
          { services.nxdns.settings.hosts_files = [ "/etc/nxdns/hosts" ]; }
          { services.nxdns.settings.hosts_files = [ "/var/lib/hosts/lan" "/etc/nxdns/hosts" ]; }
        ];
        withoutOption =
          (rendered [
            good
            { services.nxdns.settings.hosts_files = [ "/etc/nxdns/hosts" ]; }
          ]).hosts_files;
      };
    expected = {
      mine = [
        "/etc/nxdns/hosts"
        "/etc/hosts"
      ];
      alsoEtcHosts = [
        "/etc/hosts"
        "/etc/nxdns/hosts"
      ];
      twoModules = [
        "/etc/nxdns/hosts"
        "/var/lib/hosts/lan"
        "/etc/hosts"
      ];
      withoutOption = [ "/etc/nxdns/hosts" ];
    };
  };

  # A hosts file the daemon cannot see under its sandbox fails the build
  # (ProtectHome=, PrivateTmp=); one under /etc does not.
  testHiddenHostsFileFails = {
    expr = map (
      f:
      failsWith ".*hosts_files: ${f} cannot be read.*ProtectHome.*" (eval [
        good
        { services.nxdns.settings.hosts_files = [ f ]; }
      ])
    ) [
      "/home/me/hosts"
      "/root/hosts"
      "/tmp/hosts"
      "/var/tmp/hosts"
      "/etc/nxdns/hosts"
    ];
    expected = [
      true
      true
      true
      true
      false
    ];
  };

  # The daemon takes absolute paths only; Nix says so at evaluation.
  testRejectRelativeHostsFile = {
    expr = throws (rendered [
      good
      { services.nxdns.settings.hosts_files = [ "hosts" ]; }
    ]);
    expected = true;
  };

  # ---- option documentation ----------------------------------------------

  testEveryModuleOptionDescribed = {
    expr = {
      nxdns = undocumented [ "services" "nxdns" ] [ ];
      pi = undocumented [ "nxdns" "pi" ] [ ../../hardware/clock.nix ];
    };
    expected = {
      nxdns = [ ];
      pi = [ ];
    };
  };

  # ---- the build-time check and the unit ----------------------------------

  # The daemon reads a stable path that points at the checked file: a new
  # configuration changes the file, not ExecStart, so the unit reloads.
  testExecStart = {
    expr =
      let
        c = eval [ good ];
      in
      {
        execStart = c.systemd.services.nxdns.serviceConfig.ExecStart == "${defaultPkgs.nxdns}/bin/nxdns run -c /etc/nxdns/nxdns.yaml";
        etcIsTheCheckedFile = plain (toString c.environment.etc."nxdns/nxdns.yaml".source) == plain (toString c.services.nxdns.configFile);
      };
    expected = {
      execStart = true;
      etcIsTheCheckedFile = true;
    };
  };

  # Reload wiring: a changed file reloads (reloadTriggers), the
  # reload is `nxdns reload` over the web surface (synchronous: a rejected
  # file fails `systemctl reload` with the daemon's error), and the unit
  # stays Type=notify (the daemon sends RELOADING=1 + MONOTONIC_USEC, then
  # READY=1).
  testReloadWiring = {
    expr =
      let
        c = eval [ good ];
        u = c.systemd.services.nxdns;
      in
      {
        reloadTriggers = map (t: plain (toString t)) u.reloadTriggers == [ (plain (toString c.services.nxdns.configFile)) ];
        execReload = u.serviceConfig.ExecReload == "${defaultPkgs.nxdns}/bin/nxdns reload --http 127.0.0.1:8053";
        restartsInstead = u.reloadIfChanged;
        inherit (u.serviceConfig) Type;
      };
    expected = {
      reloadTriggers = true;
      execReload = true;
      restartsInstead = false;
      Type = "notify";
    };
  };

  testReloadFollowsHttpListen = {
    expr =
      (serviceConfig [
        good
        { services.nxdns.settings.http.listen = "127.0.0.1:9153"; }
      ]).ExecReload == "${defaultPkgs.nxdns}/bin/nxdns reload --http 127.0.0.1:9153";
    expected = true;
  };

  # No web surface: SIGHUP (the result is in the journal only).
  testReloadWithoutHttpSignals = {
    expr =
      (serviceConfig [
        good
        { services.nxdns.settings.http.enabled = false; }
      ]).ExecReload == "${defaultPkgs.nxdns}/bin/nxdns reload --pid $MAINPID";
    expected = true;
  };

  # An upstream change only reloads; a setting the daemon cannot change in
  # place (http.listen, http.enabled, cache.enabled, the cache file) restarts, because a
  # changed restartTrigger restarts even when a reloadTrigger changed too.
  testWhatRestartsAndWhatReloads =
    let
      u = modules: unit ([ unchecked ] ++ modules);
      base = u [ good ];
      moreUpstreams = u [ (enabled [ quad9 { url = "tls://149.112.112.112:853"; tls_name = "dns.quad9.net"; } ]) ];
      otherHttp = u [ good { services.nxdns.settings.http.listen = "127.0.0.1:9153"; } ];
      noCache = u [ good { services.nxdns.settings.cache.enabled = false; } ];
      otherCacheFile = u [ good { services.nxdns.settings.cache.persist_file = "/var/lib/nxdns/other"; } ];
      # The stub's derivations have no content hash: an unchecked file is
      # compared by its text.
      trigger = t: if builtins.isAttrs t then t.text or (plain (toString t)) else plain t;
      same = a: b: map trigger a == map trigger b;
    in
    {
      expr = {
        upstreamsReload = !(same base.reloadTriggers moreUpstreams.reloadTriggers);
        upstreamsDoNotRestart = same base.restartTriggers moreUpstreams.restartTriggers;
        upstreamsKeepExecStart = base.serviceConfig.ExecStart == moreUpstreams.serviceConfig.ExecStart;
        httpRestarts = !(same base.restartTriggers otherHttp.restartTriggers);
        cacheSwitchRestarts = !(same base.restartTriggers noCache.restartTriggers);
        cacheFileRestarts = !(same base.restartTriggers otherCacheFile.restartTriggers);
      };
      expected = {
        upstreamsReload = true;
        upstreamsDoNotRestart = true;
        upstreamsKeepExecStart = true;
        httpRestarts = true;
        cacheSwitchRestarts = true;
        cacheFileRestarts = true;
      };
    };

  testConfigIsCheckedAtBuildTime = {
    expr =
      let
        file = (eval [ good ]).services.nxdns.configFile;
      in
      {
        inherit (file) name;
        runsCheck =
          builtins.match (plain ".*${defaultPkgs.nxdns}/bin/nxdns check --offline -c [^ ]*-nxdns-unchecked\\.yaml\n.*") (
            plain file.buildCommand
          )
          != null;
        copiesToOut = hasInfix "\"$out\"" file.buildCommand;
      };
    expected = {
      name = "nxdns.yaml";
      runsCheck = true;
      copiesToOut = true;
    };
  };

  testCheckConfigOff = {
    expr = (eval [ good unchecked ]).services.nxdns.configFile.name;
    expected = "nxdns-unchecked.yaml";
  };

  # Cross builds (the Pi image from x86_64): the aarch64 daemon runs on the
  # Pi, the check runs the build machine's nxdns.
  testCrossCheckRunsBuildPlatformBinary = {
    expr =
      let
        pkgs = stubPkgs { canExecute = false; };
        c = evalWith pkgs [ good ];
      in
      {
        check = hasInfix "${pkgs.buildPackages.nxdns}/bin/nxdns check" c.services.nxdns.configFile.buildCommand;
        run = hasPrefix "${pkgs.nxdns}/bin/nxdns run" c.systemd.services.nxdns.serviceConfig.ExecStart;
      };
    expected = {
      check = true;
      run = true;
    };
  };

  testDefaultPackageWithoutOverlay = {
    expr = lib.hasSuffix "/package.nix" (evalWith (stubPkgs { withNxdns = false; }) [ good ]).services.nxdns.package.fromPath;
    expected = true;
  };

  testPackageOverride = {
    expr =
      let
        mine = defaultPkgs.runCommand "my-nxdns" { } "";
      in
      hasPrefix "${mine}/bin/nxdns run -c " (serviceConfig [
        good
        { services.nxdns.package = mine; }
      ]).ExecStart;
    expected = true;
  };

  testUnitSettings = {
    expr = lib.getAttrs [
      "Type"
      "Restart"
      "DynamicUser"
      "AmbientCapabilities"
      "CapabilityBoundingSet"
      "ProtectSystem"
      "RestrictAddressFamilies"
      "SystemCallArchitectures"
      "SystemCallFilter"
      "UMask"
    ] (serviceConfig [ good ]);
    expected = {
      Type = "notify";
      Restart = "on-failure";
      DynamicUser = true;
      AmbientCapabilities = [ "CAP_NET_BIND_SERVICE" ];
      CapabilityBoundingSet = [ "CAP_NET_BIND_SERVICE" ];
      ProtectSystem = "strict";
      RestrictAddressFamilies = [
        "AF_INET"
        "AF_INET6"
        "AF_UNIX"
        "AF_NETLINK"
      ];
      SystemCallArchitectures = "native";
      SystemCallFilter = [
        "@system-service"
        "~@privileged"
        "~@resources"
      ];
      UMask = "0077";
    };
  };

  testUnitHardeningSwitches = {
    expr =
      let
        sc = serviceConfig [ good ];
      in
      builtins.filter (k: (sc.${k} or false) != true) [
        "NoNewPrivileges"
        "PrivateDevices"
        "PrivateTmp"
        "ProtectHome"
        "ProtectKernelTunables"
        "ProtectKernelModules"
        "ProtectKernelLogs"
        "ProtectControlGroups"
        "ProtectClock"
        "RestrictNamespaces"
        "LockPersonality"
        "MemoryDenyWriteExecute"
        "RestrictRealtime"
        "RestrictSUIDSGID"
      ];
    expected = [ ];
  };

  # No user-namespace sandboxing: CAP_NET_BIND_SERVICE must hold in the
  # host's user namespace to bind port 53 there.
  testNoPrivateUsers = {
    expr = (serviceConfig [ good ]) ? PrivateUsers;
    expected = false;
  };

  # home_router: auto (the default) reads the default gateway and the
  # host's addresses and follows their changes over netlink; off or a
  # configured router needs no netlink, and the family stays closed.
  testNetlinkOnlyForHomeRouterAuto = {
    expr =
      map
        (
          router:
          builtins.elem "AF_NETLINK" (serviceConfig [
            good
            { services.nxdns.settings = lib.optionalAttrs (router != null) { home_router = router; }; }
          ]).RestrictAddressFamilies
        )
        [
          null
          "auto"
          "off"
          "192.168.1.1"
        ];
    expected = [
      true
      true
      false
      false
    ];
  };

  # What home_router and the hosts files need from the sandbox, kept: /etc
  # and the process's own /proc are not hidden, and nothing filters the
  # addresses the unit may talk to (the router's is private, a LAN one).
  testSandboxLeavesEtcProcAndLanOpen = {
    expr = builtins.filter (k: (serviceConfig [ good ]) ? ${k}) [
      "TemporaryFileSystem"
      "InaccessiblePaths"
      "BindPaths"
      "BindReadOnlyPaths"
      "PrivateNetwork"
      "IPAddressDeny"
      "IPAddressAllow"
      "RestrictNetworkInterfaces"
      "SocketBindDeny"
    ];
    expected = [ ];
  };

  # A switch that changes /etc/hosts (networking.hosts) reloads a daemon
  # that serves it, and touches nothing when it does not; the same for a
  # hosts file of the user's written with environment.etc.
  testHostsChangeReloads =
    let
      u = modules: unit ([ unchecked good ] ++ modules);
      fromNetworking = { services.nxdns.hostsFromNetworking = true; };
      printer = { networking.hosts."192.168.1.30" = [ "printer.home.arpa" ]; };
      own = text: {
        environment.etc."nxdns/hosts".source = defaultPkgs.writeText "nxdns-hosts" text;
        services.nxdns.settings.hosts_files = [ "/etc/nxdns/hosts" ];
      };
      trigger = t: if builtins.isAttrs t then t.text or (plain (toString t)) else plain t;
      same = a: b: map trigger a == map trigger b;
      served = u [ fromNetworking ];
      servedChanged = u [ fromNetworking printer ];
      notServed = u [ ];
      notServedChanged = u [ printer ];
    in
    {
      expr = {
        etcHostsIsATrigger = builtins.elem (trigger (eval [ good fromNetworking ]).environment.etc.hosts.source) (
          map trigger served.reloadTriggers
        );
        reloads = !(same served.reloadTriggers servedChanged.reloadTriggers);
        doesNotRestart =
          same served.restartTriggers servedChanged.restartTriggers
          && served.serviceConfig.ExecStart == servedChanged.serviceConfig.ExecStart;
        untouchedWhenNotServed = same notServed.reloadTriggers notServedChanged.reloadTriggers;
        ownEtcFileReloads = !(same (u [ (own "192.168.1.20 nas") ]).reloadTriggers (u [ (own "192.168.1.21 nas") ]).reloadTriggers);
      };
      expected = {
        etcHostsIsATrigger = true;
        reloads = true;
        doesNotRestart = true;
        untouchedWhenNotServed = true;
        ownEtcFileReloads = true;
      };
    };

  testUnitOrdering = {
    expr =
      let
        u = unit [ good ];
      in
      {
        inherit (u) wantedBy before;
        wants = builtins.sort builtins.lessThan u.wants;
        afterNetworkOnline = builtins.elem "network-online.target" u.after;
      };
    expected = {
      wantedBy = [ "multi-user.target" ];
      before = [ "nss-lookup.target" ];
      wants = [
        "network-online.target"
        "nss-lookup.target"
      ];
      afterNetworkOnline = true;
    };
  };

  testDisabledDoesNothing = {
    expr =
      let
        c = eval [ { services.nxdns.settings.upstreams = [ quad9 ]; } ];
      in
      {
        services = c.systemd.services;
        assertions = c.assertions;
        packages = c.environment.systemPackages;
      };
    expected = {
      services = { };
      assertions = [ ];
      packages = [ ];
    };
  };

  # ---- assertions ----------------------------------------------------------

  testGoodConfigPassesAssertions = {
    expr = failedAssertions (eval [
      (enabled [
        quad9
        {
          url = "tls://[2620:fe::fe]:853";
          tls_name = "dns.quad9.net";
        }
        {
          url = "https://cloudflare-dns.com/dns-query";
          address = "1.1.1.1";
          method = "get";
          priority = 10;
        }
        {
          url = "https://1.1.1.1/dns-query";
          tls_name = "cloudflare-dns.com";
          enabled = false;
        }
      ])
    ]);
    expected = [ ];
  };

  testNoUpstreamFails = {
    expr = failsWith ".*no enabled upstream.*" (eval [ (enabled [ ]) ]);
    expected = true;
  };

  testAllUpstreamsDisabledFails = {
    expr = failsWith ".*no enabled upstream.*" (eval [ (enabled [ (quad9 // { enabled = false; }) ]) ]);
    expected = true;
  };

  testTlsHostNameFails = {
    expr = failsWith ".*upstreams\\.0\\.url: a tls:// upstream must name an IP address.*" (eval [
      (enabled [
        {
          url = "tls://dns.quad9.net";
          tls_name = "dns.quad9.net";
        }
      ])
    ]);
    expected = true;
  };

  testIpHostWithoutTlsNameFails = {
    expr = failsWith ".*upstreams\\.1\\.tls_name: required.*" (eval [
      (enabled [
        quad9
        { url = "tls://149.112.112.112"; }
      ])
    ]);
    expected = true;
  };

  testDohNameWithoutAddressFails = {
    expr = failsWith ".*upstreams\\.0\\.address: required.*cloudflare-dns.com.*" (eval [
      (enabled [ { url = "https://cloudflare-dns.com/dns-query"; } ])
    ]);
    expected = true;
  };

  testMethodOnDotFails = {
    expr = failsWith ".*only for https:// upstreams.*" (eval [ (enabled [ (quad9 // { method = "post"; }) ]) ]);
    expected = true;
  };

  testTotalBelowAttemptFails = {
    expr = failsWith ".*total_ms \\(2000\\) must be at least attempt_ms \\(3000\\).*" (eval [
      good
      {
        services.nxdns.settings.budgets = {
          attempt_ms = 3000;
          total_ms = 2000;
        };
      }
    ]);
    expected = true;
  };

  testUnparsableListenFails = {
    expr = failsWith ".*settings\\.listen: every entry.*" (eval [
      good
      { services.nxdns.settings.listen = [ "localhost:53" ]; }
    ]);
    expected = true;
  };

  # ---- rejected values (option types) -------------------------------------

  testRejectEmptyListen = {
    expr = throws (rendered [
      good
      { services.nxdns.settings.listen = [ ]; }
    ]);
    expected = true;
  };
  testRejectPriorityOutOfRange = {
    expr = throws (rendered [ (enabled [ (quad9 // { priority = 2000000; }) ]) ]);
    expected = true;
  };
  testRejectUnknownLogLevel = {
    expr = throws (rendered [
      good
      { services.nxdns.settings.log.level = "verbose"; }
    ]);
    expected = true;
  };
  testRejectUrlScheme = {
    expr = throws (rendered [ (enabled [ (quad9 // { url = "udp://9.9.9.9:53"; }) ]) ]);
    expected = true;
  };
  testRejectAttemptTooShort = {
    expr = throws (rendered [
      good
      { services.nxdns.settings.budgets.attempt_ms = 50; }
    ]);
    expected = true;
  };
  testRejectTotalTooLong = {
    expr = throws (rendered [
      good
      { services.nxdns.settings.budgets.total_ms = 600000; }
    ]);
    expected = true;
  };
  testRejectEnabledAsString = {
    expr = throws (rendered [ (enabled [ (quad9 // { enabled = "yes"; }) ]) ]);
    expected = true;
  };
  testRejectDohMethod = {
    expr = throws (rendered [
      (enabled [
        {
          url = "https://1.1.1.1/dns-query";
          tls_name = "cloudflare-dns.com";
          method = "put";
        }
      ])
    ]);
    expected = true;
  };
  testRejectRelativeCaFile = {
    expr = throws (rendered [ (enabled [ (quad9 // { ca_file = "ca.pem"; }) ]) ]);
    expected = true;
  };
  testRejectUpstreamWithoutUrl = {
    expr = throws (rendered [ (enabled [ { tls_name = "dns.quad9.net"; } ]) ]);
    expected = true;
  };
  # The positive control for the throws-tests above: the same helper on a
  # good configuration does not throw.
  testGoodConfigDoesNotThrow = {
    expr = throws (rendered [ good ]);
    expected = false;
  };

  # ---- firewall ------------------------------------------------------------

  testFirewallClosedByDefault = {
    expr = with (eval [ good ]).networking.firewall; allowedTCPPorts ++ allowedUDPPorts;
    expected = [ ];
  };

  testFirewallOpensDnsPorts = {
    expr = with (eval [
      good
      { services.nxdns.openFirewall = true; }
    ]).networking.firewall; { inherit allowedTCPPorts allowedUDPPorts; };
    expected = {
      allowedTCPPorts = [ 53 ];
      allowedUDPPorts = [ 53 ];
    };
  };

  testFirewallFollowsListenPorts = {
    expr = (eval [
      good
      {
        services.nxdns.openFirewall = true;
        services.nxdns.settings.listen = [
          "0.0.0.0:5353"
          "[::]:5353"
          "127.0.0.1:53"
        ];
      }
    ]).networking.firewall.allowedUDPPorts;
    expected = [
      5353
      53
    ];
  };

  # ---- useAsSystemResolver -------------------------------------------------

  testSystemResolverSettings = {
    expr =
      let
        c = eval [
          good
          { services.nxdns.useAsSystemResolver = true; }
        ];
      in
      {
        inherit (c.networking) nameservers;
        resolved = c.services.resolved.enable;
        dhcpcd = hasInfix "nohook resolv.conf" c.networking.dhcpcd.extraConfig;
        failed = failedAssertions c;
      };
    expected = {
      nameservers = [
        "127.0.0.1"
        "::1"
      ];
      resolved = false;
      dhcpcd = true;
      failed = [ ];
    };
  };

  testSystemResolverIPv4Only = {
    expr =
      (eval [
        good
        {
          services.nxdns.useAsSystemResolver = true;
          services.nxdns.settings.listen = [ "127.0.0.1:53" ];
        }
      ]).networking.nameservers;
    expected = [ "127.0.0.1" ];
  };

  testSystemResolverNeedsLoopbackListener = {
    expr = failsWith ".*useAsSystemResolver needs a listen entry covering 127.0.0.1:53.*" (eval [
      good
      {
        services.nxdns.useAsSystemResolver = true;
        services.nxdns.settings.listen = [ "192.168.1.2:53" ];
      }
    ]);
    expected = true;
  };

  testSystemResolverConflictsWithResolved = {
    expr = failsWith ".*systemd-resolved is enabled.*" (eval [
      good
      {
        services.nxdns.useAsSystemResolver = true;
        services.resolved.enable = lib.mkForce true;
      }
    ]);
    expected = true;
  };

  testNotSystemResolverByDefault = {
    expr = (eval [ good ]).networking.nameservers;
    expected = [ ];
  };

  # ---- the Pi profiles, evaluated (hardware/common.nix, pi3.nix, pi4.nix) --

  testPi4ProfileEvaluates = {
    expr =
      let
        c = eval [
          ../../hardware/pi4.nix
          ../../hardware/appliance.nix
        ];
      in
      {
        failed = failedAssertions c;
        inherit (c.networking) hostName;
        baseName = c.image.baseName;
        filesystems = builtins.attrNames (lib.filterAttrs (_: on: on) c.boot.supportedFilesystems);
        tmpfs = c.boot.tmp.useTmpfs;
        root = c.fileSystems."/".options;
        watchdog = c.systemd.settings.Manager.RuntimeWatchdogSec;
        ssh = c.services.openssh.settings.PermitRootLogin;
        clockWait = c.systemd.services ? nxdns-time-wait;
      };
    expected = {
      failed = [ ];
      hostName = "nxdns-pi";
      baseName = "nxdns-pi";
      filesystems = [
        "ext4"
        "vfat"
      ];
      tmpfs = true;
      root = [ "noatime" ];
      watchdog = "20s";
      ssh = "prohibit-password";
      clockWait = true;
    };
  };

  # The image carries what a Pi booting from its SD card needs, not what
  # installation media carry: no profiles/base.nix (its rescue tools and
  # file systems), no all-hardware drivers or firmware, no generic PC
  # modules in the initrd. The stand-ins under stubs/modules add exactly
  # those when imported or switched on, as nixpkgs' modules do.
  testPiImageIsMinimal =
    let
      c = eval [
        ../../hardware/pi4.nix
        ../../hardware/appliance.nix
      ];
      names = map (p: p.name);
    in
    {
      expr = {
        supportedFilesystems = c.boot.supportedFilesystems;
        initrd = c.boot.initrd.availableKernelModules;
        allHardware = c.hardware.enableAllHardware;
        firmware = c.hardware.enableRedistributableFirmware;
        installerTools = builtins.filter (n: builtins.elem n [ "parted" "ddrescue" "cryptsetup" ]) (
          names c.environment.systemPackages
        );
        defaultPackages = c.environment.defaultPackages;
        fileSystems = lib.mapAttrs (_: fs: { inherit (fs) fsType options; }) c.fileSystems;
        docs = c.documentation.enable;
      };
      expected = {
        supportedFilesystems = {
          ext4 = true;
          vfat = true;
        };
        initrd = [
          "mmc_block"
          "sdhci_iproc"
          "bcm2835"
          "pcie_brcmstb"
          "reset_raspberrypi"
          "xhci_pci"
          "dwc2"
          "usbhid"
          "hid_generic"
          "ext4"
        ];
        allHardware = false;
        firmware = false;
        installerTools = [ ];
        defaultPackages = [ ];
        fileSystems = {
          "/" = {
            fsType = "ext4";
            options = [ "noatime" ];
          };
          "/boot/firmware" = {
            fsType = "vfat";
            options = [
              "nofail"
              "noauto"
            ];
          };
        };
        docs = false;
      };
    };

  # The boot chain: U-Boot reads extlinux.conf from the root partition; the
  # firmware partition gets the Pi's firmware, config.txt, both boards'
  # U-Boot, the Pi 4's armstub and device trees.
  testPiImageBootChain =
    let
      c = eval [
        ../../hardware/pi3.nix
        ../../hardware/appliance.nix
      ];
      fw = c.sdImage.populateFirmwareCommands;
    in
    {
      expr = {
        grub = c.boot.loader.grub.enable;
        extlinux = c.boot.loader.generic-extlinux-compatible.enable;
        consoles = builtins.filter (lib.hasPrefix "console=") c.boot.kernelParams;
        firmware = map (f: hasInfix f fw) [
          "bootcode.bin"
          "start*.elf"
          "config.txt"
          "u-boot-rpi3.bin"
          "u-boot-rpi4.bin"
          "armstub8-gic.bin"
          "bcm2711-rpi-4-b.dtb"
        ];
        extlinuxConf = hasInfix "-d ./files/boot" c.sdImage.populateRootCommands;
      };
      expected = {
        grub = false;
        extlinux = true;
        consoles = [
          "console=ttyS1,115200n8"
          "console=ttyAMA0,115200n8"
          "console=tty0"
        ];
        firmware = [
          true
          true
          true
          true
          true
          true
          true
        ];
        extlinuxConf = true;
      };
    };

  # The stand-ins are live: importing nixpkgs' sd-image-aarch64.nix (and with
  # it profiles/base.nix) instead brings the installer's file systems and
  # tools back, so testPiImageIsMinimal would see them.
  testPiImageStandInsDetectBaseProfile =
    let
      c = eval [
        ./stubs/modules/installer/sd-card/sd-image-aarch64.nix
        { system.stateVersion = "26.05"; }
      ];
    in
    {
      expr = {
        zfs = c.boot.supportedFilesystems.zfs;
        allHardware = c.hardware.enableAllHardware;
        ahci = builtins.elem "ahci" c.boot.initrd.availableKernelModules;
        parted = builtins.elem "parted" (map (p: p.name) c.environment.systemPackages);
      };
      expected = {
        zfs = true;
        allHardware = true;
        ahci = true;
        parted = true;
      };
    };

  testPi3ProfileEvaluates = {
    expr =
      let
        c = eval [
          ../../hardware/pi3.nix
          ../../hardware/appliance.nix
        ];
      in
      {
        failed = failedAssertions c;
        inherit (c.networking) hostName;
        zram = c.zramSwap.enable;
        percent = c.zramSwap.memoryPercent;
      };
    expected = {
      failed = [ ];
      hostName = "nxdns-pi3";
      zram = true;
      percent = 50;
    };
  };

  testProfileRejectsBadHostName = {
    expr = throws (eval [
      ../../hardware/pi4.nix
      { networking.hostName = "nxdns pi"; }
    ]).networking.hostName;
    expected = true;
  };

  # ---- NixOS-strict unit checks -------------------------------------------

  testUnitRejectsUnknownServiceType = {
    expr = throws (serviceConfig [
      good
      { systemd.services.nxdns.serviceConfig.Type = lib.mkForce "notfiy"; }
    ]);
    expected = true;
  };

  testUnitRejectsUnknownProtectSystem = {
    expr = throws (serviceConfig [
      good
      { systemd.services.nxdns.serviceConfig.ProtectSystem = lib.mkForce "stric"; }
    ]);
    expected = true;
  };

  testUnitRejectsBadUnitName = {
    expr = throws (unit [
      good
      { systemd.services.nxdns.after = [ "network-online" ]; }
    ]).after;
    expected = true;
  };

  # Scalars merge as NixOS's unitOption: two different values at the same
  # priority are a conflict, not a silent pick.
  testUnitScalarConflict = {
    expr = throws (serviceConfig [
      good
      { systemd.services.nxdns.serviceConfig.RestartSec = "1s"; }
    ]).RestartSec;
    expected = true;
  };

  # ---- networkd ------------------------------------------------------------

  # networkd sets services.resolved.enable = mkDefault true; the module's
  # own default must not meet it at the same priority ("conflicting
  # definition values"): nxdns as the system resolver wins, resolved is off.
  testSystemResolverWithNetworkd = {
    expr =
      let
        c = eval [
          good
          {
            services.nxdns.useAsSystemResolver = true;
            networking.useNetworkd = true;
          }
        ];
      in
      {
        resolved = c.services.resolved.enable;
        failed = failedAssertions c;
      };
    expected = {
      resolved = false;
      failed = [ ];
    };
  };

  # ... and resolved enabled by hand still meets the module's assertion.
  testSystemResolverWithNetworkdAndResolved = {
    expr = failsWith ".*systemd-resolved is enabled.*" (eval [
      good
      {
        services.nxdns.useAsSystemResolver = true;
        networking.useNetworkd = true;
        services.resolved.enable = true;
      }
    ]);
    expected = true;
  };

  # ---- hardware/appliance.nix (the shipped Pi configuration) ---------------

  testApplianceConfigPassesAssertions = {
    expr =
      let
        c = eval [ ../../hardware/appliance.nix ];
      in
      {
        failed = failedAssertions c;
        inherit (c.networking) nameservers;
        firewall = c.networking.firewall.allowedUDPPorts;
        enabledUpstreams = builtins.length (builtins.filter (u: u.enabled) c.services.nxdns.settings.upstreams);
      };
    expected = {
      failed = [ ];
      nameservers = [
        "127.0.0.1"
        "::1"
      ];
      firewall = [ 53 ];
      enabledUpstreams = 3;
    };
  };

  testApplianceWarnsWithoutSshKey = {
    expr = builtins.any (w: hasInfix "no SSH key" w) (eval [ ../../hardware/appliance.nix ]).warnings;
    expected = true;
  };

  testApplianceNoWarningWithSshKey = {
    expr =
      (eval [
        ../../hardware/appliance.nix
        { users.users.root.openssh.authorizedKeys.keys = [ "ssh-ed25519 AAAA test" ]; }
      ]).warnings;
    expected = [ ];
  };

  # ---- nixos-module/lib.nix ------------------------------------------------

  testParseEndpoint = {
    expr = map (helpers.parseEndpoint 53) [
      "0.0.0.0:53"
      "[::]:5353"
      "127.0.0.1"
      "localhost:53"
    ];
    expected = [
      {
        host = "0.0.0.0";
        port = 53;
        family = "inet";
      }
      {
        host = "::";
        port = 5353;
        family = "inet6";
      }
      {
        host = "127.0.0.1";
        port = 53;
        family = "inet";
      }
      null
    ];
  };

  testParseUpstreamUrl = {
    expr = map helpers.parseUpstreamUrl [
      "tls://[2620:fe::fe]:853"
      "https://dns.example/dns-query"
      "udp://1.1.1.1"
    ];
    expected = [
      {
        scheme = "tls";
        host = "2620:fe::fe";
      }
      {
        scheme = "https";
        host = "dns.example";
      }
      null
    ];
  };

  testDropNulls = {
    expr = helpers.dropNulls {
      a = null;
      b = [
        {
          x = null;
          y = 1;
        }
        null
      ];
      c.d = null;
    };
    expected = {
      b = [ { y = 1; } ];
      c = { };
    };
  };
}
