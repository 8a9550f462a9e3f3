#!/usr/bin/env python3
"""Random Keras 3 models trained under tf.distribute.MirroredStrategy by
TensorFlow 2.21 and by tfrun: the losses each train step returns, compared
line for line (issue 44, items 5 and 6).

Each program: a Keras 3 model of 1 to 3 Dense layers (random widths and
activations, each hidden one maybe followed by Dropout) on inputs of 1 to
6 features, compiled with mse or mae and SGD
or Adam, under MirroredStrategy over 2 or 3 logical CPUs (a TensorFlow
process each), fit for a few steps on random rows of a
global batch of 1 to 4 samples per replica. TensorFlow records what
model.train_function returns each step and writes the train function
(tools/export_tf2_function.py); tfrun then runs that function for the same
steps with --steps, each replica's rows fed for its IteratorGetNext, every
captured variable's value before the first step and the instance keys fed,
as graphs/tf/call_mirrored_2.train does (docs/graph-format.md). TensorFlow
runs with oneDNN off and Grappler's constant folding off (tfrun does not
fold x * (1/3) * 3 into x * 1.0; testdata/golden/DERIVATIONS.md).

  tools/mirrored_conformance.py --python PY --tfrun bazel-bin/cli/tfrun --count 6 --seed 1 --out DIR
"""
import argparse
import os
import re
import subprocess
import sys

from conformance_report import finish, first_difference

HERE = os.path.dirname(os.path.abspath(__file__))

TF_PROGRAM = r'''
import json, os, random, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import tensorflow as tf
replicas, seed, first, count, out = (int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
                                     sys.argv[6])
tf.config.optimizer.set_experimental_options({"constant_folding": False})
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * replicas)
from export_tf2_function import export_concrete, train_step_feeds, variable_values

for k in range(first, first + count):
    rng = random.Random(seed * 1000 + replicas * 100 + k)
    tf.keras.utils.set_random_seed(seed * 1000 + k)
    features = rng.randint(1, 6)
    layers = [(rng.randint(1, 8), rng.choice([None, "relu", "tanh"]), rng.random() < 0.5)
              for _ in range(rng.randint(0, 2))]
    loss = rng.choice(["mse", "mae"])
    optimizer = rng.choice(["sgd", "adam"])
    per_replica = rng.randint(1, 4)
    steps = rng.randint(2, 4)
    strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("CPU"))
    with strategy.scope():
        inputs = tf.keras.layers.Input(shape=(features,))
        h = inputs
        for units, activation, dropout in layers:
            h = tf.keras.layers.Dense(units, activation=activation)(h)
            if dropout:  # TensorFlow's stateless random numbers, its seed generator's state fed
                h = tf.keras.layers.Dropout(0.3)(h)
        model = tf.keras.models.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(h))
        opt = (tf.keras.optimizers.SGD(learning_rate=0.1) if optimizer == "sgd"
               else tf.keras.optimizers.Adam(learning_rate=0.01))
        model.compile(loss=loss, optimizer=opt)
        # The optimizer's slots now, not while fit traces: their values
        # before the first step are read below.
        opt.build(model.trainable_variables)
    batch = per_replica * replicas
    data = np.random.default_rng(k).standard_normal((steps * batch, features + 1)).astype(np.float32)
    x, y = data[:, :features], data[:, features:]
    before = variable_values()
    model.make_train_function()
    train = model.train_function
    losses = []

    def recorded(iterator, train=train, losses=losses):
        logs = train(iterator)
        losses.append(str(logs["loss"]))
        return logs
    model.train_function = recorded
    model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    traced = [c.cell_contents for c in (train.__closure__ or ())
              if hasattr(c.cell_contents, "_list_all_concrete_functions")]
    concrete = traced[0]._list_all_concrete_functions()[0]
    names = [a.name for a in concrete.function_def.signature.input_arg]
    flags = export_concrete(concrete, path=os.path.join(out, f"r{replicas}_p{k}.pbtxt"),
                            arg_devices=[""] * len(names)).split()
    feeds = train_step_feeds(concrete, before, arg_devices=True)
    for r in range(replicas):
        for part, values in ((0, x), (1, y)):
            rows = np.concatenate([values[s * batch + r * per_replica:s * batch + (r + 1) * per_replica]
                                   for s in range(steps)])
            path = os.path.join(out, f"r{replicas}_p{k}_{'xy'[part]}{r}.npy")
            np.save(path, rows)
            feeds += ["--feed", f"{'IteratorGetNext' if r == 0 else f'IteratorGetNext_{r}'}:{part}=@{path}"]
    shape = (f"{features} features, layers (units, activation, dropout) {layers}, {loss}, {optimizer}, "
             f"{per_replica} a replica, {steps} steps")
    print(f"==PROGRAM {replicas} {k} {shape}", flush=True)
    print("==FLAGS " + json.dumps(flags + ["--device-count", f"CPU={replicas}", "--steps", str(steps),
                                          "--batch", str(per_replica)] + feeds), flush=True)
    for line in losses:
        print(line, flush=True)
    print("==END", flush=True)
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--count", type=int, default=6, help="programs per replica count (2 and 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    script = os.path.join(a.out, "programs.py")
    with open(script, "w") as f:
        f.write(TF_PROGRAM)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    import json
    passed = failed = 0
    report = []
    # One TensorFlow process a program: a second strategy in the same
    # process reuses the first one's collective group and instance keys,
    # and TensorFlow then fails its step ("Shape mismatch in the collective
    # instance 100").
    for replicas, k in [(r, k) for r in (2, 3) for k in range(a.count)]:
        p = subprocess.run([a.python, script, HERE, str(replicas), str(a.seed), str(k), "1", a.out],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit(f"TensorFlow's run ({replicas} replicas, program {k}) failed:\n{p.stderr[-3000:]}")
        lines = p.stdout.splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^==PROGRAM (\d+) (\d+) (.*)$", line)
            if not m:
                continue
            k, shape = int(m.group(2)), m.group(3)
            argv = json.loads(lines[i + 1][len("==FLAGS "):])
            end = lines.index("==END", i)
            expected = lines[i + 2:end]
            r = subprocess.run([a.tfrun, os.path.join(a.out, f"r{replicas}_p{k}.pbtxt"), *argv],
                               capture_output=True, text=True)
            got = r.stdout.splitlines()
            if r.returncode == 0 and got == expected:
                passed += 1
                continue
            failed += 1
            report.append(f"{replicas} replicas, program {k} ({shape}): tfrun exit {r.returncode} "
                          f"{r.stderr.strip()[:500]}")
            difference = first_difference(expected, got)
            if difference:
                report.append(difference)
    finish(a.out, f"MirroredStrategy training, seed {a.seed}: {passed + failed} programs", report, passed, failed)


if __name__ == "__main__":
    main()
