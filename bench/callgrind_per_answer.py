#!/usr/bin/env python3
"""Instructions per answer from a callgrind output file: the total, the part
spent on handshakes (public-key math, certificate parsing: a few sessions,
not per query), calls to the allocator, and the hottest functions by their
own (exclusive) cost.
   callgrind_per_answer.py CALLGRIND_OUT ANSWERS [TOP]"""
import collections
import re
import sys

HANDSHAKE = re.compile(r"mpi|ecp_|bignum|sha512|ecdsa|rsa_|x509|asn1|pk_parse|pk_verify")
# Entry points counted as allocations (operator new calls malloc, so both are
# shown, not summed).
ALLOCATORS = {"malloc": re.compile(r"^(__libc_)?malloc('\d+)?$"), "operator new": re.compile(r"^operator new\(")}


def exclusive_costs(path):
    names, cost, fn, after_calls = {}, collections.Counter(), None, False
    calls, callee = collections.Counter(), None

    def name(token):
        m = re.match(r"\((\d+)\)(?: (.*))?", token)
        if not m:
            return token
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), token)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                fn = name(line[3:])
            elif line.startswith("cfn="):
                callee = name(line[4:])
            elif line.startswith("calls="):
                after_calls = True  # the next cost line is the call's inclusive cost
                calls[callee] += int(line[6:].split()[0])
            elif line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if after_calls:
                    after_calls = False
                elif len(parts) >= 2:
                    cost[fn] += int(parts[1])
    return cost, calls


def main():
    cost, calls = exclusive_costs(sys.argv[1])
    answers = int(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    total = sum(cost.values())
    handshake = sum(c for f, c in cost.items() if HANDSHAKE.search(f or ""))
    print(f"Ir per answer: {total // answers} (handshakes {handshake // answers}, "
          f"without them {(total - handshake) // answers}); {answers} answers")
    for label, pattern in ALLOCATORS.items():
        n = sum(c for f, c in calls.items() if pattern.search(f or ""))
        print(f"calls to {label} per answer: {n / answers:.1f}")
    for f, c in cost.most_common(top):
        print(f"  {c // answers:>7} Ir/answer {100 * c / total:5.1f}%  {f[:120]}")


main()
