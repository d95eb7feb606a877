#!/usr/bin/env python3
"""Validates live HTTP responses against src/web/openapi.json.

A small checker for the JSON Schema subset that document uses (type, with
"null" in a type list; properties, required, additionalProperties as a bool
or a schema; items, maxItems; enum; minimum, maximum; oneOf; $ref into
#/components/schemas). A keyword outside that subset is an error, so the
document cannot silently grow beyond what is checked.

Usage: openapi_check.py SPEC BASE_URL METHOD PATH [PATH...]
  Each PATH is requested with METHOD (a POST with the X-Nxdns-Request
  header an operator action needs); the response's status must be one the
  document lists for that operation, with a JSON body matching its schema.
  Exit 0 when every response matches, 1 with the first mismatches otherwise.
"""
import json
import sys
import urllib.error
import urllib.request

KNOWN = {"type", "properties", "required", "additionalProperties", "items", "maxItems", "enum", "minimum",
         "maximum", "oneOf", "$ref", "description"}


class Checker:
    def __init__(self, spec):
        self.spec = spec
        self.errors = []

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError("only local $ref supported: " + ref)
        node = self.spec
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    @staticmethod
    def type_ok(value, t):
        if t == "null":
            return value is None
        if t == "boolean":
            return isinstance(value, bool)
        if t == "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if t == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if t == "string":
            return isinstance(value, str)
        if t == "array":
            return isinstance(value, list)
        if t == "object":
            return isinstance(value, dict)
        raise ValueError("unknown type " + t)

    def check(self, value, schema, where):
        """Appends errors; returns True when `value` matches."""
        before = len(self.errors)
        unknown = set(schema) - KNOWN
        if unknown:
            raise ValueError(f"{where}: schema keywords outside the checked subset: {sorted(unknown)}")
        if "$ref" in schema:
            return self.check(value, self.resolve(schema["$ref"]), where)
        if "oneOf" in schema:
            matches = 0
            for alt in schema["oneOf"]:
                sub = Checker(self.spec)
                if sub.check(value, alt, where):
                    matches += 1
            if matches != 1:
                self.errors.append(f"{where}: matches {matches} of the oneOf alternatives, not exactly one")
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(self.type_ok(value, t) for t in types):
                self.errors.append(f"{where}: {json.dumps(value)[:80]} is not of type {types}")
                return False
        if "enum" in schema and value not in schema["enum"]:
            self.errors.append(f"{where}: {value!r} not in {schema['enum']}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                self.errors.append(f"{where}: {value} < minimum {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                self.errors.append(f"{where}: {value} > maximum {schema['maximum']}")
        if isinstance(value, dict):
            props = schema.get("properties", {})
            for key in schema.get("required", []):
                if key not in value:
                    self.errors.append(f"{where}: required property {key!r} missing")
            extra = schema.get("additionalProperties", True)
            for key, v in value.items():
                if key in props:
                    self.check(v, props[key], f"{where}.{key}")
                elif extra is False:
                    self.errors.append(f"{where}: property {key!r} is not in the document")
                elif isinstance(extra, dict):
                    self.check(v, extra, f"{where}.{key}")
        if isinstance(value, list):
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                self.errors.append(f"{where}: {len(value)} items > maxItems {schema['maxItems']}")
            if "items" in schema:
                for i, v in enumerate(value):
                    self.check(v, schema["items"], f"{where}[{i}]")
        return len(self.errors) == before


def fetch(url, method):
    # An operator action needs the header a web page cannot send without a
    # CORS preflight (docs/reference/api.md); urllib sends the URL's Host.
    headers = {"X-Nxdns-Request": "1"} if method == "POST" else {}
    req = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def check_response(spec, method, path, status, content_type, body):
    op_path = path.split("?", 1)[0]
    op = spec["paths"].get(op_path, {}).get(method.lower())
    if op is None:
        return [f"{method} {op_path}: no such operation in the document"]
    resp = op["responses"].get(str(status))
    if resp is None:
        return [f"{method} {path}: status {status} is not documented ({sorted(op['responses'])})"]
    if "$ref" in resp:
        resp = Checker(spec).resolve(resp["$ref"])
    media = content_type.split(";", 1)[0].strip()
    if media not in resp.get("content", {}):
        return [f"{method} {path}: content type {media!r} not documented for {status}"]
    if media != "application/json":
        return []
    try:
        value = json.loads(body)
    except ValueError as e:
        return [f"{method} {path}: body is not JSON: {e}"]
    c = Checker(spec)
    c.check(value, resp["content"][media]["schema"], f"{method} {path}")
    return c.errors


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    if spec.get("openapi", "").split(".")[:2] != ["3", "1"]:
        print("not an OpenAPI 3.1 document", file=sys.stderr)
        return 1
    base, method = argv[2].rstrip("/"), argv[3]
    failures = []
    for path in argv[4:]:
        status, ctype, body = fetch(base + path, method)
        errs = check_response(spec, method, path, status, ctype, body)
        print(("ok " if not errs else "MISMATCH ") + f"{method} {path} -> {status}")
        failures += errs
    for e in failures[:20]:
        print("  " + e)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
