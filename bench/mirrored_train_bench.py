#!/usr/bin/env python3
"""The MirroredStrategy train step on 2 logical CPUs (issue 44, item 8):
tfrun beside TensorFlow 2.21 in one run, end to end and per step.

The program is the TF2 GPU guide's (a Dense(1) model, SGD(0.2), Keras 3,
MirroredStrategy over the CPUs), one sample per replica a step, as
graphs/tf/call_mirrored_2.train trains it. TensorFlow (its default build:
oneDNN and Grappler on), in a fresh process per repeat that has imported
it (the import is not counted): end to end is building the strategy and
the model, compiling, and model.fit of 10 steps; per step is the median
gap between consecutive on_train_batch_end calls of a fit of --steps
steps (the first 10 left out: tracing). tfrun: the whole process of
call_mirrored_2.train's flags for 10 steps (end to end: load, place,
plan, 10 steps, print), and per step (a run of --steps steps less the
10-step run) / (--steps - 10). Prints both and the ratios (target: tfrun
at least as fast, both).

  PY bench/mirrored_train_bench.py --python PY --tfrun BIN [--repeats 3] [--steps 510]

(PY: a Python with TensorFlow, tools/setup_tensorflow.sh.)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.join(HERE, "..", "graphs", "tf")

PROGRAM = r'''
import sys, time
import numpy as np
import tensorflow as tf
steps = int(sys.argv[1])
start = time.perf_counter()
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("CPU"))
with strategy.scope():
    inputs = tf.keras.layers.Input(shape=(1,))
    model = tf.keras.models.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(inputs))
    model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))
x = ((np.arange(steps * 2, dtype=np.float32) + 1) / (steps * 2)).reshape(-1, 1)
ends = []
class Times(tf.keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        ends.append(time.perf_counter())
model.fit(x, 2 * x + 1, batch_size=2, epochs=1, verbose=0, shuffle=False, callbacks=[Times()])
end = time.perf_counter()
gaps = [b - a for a, b in zip(ends[10:], ends[11:])]
print((end - start) * 1e3, (sorted(gaps)[len(gaps) // 2] * 1e3) if gaps else 0.0)
'''


def tfrun_flags(steps):
    with open(os.path.join(GRAPHS, "call_mirrored_2.train.expected")) as f:
        flags = f.readline()[len("# args: "):].split()
    i = flags.index("--steps")
    flags[i + 1] = str(steps)
    return ["call_mirrored_2.pbtxt"] + flags


def run_tfrun(binary, steps):
    start = time.perf_counter()
    subprocess.run([binary] + tfrun_flags(steps), cwd=GRAPHS, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True)
    parser.add_argument("--tfrun", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=510)
    args = parser.parse_args()
    binary = os.path.abspath(args.tfrun)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    tf_end, tf_step, ours_end, ours_step = [], [], [], []
    for _ in range(args.repeats):
        out = subprocess.run([args.python, "-c", PROGRAM, "10"], env=env, capture_output=True, text=True, check=True)
        tf_end.append(float(out.stdout.split()[0]))
        out = subprocess.run([args.python, "-c", PROGRAM, str(args.steps)], env=env, capture_output=True, text=True,
                             check=True)
        tf_step.append(float(out.stdout.split()[1]))
        ten = run_tfrun(binary, 10)
        ours_end.append(ten)
        ours_step.append((run_tfrun(binary, args.steps) - ten) / (args.steps - 10))
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    med = statistics.median
    print(f"CPU: {cpu}, {os.cpu_count()} cores")
    print(f"end to end (10 steps): TensorFlow {med(tf_end):.0f} ms, tfrun {med(ours_end):.0f} ms, "
          f"ratio {med(tf_end) / med(ours_end):.2f}x")
    print(f"per step: TensorFlow {med(tf_step):.3f} ms, tfrun {med(ours_step):.3f} ms, "
          f"ratio {med(tf_step) / med(ours_step):.2f}x")


if __name__ == "__main__":
    sys.exit(main())
