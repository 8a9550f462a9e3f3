#!/usr/bin/env python3
"""The TF2 GPU guide's MirroredStrategy program printing its transcript
(issue 44, item 5): tfrun beside TensorFlow 2.21 in one run.

TensorFlow, in a fresh process per repeat, runs the guide's program over 2
logical CPUs with set_log_device_placement(True) at the INFO log level;
timed from before MirroredStrategy(...) to after model.compile (the import
of TensorFlow and Keras not counted, nor the process). tfrun: the whole
process of `tfrun graphs/tf2_guide_mirrored_cpu.yaml --compat eager
--device-count CPU=2` (load, build, every wrapper placed, the log printed).
Prints the medians and the ratio (TensorFlow's time / tfrun's).

  PY bench/keras_compile_bench.py --python PY --tfrun BIN [--repeats 5]

(PY: a Python with TensorFlow, tools/setup_tensorflow.sh.)
"""
import argparse
import os
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "..", "graphs", "tf2_guide_mirrored_cpu.yaml")

PROGRAM = r'''
import time
import tensorflow as tf
import keras  # imported before the clock starts, as TensorFlow is
tf.get_logger().setLevel("INFO")
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
tf.debugging.set_log_device_placement(True)
start = time.perf_counter()
strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("CPU"))
with strategy.scope():
    inputs = tf.keras.layers.Input(shape=(1,))
    predictions = tf.keras.layers.Dense(1)(inputs)
    model = tf.keras.models.Model(inputs=inputs, outputs=predictions)
    model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))
print("MS", (time.perf_counter() - start) * 1000.0, flush=True)
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1")
    env.pop("TF_USE_LEGACY_KERAS", None)
    tf_ms, tfrun_ms = [], []
    for _ in range(a.repeats):
        p = subprocess.run([a.python, "-c", PROGRAM], capture_output=True, text=True, env=env, check=True)
        tf_ms.append(float([l for l in p.stdout.splitlines() if l.startswith("MS ")][-1].split()[1]))
        start = time.perf_counter()
        subprocess.run([a.tfrun, GRAPH, "--compat", "eager", "--device-count", "CPU=2"], capture_output=True,
                       env=env, check=True)
        tfrun_ms.append((time.perf_counter() - start) * 1000.0)
    tf_median, tfrun_median = statistics.median(tf_ms), statistics.median(tfrun_ms)
    print(f"TensorFlow 2.21, strategy to compile (median of {a.repeats}): {tf_median:.1f} ms")
    print(f"tfrun, whole process (median of {a.repeats}): {tfrun_median:.1f} ms")
    print(f"ratio (TensorFlow / tfrun): {tf_median / tfrun_median:.1f}x")


if __name__ == "__main__":
    main()
