# A throwaway CA and one server certificate for `names` (DNS subject
# alternative names), made at build time for the VM tests. Valid from the
# moment it is built for ten years: a VM whose clock is set back before
# that sees a certificate that is not yet valid.
{ pkgs, names }:

let
  sans = builtins.concatStringsSep "," (map (n: "DNS:${n}") names);
in
pkgs.runCommand "nxdns-test-pki"
  {
    nativeBuildInputs = [ pkgs.openssl ];
  }
  ''
    mkdir -p "$out"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -days 3650 -subj "/CN=nxdns test CA" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout ca.key -out "$out/ca.pem"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj "/CN=${builtins.head names}" -keyout "$out/server.key" -out server.csr
    cat > server.ext <<EOF
    basicConstraints=critical,CA:FALSE
    keyUsage=critical,digitalSignature
    extendedKeyUsage=serverAuth
    subjectAltName=${sans}
    EOF
    openssl x509 -req -in server.csr -CA "$out/ca.pem" -CAkey ca.key -set_serial 2 \
      -days 3650 -extfile server.ext -out "$out/server.pem"
    openssl verify -CAfile "$out/ca.pem" "$out/server.pem"
  ''
