"""What the bench's Python DNS clients (outage_probe.py, trace_replay.py)
share: query wire format (RFC 1035 §4.1, RD set, no EDNS) and the loopback
guard. Imported from the scripts' own folder (python3 puts it on sys.path).
"""
import ipaddress
import struct

QTYPES = {"A": 1, "AAAA": 28, "HTTPS": 65}


def wire_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(qid, name, qtype):
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + wire_name(name) + struct.pack(">HH", qtype, 1)


def require_loopback(address, program):
    # The bench talks to loopback only, whatever a caller passes it.
    if not ipaddress.ip_address(address).is_loopback:
        raise SystemExit("%s: loopback addresses only" % program)
