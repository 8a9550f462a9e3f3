#!/usr/bin/env python3
"""Issue 42's real programs, a training step on the CPU: tfrun against
TensorFlow 2.21 from the same graph file, in the same run.

For each program of issue 42 (golbin's tower sample at 1, 2, 4 and 8
towers fed 8 rows a tower, TensorFlow's CIFAR-10 multi-GPU trainer at 1, 2
and 4 towers, tf_cnn_benchmarks' trivial, lenet and resnet20 under its
parameter_server, replicated and independent variable updates on two
towers; --only NAME picks those whose graph file names contain NAME), both
run the program's initializers, then --steps timed training steps after
--warmup steps, --rounds times alternating:

  - tfrun's time per step from the difference of two runs (--steps W and
    --steps W+N, each the fastest of three: start-up, loading and the
    initializers cancel out);
  - TensorFlow's from timing sess.run([loss, train]) in its own process,
    after its warm-up steps, with the soft placement the programs ask for.

Prints the median time per step of each and their ratio (> 1: tfrun
faster), with the CPU's model.

  python3 bench/real_programs.py --python ~/.cache/tfrun/tf-venv/bin/python [--steps 10 --rounds 3]
      [--tfrun-args "--inter-op-threads 2"]
"""
import argparse
import os
import statistics
import subprocess
import sys
import shutil
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# golbin's sample is fed 8 rows a tower a step, as tools/train_conformance.py
# feeds it; the others draw their own synthetic data.
TOWER_BATCH = 8


def golbin(towers):
    feeds = ["--batch", str(TOWER_BATCH * towers), "--feed", f"Placeholder=@{{x{towers}}}",
             "--feed", f"Placeholder_1=@{{y{towers}}}"]
    return (f"golbin's tower sample, {towers} tower(s), batch {TOWER_BATCH * towers}",
            f"graphs/tf/golbin_tower_{towers}.pb", ["init"], "train", "loss", feeds, towers)


# (name, graph, initializers, train op, loss, tfrun feed flags, towers fed or 0)
PROGRAMS = [golbin(t) for t in (1, 2, 4, 8)] + [
    (f"CIFAR-10 multi-GPU trainer, {t} tower(s), batch 16 a tower", f"graphs/tf/cifar10_multi_gpu_{t}.pb", ["init"],
     "train", "loss", [], 0) for t in (1, 2, 4)] + [
    (f"tf_cnn_benchmarks {model}, {update}, 2 towers", f"graphs/tf/tfcnn_{model}_{update}.pb",
     ["init", "local_var_init_op_group"], "main_fetch_group", "average_loss/Mean", [], 0)
    for model in ("trivial", "lenet", "resnet20") for update in ("ps", "replicated", "independent")]

TF_PROGRAM = r'''
import sys, time, numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
graph, inits, train, loss, warmup, steps, feeds = sys.argv[1], sys.argv[2].split(","), sys.argv[3], sys.argv[4], \
    int(sys.argv[5]), int(sys.argv[6]), sys.argv[7:]
gd = tf.compat.v1.GraphDef.FromString(open(graph, "rb").read())
g = tf.Graph()
with g.as_default():
    tf.compat.v1.import_graph_def(gd, name="")
feed = None
if feeds:
    x, y, batch = np.load(feeds[0]), np.load(feeds[1]), int(feeds[2])
    feed = {"Placeholder:0": x[:batch], "Placeholder_1:0": y[:batch]}
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


def tfrun_seconds(tfrun, program, steps, files, extra):
    """The fastest of three runs: one run's start-up varies by tens of
    milliseconds on a busy machine, as much as several small steps."""
    _, graph, inits, train, loss, feeds, _ = program
    feeds = [f.format(**files) for f in feeds]
    args = [tfrun, graph, "--soft-placement", "--quiet", "--targets", train, "--fetch", loss, "--steps", str(steps)]
    args += extra
    for name in inits:
        args += ["--init", name]
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(args + feeds, cwd=ROOT, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tfrun", default=os.path.join(ROOT, "bazel-bin", "cli", "tfrun"))
    ap.add_argument("--python", required=True, help="a Python with TensorFlow 2.21")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the programs whose graph file names contain this")
    ap.add_argument("--tfrun-args", default="", help="more flags for every tfrun run (\"--inter-op-threads 2\")")
    a = ap.parse_args()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"CPU: {cpu}, {os.cpu_count()} cores; {a.steps} steps after {a.warmup}, median of {a.rounds} rounds"
          + (f"; tfrun {a.tfrun_args}" if a.tfrun_args else ""))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    work = tempfile.mkdtemp(prefix="real_programs.")
    script = os.path.join(work, "tf_step.py")
    with open(script, "w") as f:
        f.write(TF_PROGRAM)
    # golbin's feeds: the rows of testdata/train/tower_{x,y}16.npy repeated to
    # a whole step of every tower count, written once by the TensorFlow Python.
    files = {}
    for towers in (1, 2, 4, 8):
        files[f"x{towers}"], files[f"y{towers}"] = (os.path.join(work, f"{n}{towers}.npy") for n in "xy")
    subprocess.run([a.python, "-c", "import numpy as np, sys\n"
                    "for t in (1, 2, 4, 8):\n"
                    "    for n in 'xy':\n"
                    "        v = np.load(f'testdata/train/tower_{n}16.npy')\n"
                    f"        np.save(f'{work}/{{n}}{{t}}.npy', np.concatenate([v] * max(1, t * {TOWER_BATCH} // 16)))"],
                   cwd=ROOT, check=True)
    for program in PROGRAMS:
        if a.only not in program[1]:
            continue
        ours, theirs = [], []
        for _ in range(a.rounds):
            short = tfrun_seconds(a.tfrun, program, a.warmup, files, a.tfrun_args.split())
            long = tfrun_seconds(a.tfrun, program, a.warmup + a.steps, files, a.tfrun_args.split())
            ours.append((long - short) / a.steps)
            _, graph, inits, train, loss, _, towers = program
            fed = [files[f"x{towers}"], files[f"y{towers}"], str(TOWER_BATCH * towers)] if towers else []
            p = subprocess.run([a.python, script, graph, ",".join(inits), train, loss, str(a.warmup), str(a.steps)] +
                               fed, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
            theirs.append(float(p.stdout.strip().splitlines()[-1]))
        mine, tf = statistics.median(ours), statistics.median(theirs)
        print(f"{program[0]}: tfrun {mine * 1e3:.1f} ms/step, TensorFlow {tf * 1e3:.1f} ms/step, "
              f"ratio {tf / mine:.2f}", flush=True)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
