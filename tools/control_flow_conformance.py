#!/usr/bin/env python3
"""Random TF1 programs with v1 control flow, placed and run by TensorFlow
2.21 and by tfrun from the graph TensorFlow wrote (issue 41, item 6).

Each program is built in graph mode with v1 control flow
(`tf.compat.v1.disable_control_flow_v2()`) on three CPU devices
(`device_count={'CPU': 3}`): `tf.while_loop`s (counters, accumulators,
MatMuls, nested loops, `parallel_iterations` from 1 to 10), `tf.cond`s on
computed predicates (inside loops too), one to three towers each under its
own CPU, device scopes inside bodies and branches, reference and resource
variables read in loops and assigned in them (`assign_add` under a control
dependency), and `tf.gradients` through loops (their stacks). TensorFlow
writes the graph (`tf.io.write_graph`, text), runs the initializer and then
one `sess.run` of the fetches with log_device_placement (the first run
places the whole graph), and saves each fetched value. tfrun runs the same
file (`--device-count CPU=3 --log-placement --init init --fetch ... --out`),
and again on eight simulated P40s with soft placement; the placement lines
(on CPUs) must be the same and every fetched value, both times, equal:
bit for bit for integers, and within 1e-6 (relative and absolute) for floats (tfrun's
tanh may differ from Eigen's in the last bit, graph-format.md "Training").

  tools/control_flow_conformance.py --count 100 --seed 41 --python PY --tfrun BIN [--out DIR]

Prints "N passed, M failed" last; exit 1 when any case failed.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

PLACEMENT = re.compile(r"^\S+: \(\w+\): /job:")
P40 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "testdata", "topologies",
                   "p40_x8.yaml")
DEVICES = ["/cpu:0", "/cpu:1", "/cpu:2", "/device:CPU:1", None, None, None]
TF_ENV = {"CUDA_VISIBLE_DEVICES": "-1", "TF_CPP_MIN_LOG_LEVEL": "3"}


class Program:
    """One random program: Python lines that build graph `g` and name its
    fetches in `fetches` (a list of tensors)."""

    def __init__(self, rng, index):
        self.rng, self.index = rng, index
        self.lines = []
        self.counter = 0
        self.variables = []  # (python name, kind)
        self.read_only = []      # variables any loop reads
        self.accumulators = []   # variables one loop assigns (and only it reads)
        self.owned = set()       # the accumulators a loop took

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def device_scope(self, depth):
        d = self.rng.choice(DEVICES)
        if d is None:
            return depth
        self.emit(depth, f"with tf.device({d!r}):")
        return depth + 1

    def const(self, depth, shape):
        name = self.fresh("c")
        values = np.round(np.array(self.rng_values(shape), dtype=np.float32), 2).tolist()
        self.emit(depth, f"{name} = tf.constant({values!r}, dtype=tf.float32)")
        return name

    def rng_values(self, shape):
        n = int(np.prod(shape)) if shape else 1
        flat = [self.rng.uniform(-1.0, 1.0) for _ in range(n)]
        return np.array(flat).reshape(shape) if shape else flat[0]

    def unary(self, x):
        return self.rng.choice([f"tf.tanh({x})", f"({x} * 0.5)", f"({x} + 1.0)", f"tf.square({x}) * 0.1",
                                f"tf.matmul({x}, {x}) * 0.5", f"({x} - 0.25)"])

    def body_expr(self, acc, i, extra):
        r = self.rng
        e = self.unary(acc)
        if extra and r.random() < 0.6:
            e = f"({e} + {r.choice(extra)})"
        if r.random() < 0.4:
            e = f"({e} * tf.cast({i}, tf.float32) * 0.1)"
        return e

    def loop(self, depth, x, extra, nest):
        """A while loop over `x` (a [2, 2] tensor); returns its result's name."""
        r = self.rng
        n = r.randint(0, 5)
        out = self.fresh("w")
        cond_fn, body_fn = self.fresh("cond"), self.fresh("body")
        self.emit(depth, f"def {cond_fn}(i, acc):")
        self.emit(depth + 1, f"return i < {n}")
        self.emit(depth, f"def {body_fn}(i, acc):")
        d = self.device_scope(depth + 1)
        inner = extra
        # A variable this loop assigns is its own: no other loop reads it,
        # and the loop runs one iteration at a time, so each read follows
        # the previous iteration's assign as in any schedule of TensorFlow's.
        free = [v for v in self.accumulators if v[0] not in self.owned]
        owned = r.choice(free) if free and r.random() < 0.5 else None
        if owned is not None:
            self.owned.add(owned[0])
        readable = [owned] if owned is not None else self.read_only
        if readable and r.random() < 0.6:
            v, kind = r.choice(readable)
            read = f"tf.identity({v})" if kind == "ref" else f"{v}.read_value()"
            self.emit(d, f"vr = {read}")
            inner = extra + ["vr"]
        self.emit(d, f"nxt = {self.body_expr('acc', 'i', inner)}")
        if nest > 0 and r.random() < 0.35:
            sub = self.loop(d, "nxt", inner, nest - 1)
            self.emit(d, f"nxt = {sub}")
        if r.random() < 0.4:
            sub = self.cond(d, "nxt", inner, nest - 1)
            self.emit(d, f"nxt = {sub}")
        if owned is not None:
            self.emit(d, f"upd = tf.compat.v1.assign_add({owned[0]}, tf.reduce_sum(nxt) * tf.ones([2, 2]) * 0.01)")
            self.emit(d, "with tf.control_dependencies([upd]):")
            self.emit(d + 1, "nxt = tf.identity(nxt)")
        self.emit(d, "return i + 1, nxt")
        par = 1 if owned is not None else r.choice([1, 2, 10, 10])
        self.emit(depth, f"_, {out} = tf.compat.v1.while_loop({cond_fn}, {body_fn}, "
                         f"[tf.constant(0), {x}], parallel_iterations={par}, name={self.fresh('loop')!r})")
        return out

    def cond(self, depth, x, extra, nest):
        """A tf.cond on a predicate computed from `x`; returns the result."""
        r = self.rng
        out = self.fresh("k")
        threshold = round(r.uniform(-1.0, 1.0), 2)
        self.emit(depth, f"def {out}_t():")
        d = self.device_scope(depth + 1)
        self.emit(d, f"return {self.body_expr(x, 'tf.constant(2)', extra)}")
        self.emit(depth, f"def {out}_f():")
        d = self.device_scope(depth + 1)
        if nest > 0 and r.random() < 0.3:
            sub = self.loop(d, x, extra, nest - 1)
            self.emit(d, f"return {sub}")
        else:
            self.emit(d, f"return {self.unary(x)}")
        self.emit(depth, f"{out} = tf.compat.v1.cond(tf.reduce_sum({x}) > {threshold}, {out}_t, {out}_f, "
                         f"name={self.fresh('cond')!r})")
        return out

    def build(self):
        r = self.rng
        self.emit(0, "g = tf.Graph()")
        self.emit(0, "with g.as_default():")
        for _ in range(r.randint(0, 2)):
            name = self.fresh("v")
            kind = r.choice(["ref", "resource"])
            d = self.device_scope(1)
            values = np.round(np.array(self.rng_values([2, 2]), dtype=np.float32), 2).tolist()
            self.emit(d, f"{name} = tf.compat.v1.Variable({values!r}, dtype=tf.float32, "
                         f"use_resource={kind == 'resource'}, name={name!r})")
            self.variables.append((name, kind))
            # A variable is either read only, or assigned by one loop alone.
            (self.accumulators if r.random() < 0.5 else self.read_only).append((name, kind))
        self.emit(1, "fetches = []")
        towers = r.randint(1, 3)
        grads = r.random() < 0.3
        for t in range(towers):
            self.emit(1, f"with tf.device('/cpu:{t}'):")
            x = self.const(2, [2, 2])
            extra = [self.const(2, [2, 2])]
            result = self.loop(2, x, extra, 1) if r.random() < 0.7 else self.cond(2, x, extra, 1)
            if r.random() < 0.5:
                result2 = self.cond(2, result, extra, 1) if r.random() < 0.5 else self.loop(2, result, extra, 1)
                result = result2
            self.emit(2, f"fetches.append({result})")
            if grads and not self.owned:
                self.emit(2, f"fetches.extend(tf.gradients(tf.reduce_sum({result}), [{x}]))")
        self.emit(1, "init = tf.compat.v1.global_variables_initializer()")
        return self.lines


def tf_program(programs, work):
    lines = ["import ctypes, os, sys, numpy as np",
             "import tensorflow as tf",
             "tf.compat.v1.disable_eager_execution()",
             "tf.compat.v1.disable_control_flow_v2()",
             "libc = ctypes.CDLL(None)",
             "def capture(path):",
             "    sys.stdout.flush(); libc.fflush(None)",
             "    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)",
             "    saved = os.dup(1); os.dup2(fd, 1); os.close(fd); return saved",
             "def restore(saved):",
             "    sys.stdout.flush(); libc.fflush(None); os.dup2(saved, 1); os.close(saved)"]
    for k, body in enumerate(programs):
        lines.append(f"def program{k}():")
        lines += ["    " + line for line in body]
        lines += [f"    tf.io.write_graph(g, {work!r}, 'p{k}.pbtxt')",
                  f"    names = [t.name for t in fetches]",
                  f"    open(os.path.join({work!r}, 'p{k}.fetch'), 'w').write('\\n'.join(names))",
                  "    cfg = tf.compat.v1.ConfigProto(device_count={'CPU': 3}, log_device_placement=True)",
                  f"    saved = capture(os.path.join({work!r}, 'p{k}.log'))",
                  "    try:",
                  "        with tf.compat.v1.Session(graph=g, config=cfg) as s:",
                  "            s.run(init)",
                  "            values = s.run(fetches)",
                  "    finally:",
                  "        restore(saved)",
                  "    for i, v in enumerate(values):",
                  f"        np.save(os.path.join({work!r}, 'p{k}.value%d.npy' % i), v)",
                  f"try:\n    program{k}()\nexcept Exception as e:\n"
                  f"    open(os.path.join({work!r}, 'p{k}.error'), 'w').write(str(e))"]
    return "\n".join(lines) + "\n"


def npy_name(tensor):
    """cli/npy_outputs.cc NpyFileName of a fetch: "x" for "x:0", and every
    byte but alnum and ._-: as %XX."""
    if tensor.endswith(":0"):
        tensor = tensor[:-2]
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-:") else
                   "".join("%%%02X" % b for b in c.encode()) for c in tensor) + ".npy"


def tf_error_line(text):
    """The line of TensorFlow's error that says what failed: the one
    before its first node line ("\t [[{{node x}}]]")."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("\t [[") and i > 0:
            return lines[i - 1].strip()
    return lines[-1].strip() if lines else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--python", required=True)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--out", default=None, help="keep the programs and graphs here")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = a.out or tempfile.mkdtemp(prefix="cf_conformance_")
    os.makedirs(work, exist_ok=True)
    for name in os.listdir(work):  # an earlier run's results
        if re.match(r"p\d+\.(error|log|fetch|pbtxt|value\d+\.npy)$", name):
            os.remove(os.path.join(work, name))
        elif re.match(r"p\d+\.tfrun(_gpu)?$", name):
            shutil.rmtree(os.path.join(work, name))
    programs = [Program(rng, k).build() for k in range(a.count)]
    source = os.path.join(work, "programs.py")
    with open(source, "w") as f:
        f.write(tf_program(programs, work))
    env = dict(os.environ, **TF_ENV)
    p = subprocess.run([a.python, "-u", source], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        print("0 passed, 1 failed")
        return 1
    passed = failed = 0
    for k in range(a.count):
        base = os.path.join(work, f"p{k}")
        fetches = open(base + ".fetch").read().split("\n")
        tf_error = open(base + ".error").read() if os.path.exists(base + ".error") else None
        out_dir = base + ".tfrun"
        os.makedirs(out_dir, exist_ok=True)
        args = [a.tfrun, base + ".pbtxt", "--device-count", "CPU=3", "--log-placement", "--init", "init",
                "--out", out_dir, "-q"]
        for f in fetches:
            args += ["--fetch", f]
        q = subprocess.run(args, capture_output=True, text=True, timeout=300)
        problems = []
        # The same file on eight simulated P40s (soft placement: the CPUs
        # the program names do not exist there): the same values.
        gpu_dir = base + ".tfrun_gpu"
        os.makedirs(gpu_dir, exist_ok=True)
        gpu_args = [a.tfrun, base + ".pbtxt", "--devices", P40, "--soft-placement", "--init", "init", "--out",
                    gpu_dir, "-q"] + [x for f in fetches for x in ("--fetch", f)]
        g = subprocess.run(gpu_args, capture_output=True, text=True, timeout=300) if tf_error is None else None
        if tf_error is not None:
            # TensorFlow refused the program (a colocation its gradients
            # cannot keep): tfrun must refuse it with the same words.
            want = tf_error_line(tf_error)
            if q.returncode == 0 or want not in q.stderr:
                problems.append(f"TensorFlow failed with {want!r}; tfrun exit {q.returncode}: {q.stderr.strip()[:300]}")
        elif q.returncode != 0:
            problems.append(f"tfrun exit {q.returncode}: {q.stderr.strip()[:400]}")
        else:
            ours = sorted(l for l in q.stdout.splitlines() if PLACEMENT.match(l))
            theirs = sorted(l for l in open(base + ".log").read().splitlines() if PLACEMENT.match(l))
            if ours != theirs:
                only_ours = sorted(set(ours) - set(theirs))[:3]
                only_theirs = sorted(set(theirs) - set(ours))[:3]
                problems.append(f"placement differs: tfrun {only_ours} TF {only_theirs}")
            if g.returncode != 0:
                problems.append(f"tfrun on simulated GPUs: exit {g.returncode}: {g.stderr.strip()[:300]}")
            for i, name in enumerate(fetches):
                want = np.load(f"{base}.value{i}.npy")
                for where, folder in (("", out_dir), (" (simulated GPUs)", gpu_dir)):
                    path = os.path.join(folder, npy_name(name))
                    if not os.path.exists(path):
                        problems.append(f"{name}{where}: no output")
                        continue
                    got = np.load(path)
                    if got.shape != want.shape or got.dtype != want.dtype:
                        problems.append(f"{name}{where}: {got.dtype}{got.shape} vs TF {want.dtype}{want.shape}")
                    elif want.dtype.kind == "f":
                        if not np.allclose(got, want, rtol=1e-6, atol=1e-6, equal_nan=True):
                            problems.append(f"{name}{where}: max difference {np.max(np.abs(got - want))}")
                    elif not np.array_equal(got, want):
                        problems.append(f"{name}{where}: {got} vs TF {want}")
        if problems:
            failed += 1
            print(f"program {k} ({base}.pbtxt): " + "; ".join(problems))
        else:
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
