#!/usr/bin/env python3
"""The tower sample's training step on the CPU: tfrun against TensorFlow
2.21 from the same GraphDef, in the same run (issue 30, item 5).

Trains graphs/tf/tower_sample_cpu_1.pb (two conv + max-pool layers, a
1024-wide dense layer with dropout, Adam) on batches of --batch 28x28x1
images (default 256, the sample's), for --steps timed steps after
--warmup steps, alternating tfrun and TensorFlow --rounds times:

  - time per step and images per second: tfrun's from the difference of
    two runs (--steps W and --steps W+N: start-up, loading and the
    initializer cancel out), TensorFlow's from timing sess.run([loss,
    train]) in its own process;
  - end to end: one tfrun command of W+N steps against one Python process
    that imports TensorFlow, imports the graph, opens the session and runs
    the same steps; TensorFlow's import and session start-up also alone.

Prints a ratio per line (> 1: tfrun faster) with the CPU's model and
instruction set.

--scaling prints the sample's scaling table instead: the GPU graphs
(graphs/tf/tower_sample_{1,2,4,8}.pb) trained on eight Tesla P40s
(testdata/topologies/p40_x8.yaml), time per step, speedup and
efficiency. Without real GPUs those are simulated: their kernels run on
the host one after another, so the table shows host timings, not GPU
scaling (and says so). --scaling --real runs it on this machine's GPUs
(CUDA kernels, cuDNN): eight real ones, or GPU:0 split into eight logical
GPUs where it has fewer (said so). Needs a Python with TensorFlow (--python, or
tools/setup_tensorflow.sh's).

  python3 bench/train.py --python ~/.cache/tfrun/tf-venv/bin/python [--batch 256 --steps 10]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "..", "graphs", "tf", "tower_sample_cpu_1.pb")

TF_PROGRAM = """
import sys, time
t0 = time.perf_counter()
import numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
gd = tf.compat.v1.GraphDef(); gd.ParseFromString(open(sys.argv[1], 'rb').read())
g = tf.Graph()
with g.as_default(): tf.compat.v1.import_graph_def(gd, name='')
x = np.load(sys.argv[2]); y = np.load(sys.argv[3]); batch = int(sys.argv[4]); steps = int(sys.argv[5])
warmup = int(sys.argv[6])
with tf.compat.v1.Session(graph=g, config=tf.compat.v1.ConfigProto(device_count={'CPU': 1})) as s:
    s.run('init')
    t1 = time.perf_counter()
    times = []
    for i in range(warmup + steps):
        rows = slice((i * batch) % len(x), (i * batch) % len(x) + batch)
        a = time.perf_counter()
        s.run(['loss:0', 'train'], {'x:0': x[rows], 'y:0': y[rows]})
        if i >= warmup: times.append(time.perf_counter() - a)
print('START', t1 - t0)
print('STEPS', ' '.join(map(str, times)))
"""


def cpu_description():
    model, flags = "unknown CPU", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "AVX" if "avx" in flags else "SSE"
    return f"{model}, {isa}, {os.cpu_count()} cores"


def run_tfrun(tfrun, x, y, batch, steps):
    args = [tfrun, GRAPH, "--device-count", "CPU=1", "--init", "init", "--targets", "train", "--fetch", "loss",
            "--steps", str(steps), "--batch", str(batch), "--feed", f"x=@{x}", "--feed", f"y=@{y}", "--quiet"]
    t = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t


def real_gpu_flags():
    """The flags that give the sample eight GPUs on this machine: none with
    eight or more; else GPU:0 split into eight logical GPUs (each an
    eighth of its memory), which share one device's compute."""
    out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
                         check=True, capture_output=True, text=True).stdout.strip().splitlines()
    name, memory = out[0].rsplit(",", 1)
    if len(out) >= 8:
        return [], f"{len(out)} real GPUs ({name.strip()})"
    share = int(int(memory) * 0.9) // 8
    return (["--virtual-devices", ",".join([str(share)] * 8)],
            f"{len(out)} real {name.strip()}: GPU:0 split into eight logical GPUs of {share} MiB, which share its "
            f"compute (so the table shows tfrun's per-step cost and overheads on a GPU, not multi-GPU scaling)")


def run_scaling(a, x, y):
    if a.real:
        devices, what = real_gpu_flags()
        print(f"tower sample scaling, batch {a.batch}, {a.steps} timed steps on {what}")
    else:
        topology = os.path.join(HERE, "..", "testdata", "topologies", "p40_x8.yaml")
        devices = ["--devices", topology]
        print(f"tower sample scaling, batch {a.batch}, {a.steps} timed steps: eight SIMULATED Tesla P40s "
              f"({topology}): kernels run on the host one after another; host timings, not GPU scaling")
    print("| towers | time/step (ms) | speedup | efficiency |")
    print("|---|---|---|---|")
    base = None
    for towers in (1, 2, 4, 8):
        graph = os.path.join(HERE, "..", "graphs", "tf", f"tower_sample_{towers}.pb")

        def run(steps):
            args = [a.tfrun, graph, *devices, "--init", "init", "--targets", "train", "--fetch", "loss",
                    "--steps", str(steps), "--batch", str(a.batch), "--feed", f"x=@{x}", "--feed", f"y=@{y}", "--quiet"]
            t = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True)
            return time.perf_counter() - t

        per_step = statistics.median((run(a.warmup + a.steps) - run(a.warmup)) / a.steps for _ in range(a.rounds))
        base = base or per_step
        print(f"| {towers} | {per_step * 1e3:.1f} | {base / per_step:.2f}x | {base / per_step / towers:.0%} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--python", help="a Python with TensorFlow 2.21 (not for --scaling)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scaling", action="store_true", help="the 1/2/4/8-tower table on P40s instead")
    ap.add_argument("--real", action="store_true", help="with --scaling: on this machine's GPUs, not simulated ones")
    a = ap.parse_args()
    import numpy as np
    work = tempfile.mkdtemp(prefix="tfrun-bench-train-")
    rows = a.batch * (a.warmup + a.steps)
    rng = np.random.RandomState(0)
    x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(x, rng.uniform(0, 1, (rows, 28, 28, 1)).astype(np.float32))
    np.save(y, np.eye(10, dtype=np.float32)[rng.randint(0, 10, rows)])
    if a.scaling:
        run_scaling(a, x, y)
        return
    program = os.path.join(work, "tf_train.py")
    with open(program, "w") as f:
        f.write(TF_PROGRAM)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1")
    ours_step, ours_total, theirs_step, theirs_total, theirs_start = [], [], [], [], []
    for _ in range(a.rounds):
        short = run_tfrun(a.tfrun, x, y, a.batch, a.warmup)
        full = run_tfrun(a.tfrun, x, y, a.batch, a.warmup + a.steps)
        ours_step.append((full - short) / a.steps)
        ours_total.append(full)
        t = time.perf_counter()
        p = subprocess.run([a.python, program, GRAPH, x, y, str(a.batch), str(a.steps), str(a.warmup)],
                           capture_output=True, text=True, env=env, check=True)
        theirs_total.append(time.perf_counter() - t)
        theirs_start.append(float(re.search(r"^START (\S+)", p.stdout, re.M).group(1)))
        theirs_step.append(statistics.median(float(v) for v in re.search(r"^STEPS (.*)", p.stdout, re.M).group(1).split()))
    o, t = statistics.median(ours_step), statistics.median(theirs_step)
    print(f"CPU: {cpu_description()}; batch {a.batch}, {a.steps} timed steps after {a.warmup}, {a.rounds} rounds")
    print(f"time per step: tfrun {o * 1e3:.1f} ms ({a.batch / o:.0f} images/s), TensorFlow {t * 1e3:.1f} ms "
          f"({a.batch / t:.0f} images/s): ratio {t / o:.2f}")
    ot, tt = statistics.median(ours_total), statistics.median(theirs_total)
    print(f"end to end, {a.warmup + a.steps} steps: tfrun {ot:.2f} s, TensorFlow {tt:.2f} s "
          f"(import, graph and session {statistics.median(theirs_start):.2f} s): ratio {tt / ot:.2f}")


if __name__ == "__main__":
    main()
