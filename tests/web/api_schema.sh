#!/usr/bin/env bash
# Every /api/* response of the REAL daemon matches the OpenAPI 3.1
# document checked in at src/web/openapi.json, which is also what the
# daemon serves at /api/openapi.json (byte for byte). Responses are taken in
# the states that fill every part of the schemas: a fresh daemon, after
# queries (latency, replies, cache entries, history samples), and after the
# upstream died (an open episode with causes, state failing/backoff, 503).
# The checker (openapi_check.py, python3 stdlib) is first shown to reject a
# document that lacks one field the daemon sends.
# Usage: api_schema.sh NXDNS FIXTURE_DIR SOURCE_DIR
source "$(dirname "$0")/../integration/lib.sh"
SRC=$3
SPEC=$SRC/src/web/openapi.json
CHECK=$SRC/tests/web/openapi_check.py
require_program python3 "the schema checker"
require_program curl "HTTP requests"
require_program dig "DNS queries"
need_fixture nxdns-fixture-dot

make_pki "$WORK/pki" dot.test
start_fixture up "$WORK/pki"
ADDR=$(pick_loopback)
HTTP="http://$ADDR:8053"
cat >"$WORK/nxdns.yaml" <<YAML
listen:
  - "$ADDR:5300"
# The project's test names live under "test", which RFC 6761 has a
# caching server answer itself by default.
forward_special_zones: [test]
upstreams:
  - url: "tls://127.0.0.1:$FIX_PORT_up"
    tls_name: dot.test
    ca_file: "$WORK/pki/ca.pem"
budgets:
  attempt_ms: 500
  total_ms: 1500
http:
  listen: "$ADDR:8053"
cache:
  # health's cache.persist object is present only with a cache file.
  persist_file: "$WORK/cache"
YAML
start_daemon "$WORK/nxdns.yaml" "$ADDR" 5300

api() { python3 "$CHECK" "$SPEC" "$HTTP" GET /api/health /api/diagnostics /api/history /api/openapi.json; }

api >"$WORK/fresh.log" || { cat "$WORK/fresh.log"; fail "fresh daemon: responses do not match the document"; }
pass "fresh daemon: /api/health, /api/diagnostics, /api/history, /api/openapi.json match"

curl -fsS "$HTTP/api/openapi.json" -o "$WORK/served.json" || fail "GET /api/openapi.json"
cmp -s "$WORK/served.json" "$SPEC" || fail "the served OpenAPI document differs from src/web/openapi.json"
pass "the served document is the checked-in one"

# The checker is not a rubber stamp: without one field the daemon sends
# (additionalProperties is false everywhere), the live health fails.
python3 - "$SPEC" "$WORK/missing.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["components"]["schemas"]["Upstream"]
del s["properties"]["reuse_recoveries"]
s["required"].remove("reuse_recoveries")
json.dump(d, open(sys.argv[2], "w"))
PY
if python3 "$CHECK" "$WORK/missing.json" "$HTTP" GET /api/health >"$WORK/neg.log"; then
  cat "$WORK/neg.log"
  fail "the checker accepted a health document with a field its schema lacks"
fi
grep -q "reuse_recoveries" "$WORK/neg.log" || fail "the checker's complaint does not name the field: $(cat "$WORK/neg.log")"
pass "the checker rejects a document missing a field"

for i in $(seq 1 5); do
  [ "$(dig_status "$ADDR" 5300 "n$i.schema.test")" = NOERROR ] || fail "query n$i not answered"
done
dig_status "$ADDR" 5300 n1.schema.test >/dev/null  # a cache hit
sleep 2.2  # at least two history samples with traffic
api >"$WORK/busy.log" || { cat "$WORK/busy.log"; fail "after queries: responses do not match"; }
python3 "$CHECK" "$SPEC" "$HTTP" POST /api/cache/flush "/api/cache/flush?name=n1.schema.test" \
  "/api/cache/flush?name=bad..name" >"$WORK/flush.log" || { cat "$WORK/flush.log"; fail "cache flush responses"; }
grep -q "bad..name -> 400" "$WORK/flush.log" || fail "an invalid name was not a 400: $(cat "$WORK/flush.log")"
pass "after queries (and POST /api/cache/flush: 200, 200, 400): every response matches"

# GET /api/why: a local answer, a forwarded name, a client access_control
# refuses, and a bad name (400).
python3 "$CHECK" "$SPEC" "$HTTP" GET "/api/why?name=localhost&type=AAAA" "/api/why?name=n1.schema.test" \
  "/api/why?name=x.invalid&client=203.0.113.9" "/api/why?name=bad..name" >"$WORK/why.log" ||
  { cat "$WORK/why.log"; fail "why responses"; }
grep -q "bad..name -> 400" "$WORK/why.log" || fail "an invalid name was not a 400: $(cat "$WORK/why.log")"
pass "GET /api/why: 200, 200, 200, 400; all match"

# POST /api/reload: applied (the file is unchanged: 200, nothing to
# restart), then refused with the file broken (422, the daemon unchanged).
python3 "$CHECK" "$SPEC" "$HTTP" POST /api/reload >"$WORK/reload.log" || { cat "$WORK/reload.log"; fail "reload (applied) response"; }
grep -q "/api/reload -> 200" "$WORK/reload.log" || fail "an unchanged file did not reload: $(cat "$WORK/reload.log")"
cp "$WORK/nxdns.yaml" "$WORK/nxdns.yaml.good"
printf 'budgets:\n  attempt_ms: soon\n' >>"$WORK/nxdns.yaml"
python3 "$CHECK" "$SPEC" "$HTTP" POST /api/reload >"$WORK/reload-bad.log" || { cat "$WORK/reload-bad.log"; fail "reload (refused) response"; }
grep -q "/api/reload -> 422" "$WORK/reload-bad.log" || fail "a broken file was not a 422: $(cat "$WORK/reload-bad.log")"
cp "$WORK/nxdns.yaml.good" "$WORK/nxdns.yaml"
pass "POST /api/reload: 200 applied, 422 refused; both match"

# The upstream dies: failures open an episode and the upstream backs off.
kill "${PIDS[0]}"
wait "${PIDS[0]}" 2>/dev/null || true
for i in $(seq 1 6); do dig_status "$ADDR" 5300 "dead$i.schema.test" +tries=1 +time=3 >/dev/null || true; done
curl -s "$HTTP/api/diagnostics" | grep -q '"open":true' || fail "no open episode after the upstream died"
api >"$WORK/dead.log" || { cat "$WORK/dead.log"; fail "upstream dead: responses do not match"; }
pass "upstream dead (open episode, $(sed -n 's/^ok GET \/api\/health -> //p' "$WORK/dead.log")): every response matches"

stop_daemon
