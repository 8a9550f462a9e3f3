#!/usr/bin/env python3
"""Random tf.function programs, called by eager TensorFlow 2.21 on three
logical CPUs and placed by tfrun's --call: the placement lines compared,
line for line (issue 43's conformance).

Each program: a chain of MatMul/AddV2/Mul/Neg/Identity on two 2x2
arguments, each op under a random tf.device scope (none, /CPU:0-2); maybe a
tf.cond, a tf.while_loop or a nested tf.function (each maybe under a scope);
maybe a captured variable made on a random CPU; the arguments made on
random CPUs; the call maybe under a scope. One TensorFlow process makes and
calls them all (tools/export_tf2_function.py writes each), then tfrun
places each.

Each program also runs as tfrun --call runs it, x and y fed (and a
captured variable's argument fed its value, which tfrun makes a variable
of): the printed result must be print(f(x, y))'s.

The same files through a TF1 Session (import_graph_def, three CPUs, x and
y fed, the output fetched), without and with do_function_inlining: the
Session's placement and printed result against tfrun's Session mode (a
nested call the Session keeps as a PartitionedCall node runs by its
kernel). Programs with a captured variable have no Session run (a Session
cannot feed its resource handle).

  tools/tf2_call_conformance.py --python PY --tfrun bazel-bin/cli/tfrun --count 60 --seed 1 --out DIR
"""
import argparse
import os
import random
import re
import subprocess
import sys

from conformance_report import finish, first_difference

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICES = [None, "/CPU:0", "/CPU:1", "/CPU:2"]

TF_PROGRAM = r'''
import os, random, sys
sys.path.insert(0, sys.argv[1])
import tensorflow as tf
tf.debugging.set_log_device_placement(True)
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 3)
from export_tf2_function import export_call
seed, count, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
DEVICES = [None, "/CPU:0", "/CPU:1", "/CPU:2"]


def scope(d):
    return tf.device(d) if d else tf.init_scope.__class__ and _Null()


class _Null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def under(d):
    return tf.device(d) if d else _Null()


def chain(rng, a, b, n):
    for _ in range(n):
        op = rng.choice(["matmul", "add", "mul", "neg", "identity"])
        with under(rng.choice(DEVICES)):
            if op == "matmul":
                a = tf.matmul(a, b)
            elif op == "add":
                a = a + b
            elif op == "mul":
                a = a * 0.5
            elif op == "neg":
                a = -a
            else:
                a = tf.identity(a)
    return a


for k in range(count):
    rng = random.Random(seed * 1000 + k)
    shape = rng.sample(["cond", "while", "nested", "variable", "plain"], rng.randint(1, 3))
    body_seed = rng.randint(0, 10 ** 9)
    variable = None
    if "variable" in shape:
        with tf.device(rng.choice(DEVICES[1:])):
            variable = tf.Variable([[1.0, 0.5], [0.25, 2.0]])
    inner_device = rng.choice(DEVICES)

    @tf.function
    def inner(a):
        r = random.Random(body_seed + 7)
        with under(inner_device):
            return chain(r, a, a, r.randint(1, 3))

    @tf.function
    def f(x, y):
        r = random.Random(body_seed)
        a = chain(r, x, y, r.randint(1, 4))
        if variable is not None:
            with under(r.choice(DEVICES)):
                a = a + variable
        if "cond" in shape:
            d = r.choice(DEVICES)
            with under(d):
                a = tf.cond(tf.reduce_sum(a) > 0.0, lambda: chain(random.Random(1), a, y, 2),
                            lambda: chain(random.Random(2), a, y, 1))
        if "while" in shape:
            d = r.choice(DEVICES)
            with under(d):
                _, a = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, chain(random.Random(3), v, y, 2)),
                                     [tf.constant(0), a])
        if "nested" in shape:
            a = inner(a)
        return chain(r, a, y, r.randint(0, 2))

    with tf.device(rng.choice(DEVICES[1:])):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.device(rng.choice(DEVICES[1:])):
        y = tf.constant([[1.0, 0.0], [0.0, 1.0]])
    call_device = rng.choice(DEVICES)
    print(f"==PROGRAM {k} {' '.join(sorted(shape))}", flush=True)
    with under(call_device):
        f(x, y)
    print("==END", flush=True)
    path = os.path.join(out, f"p{k}.pbtxt")
    flags = export_call(f, x, y, path=path)
    print("==FLAGS " + flags + (f" --call-device {call_device}" if call_device else ""), flush=True)
    # print(f(x, y)), as tfrun --call prints it with x and y fed (and the
    # captured variable's argument its value).
    with under(call_device):
        result = f(x, y)
    captured = [a.name for a in f.get_concrete_function(x, y).function_def.signature.input_arg][2:]
    print("==RESULT", k, " ".join(f"{name}=[[1.0,0.5],[0.25,2.0]]" for name in captured), flush=True)
    print(result, flush=True)
    print("==END", flush=True)
    if variable is not None:
        continue  # a Session cannot feed the captured variable's resource handle
    # The same file in a TF1 Session, as e1_import_session does: imported,
    # x and y fed, the function's output fetched; without and with inlining.
    fetch = f.get_concrete_function(x, y).outputs[0].name
    graph_def = tf.compat.v1.GraphDef()
    with open(path) as fh:
        from google.protobuf import text_format
        text_format.Parse(fh.read(), graph_def)
    for inline in (False, True):
        config = tf.compat.v1.ConfigProto(device_count={"CPU": 3}, log_device_placement=True)
        config.graph_options.optimizer_options.do_function_inlining = inline
        g = tf.Graph()
        with g.as_default():
            tf.compat.v1.import_graph_def(graph_def, name="")
        kept_call = "nested" in shape and not inline
        print(f"==SESSION {k} {'inline' if inline else 'plain'} {fetch} {'call' if kept_call else '-'}", flush=True)
        with tf.compat.v1.Session(graph=g, config=config) as sess:
            print(sess.run(fetch, feed_dict={"x:0": x.numpy(), "y:0": y.numpy()}), flush=True)
        print("==END", flush=True)
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    script = os.path.join(a.out, "programs.py")
    with open(script, "w") as f:
        f.write(TF_PROGRAM)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    p = subprocess.run([a.python, script, HERE, str(a.seed), str(a.count), a.out], capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        sys.exit(f"TensorFlow's run failed:\n{p.stderr[-3000:]}")
    lines = p.stdout.splitlines()
    passed = failed = lines_compared = 0
    report = []
    placement = re.compile(r"^\S+: \(\w+\): /job:")

    def compare(what, expected, argv, skip=lambda line: False):
        nonlocal passed, failed, lines_compared
        r = subprocess.run([a.tfrun, *argv], capture_output=True, text=True)
        got = [line for line in r.stdout.splitlines() if not skip(line)]
        lines_compared += len(expected)
        if r.returncode == 0 and got == expected:
            passed += 1
            return
        failed += 1
        report.append(f"{what}, tfrun {' '.join(argv)}: exit {r.returncode} {r.stderr.strip()}")
        difference = first_difference(expected, got)
        if difference:
            report.append(difference)

    feeds = ["--feed", "x=[[1.0,2.0],[3.0,4.0]]", "--feed", "y=[[1.0,0.0],[0.0,1.0]]"]
    calls = sessions = runs = 0
    for i, line in enumerate(lines):
        m = re.match(r"^==PROGRAM (\d+) (.*)$", line)
        if m:
            k, shape = int(m.group(1)), m.group(2)
            end = lines.index("==END", i)
            expected = [l for l in lines[i + 1:end] if placement.match(l)]
            flags = lines[end + 1][len("==FLAGS "):].split()
            compare(f"program {k} ({shape})", expected,
                    [os.path.join(a.out, f"p{k}.pbtxt"), *flags, "--log-placement", "--device-count", "CPU=3"])
            calls += 1
        m = re.match(r"^==RESULT (\d+) ?(.*)$", line)
        if m:
            k = int(m.group(1))
            captured = [arg for given in m.group(2).split() for arg in ("--feed", given)]
            end = lines.index("==END", i)
            program = next(l for l in lines if l.startswith(f"==PROGRAM {k} "))
            flags = lines[lines.index("==END", lines.index(program)) + 1][len("==FLAGS "):].split()
            compare(f"program {k} run", lines[i + 1:end],
                    [os.path.join(a.out, f"p{k}.pbtxt"), *flags, "--device-count", "CPU=3", *feeds, *captured])
            runs += 1
        m = re.match(r"^==SESSION (\d+) (plain|inline) (\S+) (call|-)$", line)
        if m:
            # The placement and the fetched value as print(sess.run(...))
            # prints it. Not the device mapping: TensorFlow prints none for a
            # Session made after the eager context (a fresh process prints
            # it; the Session goldens have it). A nested call that the
            # Session keeps as a PartitionedCall node runs by its kernel.
            k, mode, fetch = int(m.group(1)), m.group(2), m.group(3)
            end = lines.index("==END", i)
            expected = lines[i + 1:end]
            argv = [os.path.join(a.out, f"p{k}.pbtxt"), "--log-placement", "--device-count", "CPU=3", "--fetch", fetch,
                    *feeds]
            if mode == "inline":
                argv.append("--do-function-inlining")
            compare(f"program {k} in a Session ({mode})", expected, argv, skip=lambda l: l.startswith("Device mapping:"))
            sessions += 1
    finish(a.out, f"TF2 calls, seed {a.seed}: {calls} programs called, {runs} calls run, {sessions} Session runs, "
           f"{lines_compared} lines", report, passed, failed)


if __name__ == "__main__":
    main()
