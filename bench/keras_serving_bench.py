#!/usr/bin/env python3
"""Running a Keras MobileNetV2 SavedModel's serving signature on a batch of
32 (issue 44, item 8): tfrun beside TensorFlow 2.21 in one run, end to end
and per call.

The SavedModel is `keras.applications.MobileNetV2(weights=None)` (Keras 3,
seeded) written by `model.export` (14 MB of variables), with a batch of 32
random 224x224x3 images, made once under ~/.cache/tfrun/bench (--model).
TensorFlow (its default build: oneDNN on), in a fresh process per repeat
that has imported it (the import is not counted): `tf.saved_model.load`
and the first call of `signatures["serving_default"]` (end to end), then
--calls more calls (per call: their median). tfrun: the whole process of
`--signature serving_default --feed keras_tensor=@batch.npy` (end to end:
load, restore the variables, place, run, print), and `--benchmark N`'s
median run (per call). Before timing, tfrun's output is checked against
TensorFlow's: equal bit for bit to TensorFlow's with oneDNN off (the
arithmetic tfrun copies), and the largest difference from oneDNN's is
printed. Prints both and the ratios (target: tfrun at least as fast, both).

  PY bench/keras_serving_bench.py --python PY --tfrun BIN [--repeats 3] [--calls 10]

(PY: a Python with TensorFlow, tools/setup_tensorflow.sh; this script needs its NumPy.)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

MAKE = r'''
import sys
import numpy as np, keras
keras.utils.set_random_seed(1)
keras.applications.MobileNetV2(weights=None).export(sys.argv[1], verbose=False)
np.save(sys.argv[1] + "/../mobilenetv2_batch.npy",
        np.random.default_rng(0).standard_normal((32, 224, 224, 3)).astype(np.float32))
'''

CALL = r'''
import statistics, sys, time
import numpy as np
import tensorflow as tf
batch = tf.constant(np.load(sys.argv[2]))
t0 = time.perf_counter()
signature = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = signature(keras_tensor=batch)["output_0"].numpy()
first = time.perf_counter() - t0
calls = []
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    signature(keras_tensor=batch)["output_0"].numpy()
    calls.append(time.perf_counter() - t)
if len(sys.argv) > 4:
    np.save(sys.argv[4], out)
print(f"==TIMES {first} {statistics.median(calls) if calls else 0}", flush=True)
'''


def run(argv, env=None):
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])}...: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/tfrun/bench/mobilenetv2_export"))
    a = ap.parse_args()
    import numpy as np
    base = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    onednn_off = dict(base, TF_ENABLE_ONEDNN_OPTS="0")
    onednn_on = dict(base, TF_ENABLE_ONEDNN_OPTS="1")
    batch = os.path.join(os.path.dirname(a.model), "mobilenetv2_batch.npy")
    if not os.path.exists(os.path.join(a.model, "saved_model.pb")):
        run([a.python, "-c", MAKE, a.model], onednn_off)

    with tempfile.TemporaryDirectory() as tmp:
        run([a.python, "-c", CALL, a.model, batch, "0", os.path.join(tmp, "tf_off.npy")], onednn_off)
        run([a.python, "-c", CALL, a.model, batch, "0", os.path.join(tmp, "tf_on.npy")], onednn_on)
        run([a.tfrun, a.model, "--signature", "serving_default", "--feed", f"keras_tensor=@{batch}", "--out", tmp])
        got = np.load(os.path.join(tmp, "Identity.npy"))
        off = np.load(os.path.join(tmp, "tf_off.npy"))
        on = np.load(os.path.join(tmp, "tf_on.npy"))
        if not np.array_equal(got, off):
            sys.exit(f"tfrun's output differs from TensorFlow's (oneDNN off): max {np.abs(got - off).max()}")
        print(f"outputs: equal to TensorFlow's with oneDNN off; oneDNN's differ by at most "
              f"{np.abs(got - on).max():.3g}")

    tf_first, tf_call = [], []
    tfrun_total, tfrun_call = [], []
    for _ in range(a.repeats):  # alternating, so both see the same machine
        first, call = map(float, run([a.python, "-c", CALL, a.model, batch, str(a.calls)],
                                     onednn_on).split("==TIMES ")[1].splitlines()[0].split())
        tf_first.append(first)
        tf_call.append(call)
        t0 = time.perf_counter()
        run([a.tfrun, a.model, "--signature", "serving_default", "--feed", f"keras_tensor=@{batch}"])
        tfrun_total.append(time.perf_counter() - t0)
        out = run([a.tfrun, a.model, "--signature", "serving_default", "--feed", f"keras_tensor=@{batch}",
                   "--benchmark", str(a.calls)])
        median = next(l for l in out.splitlines() if l.strip().startswith("median"))
        tfrun_call.append(float(median.split()[1]) / 1000)
    tf_e2e, tf_step = min(tf_first), min(tf_call)
    e2e, step = min(tfrun_total), min(tfrun_call)
    print(f"Keras MobileNetV2 SavedModel, serving_default on 32 images (best of {a.repeats}):")
    print(f"  end to end: TensorFlow load + first call {tf_e2e * 1000:.0f} ms, tfrun process {e2e * 1000:.0f} ms "
          f"({tf_e2e / e2e:.2f}x)")
    print(f"  per call:   TensorFlow {tf_step * 1000:.0f} ms (median of {a.calls}), tfrun {step * 1000:.0f} ms "
          f"({tf_step / step:.2f}x)")


if __name__ == "__main__":
    main()
