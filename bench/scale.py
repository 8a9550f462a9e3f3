#!/usr/bin/env python3
"""How tfrun's cost grows with the graph (issue 11), against TensorFlow
building and placing the same graph, measured in the same run.

The graph is a chain of AddN nodes spread over /cpu:0 and four simulated
GPUs, as a generating script would write it:

    nodes:
      - {name: c0, op: Const, shape: [2, 2], value: 1.0, device: /cpu:0}
      - {name: c1, op: Const, shape: [2, 2], value: 2.0, device: /gpu:0}
      - {name: n2, op: AddN, inputs: [c1, c0], device: /gpu:2}
      ...

run as `tfrun G --devices testdata/topologies/k20m_x4.yaml --soft-placement
--log-placement` (standard output to /dev/null). For each size:
  - end to end: process wall time and peak RSS (GNU time), median of the
    rounds (each round runs every size once);
  - per phase, from a second run with --json: load (parse + build),
    placement and the run, each with the peak RSS at its end;
  - TensorFlow (when TFRUN_BENCH_TF_PYTHON names a Python that has it, up to
    --tf-max-nodes): the same graph built with tf.compat.v1 ops under the
    same tf.device scopes, then placed and run by the first Session.run
    (allow_soft_placement; this machine has no GPU, so TF places it all on
    the CPU, and it prints no placement log: it does less than tfrun). Its
    import time is reported apart and left out of the ratio.

Ends with the targets of issue 11, each MET or MISSED with its numbers.
    bench/scale.py --tfrun bazel-bin/cli/tfrun [--sizes 1000,10000,100000,1000000] [--repeat 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPOLOGY = os.path.join(ROOT, "testdata", "topologies", "k20m_x4.yaml")
DEVICES = ["/cpu:0", "/gpu:0", "/gpu:1", "/gpu:2", "/gpu:3"]
# Generous limits: the benchmark measures cost, not the limits' defaults.
LIMITS = ["--max-file-bytes", str(1 << 31), "--max-nodes", str(10 ** 8)]


def write_chain(path, n):
    with open(path, "w") as f:
        f.write("nodes:\n")
        f.write("  - {name: c0, op: Const, shape: [2, 2], value: 1.0, device: /cpu:0}\n")
        f.write("  - {name: c1, op: Const, shape: [2, 2], value: 2.0, device: /gpu:0}\n")
        prev, prev2 = "c1", "c0"
        for i in range(2, n):
            f.write(f"  - {{name: n{i}, op: AddN, inputs: [{prev}, {prev2}], device: {DEVICES[i % 5]}}}\n")
            prev2, prev = prev, f"n{i}"


TF_CHAIN = r"""
import sys, time
t0 = time.perf_counter()
import tensorflow as tf
t1 = time.perf_counter()
tf.compat.v1.disable_eager_execution()
n = int(sys.argv[1])
devices = ["/cpu:0", "/gpu:0", "/gpu:1", "/gpu:2", "/gpu:3"]
g = tf.Graph()
with g.as_default():
    with tf.device("/cpu:0"):
        c0 = tf.constant(1.0, shape=[2, 2], name="c0")
    with tf.device("/gpu:0"):
        c1 = tf.constant(2.0, shape=[2, 2], name="c1")
    prev, prev2 = c1, c0
    for i in range(2, n):
        with tf.device(devices[i % 5]):
            node = tf.math.add_n([prev, prev2], name=f"n{i}")
        prev2, prev = prev, node
t2 = time.perf_counter()
config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
with tf.compat.v1.Session(graph=g, config=config) as s:
    s.run(prev)  # the first run places the graph, then runs it
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


def timed(cmd, env=None):
    """Wall seconds and peak RSS (MB) of one run, from GNU time."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    return wall, int(p.stderr.strip().splitlines()[-1]) / 1024


def wall_seconds(cmd):
    """Wall seconds of one run, without GNU time's own start-up."""
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def tfrun_cmd(tfrun, graph):
    return [tfrun, graph, "--devices", TOPOLOGY, "--soft-placement", "--log-placement"] + LIMITS


def tfrun_phases(tfrun, graph, tmp):
    report = os.path.join(tmp, "report.json")
    subprocess.run(tfrun_cmd(tfrun, graph) + ["--json", report], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    with open(report) as f:
        r = json.load(f)
    t, m = r["timings_ms"], r["peak_rss_bytes"]
    return {k: (t[k] / 1e3, m[k] / 2 ** 20) for k in ("load", "place", "run")}


def tf_chain(python, n, repeat):
    """Median import, build and place+run seconds and peak RSS (MB, GNU time)."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run(["/usr/bin/time", "-f", "%M", python, "-c", TF_CHAIN, str(n)], capture_output=True,
                             text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES=""))
        if out.returncode != 0:
            raise RuntimeError(f"TensorFlow failed:\n{out.stderr[-2000:]}")
        imp, build, place_run = out.stdout.split()
        runs.append((float(imp), float(build), float(place_run), int(out.stderr.strip().splitlines()[-1]) / 1024))
    return [statistics.median(x) for x in zip(*runs)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tfrun", default=os.path.join(ROOT, "bazel-bin", "cli", "tfrun"))
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tf-max-nodes", type=int, default=100000,
                    help="largest graph TensorFlow builds (its Python op construction is slow)")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    tf_python = os.environ.get("TFRUN_BENCH_TF_PYTHON")
    print(f"# tfrun graph scaling: AddN chain over /cpu:0 and 4 simulated GPUs, {os.cpu_count()} cores, "
          f"median of {a.repeat} rounds (the sizes alternate within a round, so that a machine whose speed "
          f"drifts slows all alike)")
    header = (f"{'nodes':>9} | {'wall s':>7} {'(range)':>15} | {'us/node':>7} | {'peak MB':>7} | {'load s':>6} {'MB':>5} | "
              f"{'place s':>7} {'MB':>5} | {'run s':>6} {'MB':>5}")
    print(header)
    print("-" * len(header))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {}
        for n in sizes:
            graphs[n] = os.path.join(tmp, f"chain{n}.yaml")
            write_chain(graphs[n], n)
        ends = {n: [] for n in sizes}
        for _ in range(a.repeat):
            for n in sizes:
                ends[n].append(timed(tfrun_cmd(a.tfrun, graphs[n])))
        for n in sizes:
            walls = [w for w, _ in ends[n]]
            wall = statistics.median(walls)
            peak = statistics.median(m for _, m in ends[n])
            phases = tfrun_phases(a.tfrun, graphs[n], tmp)
            results[n] = (wall, peak, phases)
            print(f"{n:>9} | {wall:7.3f} {f'({min(walls):.3f}-{max(walls):.3f})':>15} | {wall / n * 1e6:7.2f} | "
                  f"{peak:7.1f} | {phases['load'][0]:6.3f} {phases['load'][1]:5.0f} | "
                  f"{phases['place'][0]:7.3f} {phases['place'][1]:5.0f} | "
                  f"{phases['run'][0]:6.3f} {phases['run'][1]:5.0f}")
    print()
    if tf_python:
        print("# TensorFlow (tf.compat.v1) building, then placing and running, the same graph")
        print(f"{'nodes':>9} | {'TF build s':>10} | {'TF place+run s':>14} | {'TF peak MB':>10} | "
              f"{'tfrun load+place+run s':>22} | {'ratio':>7}")
        for n in sizes:
            if n > a.tf_max_nodes:
                print(f"{n:>9} | skipped (over --tf-max-nodes {a.tf_max_nodes})")
                continue
            imp, build, place_run, tf_peak = tf_chain(tf_python, n, a.repeat)
            phases = results[n][2]
            ours = phases["load"][0] + phases["place"][0] + phases["run"][0]
            print(f"{n:>9} | {build:10.3f} | {place_run:14.3f} | {tf_peak:10.0f} | {ours:22.3f} | "
                  f"{(build + place_run) / ours:6.1f}x")
        print(f"(import tensorflow, left out above: {imp:.2f} s)")
    else:
        print("TensorFlow: skipped (set TFRUN_BENCH_TF_PYTHON to a Python that has tensorflow)")
    print()

    # The targets of issue 11.
    def verdict(ok):
        return "MET   " if ok else "MISSED"
    if 100000 in results:
        wall, peak, _ = results[100000]
        print(f"{verdict(wall <= 1.0)} 100,000 nodes in at most 1.0 s: {wall:.2f} s")
        print(f"{verdict(peak <= 150)} 100,000 nodes in at most 150 MB peak RSS: {peak:.0f} MB")
        if 1000000 in results:
            wall_m, peak_m, _ = results[1000000]
            print(f"{verdict(wall_m <= 11 * wall)} 1M nodes in at most 11x the 100k time: {wall_m:.2f} s "
                  f"({wall_m / wall:.1f}x)")
            print(f"{verdict(peak_m <= 11 * peak)} 1M nodes in at most 11x the 100k memory: {peak_m:.0f} MB "
                  f"({peak_m / peak:.1f}x)")
    tutorial = [a.tfrun, os.path.join(ROOT, "graphs", "matmul.yaml"), "--log-placement"]
    tutorial_ms = statistics.median(wall_seconds(tutorial) * 1e3 for _ in range(30))
    print(f"{verdict(tutorial_ms <= 2.5)} tutorial graph end to end in at most 2.5 ms: {tutorial_ms:.2f} ms")
    bench = subprocess.run([a.tfrun, os.path.join(ROOT, "graphs", "matmul.yaml"), "--benchmark", "2000",
                            "--warmup", "100", "--json", "-"], capture_output=True, text=True, check=True)
    warm_us = json.loads(bench.stdout)["benchmark"]["run_ms"]["median"] * 1e3
    print(f"{verdict(warm_us <= 50)} tutorial warm run overhead under 50 us (issue 5): {warm_us:.1f} us")


if __name__ == "__main__":
    sys.exit(main())
