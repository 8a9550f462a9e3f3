#!/usr/bin/env python3
"""Checks a `tfrun --trace` file against the Trace Event Format's
documented fields and tfrun's layout (cli/trace.h), so that Perfetto and
chrome://tracing read it as they read TensorFlow's timeline:

- a JSON object with `traceEvents`, each event with `ph`, `pid`, and the
  fields its phase needs (`ts`; `dur` >= 0 for "X"; `args` for "M" and "C";
  `id` for flows);
- processes named as timeline.py names them ("<device> Compute",
  "<device>/stream:all Compute", "Allocators") plus tfrun's "tfrun";
- Op events carry args `name` and `op`, and on one process they never
  overlap (one stream of work per device);
- every flow has one start and one end, the start where an Op event on its
  process ends, the end where one on its process starts, no earlier;
- with --nodes A,B,... and --runs K: each node is in K Op events on the
  devices' Compute processes.

  tools/check_trace.py TRACE.json [--nodes A,B] [--runs K]
Exit status 1 with the reasons when anything is off.
"""
import argparse
import collections
import json
import sys

EPS = 0.002  # microseconds: the file's ts and dur carry three decimals


def check(trace, nodes=None, runs=None):
    errors = []
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return ["no traceEvents list"]
    names = {}
    ops = collections.defaultdict(list)  # pid -> [(ts, end, name)]
    flows = collections.defaultdict(dict)  # id -> {ph: event}
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph not in ("M", "X", "C", "s", "t") or not isinstance(e.get("pid"), int):
            errors.append(f"event {i}: bad ph or pid: {e}")
            continue
        if ph == "M":
            if e.get("name") == "process_name":
                names[e["pid"]] = e.get("args", {}).get("name")
            continue
        if not isinstance(e.get("ts"), (int, float)):
            errors.append(f"event {i}: no ts")
            continue
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                errors.append(f"event {i}: bad dur")
            if e.get("cat") == "Op":
                args = e.get("args", {})
                if "name" not in args or "op" not in args or e.get("name") != args.get("op"):
                    errors.append(f"event {i}: Op event without args name/op, or not named by its op")
                ops[e["pid"]].append((e["ts"], e["ts"] + e.get("dur", 0), args.get("name")))
        elif ph == "C":
            if not isinstance(e.get("args"), dict) or not e["args"]:
                errors.append(f"event {i}: counter without args")
        else:
            if "id" not in e:
                errors.append(f"event {i}: flow without id")
            elif ph in flows[e["id"]]:
                errors.append(f"flow {e['id']}: two '{ph}' events")
            else:
                flows[e["id"]][ph] = e
    for pid, name in names.items():
        if not (name == "tfrun" or name == "Allocators" or (name or "").endswith(" Compute")):
            errors.append(f"process {pid} named {name!r}")
    for pid, spans in ops.items():
        if pid not in names:
            errors.append(f"process {pid} has Op events but no name")
        spans.sort()
        for (a_start, a_end, a), (b_start, _, b) in zip(spans, spans[1:]):
            if b_start < a_end - EPS:
                errors.append(f"{names.get(pid)}: {b} starts at {b_start} before {a} ends at {a_end}")
    for fid, pair in flows.items():
        if set(pair) != {"s", "t"}:
            errors.append(f"flow {fid}: {sorted(pair)} only")
            continue
        s, t = pair["s"], pair["t"]
        if t["ts"] < s["ts"] - EPS:
            errors.append(f"flow {fid}: ends before it starts")
        if not any(abs(end - s["ts"]) <= EPS for _, end, _ in ops.get(s["pid"], [])):
            errors.append(f"flow {fid}: starts where no Op event on process {s['pid']} ends")
        if not any(abs(start - t["ts"]) <= EPS for start, _, _ in ops.get(t["pid"], [])):
            errors.append(f"flow {fid}: ends where no Op event on process {t['pid']} starts")
    if nodes:
        count = collections.Counter(n for pid, spans in ops.items() if "/stream:" not in (names.get(pid) or "")
                                    for _, _, n in spans)
        for n in nodes:
            if count[n] != runs:
                errors.append(f"node {n}: {count[n]} events, want {runs}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--nodes", help="comma-separated node names every run has")
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    try:
        with open(a.trace) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{a.trace}: {e}")
        sys.exit(1)
    errors = check(trace, a.nodes.split(",") if a.nodes else None, a.runs)
    for e in errors:
        print(f"{a.trace}: {e}")
    if not errors:
        print(f"{a.trace}: ok ({len(trace['traceEvents'])} events)")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
