# The site configuration of the Pi appliance (nixosConfigurations.pi, pi3,
# pi-native). Edit this file, or better, copy the flake's pattern into your
# own flake and keep your keys and addresses there (docs/how-to/deploy-pi.md).
{ config, lib, ... }:

{
  services.nxdns = {
    enable = true;
    # LAN clients reach port 53; the metrics port stays on loopback.
    openFirewall = true;
    # The Pi itself resolves through nxdns too (resolv.conf -> 127.0.0.1).
    useAsSystemResolver = true;
    settings = {
      listen = [
        "0.0.0.0:53"
        "[::]:53"
      ];
      upstreams = [
        {
          url = "tls://9.9.9.9:853";
          tls_name = "dns.quad9.net";
        }
        {
          url = "tls://149.112.112.112:853";
          tls_name = "dns.quad9.net";
        }
        {
          url = "https://cloudflare-dns.com/dns-query";
          address = "1.1.1.1";
          priority = 10;
        }
      ];
      http.listen = "127.0.0.1:8053";
    };
  };

  # Put your SSH public key here before building the image; without one the
  # Pi can only be reached on a console, and nixos-rebuild --target-host
  # cannot log in.
  users.users.root.openssh.authorizedKeys.keys = [
    # "ssh-ed25519 AAAA... you@laptop"
  ];

  warnings = lib.optional (config.users.users.root.openssh.authorizedKeys.keys == [ ]) ''
    nxdns appliance: no SSH key for root (hardware/appliance.nix); the Pi will
    only be reachable on its console.
  '';

  # Clients need a stable address for their DNS server: give the Pi a DHCP
  # reservation on the router, or a static address here, e.g.
  #   networking.useDHCP = false;
  #   networking.interfaces.end0.ipv4.addresses = [ { address = "192.168.1.2"; prefixLength = 24; } ];
  #   networking.defaultGateway = "192.168.1.1";

  system.stateVersion = "26.05";
}
