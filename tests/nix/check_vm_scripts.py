"""Checks NixOS VM test scripts the way the test driver does before it boots
anything, so scripts/nix-checks.sh can fail on a script that
`nix flake check` would reject:

  1. compile (syntax);
  2. pyflakes, the driver's globals and node names declared as builtins
     (the driver's skipLint check);
  3. mypy --no-implicit-optional on the script with a typed prepend in
     front, every node declared a QemuMachine (the driver's skipTypeCheck
     check), against tests/nix/driver/, a stub of the driver's machine API.

Input: JSON on stdin, {name: {"machines": [...], "script": "..."}}, as
tests/nix/vm-test-scripts.nix renders it; or, with --expect-reject, files
whose first line is `# machines: a b c` (negative fixtures: each one must be
rejected, and the checker fails if one passes).

Exit status: 0 when every script passed (or every fixture was rejected).
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
STUBS = os.path.join(HERE, "driver")
# The interpreter with Debian's python3-mypy and python3-pyflakes, whatever
# python3 comes first on PATH.
PYTHON = "/usr/bin/python3"
DRIVER_GLOBALS = ["start_all", "join_all", "subtest", "retry", "machines",
                  "serial_stdout_off", "serial_stdout_on"]


def problems(name, machines, script):
    """Every reason the driver would refuse this script (empty: none)."""
    found = []
    try:
        compile(script, f"{name}:testScript", "exec")
    except SyntaxError as e:
        return [f"syntax: {e}"]
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "test-script.py")
        with open(plain, "w") as f:
            f.write(script)
        env = dict(os.environ, PYFLAKES_BUILTINS=",".join(DRIVER_GLOBALS + machines))
        lint = subprocess.run([PYTHON, "-m", "pyflakes", plain], capture_output=True, text=True, env=env)
        if lint.returncode != 0:
            found.append(f"pyflakes:\n{lint.stdout}{lint.stderr}")

        typed = os.path.join(tmp, "testScriptWithTypes.py")
        with open(os.path.join(STUBS, "prepend.py")) as f:
            prepend = f.read()
        with open(typed, "w") as f:
            f.write(prepend + "".join(f"{m}: QemuMachine\n" for m in machines) + script)
        mypy = subprocess.run(
            [PYTHON, "-m", "mypy", "--no-implicit-optional", "--no-color-output",
             "--cache-dir", os.path.join(tmp, "cache"), typed],
            capture_output=True, text=True, env=dict(os.environ, MYPYPATH=STUBS))
        if "No module named mypy" in mypy.stderr:
            found.append("mypy is not installed (Debian: python3-mypy; scripts/install-deps.sh)")
        elif mypy.returncode != 0:
            # Report lines of the script, not of the concatenation.
            offset = prepend.count("\n") + len(machines)
            out = []
            for line in mypy.stdout.splitlines():
                path, sep, rest = line.partition(":")
                num, sep2, tail = rest.partition(":")
                if sep and sep2 and num.isdigit() and path.endswith("testScriptWithTypes.py"):
                    line = f"script line {int(num) - offset}:{tail}"
                out.append(line)
            found.append("mypy:\n  " + "\n  ".join(out) + mypy.stderr)
    return found


def main():
    if sys.argv[1:2] == ["--expect-reject"]:
        bad = 0
        for path in sys.argv[2:]:
            with open(path) as f:
                script = f.read()
            first = script.splitlines()[0]
            assert first.startswith("# machines:"), f"{path}: first line must be '# machines: ...'"
            found = problems(path, first.split(":", 1)[1].split(), script)
            if found and not any("not installed" in p for p in found):
                why = found[0].splitlines()
                print(f"negative fixture {os.path.basename(path)}: rejected, as it must be ({why[0]} {why[1].strip() if len(why) > 1 else ''})")
            else:
                print(f"negative fixture {os.path.basename(path)}: NOT rejected: {found or 'passed every check'}")
                bad += 1
        return 1 if bad else 0
    bad = 0
    for name, t in json.load(sys.stdin).items():
        found = problems(f"vm-tests/{name}.nix", t["machines"], t["script"])
        if found:
            print(f"vm test script {name}: REJECTED\n" + "\n".join(found))
            bad += 1
        else:
            print(f"vm test script {name}: compiles, pyflakes clean, mypy clean (driver API stub)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
