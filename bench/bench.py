#!/usr/bin/env python3
"""tfrun against its references, measured in the same run on the same
machine; prints one ratio per line (>1 means tfrun is faster or smaller).

(a) CPU MatMul float32 at 512, 1024, 2048: tfrun --benchmark (median kernel
    time) against NumPy's a @ b (the BLAS NumPy loaded, named; the
    reference BLAS is refused), same thread count, alternating
    in rounds.
(b) End to end, process start to exit: the tutorial graph through tfrun
    against `python3 -c` doing the same with NumPy, and against
    `import tensorflow` when TFRUN_BENCH_TF_PYTHON names a Python that has it.
(c) GPU MatMul (CUDA-event kernel time) against torch.mm timed the same way:
    float32 with and without TF32, float16, bfloat16, at 4096 and 8192; and
    two towers of MatMuls on two logical GPUs (one stream each) against one.
    Runs where tfrun sees a GPU and torch has CUDA (the device machine:
    `python3 bench/bench.py --tfrun .device/tfrun --gpu-only`); skipped with
    the reason elsewhere.
(d) Peak resident memory of the tutorial run.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

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


NUMPY_MATMUL = """
import statistics, sys, time
import numpy as np
n, runs = int(sys.argv[1]), int(sys.argv[2])
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
print(statistics.median(times))
"""


def numpy_matmul_ms(n, runs):
    # In its own process, like tfrun: OpenBLAS's threads spin for a while
    # after each call, and in this process they would steal a core from the
    # tfrun run that follows.
    out = subprocess.run([sys.executable, "-c", NUMPY_MATMUL, str(n), str(runs)], capture_output=True, text=True,
                         check=True).stdout
    return float(out)


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


def numpy_version():
    try:
        import numpy as np
        return np.__version__
    except ImportError:  # the GPU section needs only torch
        return "absent"


def gpu_count(tfrun):
    out = subprocess.run([tfrun, "devices"], capture_output=True, text=True).stdout
    m = re.search(r"^(\d+) Physical GPUs", out, re.M)
    return int(m.group(1)) if m else 0


def write_graph(path, text):
    with open(path, "w") as f:
        f.write(text)


def tfrun_json(tfrun, graph_text, args):
    with tempfile.TemporaryDirectory() as tmp:
        g = os.path.join(tmp, "g.yaml")
        write_graph(g, graph_text)
        out = subprocess.run([tfrun, g, "--json", "-"] + args, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"tfrun {' '.join(args)} failed: {out.stderr.strip()}")
        return json.loads(out.stdout)


def tfrun_gpu_matmul_ms(tfrun, n, dtype, tf32, runs):
    graph = f"""nodes:
  - {{name: a, op: Const, device: /gpu:0, dtype: {dtype}, shape: [{n}, {n}], random: {{distribution: uniform, min: -1, max: 1, seed: 1}}}}
  - {{name: b, op: Const, device: /gpu:0, dtype: {dtype}, shape: [{n}, {n}], random: {{distribution: uniform, min: -1, max: 1, seed: 2}}}}
  - {{name: c, op: MatMul, device: /gpu:0, inputs: [a, b]}}
fetch: [c]
"""
    args = ["--benchmark", str(runs), "--warmup", "3", "--tf32", tf32 or "on"]
    node = tfrun_json(tfrun, graph, args)["benchmark"]["nodes"]["c"]
    if "GPU" not in node["device"]:
        raise RuntimeError(f"MatMul ran on {node['device']}, not a GPU")
    return node["median_ms"]  # CUDA-event time on the device


def torch_mm_ms(n, dtype, tf32, runs):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = tf32 == "on"
    t = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    a = (torch.rand(n, n, device="cuda") * 2 - 1).to(t)
    b = (torch.rand(n, n, device="cuda") * 2 - 1).to(t)
    for _ in range(3):
        torch.mm(a, b)
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.mm(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def two_tower_graph(n, depth):
    # Each tower: a chain of `depth` n x n MatMuls, then a MatMul by an n x 1
    # vector so that only n floats cross to the CPU for the AddN.
    lines = ["nodes:"]
    for t in (0, 1):
        dev = f"/gpu:{t}"
        lines.append(f"  - {{name: w{t}, op: Const, device: {dev}, shape: [{n}, {n}], "
                     f"random: {{distribution: uniform, min: -0.01, max: 0.01, seed: {t + 1}}}}}")
        lines.append(f"  - {{name: v{t}, op: Const, device: {dev}, shape: [{n}, 1], fill: 1}}")
        prev = f"w{t}"
        for d in range(depth):
            lines.append(f"  - {{name: t{t}_{d}, op: MatMul, device: {dev}, inputs: [{prev}, w{t}]}}")
            prev = f"t{t}_{d}"
        lines.append(f"  - {{name: out{t}, op: MatMul, device: {dev}, inputs: [{prev}, v{t}]}}")
    lines.append("  - {name: sum, op: AddN, device: /cpu:0, inputs: [out0, out1]}")
    lines.append("fetch: [sum]")
    return "\n".join(lines) + "\n"


def gpu_section(tfrun, runs, row):
    try:
        import torch  # noqa: F401
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    gpus = gpu_count(tfrun)
    if gpus == 0 or not have_torch:
        print("(c) GPU MatMul vs torch.mm, two towers on 2 vs 1 logical GPUs: skipped "
              f"({'no GPU visible to tfrun' if gpus == 0 else 'no CUDA torch'}; run on the device machine)")
        return
    for n in (4096, 8192):
        for dtype, tf32 in (("float32", "on"), ("float32", "off"), ("float16", None), ("bfloat16", None)):
            ours = tfrun_gpu_matmul_ms(tfrun, n, dtype, tf32, runs)
            ref = torch_mm_ms(n, dtype, tf32, runs)
            label = dtype + (f" tf32 {tf32}" if tf32 else "")
            tf = lambda ms: 2 * n ** 3 / (ms * 1e9)
            row(f"(c) GPU MatMul {label} {n}: TFLOP/s vs torch.mm", tf(ours), tf(ref), "TF", True)
    # Two logical GPUs carved from GPU 0 (one stream each) against one
    # logical GPU running both towers (soft placement moves tower 1 there).
    graph = two_tower_graph(4096, 8)
    args = ["--benchmark", str(runs), "--warmup", "2"]
    two = tfrun_json(tfrun, graph, args + ["--virtual-devices", "16384,16384"])["benchmark"]["run_ms"]["median"]
    one = tfrun_json(tfrun, graph, args + ["--virtual-devices", "32768", "--soft-placement"])["benchmark"]["run_ms"]["median"]
    row("(c) two towers, 2 logical GPUs vs 1 (run ms)", two, one, "ms")


NUMPY_TUTORIAL = ("import numpy as np; a = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.float32).reshape(2, 3); "
                  "b = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.float32).reshape(3, 2); print(a @ b)")


NUMPY_BLAS = ("import numpy as np; a = np.ones((64, 64), np.float32); a @ a; "
              "print(open('/proc/self/maps').read())")


def cpu_isa():
    """The widest vector instructions the CPU has: every GEMM ratio depends on it."""
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    return "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "AVX" if "avx" in flags else "SSE"


def numpy_blas():
    """The BLAS library NumPy actually loaded (from the process's memory
    map after a matmul), named for the reference column; None for the
    unoptimised reference BLAS, which is no fair reference."""
    maps = subprocess.run([sys.executable, "-c", NUMPY_BLAS], capture_output=True, text=True).stdout
    libs = {os.path.basename(l.split()[-1]) for l in maps.splitlines() if ".so" in l}
    for name, label in (("openblas", "OpenBLAS"), ("mkl", "MKL"), ("blis", "BLIS"), ("atlas", "ATLAS")):
        if any(name in lib.lower() for lib in libs):
            return label
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--gpu-only", action="store_true", help="only (c), on a machine with a GPU and torch")
    a = ap.parse_args()
    runs = 5 if a.quick else 15
    os.environ["OPENBLAS_NUM_THREADS"] = str(THREADS)
    print(f"# {time.strftime('%Y-%m-%d')} {platform.node()} {platform.processor() or platform.machine()}, "
          f"{THREADS} threads, NumPy {numpy_version()}")
    print(f"{'measure':<52} {'tfrun':>12} {'reference':>12} {'ratio':>7}")

    def row(name, ours, ref, unit, higher_is_better=False):
        ratio = (ours / ref) if higher_is_better else (ref / ours)
        print(f"{name:<52} {ours:>9.2f} {unit:<2} {ref:>9.2f} {unit:<2} {ratio:>6.2f}x")

    if a.gpu_only:
        gpu_section(a.tfrun, runs, row)
        return
    rounds = 1 if a.quick else 5
    blas = numpy_blas()
    if blas is None:
        sys.exit("bench.py: NumPy uses the reference BLAS (or none could be named): no fair reference for (a); "
                 "install libopenblas0-pthread (bench/run.sh does)")
    for n in (512, 1024, 2048):
        # Alternate the two in rounds so that a noisy neighbour on a shared
        # machine slows both alike; each side keeps its median round.
        ours_rounds, ref_rounds = [], []
        for _ in range(rounds):
            ours_rounds.append(tfrun_matmul_ms(a.tfrun, n, runs))
            ref_rounds.append(numpy_matmul_ms(n, runs))
        ours, ref = statistics.median(ours_rounds), statistics.median(ref_rounds)
        gf = lambda ms: 2 * n ** 3 / (ms * 1e6)
        row(f"(a) CPU MatMul f32 {n} ({cpu_isa()}): GFLOP/s vs NumPy+{blas}", gf(ours), gf(ref), "GF", True)

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
    gpu_section(a.tfrun, runs, row)
    row("(d) peak resident memory of the tutorial run vs NumPy's", peak_rss_mb(tutorial), peak_rss_mb(numpy_tutorial),
        "MB")


if __name__ == "__main__":
    main()
