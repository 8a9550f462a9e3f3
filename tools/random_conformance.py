#!/usr/bin/env python3
"""Random differential conformance: N random graph files of format version
1, each run by tfrun (`--log-placement --compat tf2`) and by the equivalent
tf.compat.v1 program on TensorFlow's CPU build (all of a batch in one
TensorFlow process), compared line for line: the placement log, the printed
results, and the error (its class, and its text). Differences are sorted
into classes; each class's first graph is written as a reproducer.

  tools/random_conformance.py --count 300 --seed 1 [--python /tmp/tfenv/bin/python]
      [--tfrun bazel-bin/cli/tfrun] [--out DIR] [--accept docs/differences.md]

With --accept FILE, a difference whose class FILE lists (a line
"- random-conformance: CLASS" in docs/differences.md) is accepted; the
exit status is 1 when any other difference remains. Graphs cover Consts of
every numeric dtype (value lists), MatMul with transposes, AddN, Add, Sub,
Mul, Identity, Cast, Relu, BiasAdd, Split (its outputs by name:i),
ConcatV2, Placeholders fed from .npy files, data from value lists, fill,
random and npy, Variables, name and device scopes with every device
spelling, duplicate names, soft placement on and off, fetch lists (repeats
and empty ones) and deliberate dtype and shape errors.
"""
import argparse
import collections
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np  # the TensorFlow venv's Python runs this tool
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conformance  # noqa: E402

FLOATS = ["float32", "float64", "float16", "bfloat16"]
NUMERIC = FLOATS + ["int32", "int64"]
SPELLINGS = ["/cpu:0", "/CPU:0", "/device:CPU:0", "/job:localhost", "/job:localhost/replica:0/task:0/device:CPU:0",
             "/gpu:0", "/device:GPU:1", "/replica:0", ""]
BINARY = ["Add", "Sub", "Mul"]


class Generator:
    """One random graph file (a dict, dumped as YAML)."""

    def __init__(self, rng, folder, stem):
        self.rng = rng
        self.tensors = []  # (name as written, dtype, shape)
        self.used = collections.Counter()
        self.folder, self.stem = folder, stem  # .npy files go to folder/stem_*.npy
        self.random_consts = []  # TensorFlow names of the Consts whose data is `random`
        self.feeds = []  # (placeholder's name, .npy path)
        self.files = 0

    def npy_file(self, array):
        """Writes array beside the graph; the path as the graph file gives it."""
        self.files += 1
        name = f"{self.stem}_{self.files}.npy"
        np.save(os.path.join(self.folder, name), np.asarray(array))
        return name

    def source(self, e, dtype, shape):
        """Now and then data from fill, random or npy instead of a value list."""
        r = self.rng
        pick = r.random()
        if pick < 0.08:
            e["fill"] = self.value(dtype, [1])[0]
        elif pick < 0.16 and dtype != "bool":
            seed = r.randint(0, 999)
            if dtype in FLOATS and r.random() < 0.5:
                e["random"] = {"distribution": "normal", "mean": 0, "stddev": 2, "seed": seed}
            elif dtype in FLOATS:
                e["random"] = {"distribution": "uniform", "min": -4, "max": 4, "seed": seed}
            else:
                e["random"] = {"distribution": "uniform", "min": -9, "max": 10, "seed": seed}
        elif pick < 0.22 and dtype not in ("bfloat16",):  # NumPy has no bfloat16 of its own
            data = self.value(dtype, list(shape)) if shape else self.value(dtype, [1])[0]
            e["npy"] = self.npy_file(np.array(data, dtype={"bool": np.bool_}.get(dtype, dtype)))
        else:
            return
        del e["value"]
        e["shape"] = list(shape)

    def value(self, dtype, shape):
        r = self.rng
        n = 1
        for d in shape:
            n *= d
        if dtype == "bool":
            flat = [r.random() < 0.5 for _ in range(n)]
        elif dtype.startswith("int"):
            flat = [r.randint(-9, 9) for _ in range(n)]
        else:  # halves: exact in every float dtype, and now and then an edge of printing
            edges = [0.0, -0.0, 1e-4, 2.5e-5, 1000.0] + ([] if dtype == "float16" else [1e6, 1e8])
            flat = [r.choice(edges) if r.random() < 0.1 else r.randint(-19, 19) / 2 for _ in range(n)]

        def nest(xs, dims):
            if not dims:
                return xs[0]
            step = len(xs) // dims[0] if dims[0] else 0
            return [nest(xs[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]
        return nest(flat, list(shape))

    def name(self, base):
        r = self.rng
        if r.random() < 0.5:
            return None
        name = r.choice(["a", "b", "c", "x", "w", base.lower()])  # repeats are made unique
        self.used[name] += 1
        return name

    def const(self, dtype=None, shape=None):
        r = self.rng
        dtype = dtype or r.choice(NUMERIC + ["bool"])
        shape = shape if shape is not None else r.choice([[], [2], [3], [2, 2], [2, 3], [3, 2]])
        e = {"op": r.choice(["Const", "Const", "Const", "Variable"]) if dtype not in ("bool",) else "Const",
             "dtype": dtype, "value": self.value(dtype, shape)}
        if not shape:
            e["value"] = self.value(dtype, [1])[0]
        else:
            e["shape"] = shape
        self.source(e, dtype, shape)
        return e, dtype, shape

    def placeholder(self):
        """A fed input: float32 or float64, its first dimension maybe unknown."""
        r = self.rng
        dtype = r.choice(["float32", "float64"])
        rows, cols = r.choice([1, 2, 3]), r.choice([2, 3])
        shape = [None if r.random() < 0.5 else rows, cols]
        data = np.array([[r.randint(-19, 19) / 2 for _ in range(cols)] for _ in range(rows)], dtype=dtype)
        e = {"op": "Placeholder", "dtype": dtype, "shape": shape}
        return e, dtype, [rows, cols], self.npy_file(data)

    def node(self):
        """An op over earlier tensors, or a constant."""
        r = self.rng
        if len(self.tensors) < 2 or r.random() < 0.3:
            return self.const()
        pick = lambda: r.choice(self.tensors)  # noqa: E731
        op = r.choice(["MatMul", "AddN", "Identity", "Cast", "Relu", "BiasAdd", "Split", "ConcatV2",
                       "Placeholder"] + BINARY)
        if op == "Placeholder":
            return self.placeholder()
        if op == "Split":
            ways = [(t, n) for t in self.tensors if t[1] != "bool" and t[2] for n in (1, 2, 3) if t[2][0] % n == 0]
            if not ways:
                return self.const()
            t, n = r.choice(ways)
            return {"op": "Split", "inputs": [t[0]], "num_split": n}, t[1], [t[2][0] // n] + list(t[2][1:])
        if op == "ConcatV2":
            a = pick()
            if not a[2]:
                return self.const()
            alike = [t for t in self.tensors if t[1] == a[1] and t[2] and t[2][1:] == a[2][1:]]
            values = [r.choice(alike) for _ in range(r.randint(1, 3))]
            return ({"op": "ConcatV2", "inputs": [t[0] for t in values], "axis": 0}, a[1],
                    [sum(t[2][0] for t in values)] + list(a[2][1:]))
        a = pick()
        if op == "MatMul":
            b = pick()
            if r.random() < 0.8:  # mostly well-typed: a fresh right operand
                m, k = (2, 3)
                ta, tb = r.random() < 0.3, r.random() < 0.3
                if len(a[2] or []) != 2 or a[1] not in NUMERIC or a[1] in ("int64",):
                    a = self.add(self.const(r.choice(FLOATS + ["int32"]), [k, m] if ta else [m, k]))
                k_a = a[2][0] if ta else a[2][1]
                rows = a[2][1] if ta else a[2][0]
                n = r.choice([1, 2, 3])
                b = self.add(self.const(a[1], [n, k_a] if tb else [k_a, n]))
                return ({"op": "MatMul", "inputs": [a[0], b[0]], "transpose_a": ta, "transpose_b": tb}, a[1],
                        [rows, n])
            return {"op": "MatMul", "inputs": [a[0], b[0]]}, a[1], None
        if op == "AddN":
            same = [t for t in self.tensors if t[1] == a[1] and t[2] == a[2]]
            ins = [r.choice(same) for _ in range(r.randint(1, 3))] if r.random() < 0.85 else [a, pick()]
            return {"op": "AddN", "inputs": [t[0] for t in ins]}, a[1], a[2]
        if op in BINARY:
            b = r.choice([t for t in self.tensors if t[1] == a[1] and (t[2] == a[2] or not t[2])] or [a])
            if r.random() < 0.1:
                b = pick()
            return {"op": op, "inputs": [a[0], b[0]]}, a[1], a[2]
        if op == "Cast":
            dst = r.choice(NUMERIC + ["bool"])
            return {"op": "Cast", "inputs": [a[0]], "DstT": dst}, dst, a[2]
        if op == "BiasAdd":
            if len(a[2] or []) != 2 or a[1] == "bool":
                return {"op": "Identity", "inputs": [a[0]]}, a[1], a[2]
            b = self.add(self.const(a[1], [a[2][1]]))
            return {"op": "BiasAdd", "inputs": [a[0], b[0]]}, a[1], a[2]
        return {"op": op, "inputs": [a[0]]}, a[1], a[2]

    def add(self, made, into=None):
        e, dtype, shape = made[:3]
        name = self.name(e["op"])
        if name:
            e["name"] = name
        if self.rng.random() < 0.15:
            e["device"] = self.rng.choice(SPELLINGS)
        (into if into is not None else self.pending).append(e)
        # The name as a later input writes it: TensorFlow's unique name.
        base = name or {"Split": "split", "ConcatV2": "concat"}.get(e["op"], e["op"])
        unique = base if self.taken[base.lower()] == 0 else f"{base}_{self.taken[base.lower()]}"
        while unique.lower() in self.all_names:
            self.taken[base.lower()] += 1
            unique = f"{base}_{self.taken[base.lower()]}"
        self.taken[base.lower()] += 1
        self.all_names.add(unique.lower())
        ref = (unique, dtype, shape)
        if "random" in e:
            self.random_consts.append(unique + ("/initial_value" if e["op"] == "Variable" else ""))
        if e["op"] == "Placeholder":
            self.feeds.append((unique, made[3]))
        if e["op"] == "Split":  # each slice by its tensor name
            for i in range(e["num_split"]):
                self.tensors.append((f"{unique}:{i}", dtype, shape))
        elif e["op"] != "NoOp":
            self.tensors.append(ref)
        return ref

    def graph(self):
        r = self.rng
        self.taken = collections.Counter()
        self.all_names = set()
        self.pending = []
        nodes = []
        for _ in range(r.randint(2, 9)):
            self.pending = []
            made = self.node()
            self.add(made)
            if r.random() < 0.15:  # a device scope around what was made
                nodes.append({"device": r.choice(SPELLINGS), "nodes": self.pending})
            else:
                nodes.extend(self.pending)
        doc = {"nodes": nodes}
        if r.random() < 0.4:
            doc["config"] = {"allow_soft_placement": r.random() < 0.5}
        if r.random() < 0.2:
            names = [t[0] for t in self.tensors]
            doc["fetch"] = [r.choice(names) for _ in range(r.randint(0, 3))]
        return doc


def tf_batch_program(graphs, graph_defs=None):
    """One Python program that builds and runs every graph in its own
    tf.Graph, between markers, flushing C's stdio so the placement log
    lands between them. With `graph_defs` (a GraphDef path per graph, or
    None where tfrun wrote none), the graph is not built from the program:
    it is the GraphDef tfrun wrote (--write-graph), read back through
    tf.compat.v1.import_graph_def, and its `init` is the GraphDef's last
    node (tfrun adds the initializer last, as the program does)."""
    lines = ["import ctypes, numpy as np, os, sys, tensorflow as tf",
             "tf.compat.v1.disable_eager_execution()",
             "tf.compat.v1.disable_resource_variables()",
             "libc = ctypes.CDLL(None)"] + conformance.NPY_FILE_NAME_SOURCE + [
             "def load_random(folder, name, shape):",
             "    path = folder + '/' + npy_file(name)",
             "    return np.load(path) if os.path.exists(path) else np.zeros(shape)",
             "def mark(k):",
             "    sys.stdout.flush(); libc.fflush(None); print('=== GRAPH %d' % k, flush=True)"]
    for k, (doc, fetch, feeds, dump, folder) in enumerate(graphs):
        def value_expr(e, name_expr):
            dtype = e.get("dtype", "float32")
            if "fill" in e:
                return f"np.full({e['shape']!r}, {conformance.py_literal(e['fill'], dtype)})"
            if "npy" in e:
                return f"np.load({os.path.join(folder, e['npy'])!r})"
            if "random" in e:  # tfrun's numbers (graph-format.md's formula), dumped with --out;
                # zeros where tfrun could not load the graph (its error is compared, not the data)
                return f"load_random({dump!r}, {name_expr}, {e['shape']!r})"
            return f"np.array({conformance.py_literal(e['value'], dtype)})"
        body = conformance.node_lines(doc, value_expr)
        imported = graph_defs is not None
        if imported:
            body = ["gd = tf.compat.v1.GraphDef()",
                    f"gd.ParseFromString(open({graph_defs[k]!r}, 'rb').read())",
                    "tf.compat.v1.import_graph_def(gd, name='')"] if graph_defs[k] else \
                   ["raise ValueError('tfrun wrote no GraphDef')"]
        cfg = doc.get("config") or {}
        lines += [f"mark({k})", "g = tf.Graph()", "with g.as_default():", "    T = {}", "    built = True",
                  "    try:"]
        lines += ["        " + line for line in body] or ["        pass"]
        lines += ["    except (ValueError, TypeError) as e:",
                  "        print('TF-BUILD-ERROR:', str(e).splitlines()[0] if str(e) else type(e).__name__, flush=True)",
                  "        built = False",
                  "    if built:",
                  ("        init = g.get_operations()[-1] if any(op.type == 'VariableV2' for op in g.get_operations()) "
                   "else None" if imported else
                   "        init = tf.compat.v1.global_variables_initializer() if tf.compat.v1.global_variables() else None"),
                  f"        config = tf.compat.v1.ConfigProto(log_device_placement=True, "
                  f"allow_soft_placement={bool(cfg.get('allow_soft_placement'))})",
                  f"        F = {{g.get_tensor_by_name(n + ':0'): np.load(f) for n, f in {feeds!r}}}",
                  "        with tf.compat.v1.Session(graph=g, config=config) as sess:",
                  "            try:",
                  "                if init is not None and " + repr(bool(fetch)) + ": sess.run(init)",
                  f"                for name in {fetch!r}:",
                  "                    t = T.get(name) if name in T else g.get_tensor_by_name(name if ':' in name else name + ':0')",
                  "                    r = sess.run(t, feed_dict=F)",
                  "                    sys.stdout.flush(); libc.fflush(None)",
                  "                    print(r, flush=True)",
                  "            except tf.errors.OpError as e:",
                  "                sys.stdout.flush(); libc.fflush(None)",
                  "                print('TF-ERROR:', ' | '.join(l for l in e.message.splitlines() if l.strip()), flush=True)"]
    lines.append("mark(%d)" % len(graphs))
    return "\n".join(lines) + "\n"


def classify(ours, theirs):
    """The class of a difference, or None when both sides agree."""
    code, out, err = ours
    o_place = [l for l in out if conformance.PLACEMENT.match(l)]
    t_place = [l for l in theirs if conformance.PLACEMENT.match(l)]
    t_err = next((l for l in theirs if l.startswith(("TF-ERROR:", "TF-BUILD-ERROR:"))), None)
    o_rest = [l for l in out if not conformance.PLACEMENT.match(l) and not l.startswith("Device mapping")]
    t_rest = [l for l in theirs if not conformance.PLACEMENT.match(l) and not l.startswith("TF-")]
    if t_err and code == 0:
        return "tensorflow-fails-tfrun-runs"
    if not t_err and code != 0:
        return "tfrun-fails-tensorflow-runs"
    if t_err:
        kind = "build" if t_err.startswith("TF-BUILD") else "run"
        if (kind == "build") != (code == 2):
            return "error-stage"
        theirs_text = t_err.split(": ", 1)[1]
        ours_text = err.strip().split("\n")[0]
        ours_text = re.sub(r"^tfrun: error: \S+?:\d+:\d+: (node '[^']*'(?: on \S+)?: )?", "", ours_text)
        ours_text = ours_text.split("InvalidArgumentError: ", 1)[-1]
        ours_text = re.sub(r"node (\S+) \(defined at [^)]*\)", r"{{node \1}}", ours_text)
        theirs_text = theirs_text.replace(" The requested device appears to be a GPU, but CUDA is not enabled.", "")
        if kind == "run":
            theirs_text = next((p.strip() for p in theirs_text.split(" | ") if "Cannot assign" in p), theirs_text)
        if ours_text != theirs_text and ours_text not in theirs_text:
            return f"{kind}-error-text"
        return None
    if o_place != t_place:
        return "placement"
    if o_rest != t_rest:
        a, b = "\n".join(o_rest), "\n".join(t_rest)
        if a.replace("-0.", " 0.").replace("-0 ", " 0 ") == b.replace("-0.", " 0.").replace("-0 ", " 0 "):
            return "signed-zero"
        na = re.findall(r"-?\d+\.?\d*(?:e[-+]\d+)?", a)
        nb = re.findall(r"-?\d+\.?\d*(?:e[-+]\d+)?", b)
        if len(na) == len(nb) and all(abs(float(x) - float(y)) <= 1e-5 * max(1.0, abs(float(y))) for x, y in zip(na, nb)):
            return "last-digit"
        return "results"
    return None


def accepted_classes(path):
    if not path:
        return set()
    with open(path) as f:
        return set(re.findall(r"random-conformance: ([\w-]+)", f.read()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--python", default=sys.executable, help="a Python with tensorflow-cpu installed")
    ap.add_argument("--out", default=None, help="where reproducers go (default: a temporary folder)")
    ap.add_argument("--accept", help="docs/differences.md: the classes it lists are accepted")
    ap.add_argument("--batch", type=int, default=500, help="graphs per TensorFlow process")
    ap.add_argument("--via-graphdef", action="store_true",
                    help="TensorFlow's side reads the GraphDef tfrun writes (--write-graph) instead of building "
                         "the program: the round trip; graphs tfrun refuses to load are not compared")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out_dir = a.out or tempfile.mkdtemp(prefix="tfrun-random-")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tfrun-random-work-")
    gens = [Generator(rng, work, f"g{i}") for i in range(a.count)]
    docs = [g.graph() for g in gens]
    ours, fetches, feeds, dumps, graph_defs = [], [], [], [], []
    for i, doc in enumerate(docs):
        path = os.path.join(work, f"g{i}.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
        fed = [(name, os.path.join(work, npy)) for name, npy in gens[i].feeds]
        feed_args = [arg for name, npy in fed for arg in ("--feed", f"{name}=@{npy}")]
        feeds.append(fed)
        # `random` data as tfrun makes it, for the TensorFlow program to load.
        dump = os.path.join(work, f"g{i}_random")
        dumps.append(dump)
        if gens[i].random_consts:
            subprocess.run([a.tfrun, path, "--soft-placement", "--out", dump] + feed_args +
                           [arg for c in gens[i].random_consts for arg in ("--fetch", c)], capture_output=True)
        # What the program fetches: the results of a run that cannot fail
        # placement (as conformance.py asks), then the run compared.
        report = os.path.join(work, f"g{i}.json")
        subprocess.run([a.tfrun, path, "--soft-placement", "--json", report] + feed_args, capture_output=True,
                       text=True)
        p = subprocess.run([a.tfrun, path, "--log-placement", "--compat", "tf2"] + feed_args, capture_output=True,
                           text=True)
        if a.via_graphdef:
            written = os.path.join(work, f"g{i}.pb")
            subprocess.run([a.tfrun, path, "--place-only", "--soft-placement", "--write-graph", written],
                           capture_output=True)
            graph_defs.append(written if os.path.exists(written) else None)
        ours.append((p.returncode, p.stdout.splitlines(), p.stderr))
        try:
            with open(report) as f:
                rep = json.load(f)
        except (OSError, ValueError):
            rep = {}
        fetches.append([r["name"] for r in rep.get("results", [])] or rep.get("fetch") or list(doc.get("fetch") or []))
    theirs = []
    for start in range(0, len(docs), a.batch):
        end = start + a.batch
        chunk = [(d, f, fd, dp, work) for d, f, fd, dp in zip(docs[start:end], fetches[start:end], feeds[start:end],
                                                               dumps[start:end])]
        program = os.path.join(work, f"batch{start}.py")
        with open(program, "w") as f:
            f.write(tf_batch_program(chunk, graph_defs[start:end] if a.via_graphdef else None))
        p = subprocess.run([a.python, "-u", program], capture_output=True, text=True,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1",
                                    TF_ENABLE_ONEDNN_OPTS="0"))
        parts = re.split(r"^=== GRAPH (\d+)$", p.stdout, flags=re.M)
        by_index = {int(parts[i]): parts[i + 1].strip("\n").splitlines() for i in range(1, len(parts) - 1, 2)}
        if len(by_index) < len(chunk):
            print(f"TensorFlow's batch process failed after {len(by_index)} graphs:\n{p.stderr[-3000:]}")
            sys.exit(2)
        theirs += [by_index[k] for k in range(len(chunk))]
    original = list(range(len(docs)))  # each compared graph's number (its files are g{number}*)
    if a.via_graphdef:
        # Only what tfrun loaded can be written and read back.
        keep = [i for i, gd in enumerate(graph_defs) if gd]
        original = keep
        print(f"round trip: tfrun wrote {len(keep)} GraphDefs of {len(docs)} graphs (the others it refuses to load)")
        docs, ours, theirs, feeds = ([xs[i] for i in keep] for xs in (docs, ours, theirs, feeds))
        a.count = len(keep)
    classes = collections.Counter()
    first = {}
    listing = open(os.path.join(out_dir, "differences.txt"), "w")
    for i, (mine, tf_lines) in enumerate(zip(ours, theirs)):
        c = classify(mine, tf_lines)
        if c is None:
            continue
        classes[c] += 1
        # Every difference, one block each, for reading a class whole.
        listing.write(f"=== graph {original[i]}: {c}\n--- TensorFlow\n" + "".join(f"{l}\n" for l in tf_lines) +
                      f"--- tfrun (exit {mine[0]})\n" + "".join(f"{l}\n" for l in mine[1]) + mine[2])
        if c not in first:
            first[c] = i
            # The graph's .npy files (npy sources, feeds) go beside it.
            for npy in glob.glob(os.path.join(work, f"g{original[i]}_*.npy")):
                shutil.copy(npy, out_dir)
            feed_text = "".join(f" --feed {name}=@{os.path.basename(npy)}" for name, npy in feeds[i])
            with open(os.path.join(out_dir, f"{c}.yaml"), "w") as f:
                f.write(f"# random-conformance seed {a.seed}, graph {original[i]}: class {c}\n")
                f.write(f"# run: tfrun {c}.yaml --log-placement --compat tf2{feed_text}\n")
                f.write("# TensorFlow printed:\n" + "".join(f"#   {l}\n" for l in tf_lines))
                f.write("# tfrun printed (exit %d):\n" % mine[0] + "".join(f"#   {l}\n" for l in mine[1]) +
                        "".join(f"#   {l}\n" for l in mine[2].splitlines()))
                yaml.safe_dump(docs[i], f, sort_keys=False)
    accepted = accepted_classes(a.accept)
    matched = a.count - sum(classes.values())
    print(f"random conformance, seed {a.seed}: {a.count} graphs, {matched} matched, {sum(classes.values())} differ")
    for c, n in classes.most_common():
        print(f"  {c}: {n}{' (accepted: docs/differences.md)' if c in accepted else ''}  e.g. {out_dir}/{c}.yaml")
    unexplained = sum(n for c, n in classes.items() if c not in accepted)
    # Graphs that agree or differ only as docs/differences.md documents, and the rest.
    print(f"{a.count - unexplained} passed, {unexplained} failed")
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
