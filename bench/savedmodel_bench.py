#!/usr/bin/env python3
"""Placing a Keras ResNet50 SavedModel's serving signature (issue 43, item
7): tfrun, process start to exit, beside TensorFlow 2.21's load and first
call of the same signature, in one run.

The SavedModel is `keras.applications.ResNet50(weights=None)` (Keras 3,
seeded) saved by `tf.saved_model.save` (a 1.4 MB saved_model.pb, 98 MB of
variables), made once under ~/.cache/tfrun/bench (--model to choose
another folder). tfrun runs `--signature serving_default --place-only
--log-placement` on eight simulated P40s and on this machine's CPU (its
whole process, best of --repeats). TensorFlow, in a fresh process per
repeat that has imported it (the import is not counted), times
`tf.saved_model.load` and the first call of `signatures["serving_default"]`
on one 224x224 image of zeros: the call instantiates the function (its
passes and placement) and runs it once, as a user's first call does; this
machine has no GPU, so TensorFlow places on its CPU. Before timing, the
CPU placement of both is checked line for line (three logical CPUs,
TensorFlow's `set_log_device_placement`). Prints both and the ratio
(target: tfrun at least 20x faster).

  bench/savedmodel_bench.py --python PY --tfrun BIN [--repeats 3]
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MAKE = r'''
import sys
import tensorflow as tf, keras
keras.utils.set_random_seed(1)
tf.saved_model.save(keras.applications.ResNet50(weights=None), sys.argv[1])
'''

CALL = r'''
import sys, time
import tensorflow as tf
if sys.argv[2] == "log":
    tf.debugging.set_log_device_placement(True)
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 3)
t0 = time.perf_counter()
signature = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
name = list(signature.structured_input_signature[1].keys())[0]
image = tf.zeros([1, 224, 224, 3])
print("==CALL", flush=True)
signature(**{name: image})
print("==END", flush=True)
print(f"==SECONDS {time.perf_counter() - t0}", flush=True)
'''


def run(argv, env=None):
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])}...: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default=os.path.expanduser("~/.cache/tfrun/bench/resnet50_savedmodel"))
    a = ap.parse_args()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    if not os.path.exists(os.path.join(a.model, "saved_model.pb")):
        run([a.python, "-c", MAKE, a.model], env)

    # The same placement first: TensorFlow's log on three logical CPUs.
    lines = run([a.python, "-c", CALL, a.model, "log"], env).splitlines()
    expected = lines[lines.index("==CALL") + 1:lines.index("==END")]
    got = run([a.tfrun, a.model, "--signature", "serving_default", "--place-only", "--log-placement",
               "--device-count", "CPU=3"]).splitlines()
    if got != expected:
        first = next(i for i, (x, y) in enumerate(zip(expected + [""], got + [""])) if x != y)
        sys.exit(f"placement differs at line {first + 1}: TensorFlow {expected[first]!r}, tfrun {got[first]!r}")

    tf_best = min(float(run([a.python, "-c", CALL, a.model, "quiet"], env).split("==SECONDS ")[1])
                  for _ in range(a.repeats))
    topology = os.path.join(ROOT, "testdata/topologies/p40_x8.yaml")
    timings = {}
    for label, devices in (("8 simulated P40s", ["--devices", topology]), ("CPU", [])):
        best = None
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            run([a.tfrun, a.model, "--signature", "serving_default", "--place-only", "--log-placement", *devices])
            elapsed = time.perf_counter() - t0
            best = elapsed if best is None else min(best, elapsed)
        timings[label] = best
    print(f"Keras ResNet50 SavedModel, serving_default ({len(expected)} placement lines, equal to TensorFlow's "
          f"on 3 CPUs): TensorFlow load + first call {tf_best * 1000:.0f} ms")
    for label, best in timings.items():
        print(f"  tfrun on {label}: {best * 1000:.0f} ms, {tf_best / best:.1f}x faster")


if __name__ == "__main__":
    main()
