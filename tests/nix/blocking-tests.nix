# Evaluation tests for the NixOS module's blocklists (settings.blocking,
# services.nxdns.blocklists; nixos-module/blocking.nix), in lib.runTests
# form, against the same stand-ins for NixOS and nixpkgs as
# module-tests.nix.
{ lib }:

let
  pkgs = import ./stubs/pkgs.nix { inherit lib; };

  evaluated =
    modules:
    lib.evalModules {
      specialArgs.modulesPath = toString ./stubs/modules;
      modules = [
        ./stubs/nixos.nix
        ../../nixos-module
        { _module.args.pkgs = pkgs; }
      ]
      ++ modules;
    };
  eval = modules: (evaluated modules).config;

  good = {
    services.nxdns = {
      enable = true;
      checkConfig = false;
      settings.upstreams = [
        {
          url = "tls://9.9.9.9:853";
          tls_name = "dns.quad9.net";
        }
      ];
    };
  };
  withLists = lists: { services.nxdns.settings.blocking.lists = lists; };

  # The document the daemon would read (JSON is YAML; the stub renders JSON).
  # Keys are read with `or`: a missing attribute is an error tryEval cannot
  # catch, and a test must fail on its own, not stop the whole run.
  rendered = modules: builtins.fromJSON (eval ([ good ] ++ modules)).services.nxdns.configFile.text;
  unit = modules: (eval ([ good ] ++ modules)).systemd.services.nxdns;

  failedAssertions =
    config: map (a: a.message) (builtins.filter (a: !a.assertion) config.assertions);
  failures = modules: failedAssertions (eval ([ good ] ++ modules));
  failsWith = regex: modules: builtins.any (m: builtins.match regex m != null) (failures modules);
  throws = v: !(builtins.tryEval (builtins.deepSeq v v)).success;

  # Store paths in strings carry context; the tests compare text only.
  trigger = t: if builtins.isAttrs t then t.text or (builtins.unsafeDiscardStringContext (toString t)) else t;
  same = a: b: map trigger a == map trigger b;
in
{
  # ---- rendering -----------------------------------------------------------

  # Typed keys as the daemon reads them; an entry's unset keys (a file
  # list's url and ca_file) are absent, not null.
  testBlockingRendered = {
    expr =
      (rendered [
        {
          services.nxdns.settings.blocking = {
            lists = [
              {
                url = "https://lists.example/hosts.txt";
                ca_file = "/etc/nxdns/lists-ca.pem";
              }
              { file = "/etc/nxdns/blocklist.txt"; }
            ];
            allow = [ "allowed.example" ];
            answer = "null";
            groups = [
              {
                clients = [ "192.168.1.0/28" ];
                blocking = false;
              }
            ];
          };
        }
      ]).blocking or null;
    expected = {
      lists = [
        {
          url = "https://lists.example/hosts.txt";
          ca_file = "/etc/nxdns/lists-ca.pem";
        }
        { file = "/etc/nxdns/blocklist.txt"; }
      ];
      refresh = "24h";
      allow = [ "allowed.example" ];
      answer = "null";
      groups = [
        {
          clients = [ "192.168.1.0/28" ];
          blocking = false;
        }
      ];
      state_dir = "/var/lib/nxdns/lists";
    };
  };

  # Without lists (or allow, groups) there is no section: the module's own
  # defaults alone do not write one, and empty lists are never written.
  testNoBlockingSectionWithoutLists = {
    expr = {
      unset = (rendered [ ]) ? blocking;
      defaultsChanged = (rendered [ { services.nxdns.settings.blocking.refresh = "12h"; } ]) ? blocking;
      oneList = builtins.attrNames ((rendered [ (withLists [ { file = "/etc/nxdns/blocklist.txt"; } ]) ]).blocking or { });
    };
    expected = {
      unset = false;
      defaultsChanged = false;
      oneList = [
        "answer"
        "lists"
        "refresh"
        "state_dir"
      ];
    };
  };

  # URL lists' copies are kept in the unit's StateDirectory by default, so
  # a reboot without WAN still blocks; a state_dir of the user's is kept.
  testListCopiesInTheStateDirectory = {
    expr =
      let
        url = withLists [ { url = "https://lists.example/hosts.txt"; } ];
        dir = (rendered [ url ]).blocking.state_dir or "";
      in
      {
        inherit dir;
        underIt = lib.hasPrefix "/var/lib/${(unit [ url ]).serviceConfig.StateDirectory}/" dir;
        moved =
          (rendered [
            url
            { services.nxdns.settings.blocking.state_dir = "/var/lib/nxdns/other"; }
          ]).blocking.state_dir or "";
      };
    expected = {
      dir = "/var/lib/nxdns/lists";
      underIt = true;
      moved = "/var/lib/nxdns/other";
    };
  };

  # blocklists: URLs become url entries and paths file entries, after
  # settings.blocking.lists, each list once.
  testBlocklistsAppended = {
    expr = {
      lists =
        (rendered [
          (withLists [ { file = "/etc/nxdns/mine.txt"; } ])
          {
            services.nxdns.blocklists = [
              "https://lists.example/hosts.txt"
              "/etc/nxdns/more.txt"
              "/etc/nxdns/mine.txt"
            ];
          }
        ]).blocking.lists or null;
      nixPathIsAFile =
        let
          lists = (eval [
            good
            { services.nxdns.blocklists = [ ./blocking-tests.nix ]; }
          ]).services.nxdns.settings.blocking.lists;
        in
        builtins.isPath (builtins.head lists).file or null;
    };
    expected = {
      lists = [
        { file = "/etc/nxdns/mine.txt"; }
        { url = "https://lists.example/hosts.txt"; }
        { file = "/etc/nxdns/more.txt"; }
      ];
      nixPathIsAFile = true;
    };
  };

  # ---- what the module refuses ---------------------------------------------

  # A list the sandbox hides (ProtectHome=, PrivateTmp=) fails the build,
  # given either way, as does a CA file there; one under /etc does not.
  testHiddenBlocklistFails =
    let
      fails = modules: failsWith ".*settings.blocking.lists: .* cannot be read by nxdns.service.*ProtectHome.*" modules;
    in
    {
      expr = {
        lists = map (f: fails [ (withLists [ { file = f; } ]) ]) [
          "/home/me/ads.txt"
          "/root/ads.txt"
          "/run/user/1000/ads.txt"
          "/tmp/ads.txt"
          "/var/tmp/ads.txt"
          "/etc/nxdns/ads.txt"
        ];
        viaBlocklists = fails [ { services.nxdns.blocklists = [ "/home/me/ads.txt" ]; } ];
        caFile = fails [
          (withLists [
            {
              url = "https://lists.example/hosts.txt";
              ca_file = "/tmp/ca.pem";
            }
          ])
        ];
        named = failures [ (withLists [ { file = "/tmp/ads.txt"; } ]) ];
      };
      expected = {
        lists = [
          true
          true
          true
          true
          true
          false
        ];
        viaBlocklists = true;
        caFile = true;
        named = [
          "services.nxdns.settings.blocking.lists: /tmp/ads.txt cannot be read by nxdns.service: ProtectHome= and PrivateTmp= hide /home, /root, /run/user, /tmp and /var/tmp from it. Put the file under /etc (environment.etc)."
        ];
      };
    };

  testListNeedsExactlyOneOfFileAndUrl = {
    expr = {
      both = failures [
        (withLists [
          {
            file = "/etc/nxdns/ads.txt";
            url = "https://lists.example/hosts.txt";
          }
        ])
      ];
      neither = failures [ (withLists [ { ca_file = "/etc/nxdns/ca.pem"; } ]) ];
      caFileOnAFile = failures [
        (withLists [
          {
            file = "/etc/nxdns/ads.txt";
            ca_file = "/etc/nxdns/ca.pem";
          }
        ])
      ];
      oneEach = failures [
        (withLists [
          { file = "/etc/nxdns/ads.txt"; }
          { url = "https://lists.example/hosts.txt"; }
        ])
      ];
    };
    expected = {
      both = [ "services.nxdns.settings.blocking.lists.0: give exactly one of file and url (this entry has both)." ];
      neither = [
        "services.nxdns.settings.blocking.lists.0: give exactly one of file and url (this entry has neither)."
        "services.nxdns.settings.blocking.lists.0.ca_file: only for url lists; a file list is read from disk, not fetched."
      ];
      caFileOnAFile = [
        "services.nxdns.settings.blocking.lists.0.ca_file: only for url lists; a file list is read from disk, not fetched."
      ];
      oneEach = [ ];
    };
  };

  # Values the daemon would reject are type errors during evaluation.
  testRejectBadBlockingValues = {
    expr = map (m: throws (rendered [ m ])) [
      (withLists [ { url = "http://lists.example/hosts.txt"; } ])
      (withLists [ { file = "ads.txt"; } ])
      { services.nxdns.blocklists = [ "http://lists.example/hosts.txt" ]; }
      { services.nxdns.blocklists = [ "ads.txt" ]; }
      { services.nxdns.settings.blocking.answer = "drop"; }
      { services.nxdns.settings.blocking.refresh = "1 day"; }
      { services.nxdns.settings.blocking.state_dir = "lists"; }
      { services.nxdns.settings.blocking.groups = [ { clients = [ ]; blocking = false; } ]; }
      { services.nxdns.settings.blocking.groups = [ { clients = [ "10.0.0.0/8" ]; } ]; }
      # The positive control: the same helper on good values does not throw.
      (withLists [ { url = "https://lists.example/hosts.txt"; } ])
    ];
    expected = [
      true
      true
      true
      true
      true
      true
      true
      true
      true
      false
    ];
  };

  # ---- reloads -------------------------------------------------------------

  # A file list written with environment.etc reloads the daemon when its
  # content changes (the daemon reads file lists on every reload), and never
  # restarts it; a new URL list changes the file, which reloads too.
  testBlocklistChangeReloads =
    let
      own = text: {
        environment.etc."nxdns/blocklist.txt".source = pkgs.writeText "blocklist" text;
        services.nxdns.blocklists = [ "/etc/nxdns/blocklist.txt" ];
      };
      a = unit [ (own "ads.example") ];
      b = unit [ (own "tracker.example") ];
      url = unit [ { services.nxdns.blocklists = [ "https://lists.example/hosts.txt" ]; } ];
      noUrl = unit [ ];
    in
    {
      expr = {
        etcFileIsATrigger = builtins.elem "ads.example" (map trigger a.reloadTriggers);
        reloads = !(same a.reloadTriggers b.reloadTriggers);
        doesNotRestart = same a.restartTriggers b.restartTriggers && a.serviceConfig.ExecStart == b.serviceConfig.ExecStart;
        newUrlReloads = !(same url.reloadTriggers noUrl.reloadTriggers);
        newUrlDoesNotRestart = same url.restartTriggers noUrl.restartTriggers;
      };
      expected = {
        etcFileIsATrigger = true;
        reloads = true;
        doesNotRestart = true;
        newUrlReloads = true;
        newUrlDoesNotRestart = true;
      };
    };

  # ---- documentation -------------------------------------------------------

  # Every blocking option, list entries and groups included, has a
  # description (the manual and search tooling show them).
  testBlockingOptionsDescribed = {
    expr =
      let
        docs = lib.optionAttrSetToDocList (evaluated [ ]).options.services.nxdns;
        ours = builtins.filter (
          o:
          !o.internal
          && (lib.hasPrefix "services.nxdns.settings.blocking" o.name || o.name == "services.nxdns.blocklists")
        ) docs;
      in
      map (o: {
        inherit (o) name;
        described = o.visible && (o.description or null) != null && o.description != "";
      }) ours;
    expected =
      map
        (name: {
          inherit name;
          described = true;
        })
        [
          "services.nxdns.blocklists"
          "services.nxdns.settings.blocking"
          "services.nxdns.settings.blocking.allow"
          "services.nxdns.settings.blocking.answer"
          "services.nxdns.settings.blocking.groups"
          "services.nxdns.settings.blocking.groups.*.blocking"
          "services.nxdns.settings.blocking.groups.*.clients"
          "services.nxdns.settings.blocking.lists"
          "services.nxdns.settings.blocking.lists.*.ca_file"
          "services.nxdns.settings.blocking.lists.*.file"
          "services.nxdns.settings.blocking.lists.*.url"
          "services.nxdns.settings.blocking.refresh"
          "services.nxdns.settings.blocking.state_dir"
        ];
  };
}
