#!/usr/bin/env python3
"""Keras programs (a graph file's `keras:`, docs/graph-format.md) built and
compiled under tf.distribute.MirroredStrategy by TensorFlow 2.21 with
set_log_device_placement(True), and by tfrun --compat eager: TensorFlow's
log (the INFO line, every one-op wrapper's placement lines and every
`Executing op` line, from its stderr in order) against tfrun's, line for
line (issue 44, item 5).

Random programs (default): 1 to 3 Dense layers of 1 to 5 units, with or
without bias, on 1 to 4 features, mse or mae, SGD or Adam, over 1 to 3
logical CPUs, over XLA_CPU:0 (TF_XLA_FLAGS=--tf_xla_enable_xla_devices: a
replica device other than CPU:0, as a GPU is) or over the GPUs this
machine lacks, with Keras 3 or Keras 2 (tf_keras, TF_USE_LEGACY_KERAS=1);
one TensorFlow process a program (eager caches its wrappers per process).

  tools/keras_compile_conformance.py --python PY --tfrun bazel-bin/cli/tfrun --count 8 --seed 1 --out DIR

--write-expected GRAPH.yaml writes TensorFlow's log of that file as tfrun
test cases beside it, for each --replicas N (logical CPUs) and --keras V
given: GRAPH.keras<V>_<N>.expected (and an empty .expected-stderr). A
program over GPUs runs on this machine's none: MirroredStrategy([]) takes
the CPUs.
"""
import argparse
import os
import random
import re
import subprocess
import sys

import yaml

from conformance_report import finish, first_difference

TF_PROGRAM = r'''
import json, sys
spec = json.loads(sys.argv[1])
import tensorflow as tf
tf.get_logger().setLevel("INFO")  # the guide's transcript shows the INFO line
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * spec["replicas"])
# The program as graph-format.md's `keras:` stands for it.
tf.debugging.set_log_device_placement(True)
devices = tf.config.list_logical_devices(spec["device_type"])
strategy = tf.distribute.MirroredStrategy(devices)
with strategy.scope():
    inputs = tf.keras.layers.Input(shape=tuple(spec["input_shape"]))
    h = inputs
    for units, use_bias in spec["layers"]:
        h = tf.keras.layers.Dense(units, use_bias=use_bias)(h)
    model = tf.keras.models.Model(inputs=inputs, outputs=h)
    optimizer = getattr(tf.keras.optimizers, spec["optimizer"])(**spec["optimizer_args"])
    model.compile(loss=spec["loss"], optimizer=optimizer)
'''

PREFIX = re.compile(r"^I0000 [0-9:. ]+[0-9]+ (placer|execute)\.cc:[0-9]+\] ")


def spec_of(doc, replicas):
    """The TF program's parameters from a graph file's `keras:`."""
    k = doc["keras"]
    layers = []
    for entry in k["layers"]:
        dense = entry["Dense"]
        layers.append((dense["units"], dense.get("use_bias", True)) if isinstance(dense, dict) else (dense, True))
    opt = k["compile"]["optimizer"]
    name, args = (opt, {}) if isinstance(opt, str) else next(iter(opt.items()))
    return {"replicas": replicas, "device_type": k["strategy"]["MirroredStrategy"], "input_shape": k["input_shape"], "layers": layers, "loss": k["compile"]["loss"],
            "optimizer": name, "optimizer_args": args or {}}


def environment(spec, keras):
    """The variables both sides run under: tf_keras for Keras 2, XLA's
    devices for a strategy over them."""
    env = {}
    if keras == 2:
        env["TF_USE_LEGACY_KERAS"] = "1"
    if spec["device_type"].startswith("XLA_"):
        env["TF_XLA_FLAGS"] = "--tf_xla_enable_xla_devices"
    return env


def clean_environ():
    env = dict(os.environ)
    for name in ("TF_USE_LEGACY_KERAS", "TF_XLA_FLAGS"):
        env.pop(name, None)
    return env


def tensorflow_log(python, spec, keras):
    """TensorFlow's log lines, in the order it wrote them."""
    import json
    env = dict(clean_environ(), CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="0", **environment(spec, keras))
    p = subprocess.run([python, "-c", TF_PROGRAM, json.dumps(spec)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"TensorFlow's run failed:\n{p.stderr[-3000:]}")
    lines = []
    for line in p.stderr.splitlines():
        if line.startswith("INFO:tensorflow:Using MirroredStrategy"):
            lines.append(line)
        elif PREFIX.match(line):
            lines.append(PREFIX.sub("", line))
    return lines


def tfrun_args(spec, keras):
    env = "".join(f"{k}={v} " for k, v in sorted(environment(spec, keras).items()))
    return f"{env}--compat eager --device-count CPU={spec['replicas']}"


def tfrun_log(tfrun, path, spec, keras):
    env = dict(clean_environ(), **environment(spec, keras))
    r = subprocess.run([tfrun, path, "--compat", "eager", "--device-count", f"CPU={spec['replicas']}"],
                       capture_output=True, text=True, env=env)
    return r.returncode, r.stdout.splitlines(), r.stderr


def random_doc(rng, device_type):
    layers = [{"Dense": {"units": rng.randint(1, 5), "use_bias": rng.random() < 0.7}}
              for _ in range(rng.randint(1, 3))]
    optimizer = rng.choice(["SGD", "Adam"])
    return {"config": {"log_device_placement": True},
            "keras": {"strategy": {"MirroredStrategy": device_type}, "input_shape": [rng.randint(1, 4)],
                      "layers": layers,
                      "compile": {"loss": rng.choice(["mse", "mae"]),
                                  "optimizer": {optimizer: {"learning_rate": round(rng.uniform(0.01, 0.5), 3)}}}}}


def write_expected(python, path, replicas_list, versions):
    doc = yaml.safe_load(open(path))
    stem = path[:-len(".yaml")]
    for keras in versions:
        for replicas in replicas_list:
            spec = spec_of(doc, replicas)
            lines = tensorflow_log(python, spec, keras)
            case = f"{stem}.keras{keras}_{replicas}"
            with open(case + ".expected", "w") as f:
                f.write(f"# args: {tfrun_args(spec, keras)}\n" + "".join(l + "\n" for l in lines))
            open(case + ".expected-stderr", "w").close()
            print(f"wrote {case}.expected ({len(lines)} lines)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun")
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--write-expected", metavar="GRAPH.yaml")
    ap.add_argument("--replicas", type=int, action="append")
    ap.add_argument("--keras", type=int, action="append", choices=[2, 3])
    a = ap.parse_args()
    if a.write_expected:
        write_expected(a.python, a.write_expected, a.replicas or [2], a.keras or [3])
        return
    if not a.tfrun or not a.out:
        ap.error("--tfrun and --out are needed to compare")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    passed = failed = 0
    report = []
    for k in range(a.count):
        # Over 1 to 3 CPUs mostly; over XLA_CPU:0 (a device other than
        # CPU:0, whose Python values _EagerConst copies, as a GPU's); over
        # GPUs this machine lacks (MirroredStrategy([]) takes the CPUs).
        device_type = rng.choice(["CPU", "CPU", "CPU", "XLA_CPU", "GPU"])
        doc = random_doc(rng, device_type)
        replicas, keras = rng.randint(1, 3), rng.choice([2, 3])
        path = os.path.join(a.out, f"program_{k}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f, default_flow_style=None, sort_keys=False)
        spec = spec_of(doc, replicas)
        expected = tensorflow_log(a.python, spec, keras)
        code, got, err = tfrun_log(a.tfrun, path, spec, keras)
        if code == 0 and got == expected:
            passed += 1
            continue
        failed += 1
        report.append(f"{path} ({tfrun_args(spec, keras)}): tfrun exit {code} {err.strip()[:300]}")
        difference = first_difference(expected, got)
        if difference:
            report.append(difference)
    finish(a.out, f"Keras programs under MirroredStrategy, seed {a.seed}: {passed + failed} programs", report, passed,
           failed)


if __name__ == "__main__":
    main()
