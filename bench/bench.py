#!/usr/bin/env python3
"""tfrun against its references, measured in the same run on the same
machine; prints one ratio per line (>1 means tfrun is faster or smaller).

(a) CPU MatMul float32 at 512, 1024, 2048: tfrun --benchmark (median kernel
    time) against NumPy's a @ b (OpenBLAS), same thread count.
(b) End to end, process start to exit: the tutorial graph through tfrun
    against `python3 -c` doing the same with NumPy, and against
    `import tensorflow` when TFRUN_BENCH_TF_PYTHON names a Python that has it.
(c) GPU MatMul against torch.mm: needs a GPU (the device machine); skipped
    here with the reason.
(d) Peak resident memory of the tutorial run.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

THREADS = os.cpu_count() or 1


def matmul_graph(n, path):
    with open(path, "w") as f:
        f.write(f"""nodes:
  - {{name: a, op: Const, shape: [{n}, {n}], random: {{distribution: uniform, min: -1, max: 1, seed: 1}}}}
  - {{name: b, op: Const, shape: [{n}, {n}], random: {{distribution: uniform, min: -1, max: 1, seed: 2}}}}
  - {{name: c, op: MatMul, inputs: [a, b]}}
fetch: [c]
""")


def tfrun_matmul_ms(tfrun, n, runs):
    with tempfile.TemporaryDirectory() as tmp:
        g = os.path.join(tmp, "mm.yaml")
        matmul_graph(n, g)
        out = subprocess.run([tfrun, g, "--benchmark", str(runs), "--warmup", "2", "--intra-op-threads",
                              str(THREADS), "--json", "-"], capture_output=True, text=True, check=True).stdout
        return json.loads(out)["benchmark"]["nodes"]["c"]["median_ms"]


def numpy_matmul_ms(n, runs):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    for _ in range(2):
        a @ b
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def wall_ms(cmd, runs, env=None):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def peak_rss_mb(cmd):
    # GNU time reports the child's own high-water mark (a forked child's
    # ru_maxrss would include the parent's pages from before exec).
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=True).stderr
    return int(out.strip().splitlines()[-1]) / 1024


NUMPY_TUTORIAL = ("import numpy as np; a = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.float32).reshape(2, 3); "
                  "b = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.float32).reshape(3, 2); print(a @ b)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    a = ap.parse_args()
    runs = 5 if a.quick else 15
    os.environ["OPENBLAS_NUM_THREADS"] = str(THREADS)
    print(f"# {time.strftime('%Y-%m-%d')} {platform.node()} {platform.processor() or platform.machine()}, "
          f"{THREADS} threads, NumPy {np.__version__}")
    print(f"{'measure':<52} {'tfrun':>12} {'reference':>12} {'ratio':>7}")

    def row(name, ours, ref, unit, higher_is_better=False):
        ratio = (ours / ref) if higher_is_better else (ref / ours)
        print(f"{name:<52} {ours:>9.2f} {unit:<2} {ref:>9.2f} {unit:<2} {ratio:>6.2f}x")

    for n in (512, 1024, 2048):
        ours = tfrun_matmul_ms(a.tfrun, n, runs)
        ref = numpy_matmul_ms(n, runs)
        gf = lambda ms: 2 * n ** 3 / (ms * 1e6)
        row(f"(a) CPU MatMul f32 {n}: GFLOP/s vs NumPy+OpenBLAS", gf(ours), gf(ref), "GF", True)

    tutorial = [a.tfrun, "graphs/matmul.yaml"]
    numpy_tutorial = [sys.executable, "-c", NUMPY_TUTORIAL]
    ours = wall_ms(tutorial, runs * 2)
    ref = wall_ms(numpy_tutorial, runs)
    row("(b) tutorial graph end to end vs python3 -c NumPy", ours, ref, "ms")
    tf_python = os.environ.get("TFRUN_BENCH_TF_PYTHON")
    if tf_python and shutil.which(tf_python) or (tf_python and os.path.exists(tf_python)):
        tf_ms = wall_ms([tf_python, "-c", "import tensorflow"], 3, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        row("(b) tutorial graph end to end vs import tensorflow", ours, tf_ms, "ms")
    else:
        print("(b) vs import tensorflow: skipped (set TFRUN_BENCH_TF_PYTHON to a Python with tensorflow)")
    print("(c) GPU MatMul vs torch.mm, two towers on 2 vs 1 logical GPUs: skipped (no GPU on this machine; "
          "run on the device machine)")
    row("(d) peak resident memory of the tutorial run vs NumPy's", peak_rss_mb(tutorial), peak_rss_mb(numpy_tutorial),
        "MB")


if __name__ == "__main__":
    main()
