#!/usr/bin/env python3
"""Per-iteration cost of v1 while loops (issue 41, item 8): tfrun beside
TensorFlow 2.21 on the same GraphDefs, in one run.

Two loops, each written by TensorFlow at two trip counts: a scalar add
(100,000 and 10 iterations) and a 256x256 MatMul (1,000 and 10). For each,
TensorFlow's time is one `sess.run` of the loop's Exit in a Session that
has already run it once (placement and kernel creation excluded); tfrun's
is the process, start to exit, running the written file. The cost of an
iteration is (time(long) - time(short)) / (difference in iterations), so
process start, parsing and placement cancel out. Prints one line per loop
with both costs and their ratio (tfrun / TensorFlow; the target is at most
0.5 for the scalar loop).

  bench/control_flow_bench.py --python PY --tfrun BIN [--repeats 3]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

TF_PROGRAM = r'''
import sys, time, json
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
tf.compat.v1.disable_control_flow_v2()
out, repeats = sys.argv[1], int(sys.argv[2])
times = {}
for name, n, size in [("scalar", 100000, 0), ("scalar", 10, 0), ("matmul", 1000, 256), ("matmul", 10, 256)]:
    g = tf.Graph()
    with g.as_default():
        if size:
            rng = np.random.RandomState(0)
            w = tf.constant((rng.rand(size, size).astype(np.float32) - 0.5) / size)
            x0 = tf.constant(rng.rand(size, size).astype(np.float32))
            body = lambda i, x: (i + 1, tf.matmul(x, w))
        else:
            x0 = tf.constant(0.0)
            body = lambda i, x: (i + 1, x + 1.0)
        _, r = tf.compat.v1.while_loop(lambda i, x: i < n, body, [tf.constant(0), x0], name="loop")
    tf.io.write_graph(g, out, f"{name}_{n}.pbtxt")
    with tf.compat.v1.Session(graph=g) as s:
        s.run(r)
        best = min((lambda t0: (s.run(r), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(repeats))
    times[f"{name}_{n}"] = best
print(json.dumps(times))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cf_bench_")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run([a.python, "-c", TF_PROGRAM, work, str(a.repeats)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(p.stderr[-2000:])
    import json
    tf_times = json.loads(p.stdout.strip().splitlines()[-1])
    ours = {}
    for key in tf_times:
        best = None
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            q = subprocess.run([a.tfrun, os.path.join(work, key + ".pbtxt"), "--fetch", "loop/Exit_1", "-q"],
                               capture_output=True, text=True)
            elapsed = time.perf_counter() - t0
            if q.returncode != 0:
                sys.exit(q.stderr)
            best = elapsed if best is None else min(best, elapsed)
        ours[key] = best
    for name, long_n in (("scalar", 100000), ("matmul", 1000)):
        span = long_n - 10
        tf_cost = (tf_times[f"{name}_{long_n}"] - tf_times[f"{name}_10"]) / span * 1e6
        our_cost = (ours[f"{name}_{long_n}"] - ours[f"{name}_10"]) / span * 1e6
        print(f"{name} loop: tfrun {our_cost:.2f} us/iteration, TensorFlow {tf_cost:.2f} us/iteration, "
              f"ratio {our_cost / tf_cost:.2f} (tfrun {ours[f'{name}_{long_n}']:.3f} s, "
              f"TensorFlow {tf_times[f'{name}_{long_n}']:.3f} s for {long_n})")


if __name__ == "__main__":
    main()
