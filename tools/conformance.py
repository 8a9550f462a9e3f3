#!/usr/bin/env python3
"""Conformance against real TensorFlow (not part of CI).

For each graph file, builds the equivalent tf.compat.v1 program (graph mode,
reference variables), runs it with log_device_placement on TensorFlow's CPU
build, and diffs its placement lines, printed results and placement errors
against `tfrun --compat tf2`. Constants are taken from tfrun's own --out
dumps, so both sides compute on identical inputs (tfrun's `random` differs
from TensorFlow's generators by design).

Setup (once):  python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install tensorflow-cpu pyyaml
Run:           /tmp/tfenv/bin/python tools/conformance.py graphs/*.yaml testdata/graphs/*.yaml

With --eager it builds the TF2 eager program instead (tf.constant of the
graph file's literals as written, resource variables, the ops as TF2
functions) and diffs TensorFlow's "Executing op" lines and printed results
against `tfrun --compat eager`. TF 2.21 also logs the placement of the
one-op function graphs it builds ("input: (_Arg): ..."); those lines are
dropped (the TF2 GPU guide's transcripts have none).

Exit status 1 when any graph differs. The "Device mapping:" line is not
compared: TF 2.x logs it to standard error only (README, "Differences").
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap

import yaml

PLACEMENT = re.compile(r"^\S+: \(\w+\): /job:")
EXECUTING = re.compile(r"^(?:[IWE]\d{4} [^\]]*\] )?(Executing op \S+ in device \S+)$")
LOG_LINE = re.compile(r"^[IWEF]\d{4} ")


CLUSTER_TASKS = 0  # set per graph: a cluster graph runs under mpirun, one process per task
TARGET = None      # --target: the master task of a cluster graph
FEEDS = []         # --feed NAME=@FILE.npy|NAME=VALUE: given to both sides, for graphs that have NAME


def cluster_tasks(doc):
    """[(job, index)] in TensorFlow's order, for a graph's config.cluster."""
    cluster = (doc.get("config") or {}).get("cluster") or {}
    return [(job, i) for job in sorted(cluster)
            for i in range(cluster[job] if isinstance(cluster[job], int) else len(cluster[job]))]


def feeds_for(graph):
    """The --feed arguments for the graph's Placeholders (by name, as written)."""
    names = set(placeholder_names(yaml.safe_load(open(graph)).get("nodes") or []))
    return [f for f in FEEDS if f.split("=", 1)[0].split(":")[0] in names]


def placeholder_names(entries):
    for e in entries:
        if "nodes" in e:
            yield from placeholder_names(e["nodes"])
        elif e.get("op") == "Placeholder" and "name" in e:
            yield e["name"]


def feed_dict_source(feeds):
    """Python source of {tensor name: value} for feed_dict, values as
    NumPy reads them (np.load for @FILE, the YAML literal otherwise)."""
    items = []
    for f in feeds:
        name, value = f.split("=", 1)
        name = name if ":" in name else name + ":0"
        expr = f"np.load({value[1:]!r})" if value.startswith("@") else f"{yaml.safe_load(value)!r}"
        items.append(f"{name!r}: {expr}")
    return "{" + ", ".join(items) + "}"


def relative_feed(feed, folder):
    name, value = feed.split("=", 1)
    if value.startswith("@"):
        value = "@" + os.path.relpath(value[1:], folder or ".")
    return f"{name}={value}"


def run_tfrun(tfrun, args, feeds=()):
    cmd = [tfrun] + args + [a for f in feeds for a in ("--feed", f)]
    cmd += ["--target", TARGET] if TARGET and CLUSTER_TASKS > 1 else []
    if CLUSTER_TASKS > 1:
        cmd = ["timeout", "120", "mpirun", "-q", "--oversubscribe", "-n", str(CLUSTER_TASKS)] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def walk(entries, depth, lines, emit_node):
    """Writes a graph file's scopes as `with` blocks and each node through
    emit_node(entry, pad, inputs), under its own device when it has one."""
    pad = "    " * depth
    for e in entries:
        if "nodes" in e:
            # colocate_with outside, then the block's own device inside it.
            ctx = [f"tf.compat.v1.colocate_with(T[{e['colocate_with']!r}])"] if "colocate_with" in e else []
            ctx += [f"tf.device({e['device']!r} or None)"] if "device" in e else []
            if "name_scope" in e:
                ctx.append(f"tf.name_scope({e['name_scope']!r})")
            # tf.name_scope(None) is a scope that changes nothing.
            lines.append(pad + "with " + ", ".join(ctx or ["tf.name_scope(None)"]) + ":")
            walk(e["nodes"], depth + 1, lines, emit_node)
            continue
        node_pad = pad
        if "colocate_with" in e:
            lines.append(node_pad + f"with tf.compat.v1.colocate_with(T[{e['colocate_with']!r}]):")
            node_pad += "    "
        if "device" in e:
            lines.append(node_pad + f"with tf.device({e['device']!r} or None):")
            node_pad += "    "
        emit_node(e, node_pad, [f"T[{str(i).removesuffix(':0')!r}]" for i in e.get("inputs", [])])


def named_values(entries):
    """{name: value} of the named Consts written with a value list."""
    out = {}
    for e in entries:
        if "nodes" in e:
            out.update(named_values(e["nodes"]))
        elif e.get("op") == "Const" and "name" in e and "value" in e:
            out[e["name"]] = e["value"]
    return out


def node_lines(doc, value_expr):
    """The lines of a tf.compat.v1 program that build the graph's nodes into
    T (by TensorFlow's names and the names the file gives them).
    value_expr(e, name_expr) is the Python expression of a Const's value or
    a Variable's initial value, `name_expr` an expression of its name."""
    lines = []

    def emit_node(e, pad, ins):
        op = e["op"]
        name = e.get("name")
        dtype = e.get("dtype", "float32")
        nm = f", name={name!r}" if name else ""
        if op == "Const":
            expr = f"tf.constant({value_expr(e, 'NAME')}, dtype=tf.{dtype}{nm})"
        elif op == "Variable":
            initial = value_expr(e, "NAME + '/initial_value'")
            expr = f"tf.compat.v1.Variable({initial}, dtype=tf.{dtype}{nm})"
        elif op == "MatMul":
            expr = (f"tf.matmul({ins[0]}, {ins[1]}, transpose_a={bool(e.get('transpose_a'))}, "
                    f"transpose_b={bool(e.get('transpose_b'))}{nm})")
        elif op == "AddN":
            # A graph file's AddN is the op: tf.math.add_n of one input
            # would return the input and build nothing.
            expr = f"tf.raw_ops.AddN(inputs=[{', '.join(ins)}]{nm})"
        elif op in ("Add", "Sub", "Mul"):
            # raw ops: TF 2's tf.math.add builds AddV2, the graph says Add.
            expr = f"tf.raw_ops.{op}(x={ins[0]}, y={ins[1]}{nm})"
        elif op == "Identity":
            expr = f"tf.identity({ins[0]}{nm})"
        elif op == "Cast":
            expr = f"tf.raw_ops.Cast(x={ins[0]}, DstT=tf.{e['DstT']}{nm})"  # the op, also to its own dtype
        elif op == "NoOp":
            expr = f"tf.group({', '.join(ins + ([nm[2:]] if nm else []))})"
        elif op == "Placeholder":
            shape = e.get("shape")
            expr = f"tf.compat.v1.placeholder(tf.{dtype}, shape={shape!r}{nm})"
        elif op == "Split":
            expr = f"tf.split({ins[0]}, {e['num_split']}, axis={e.get('axis', 0)}{nm})"
        elif op == "ConcatV2":
            expr = f"tf.concat([{', '.join(ins)}], axis={e['axis']}{nm})"
        elif op == "BiasAdd":
            expr = f"tf.nn.bias_add({ins[0]}, {ins[1]}{nm})"
        elif op == "Relu":
            expr = f"tf.nn.relu({ins[0]}{nm})"
        else:
            raise ValueError(op)
        # NAME: the final (unique) name TensorFlow will give this op.
        base = name or {"Split": "split", "ConcatV2": "concat"}.get(op, op)
        lines.append(pad + f"NAME = tf.compat.v1.get_default_graph().unique_name({base!r}, mark_as_used=False)")
        lines.append(pad + f"_t = {expr}")
        if op == "Split":  # each output by its tensor name, the first also by the op's
            lines.append(pad + "for _i, _p in enumerate(_t): T[_p.op.name + ':%d' % _i] = _p")
            lines.append(pad + "_t = _t[0]")
        lines.append(pad + "_op = _t if isinstance(_t, tf.Operation) else _t.op")
        # The name the file gives it too: tf.concat of one value returns an
        # Identity named concat/concat.
        lines.append(pad + "T[_op.name] = T[NAME] = _t")

    walk(doc["nodes"], 0, lines, emit_node)
    return lines


# tfrun's --out file of a tensor (cli/npy_outputs.cc NpyFileName): every
# byte but letters, digits, '.', '_', '-' and ':' as %XX. The generated
# programs define it from this source.
NPY_FILE_NAME_SOURCE = [
    "def npy_file(name):",
    "    return ''.join(c if c.isascii() and (c.isalnum() or c in '._-:') else",
    "                   ''.join('%%%02X' % b for b in c.encode()) for c in name) + '.npy'",
]


def program_for(doc, const_dir, fetch, feeds=()):
    """Python source of the tf.compat.v1 program equivalent to the graph."""
    lines = [
        "import os",
        "import numpy as np, tensorflow as tf",
        "tf.compat.v1.disable_eager_execution()",
        "tf.compat.v1.disable_resource_variables()",
        "T = {}",
    ] + NPY_FILE_NAME_SOURCE + [
        "def load(name):",
        f"    path = os.path.join({const_dir!r}, npy_file(name))",
        "    # A graph whose placement fails dumps nothing: named values as written.",
        "    return np.load(path) if os.path.exists(path) else np.array(VALUES[name])",
        f"VALUES = __import__('json').loads({json.dumps(named_values(doc['nodes']))!r})",
    ]
    lines += node_lines(doc, lambda e, name: f"load({name})")
    cfg = doc.get("config") or {}
    lines += [
        "init = tf.compat.v1.global_variables_initializer() if tf.compat.v1.global_variables() else None",
        f"config = tf.compat.v1.ConfigProto(log_device_placement=True, "
        f"allow_soft_placement={bool(cfg.get('allow_soft_placement'))}, "
        f"device_count={dict(cfg.get('device_count') or {})!r})",
    ]
    tasks = cluster_tasks(doc)
    if tasks:
        # One in-process tf.distribute.Server per task; the session runs on
        # the master's (tf.Session(server.target)), which logs the placement.
        master = tuple(TARGET.strip("/").replace("job:", "").replace("task:", "").split("/")) if TARGET else tasks[0]
        lines += [
            "import socket",
            "def _port():",
            "    s = socket.socket(); s.bind(('localhost', 0)); p = s.getsockname()[1]; s.close(); return p",
            f"_tasks = {tasks!r}",
            "_spec = {}",
            "for _job, _i in _tasks: _spec.setdefault(_job, []).append('localhost:%d' % _port())",
            "_cluster = tf.train.ClusterSpec(_spec)",
            "_servers = {(j, i): tf.distribute.Server(_cluster, job_name=j, task_index=i) for j, i in _tasks}",
            f"_target = _servers[({master[0]!r}, {int(master[1])})].target",
        ]
    else:
        lines += ["_target = ''"]
    lines += [
        "with tf.compat.v1.Session(_target, config=config) as sess:",
        "    try:",
        "        if init is not None: sess.run(init)",
        f"        feeds = {{tf.compat.v1.get_default_graph().get_tensor_by_name(k): v for k, v in {feed_dict_source(feeds)}.items()}}",
        f"        for name in {fetch!r}:",
        "            t = T.get(name) if name in T else tf.compat.v1.get_default_graph().get_tensor_by_name(name + ':0')",
        "            print(sess.run(t, feed_dict=feeds))",
        "    except tf.errors.InvalidArgumentError as e:",
        "        print('TF-ERROR:', ' | '.join(l for l in e.message.splitlines() if l.strip()))",
    ]
    return "\n".join(lines) + "\n"


def py_literal(value, dtype):
    """A YAML value as the Python literal a program would write."""
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v, dtype) for v in value) + "]"
    if dtype == "string":  # any scalar is its text, as Python's str
        return repr(value if isinstance(value, str) else yaml.safe_dump(value).strip())
    if isinstance(value, str):  # YAML 1.1 strings tfrun reads as floats: 1.0e8, .inf, nan
        text = re.sub(r"^([-+]?)[.]", r"\1", value)
        return f"float({text!r})"
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return f"float({str(value)!r})"
    return repr(value)


def eager_program_for(doc, const_dir, names, fetch):
    """Python source of the TF2 eager program the graph stands for
    (README, "--compat eager"): names[i] is tfrun's name for the i-th node."""
    lines = [
        "import os, numpy as np, tensorflow as tf",
        "tf.debugging.set_log_device_placement(True)",
        "T = {'init': None}",
    ] + NPY_FILE_NAME_SOURCE + [
        "def load(name, dtype):",
        f"    return np.load(os.path.join({const_dir!r}, npy_file(name))).astype(dtype.as_numpy_dtype)",
    ]
    # Soft placement stays TF2's default (on), as in tfrun --compat eager.
    cursor = iter(names)

    def const_expr(e, name):
        dtype = e.get("dtype", "float32")
        shape = f", shape={e['shape']!r}" if "shape" in e else ""
        if "value" in e:
            return f"tf.constant({py_literal(e['value'], dtype)}, dtype=tf.{dtype}{shape})"
        if "fill" in e:
            return f"tf.constant({py_literal(e['fill'], dtype)}, dtype=tf.{dtype}, shape={e.get('shape', [])!r})"
        return f"tf.constant(load({name!r}, tf.{dtype}), dtype=tf.{dtype})"

    def emit_node(e, pad, ins):
        op, name = e["op"], e.get("name")
        nm = f", name={name!r}" if name else ""
        if op == "Variable":
            init, var, assign, read = next(cursor), next(cursor), next(cursor), next(cursor)
            lines.append(pad + f"T[{init!r}] = {const_expr(e, init)}")
            lines.append(pad + f"T[{var!r}] = T[{assign!r}] = T[{read!r}] = tf.Variable(T[{init!r}]{nm})")
            return
        if op in ("Split", "ConcatV2"):
            next(cursor)  # the axis Const tfrun adds before the op (split/split_dim, concat/axis)
        me = next(cursor)
        if op == "Split":
            lines.append(pad + f"_parts = tf.split({ins[0]}, {e['num_split']}, axis={e.get('axis', 0)})")
            lines.append(pad + f"for _i, _p in enumerate(_parts): T[{me!r} + ':%d' % _i] = _p")
            lines.append(pad + f"T[{me!r}] = _parts[0]")
            return
        if op == "ConcatV2":  # of one value: an Identity, which the written name stands for
            lines.append(pad + f"T[{me!r}] = T[{e.get('name', 'concat')!r}] = "
                               f"tf.concat([{', '.join(ins)}], axis={e['axis']})")
            return
        if op == "Const":
            expr = const_expr(e, me)
        elif op == "MatMul":
            expr = (f"tf.matmul({ins[0]}, {ins[1]}, transpose_a={bool(e.get('transpose_a'))}, "
                    f"transpose_b={bool(e.get('transpose_b'))})")
        elif op == "AddN":
            expr = f"tf.math.add_n([{', '.join(ins)}]{nm})"
        elif op in ("Add", "Sub", "Mul"):
            expr = f"tf.raw_ops.{op}(x={ins[0]}, y={ins[1]})"
        elif op == "Identity":
            expr = f"tf.identity({ins[0]})"
        elif op == "Cast":
            expr = f"tf.cast({ins[0]}, tf.{e['DstT']})"
        elif op == "NoOp":
            expr = "tf.no_op()"
        elif op == "BiasAdd":
            expr = f"tf.nn.bias_add({ins[0]}, {ins[1]})"
        elif op == "Relu":
            expr = f"tf.nn.relu({ins[0]})"
        else:
            raise ValueError(op)
        lines.append(pad + f"T[{me!r}] = {expr}")

    lines.append("try:")
    depth_lines = len(lines)
    walk(doc["nodes"], 1, lines, emit_node)
    if len(lines) == depth_lines:
        lines.append("    pass")
    lines += [
        f"    for name in {fetch!r}:",
        "        print(T[name], flush=True)",
        "except tf.errors.InvalidArgumentError as e:",
        "    print('TF-ERROR:', str(e).removesuffix(' name: '), flush=True)",
    ]
    return "\n".join(lines) + "\n"


def write_expected(graph, variant, args, lines):
    """TensorFlow's output as a `tfrun test` case beside the graph
    (NAME.VARIANT.expected); a cluster graph's, which runs under mpirun, as
    testdata/golden/tf_NAME.VARIANT.out for cli/cluster_test's table."""
    stem, text = os.path.splitext(graph)[0], "".join(l + "\n" for l in lines)
    if CLUSTER_TASKS > 1:
        path = os.path.join("testdata", "golden", "tf_" + os.path.basename(stem) + "." + variant[3:] + ".out")
    else:
        path = stem + "." + variant + ".expected"
        text = (f"# args: {args}\n" if args else "") + text
    with open(path, "w") as f:
        f.write(text)


def check_eager(graph, tfrun, python, golden_dir=None):
    doc = yaml.safe_load(open(graph))
    _, info, _ = run_tfrun(tfrun, [graph, "--compat", "eager", "--soft-placement", "--json", "-"])
    report = json.loads(info)
    names = [n["name"] for n in report.get("placement", [])]
    # A run that fails placement reports no results: the file's own fetch.
    fetch = [r["name"] for r in report.get("results", [])] or list(doc.get("fetch") or [])
    code, out, err = run_tfrun(tfrun, [graph, "--log-placement", "--compat", "eager"])
    with tempfile.TemporaryDirectory() as tmp:
        arrays = [n["name"] for n in report.get("placement", []) if n["op"] == "Const"]
        if arrays:
            args = [graph, "--out", tmp, "--soft-placement"]
            for c in arrays:
                args += ["--fetch", c]
            c2, _, e2 = run_tfrun(tfrun, args)
            if c2 != 0 and not (c2 == 3 and code == 3):
                return [f"could not dump constants: {e2.strip()}"]
        src = eager_program_for(doc, tmp, names, fetch)
        p = subprocess.run([python, "-u", "-c", src], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="0", CUDA_VISIBLE_DEVICES="-1",
                                    TF_ENABLE_ONEDNN_OPTS="0"))
    if p.returncode != 0:
        return ["TensorFlow program failed:\n" + textwrap.indent(p.stdout[-2000:], "    ")]
    theirs = []
    lines = iter(p.stdout.splitlines())
    for line in lines:
        m = EXECUTING.match(line)
        if m:
            theirs.append(m.group(1))
        elif line.startswith("Instructions for updating:"):
            next(lines, None)  # a Python deprecation warning's second half (tf.matmul's sparse_matmul)
        elif not LOG_LINE.match(line) and not PLACEMENT.match(line) and not line.startswith(
                ("WARNING:", "To enable the following", "E0000", "W0000")):
            theirs.append(line)
    ours = out.splitlines()
    if code == 3:
        ours.append("TF-ERROR: " + err.strip().split("InvalidArgumentError: ", 1)[-1])
    if golden_dir and theirs == ours and code == 0:
        write_expected(graph, "tf-eager", "--log-placement --compat eager", theirs)
    if theirs != ours:
        width = max(len(theirs), len(ours))
        return ["output differs:\n" + "\n".join(
            f"    {'=' if a == b else '!'} tfrun: {a}\n      TF:    {b}" for a, b in
            zip(ours + [''] * (width - len(ours)), theirs + [''] * (width - len(theirs))))]
    return []


def check(graph, tfrun, python, golden_dir=None):
    global CLUSTER_TASKS
    doc = yaml.safe_load(open(graph))
    CLUSTER_TASKS = len(cluster_tasks(doc))
    feeds = feeds_for(graph)
    # Names of the constants and fetches, from a run that cannot fail placement.
    _, info, _ = run_tfrun(tfrun, [graph, "--soft-placement", "--json", "-"], feeds)
    report = json.loads(info)
    code, out, err = run_tfrun(tfrun, [graph, "--log-placement"], feeds)
    # Axis constants (split_dim, axis, concat_dim) are Python ints on both sides.
    consts = [n["name"] for n in report.get("placement", []) if n["op"] == "Const"
              and not re.search(r"/(split_dim|axis|concat_dim)(_\d+)?$", n["name"])]
    # A run that fails placement reports no results: the file's own fetch.
    fetch = [r["name"] for r in report.get("results", [])] or list(doc.get("fetch") or [])
    with tempfile.TemporaryDirectory() as tmp:
        if consts:
            args = [graph, "--out", tmp, "--soft-placement"]
            for c in consts:
                args += ["--fetch", c]
            c2, _, e2 = run_tfrun(tfrun, args)
            if c2 != 0 and not (c2 == 3 and code == 3):
                return [f"could not dump constants: {e2.strip()}"]
        src = program_for(doc, tmp, fetch, feeds)
        p = subprocess.run([python, "-c", src], capture_output=True, text=True,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1"))
    if p.returncode != 0:
        return ["TensorFlow program failed:\n" + textwrap.indent(p.stderr[-2000:], "    ")]
    tf_lines = p.stdout.splitlines()
    tf_place = [l for l in tf_lines if PLACEMENT.match(l)]
    tf_rest = [l for l in tf_lines if not PLACEMENT.match(l)]
    ours = out.splitlines()
    our_place = [l for l in ours if PLACEMENT.match(l)]
    our_rest = [l for l in ours if not PLACEMENT.match(l) and not l.startswith("Device mapping")
                and " -> device: " not in l]
    diffs = []
    if code == 3:
        # Normalised: tfrun's "node X (defined at FILE:LINE)" is the spec's
        # interpolated form of TF's "{{node X}}"; TF's CPU-only build adds a
        # sentence about CUDA that a GPU build does not.
        ours_err = err.strip().split("InvalidArgumentError: ", 1)[-1]
        ours_err = re.sub(r"node (\S+) \(defined at [^)]*\)", r"{{node \1}}", ours_err)
        tf_err = next((l for l in tf_lines if l.startswith("TF-ERROR:")), "TF-ERROR: (none)")[10:]
        tf_err = next((part.strip() for part in tf_err.split(" | ") if "Cannot assign" in part
                       or "Could not satisfy" in part or "Cannot colocate" in part), tf_err)
        tf_err = tf_err.replace(" The requested device appears to be a GPU, but CUDA is not enabled.", "")
        if ours_err != tf_err:
            diffs.append(f"error differs:\n    tfrun: {ours_err}\n    TF:    {tf_err}")
        return diffs
    if tf_place != our_place:
        diffs.append("placement differs:\n" + "\n".join(
            f"    {'=' if a == b else '!'} tfrun: {a}\n      TF:    {b}" for a, b in
            zip(our_place + [''] * len(tf_place), tf_place + [''] * len(our_place)) if a or b))
    tf_rest = [l for l in tf_rest if not l.startswith("TF-ERROR")]
    if golden_dir and not diffs:
        # TensorFlow's own output: the results, and with --log-placement the
        # contract's mapping line (TF 2.x logs it to stderr; a distributed
        # master session prints none) and TF's lines.
        mapping = [] if CLUSTER_TASKS else ["Device mapping: no known devices."]
        # `tfrun test` runs a case in its graph's folder: .npy paths from there.
        feed_args = "".join(f" --feed {relative_feed(f, os.path.dirname(graph))}" for f in feeds)
        write_expected(graph, "tf-plain", feed_args.strip(), tf_rest)
        write_expected(graph, "tf-log", "--log-placement" + feed_args, mapping + tf_place + tf_rest)
    if tf_rest != our_rest:
        diffs.append("results differ:\n    tfrun: " + repr("\n".join(our_rest)) + "\n    TF:    " +
                     repr("\n".join(tf_rest)))
    return diffs


def replicates_over_gpus(entries):
    """Whether a for_each_device: GPU scope is in the graph (no copies on
    TensorFlow's CPU build, so nothing to compare)."""
    return any(str(e.get("for_each_device", "")).upper() == "GPU" or
               ("nodes" in e and replicates_over_gpus(e["nodes"])) for e in entries)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--tfrun", default="bazel-bin/cli/tfrun")
    ap.add_argument("--python", default=sys.executable, help="a Python with tensorflow-cpu installed")
    ap.add_argument("--eager", action="store_true",
                    help="compare the TF2 eager program with tfrun --compat eager")
    ap.add_argument("--write-expected", action="store_true", dest="write_goldens",
                    help="write TensorFlow's output for each successful graph beside it as NAME.tf-plain.expected "
                         "and NAME.tf-log.expected (with --eager, NAME.tf-eager.expected): tfrun test cases")
    ap.add_argument("--target", help="cluster graphs: the master task /job:J/task:T (both sides)")
    ap.add_argument("--feed", action="append", default=[],
                    help="NAME=@FILE.npy or NAME=VALUE, fed on both sides to each graph that has NAME "
                         "(paths relative to the working directory)")
    a = ap.parse_args()
    global TARGET, FEEDS
    TARGET = a.target
    FEEDS = a.feed
    failed = skipped = 0
    for g in a.graphs:
        if replicates_over_gpus(yaml.safe_load(open(g)).get("nodes") or []):
            print("SKIP   " + g + " (for_each_device: GPU; TensorFlow's CPU build has no GPU)")
            skipped += 1
            continue
        if a.eager and cluster_tasks(yaml.safe_load(open(g))):
            print("SKIP   " + g + " (a cluster graph runs in graph mode only)")
            skipped += 1
            continue
        if a.eager and any(True for _ in placeholder_names(yaml.safe_load(open(g)).get("nodes") or [])):
            print("SKIP   " + g + " (a Placeholder needs a session; eager has no feed_dict)")
            skipped += 1
            continue
        diffs = (check_eager(g, a.tfrun, a.python, a.write_goldens) if a.eager else
                 check(g, a.tfrun, a.python, a.write_goldens))
        print(("MATCH  " if not diffs else "DIFFER ") + g)
        for d in diffs:
            print(textwrap.indent(d, "  "))
        failed += bool(diffs)
    print(f"{len(a.graphs) - failed - skipped} matched, {failed} differ, {skipped} skipped")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
