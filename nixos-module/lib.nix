# Pure helpers for the nxdns NixOS module: no pkgs, no config, so the module
# evaluation tests (tests/nix/) can check them on their own.
{ lib }:

let
  inherit (builtins)
    elemAt
    match
    isAttrs
    isList
    ;
in
rec {
  # The daemon rejects unknown keys, and `key: null` counts as a key with no
  # value (an error, not "use the default"). Options that are unset are null
  # in the module, so drop every null, at any depth, before rendering.
  # Derivations are left whole: toJSON turns them into their store path.
  dropNulls =
    v:
    if lib.isDerivation v then
      v
    else if isAttrs v then
      lib.mapAttrs (_: dropNulls) (lib.filterAttrs (_: x: x != null) v)
    else if isList v then
      map dropNulls (builtins.filter (x: x != null) v)
    else
      v;

  # "IP:port", "[IPv6]:port", "IP" or "[IPv6]" (the daemon's listen syntax;
  # IPv6 always in brackets) -> { host; port; }, or null when unparsable.
  # The port defaults to `defaultPort`.
  parseEndpoint =
    defaultPort: s:
    let
      v6 = match "\\[([0-9A-Fa-f:.]+)](:([0-9]+))?" s;
      v4 = match "([0-9]{1,3}(\\.[0-9]{1,3}){3})(:([0-9]+))?" s;
      portOf = p: if p == null then defaultPort else lib.toInt p;
    in
    if v6 != null then
      {
        host = elemAt v6 0;
        port = portOf (elemAt v6 2);
        family = "inet6";
      }
    else if v4 != null then
      {
        host = elemAt v4 0;
        port = portOf (elemAt v4 3);
        family = "inet";
      }
    else
      null;

  isIPv4 = s: match "[0-9]{1,3}(\\.[0-9]{1,3}){3}" s != null;
  # Loose on purpose: "has a colon and only IPv6 characters". The daemon does
  # the exact check at build time (nxdns check --offline).
  isIPv6 = s: match "[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*" s != null;
  isIP = s: isIPv4 s || isIPv6 s;

  # Upstream URL -> { scheme; host; } (host without IPv6 brackets), or null.
  parseUpstreamUrl =
    url:
    let
      m = match "(tls|https)://(\\[([^]/]*)]|([^]:/[]*))(:[0-9]+)?(/.*)?" url;
    in
    if m == null then
      null
    else
      {
        scheme = elemAt m 0;
        host = if elemAt m 2 != null then elemAt m 2 else elemAt m 3;
      };

  # Distinct ports of the listen entries (for the firewall).
  listenPorts = entries: lib.unique (map (e: e.port) (builtins.filter (e: e != null) (map (parseEndpoint 53) entries)));

  # Would a stub resolver at `addr` (127.0.0.1 or ::1), port 53, reach one of
  # these listen entries? (resolv.conf cannot name a port.)
  servesLoopback =
    addr: entries:
    let
      wildcard = if isIPv4 addr then "0.0.0.0" else "::";
      hit = e: e != null && e.port == 53 && (e.host == addr || e.host == wildcard);
    in
    builtins.any hit (map (parseEndpoint 53) entries);
}
