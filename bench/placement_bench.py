#!/usr/bin/env python3
"""Placing the 8-tower sample's GraphDef (issue 41, item 8): tfrun, process
start to exit, beside TensorFlow 2.21's parse + import_graph_def + Session
placement of the same text file, in one run.

graphs/tf/tower_sample_8.pb is written as text (1,611 nodes). tfrun runs
`--place-only --log-placement` on eight simulated P40s (its whole process,
best of --repeats); TensorFlow, in a process that has imported it, times
text_format.Parse, import_graph_def and the first `sess.run(init)` of a
Session with log_device_placement and soft placement (this machine has no
GPU: the Session places the graph on its CPU), which is when a Session
places the whole graph. Prints both and the ratio (target: tfrun at least
20x faster).

  bench/placement_bench.py --python PY --tfrun BIN [--repeats 5]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TF_PROGRAM = r'''
import sys, time, os
import tensorflow as tf
from google.protobuf import text_format
tf.compat.v1.disable_eager_execution()
src, out, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
gd = tf.compat.v1.GraphDef()
gd.ParseFromString(open(src, "rb").read())
open(out, "w").write(text_format.MessageToString(gd))
best = None
for _ in range(repeats):
    t0 = time.perf_counter()
    parsed = text_format.Parse(open(out).read(), tf.compat.v1.GraphDef())
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(parsed, name="")
    cfg = tf.compat.v1.ConfigProto(log_device_placement=True, allow_soft_placement=True)
    fd = os.dup(1); os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    try:
        with tf.compat.v1.Session(graph=g, config=cfg) as s:
            s.run(g.get_operation_by_name("init"))
    finally:
        os.dup2(fd, 1)
    elapsed = time.perf_counter() - t0
    best = elapsed if best is None else min(best, elapsed)
print(best)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="placement_bench_")
    text = os.path.join(work, "tower_sample_8.pbtxt")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run([a.python, "-c", TF_PROGRAM, os.path.join(ROOT, "graphs/tf/tower_sample_8.pb"), text,
                        str(a.repeats)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(p.stderr[-2000:])
    tf_s = float(p.stdout.strip().splitlines()[-1])
    best = None
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        q = subprocess.run([a.tfrun, text, "--place-only", "--log-placement", "--devices",
                            os.path.join(ROOT, "testdata/topologies/p40_x8.yaml"), "-q"],
                           capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if q.returncode != 0:
            sys.exit(q.stderr)
        best = elapsed if best is None else min(best, elapsed)
    nodes = sum(1 for line in open(text) if line.startswith("node {"))
    print(f"8-tower sample ({nodes} nodes): tfrun {best * 1000:.0f} ms, "
          f"TensorFlow {tf_s * 1000:.0f} ms, tfrun {tf_s / best:.1f}x faster")


if __name__ == "__main__":
    main()
