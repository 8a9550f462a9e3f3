#!/usr/bin/env python3
"""Draws a `tfrun --trace` file (Chrome Trace Event Format) as a PNG: one
lane per device (and per GPU stream), a bar per node coloured by its op,
tensors that cross devices as arrows, and tfrun's phases (load, devices,
placement) on a lane of their own.

  tools/plot_trace.py TRACE.json -o TIMELINE.png [--run-only] [--title T]

Needs matplotlib (Debian's python3-matplotlib; tools/setup.sh installs
it). --run-only leaves the phases out and starts the axis at the first
node, so the run fills the picture.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def lanes_of(events):
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    return names


def short(name):
    """'/job:localhost/replica:0/task:0/device:GPU:0 Compute' -> 'GPU:0'."""
    name = name.removesuffix(" Compute")
    if "/device:" in name:
        task = name.split("/device:")[0]
        device = name.split("/device:")[1]
        prefix = "" if task == "/job:localhost/replica:0/task:0" else task.replace("/replica:0", "") + " "
        return prefix + device
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--run-only", action="store_true")
    ap.add_argument("--title")
    a = ap.parse_args()
    with open(a.trace) as f:
        events = json.load(f)["traceEvents"]
    names = lanes_of(events)
    spans = [e for e in events if e.get("ph") == "X" and (e.get("cat") == "Op" or not a.run_only)]
    if not spans:
        print(f"{a.trace}: no events to draw", file=sys.stderr)
        sys.exit(1)
    pids = sorted({e["pid"] for e in spans})
    row = {pid: i for i, pid in enumerate(pids)}
    t0 = min(e["ts"] for e in spans)
    scale = 1000.0  # microseconds to milliseconds
    ops = sorted({e["name"] for e in spans})
    palette = plt.get_cmap("tab20")
    colour = {op: palette(i % 20) for i, op in enumerate(ops)}
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(pids) + 1.6))
    for e in spans:
        y = row[e["pid"]]
        ax.barh(y, max(e["dur"], 0.2) / scale, left=(e["ts"] - t0) / scale, height=0.6,
                color=colour[e["name"]], edgecolor="black", linewidth=0.3)
    flows = {}
    for e in events:
        if e.get("ph") in ("s", "t") and e["pid"] in row:
            flows.setdefault(e["id"], {})[e["ph"]] = e
    for pair in flows.values():
        if "s" in pair and "t" in pair:
            s, t = pair["s"], pair["t"]
            ax.annotate("", xy=((t["ts"] - t0) / scale, row[t["pid"]]), xytext=((s["ts"] - t0) / scale, row[s["pid"]]),
                        arrowprops=dict(arrowstyle="->", color="dimgray", lw=0.8))
    ax.set_yticks(range(len(pids)))
    ax.set_yticklabels([short(names.get(p, str(p))) for p in pids])
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds")
    ax.set_title(a.title or a.trace)
    handles = [matplotlib.patches.Patch(color=colour[op], label=op) for op in ops]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"{a.output}: {len(spans)} events on {len(pids)} lanes")


if __name__ == "__main__":
    main()
