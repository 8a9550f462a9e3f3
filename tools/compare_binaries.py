#!/usr/bin/env python3
"""Runs two tfrun binaries on every graph file of some folders under several
flag sets and reports each case where exit code, standard output or
standard error differ. For refactors that must not change behaviour:

    tools/compare_binaries.py OLD_TFRUN NEW_TFRUN DIR_OR_FILE... [--flags "..."]... [--new-flags "..."]

With no --flags, a default set covers plain runs, placement logs, soft
placement on simulated GPUs and every --compat profile. --new-flags are
added to NEW_TFRUN's runs alone: one binary against itself under flags
that must not change what it prints (.ci/run's inter-op-differential:
--inter-op-threads 4). Ends with "N passed, M failed", a case a line.
"""
import argparse
import os
import subprocess
import sys

TOPOLOGY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "topologies", "k20m_x4.yaml")
DEFAULT_FLAGS = [
    "",
    "--log-placement",
    f"--log-placement --soft-placement --devices {TOPOLOGY}",
    f"--log-placement --compat tf0 --devices {TOPOLOGY}",
    "--log-placement --compat eager",
    f"--log-placement --compat tf1 --soft-placement --devices {TOPOLOGY}",
]


def run(binary, path, flags, timeout):
    try:
        p = subprocess.run([binary, path] + flags.split(), capture_output=True, timeout=timeout,
                           env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--flags", action="append", help="a flag set (repeatable)")
    ap.add_argument("--new-flags", default="", help="more flags for NEW_TFRUN's runs only")
    ap.add_argument("--timeout", type=float, default=20)
    args = ap.parse_args()
    files = []
    for item in args.inputs:
        if os.path.isdir(item):
            files += sorted(os.path.join(item, f) for f in os.listdir(item) if not f.startswith("."))
        else:
            files.append(item)
    differ = 0
    cases = 0
    for path in files:
        for flags in args.flags or DEFAULT_FLAGS:
            cases += 1
            a = run(args.old, path, flags, args.timeout)
            b = run(args.new, path, f"{flags} {args.new_flags}", args.timeout)
            if a != b:
                differ += 1
                what = [name for name, x, y in zip(("exit", "stdout", "stderr"), a, b) if x != y]
                print(f"DIFF {path} [{flags}]: {', '.join(what)}")
                if "stderr" in what:
                    print(f"  old: {a[2].decode(errors='replace').strip()[:300]}")
                    print(f"  new: {b[2].decode(errors='replace').strip()[:300]}")
                if a[0] != b[0]:
                    print(f"  exit {a[0]} -> {b[0]}")
    print(f"{cases} cases, {differ} differ")
    print(f"{cases - differ} passed, {differ} failed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
