#!/usr/bin/env python3
"""The GraphDef round trip for every example graph in graphs/ that
TensorFlow can run on this machine: tfrun writes the YAML graph as a
GraphDef (--write-graph), TensorFlow 2.21 reads it back with
tf.compat.v1.import_graph_def and runs it in a Session with
log_device_placement and soft placement (this machine has one CPU device
and no GPU), running the graph's targets (or, for a graph whose variables
start initialised, its initializer) and then printing each fetch as
print(sess.run(t)) does; its placement log and printed values must be what
tfrun prints for the YAML file with --soft-placement, line for line.

A graph is in the run when tfrun runs it here with --soft-placement (exit
0): cluster graphs (mpirun), graphs whose feeds must be given, and graphs
that are deliberate errors are left out, and listed.

  tools/round_trip_examples.py --python PYTHON_WITH_TENSORFLOW [--tfrun bazel-bin/cli/tfrun]
Ends with "N passed, M failed".
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TF_PROGRAM = r"""
import ctypes, sys, tensorflow as tf
tf.compat.v1.disable_eager_execution()
path, targets, fetches = sys.argv[1], sys.argv[2], sys.argv[3]
graph_def = tf.compat.v1.GraphDef()
with open(path, "rb") as f:
    graph_def.ParseFromString(f.read())
g = tf.Graph()
with g.as_default():
    tf.compat.v1.import_graph_def(graph_def, name="")
config = tf.compat.v1.ConfigProto(log_device_placement=True, allow_soft_placement=True)
# A graph file's variables start initialised: its program ran the
# initializer first, which tfrun adds last (tf.global_variables_initializer).
if not targets and fetches and any(op.type == "VariableV2" for op in g.get_operations()):
    targets = g.get_operations()[-1].name
with tf.compat.v1.Session(graph=g, config=config) as sess:
    for name in filter(None, targets.split(",")):
        sess.run(g.get_operation_by_name(name))
    for name in filter(None, fetches.split(",")):
        value = sess.run(g.get_tensor_by_name(name if ":" in name else name + ":0"))
        sys.stdout.flush()
        ctypes.CDLL(None).fflush(None)  # the placement lines (C's stdout) first
        print(value, flush=True)
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="a Python with tensorflow installed")
    ap.add_argument("--tfrun", default=os.path.join(ROOT, "bazel-bin", "cli", "tfrun"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tfrun-round-trip-")
    program = os.path.join(work, "tf_side.py")
    with open(program, "w") as f:
        f.write(TF_PROGRAM)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    passed, failed, left_out = 0, 0, []
    for path in sorted(glob.glob(os.path.join(ROOT, "graphs", "*.yaml"))):
        name = os.path.basename(path)
        report = os.path.join(work, name + ".json")
        ours = subprocess.run([a.tfrun, path, "--soft-placement", "--log-placement", "-q", "--json", report],
                              capture_output=True, text=True, env=env)
        if ours.returncode != 0:
            left_out.append(f"{name} (tfrun exits {ours.returncode}: {ours.stderr.strip().splitlines()[0][:80]})")
            continue
        with open(report) as f:
            fetches = [r["name"] for r in json.load(f).get("results", [])]
        with open(path) as f:
            targets = (yaml.safe_load(f) or {}).get("targets") or []
        written = os.path.join(work, name + ".pb")
        w = subprocess.run([a.tfrun, path, "--place-only", "--soft-placement", "-q", "--write-graph", written],
                           capture_output=True, text=True, env=env)
        theirs = subprocess.run([a.python, program, written, ",".join(targets), ",".join(fetches)],
                                capture_output=True, text=True, env=env)
        mine = [l for l in ours.stdout.splitlines() if not l.startswith("Device mapping")]
        tf_lines = theirs.stdout.splitlines()
        if w.returncode == 0 and theirs.returncode == 0 and mine == tf_lines:
            passed += 1
            print(f"ok   {name} ({len(mine)} lines)")
            continue
        failed += 1
        print(f"FAIL {name}: tfrun --write-graph exit {w.returncode}, TensorFlow exit {theirs.returncode}")
        print("  tfrun:      " + "\n  ".join(mine[:20]))
        print("  TensorFlow: " + "\n  ".join(tf_lines[:20] + theirs.stderr.strip().splitlines()[-5:]))
    for entry in left_out:
        print(f"left out: {entry}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or passed == 0 else 0)


if __name__ == "__main__":
    main()
