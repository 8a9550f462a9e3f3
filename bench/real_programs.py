#!/usr/bin/env python3
"""Issue 42's real programs, a training step on the CPU: tfrun against
TensorFlow 2.21 from the same graph file, in the same run.

For each program (TensorFlow's CIFAR-10 multi-GPU trainer at one tower,
tf_cnn_benchmarks' resnet20 with a parameter server over two towers, and
golbin's tower sample at one tower fed the README's batches), both run
the program's initializers, then --steps timed training steps after
--warmup steps, --rounds times alternating:

  - tfrun's time per step from the difference of two runs (--steps W and
    --steps W+N: start-up, loading and the initializers cancel out);
  - TensorFlow's from timing sess.run([loss, train]) in its own process,
    after its warm-up steps, with the soft placement the programs ask for.

Prints the median time per step of each and their ratio (> 1: tfrun
faster), with the CPU's model.

  python3 bench/real_programs.py --python ~/.cache/tfrun/tf-venv/bin/python [--steps 10 --rounds 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FEEDS = ["--batch", "8", "--feed", "Placeholder=@testdata/train/tower_x16.npy",
         "--feed", "Placeholder_1=@testdata/train/tower_y16.npy"]
# (name, graph, initializers, train op, loss, tfrun feed flags)
PROGRAMS = [
    ("CIFAR-10 multi-GPU trainer, 1 tower, batch 16", "graphs/tf/cifar10_multi_gpu_1.pb", ["init"], "train", "loss",
     []),
    ("tf_cnn_benchmarks resnet20, parameter server, 2 towers of 4", "graphs/tf/tfcnn_resnet20_ps.pb",
     ["init", "local_var_init_op_group"], "main_fetch_group", "average_loss/Mean", []),
    ("golbin's tower sample, 1 tower, batch 8", "graphs/tf/golbin_tower_1.pb", ["init"], "train", "loss", FEEDS),
]

TF_PROGRAM = r'''
import sys, time, numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
graph, inits, train, loss, warmup, steps, feeds = sys.argv[1], sys.argv[2].split(","), sys.argv[3], sys.argv[4], \
    int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
gd = tf.compat.v1.GraphDef.FromString(open(graph, "rb").read())
g = tf.Graph()
with g.as_default():
    tf.compat.v1.import_graph_def(gd, name="")
feed = None
if feeds:
    x, y = np.load("testdata/train/tower_x16.npy")[:8], np.load("testdata/train/tower_y16.npy")[:8]
    feed = {"Placeholder:0": x, "Placeholder_1:0": y}
with tf.compat.v1.Session(graph=g, config=tf.compat.v1.ConfigProto(allow_soft_placement=True)) as s:
    for name in inits:
        s.run(name)
    for _ in range(warmup):
        s.run([loss + ":0", train], feed)
    start = time.perf_counter()
    for _ in range(steps):
        s.run([loss + ":0", train], feed)
    print((time.perf_counter() - start) / steps)
'''


def tfrun_seconds(tfrun, program, steps):
    _, graph, inits, train, loss, feeds = program
    args = [tfrun, graph, "--soft-placement", "--quiet", "--targets", train, "--fetch", loss, "--steps", str(steps)]
    for name in inits:
        args += ["--init", name]
    start = time.perf_counter()
    subprocess.run(args + feeds, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tfrun", default=os.path.join(ROOT, "bazel-bin", "cli", "tfrun"))
    ap.add_argument("--python", required=True, help="a Python with TensorFlow 2.21")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}, {os.cpu_count()} cores; {a.steps} steps after {a.warmup}, median of {a.rounds} rounds")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(TF_PROGRAM)
    for program in PROGRAMS:
        ours, theirs = [], []
        for _ in range(a.rounds):
            short = tfrun_seconds(a.tfrun, program, a.warmup)
            long = tfrun_seconds(a.tfrun, program, a.warmup + a.steps)
            ours.append((long - short) / a.steps)
            _, graph, inits, train, loss, feeds = program
            p = subprocess.run([a.python, f.name, graph, ",".join(inits), train, loss, str(a.warmup), str(a.steps),
                                "1" if feeds else ""], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
            theirs.append(float(p.stdout.strip().splitlines()[-1]))
        mine, tf = statistics.median(ours), statistics.median(theirs)
        print(f"{program[0]}: tfrun {mine * 1e3:.1f} ms/step, TensorFlow {tf * 1e3:.1f} ms/step, "
              f"ratio {tf / mine:.2f}")
    os.unlink(f.name)


if __name__ == "__main__":
    main()
