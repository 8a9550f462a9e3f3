#!/usr/bin/env python3
"""Random TF1 programs, placed by TensorFlow and by tfrun from the graph
TensorFlow wrote (issue 28, item 8).

Each program is built with real TensorFlow 2.21 (tf.compat.v1, graph mode)
on three CPU devices and XLA_CPU:0 (`device_count={'CPU': 3}`,
TF_XLA_FLAGS=--tf_xla_enable_xla_devices): variables of both kinds
(reference and resource, tf.Variable and get_variable), device scopes with
every spelling, `colocate_with` blocks, one to three towers of dense layers,
a loss, gradients with and without colocate_gradients_with_ops, one of five
optimizers, Shape ops (Heuristic B), control dependencies, soft placement on
and off, and now and then a deliberate error (a device that does not exist,
a tower on XLA_CPU without soft placement, a node colocated with a variable
but given another device). The program writes its graph
(`tf.io.write_graph`, text or binary, or `export_meta_graph`) and runs the
initializer in a Session with log_device_placement: the first run places
the whole graph. tfrun then places the written file
(`--place-only --log-placement`) and the two placement logs, or the two
errors, are compared line for line. A `.meta` file is placed as
Python's `import_graph_def` reads it back (tfrun's `--import python`).

  tools/random_tf1_conformance.py --count 200 --seed 1 --python PY --tfrun BIN
      [--out DIR] [--accept docs/differences.md]

PY is a Python with TensorFlow 2.21 (tools/setup_tensorflow.sh). With
--accept, a difference whose class FILE lists (a line
"- random-tf1-conformance: CLASS") is accepted; any other fails (exit 1).
Prints "N passed, M failed" last.
"""
import argparse
import collections
import os
import random
import re
import subprocess
import sys
import tempfile

PLACEMENT = re.compile(r"^\S+: \(\w+\): /job:")

GOOD_DEVICES = ["/cpu:0", "/cpu:1", "/cpu:2", "/CPU:1", "/device:CPU:2", "/job:localhost/replica:0/task:0/device:CPU:1",
                "/job:localhost", "/device:XLA_CPU:0", "/replica:0/task:0", "", "", ""]
BAD_DEVICES = ["/cpu:3", "/device:GPU:0", "/device:XLA_CPU:1", "/job:ps"]
OPTIMIZERS = ["tf.compat.v1.train.GradientDescentOptimizer(0.1)",
              "tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)",
              "tf.compat.v1.train.AdamOptimizer(0.01)",
              "tf.compat.v1.train.AdagradOptimizer(0.1)",
              "tf.compat.v1.train.RMSPropOptimizer(0.01)"]
ACTIVATIONS = ["tf.nn.relu", "tf.sigmoid", "tf.tanh", "tf.square", "tf.identity"]


class Program:
    """One random TF1 program: Python lines that build graph `g`."""

    def __init__(self, rng, index):
        self.rng, self.index = rng, index
        self.lines = []
        self.soft = rng.random() < 0.5
        self.form = rng.choice(["pbtxt", "pbtxt", "pb", "meta"])

    def device(self):
        r = self.rng
        if r.random() < 0.04:
            return r.choice(BAD_DEVICES)
        return r.choice(GOOD_DEVICES)

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def scoped(self, depth, device):
        """Opens a device scope when `device` is not None; the new depth."""
        if device is None:
            return depth
        self.emit(depth, f"with tf.device({device!r}):")
        return depth + 1

    def build(self):
        r = self.rng
        variables = []
        for v in range(r.randint(1, 4)):
            d = self.scoped(1, self.device() if r.random() < 0.7 else None)
            resource = r.random() < 0.5
            shape = [4, 4] if r.random() < 0.7 else [4]
            name = f"v{v}"
            if r.random() < 0.5:
                init = r.choice([f"tf.random.normal({shape}, seed={v + 1})", f"tf.ones({shape})",
                                 f"tf.zeros({shape})", f"tf.constant(0.5, shape={shape})"])
                self.emit(d, f"{name} = tf.compat.v1.Variable({init}, name={name!r}, use_resource={resource})")
            else:
                init = r.choice(["tf.compat.v1.glorot_uniform_initializer(seed=3)", "tf.compat.v1.zeros_initializer()",
                                 "tf.compat.v1.random_normal_initializer(seed=2)"])
                self.emit(d, f"{name} = tf.compat.v1.get_variable({name!r}, {shape}, initializer={init}, "
                             f"use_resource={resource})")
            variables.append((name, shape))
        matrices = [n for n, s in variables if s == [4, 4]]
        vectors = [n for n, s in variables if s == [4]]
        self.emit(1, "losses = []")
        for t in range(r.randint(1, 3)):
            tower_device = self.device() if r.random() < 0.8 else None
            d = self.scoped(1, tower_device)
            self.emit(d, f"with tf.name_scope('tower{t}'):")
            d += 1
            if r.random() < 0.5:
                self.emit(d, f"h = tf.compat.v1.placeholder(tf.float32, [None, 4], name='x')")
            else:
                self.emit(d, f"h = tf.constant([[1., 2., 3., 4.], [0.5, -1., 2., 0.]], name='x')")
            for layer in range(r.randint(1, 3)):
                inner = d
                if r.random() < 0.15:
                    inner = self.scoped(d, self.device())
                if r.random() < 0.1 and variables:
                    self.emit(inner, f"with tf.compat.v1.colocate_with({r.choice(variables)[0]}):")
                    inner += 1
                if matrices:
                    self.emit(inner, f"h = tf.matmul(h, {r.choice(matrices)})")
                if vectors and r.random() < 0.6:
                    add = r.choice(["tf.nn.bias_add(h, {})", "h + {}", "tf.add(h, {})"])
                    self.emit(inner, "h = " + add.format(r.choice(vectors)))
                if not matrices and not vectors:
                    self.emit(inner, "h = h * 2.0")
                self.emit(inner, f"h = {r.choice(ACTIVATIONS)}(h)")
                pick = r.random()
                if pick < 0.15:
                    # A metadata op (Heuristic B) feeding a Reshape, now and
                    # then under a device of its own.
                    shape_scope = self.scoped(inner, self.device() if r.random() < 0.5 else None)
                    self.emit(shape_scope, "s = tf.shape(h)")
                    self.emit(inner, "h = tf.reshape(h, s)")
                elif pick < 0.25:
                    self.emit(inner, "with tf.control_dependencies([h]):")
                    self.emit(inner + 1, "h = tf.identity(h)")
                elif pick < 0.3 and variables:
                    # A node colocated with a variable but then given a device
                    # of its own: a conflict unless soft placement skips it.
                    self.emit(inner, f"with tf.compat.v1.colocate_with({r.choice(variables)[0]}):")
                    self.emit(inner + 1, "h = tf.identity(h)")
                    self.emit(inner, f"h.op._set_device({self.device()!r})")
            loss = r.choice(["tf.reduce_mean(tf.square(h))", "tf.reduce_sum(h)", "tf.nn.l2_loss(h)",
                             "tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=tf.ones_like(h) / 4., "
                             "logits=h))"])
            self.emit(d, f"losses.append({loss})")
        loss_device = self.device() if r.random() < 0.3 else None
        d = self.scoped(1, loss_device)
        self.emit(d, "loss = tf.add_n(losses, name='loss')")
        optimizer = r.choice(OPTIMIZERS)
        colocate = r.random() < 0.5
        d = self.scoped(1, self.device() if r.random() < 0.2 else None)
        self.emit(d, f"train = {optimizer}.minimize(loss, colocate_gradients_with_ops={colocate}, name='train')")
        self.emit(1, "init = tf.compat.v1.global_variables_initializer()")
        return self


def written_program_lines(p, work, on_build_error):
    """Lines that build program `p` in a new graph `g` (after its marker),
    run `on_build_error` (lines, `e` the exception) when TensorFlow refuses
    to build it, and otherwise write its file and go on under `if ok:` with
    `g` the graph as read back (`init` its initializer)."""
    k = p.index
    path = os.path.join(work, f"p{k}.{p.form}")
    lines = [f"mark({k})", "g = tf.Graph()", "ok = True", "try:", "  with g.as_default():"]
    lines += ["  " + line for line in p.lines]
    lines += ["except (ValueError, TypeError) as e:"] + on_build_error + ["if ok:"]
    if p.form == "meta":
        # Placed as the file is read back by Python's importer
        # (import_graph_def; import_meta_graph would add a Saver), which
        # tfrun follows under --import python.
        lines += [f"    tf.compat.v1.train.export_meta_graph({path!r}, graph=g)",
                  "    meta = tf.compat.v1.MetaGraphDef()",
                  f"    meta.ParseFromString(open({path!r}, 'rb').read())",
                  "    g = tf.Graph()",
                  "    with g.as_default():",
                  "        tf.compat.v1.import_graph_def(meta.graph_def, name='')",
                  "        init = g.get_operation_by_name('init')"]
    else:
        lines.append(f"    tf.io.write_graph(g.as_graph_def(), {work!r}, {os.path.basename(path)!r}, "
                     f"as_text={p.form == 'pbtxt'})")
    return lines


def batch_program(programs, work):
    """One Python program that builds, writes and places every program in
    its own tf.Graph, between markers (C's stdio flushed around them, so
    the placement lines land between them)."""
    lines = ["import ctypes, os, sys",
             "import tensorflow as tf",
             "tf.compat.v1.disable_eager_execution()",
             "libc = ctypes.CDLL(None)",
             "def mark(k):",
             "    sys.stdout.flush(); libc.fflush(None); print('=== PROGRAM %d' % k, flush=True)",
             "def say(text):",
             "    sys.stdout.flush(); libc.fflush(None); print(text, flush=True)"]
    for p in programs:
        lines += written_program_lines(p, work, [
            "    say('TF-BUILD-ERROR: ' + (str(e).splitlines() or [type(e).__name__])[0])", "    ok = False"])
        lines += [f"    config = tf.compat.v1.ConfigProto(device_count={{'CPU': 3}}, log_device_placement=True, "
                  f"allow_soft_placement={p.soft})",
                  "    with tf.compat.v1.Session(graph=g, config=config) as sess:",
                  "        try:",
                  "            sess.run(init)",
                  "            say('TF-OK')",
                  "        except tf.errors.OpError as e:",
                  "            say('TF-ERROR: ' + e.message.replace('\\n', '\\\\n'))"]
    lines.append(f"mark({programs[-1].index + 1 if programs else 0})")
    return "\n".join(lines) + "\n"


def run_tf_batch(python, text, work, env, count):
    """Runs a batch program (its text) in one TensorFlow process: each
    program's lines, between its "=== PROGRAM k" markers, by k. Exits 2
    when the process stopped before the last of `count` programs."""
    source = os.path.join(work, "batch.py")
    with open(source, "w") as f:
        f.write(text)
    p = subprocess.run([python, "-u", source], capture_output=True, text=True, env=env)
    parts = re.split(r"^=== PROGRAM (\d+)$", p.stdout, flags=re.M)
    theirs = {int(parts[i]): parts[i + 1].strip("\n").splitlines() for i in range(1, len(parts) - 1, 2)}
    if len(theirs) < count:
        print(f"TensorFlow's process failed after {len(theirs)} programs:\n{p.stderr[-3000:]}")
        sys.exit(2)
    return theirs


def tf_error_text(line):
    """The C++ status text of a TF-ERROR line (newlines escaped as \\n):
    from "Cannot ..." on, without Python's decoration before it and the
    "[[{{node x}}]]" TensorFlow appends."""
    text = line.split(": ", 1)[1]
    start = min((text.find(k) for k in ("Cannot ", "No OpKernel", "Nodes were") if k in text), default=0)
    text = text[start:].split("\\n\t [[")[0]
    return normalized(text.split("\\n"))


def normalized(lines):
    """Trailing blank lines dropped; "Node attrs:" sorted by name: TensorFlow
    lists them in its protobuf map's order, which differs from run to run
    (tfrun sorts them, as SummarizeNodeDef does)."""
    out = []
    for line in lines:
        if line.startswith("Node attrs: "):
            items = re.split(r", (?=[A-Za-z_][\w]*=)", line[len("Node attrs: "):])
            line = "Node attrs: " + ", ".join(sorted(items))
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def tfrun_error_text(stderr):
    """tfrun's error without its prefix and location, one entry per line."""
    text = re.sub(r"^tfrun: error: \S+?(?::\d+:\d+)?: (?:InvalidArgumentError: )?", "", stderr.rstrip("\n"))
    return normalized(text.split("\n"))


def classify(ours, theirs):
    code, out, err = ours
    status = next((l for l in theirs if l.startswith("TF-")), "TF-MISSING")
    t_place = [l for l in theirs if PLACEMENT.match(l)]
    o_place = [l for l in out if PLACEMENT.match(l)]
    if status.startswith("TF-BUILD-ERROR"):
        return "skip"
    if status == "TF-OK":
        if code != 0:
            return "tfrun-fails-tensorflow-places"
        return None if o_place == t_place else "placement"
    if code == 0:
        return "tensorflow-fails-tfrun-places"
    if code != 3:
        return "error-stage"
    if o_place != t_place:
        return "placement-before-error"
    return None if tfrun_error_text(err) == tf_error_text(status) else "error-text"


def accepted_classes(path):
    if not path:
        return set()
    with open(path) as f:
        return set(re.findall(r"random-tf1-conformance: ([\w-]+)", f.read()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--python", default=sys.executable, help="a Python with TensorFlow 2.21")
    ap.add_argument("--out", default=None, help="where differences.txt and reproducers go")
    ap.add_argument("--accept", help="docs/differences.md: the classes it lists are accepted")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out_dir = a.out or tempfile.mkdtemp(prefix="tfrun-random-tf1-")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tfrun-random-tf1-work-")
    programs = [Program(rng, k).build() for k in range(a.count)]
    env = dict(os.environ, TF_XLA_FLAGS="--tf_xla_enable_xla_devices", CUDA_VISIBLE_DEVICES="-1",
               TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    theirs = run_tf_batch(a.python, batch_program(programs, work), work, env, len(programs))
    classes = collections.Counter()
    listing = open(os.path.join(out_dir, "differences.txt"), "w")
    skipped = 0
    for prog in programs:
        k = prog.index
        path = os.path.join(work, f"p{k}.{prog.form}")
        args = [a.tfrun, path, "--place-only", "--log-placement", "--device-count", "CPU=3"]
        args += ["--soft-placement"] if prog.soft else []
        args += ["--import", "python"] if prog.form == "meta" else []
        if os.path.exists(path):
            q = subprocess.run(args, capture_output=True, text=True, env=env)
            ours = (q.returncode, q.stdout.splitlines(), q.stderr)
        else:
            ours = (-1, [], "")
        c = classify(ours, theirs[k])
        if c == "skip":
            skipped += 1
            continue
        if c is None:
            continue
        classes[c] += 1
        reproducer = os.path.join(out_dir, f"p{k}.py")
        with open(reproducer, "w") as f:
            f.write("\n".join(prog.lines) + "\n")
        listing.write(f"=== program {k} ({prog.form}, soft={prog.soft}): {c}\n" + "\n".join(prog.lines) +
                      "\n--- TensorFlow\n" + "".join(f"{l}\n" for l in theirs[k]) +
                      f"--- tfrun (exit {ours[0]}): {' '.join(args[1:])}\n" + "".join(f"{l}\n" for l in ours[1]) +
                      ours[2])
    listing.close()
    statuses = collections.Counter(next((l for l in theirs[p.index] if l.startswith("TF-")), "TF-MISSING")
                                   .split(":")[0] for p in programs)
    build_errors = collections.Counter(l[len("TF-BUILD-ERROR: "):][:60] for p in programs for l in theirs[p.index]
                                       if l.startswith("TF-BUILD-ERROR"))
    print(f"TensorFlow placed {statuses['TF-OK']} graphs and refused {statuses['TF-ERROR']} "
          f"({sum(p.soft for p in programs)} programs with soft placement); did not build "
          f"{statuses['TF-BUILD-ERROR']}" + "".join(f"; {n}x {t}..." for t, n in build_errors.most_common(3)))
    accepted = accepted_classes(a.accept)
    compared = a.count - skipped
    differ = sum(classes.values())
    print(f"random TF1 conformance, seed {a.seed}: {a.count} programs, {skipped} not built by TensorFlow, "
          f"{compared - differ} matched, {differ} differ (listing: {out_dir}/differences.txt)")
    for c, n in classes.most_common():
        print(f"  {c}: {n}{' (accepted: docs/differences.md)' if c in accepted else ''}")
    unexplained = sum(n for c, n in classes.items() if c not in accepted)
    print(f"{compared - unexplained} passed, {unexplained} failed")
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
