#!/usr/bin/env python3
"""Writes graphs/tf/golbin_tower_{1,2,4,8}.pb: the seed's tower sample as
its author wrote it (golbin/TensorFlow-Multi-GPUs, many-GPUs-MNIST.py at
commit 1c4e45fea22c49d6d86c30adff563ef1e89fd52c), built by TensorFlow 2.21
with tf_keras's legacy `tf.layers` (TF_USE_LEGACY_KERAS=1), at 1, 2, 4
and 8 towers, one per GPU as the program asks.

The program's own `model()` and its main block up to `init =
tf.global_variables_initializer()` (its settings, placeholders, towers,
loss and optimizer) are taken from the upstream file unchanged and run
with these changes, each marked where it is made below:
  1. `tf` is TensorFlow 2.21's `tf.compat.v1` (the program is TF1), with
     `tf.contrib.layers.flatten` as `tf.compat.v1.layers.flatten` (contrib
     is gone; the same Flatten);
  2. the GPU count is the tower count asked for, not the machine's (the
     line `gpu_num = check_available_gpus()` is left out);
  3. a graph-level random seed (`set_random_seed(42)`), so the dropout
     masks and initial weights are the same in every run (TensorFlow's and
     tfrun's);
  4. the loss and the minimize op get names a run can ask for: `loss` (an
     Identity of it) and `train` (a NoOp after it); the placeholders are
     `Placeholder` (images) and `Placeholder_1` (labels), the initializer
     `init`, as TensorFlow names them.
The program's MNIST reader and its training loop are not run: tfrun and
tools/train_conformance.py feed the same batches to both.

  tools/golbin_tower_sample.py --source many-GPUs-MNIST.py [--python PY]

The source is checked against its SHA-256 at the pinned commit (fetch the
repository at that commit, or download the raw file).
"""
import argparse
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMMIT = "1c4e45fea22c49d6d86c30adff563ef1e89fd52c"
SOURCE_SHA256 = "5876a0d79b191650faedc23c5ca7414cf8d39fae96ec8360ec3dba5e762cfaa7"
TOWER_COUNTS = [1, 2, 4, 8]
SEED = 42

BUILD = r'''
import ast, os, sys, types
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf_module
tf_module.compat.v1.disable_eager_execution()
source, towers, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(source).read()
tree = ast.parse(text)
model_def = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "model")
main = next(n for n in tree.body if isinstance(n, ast.If))  # if __name__ == '__main__':
lines = text.splitlines()
body = lines[main.body[0].lineno - 1:main.body[-1].end_lineno]
last = next(i for i, l in enumerate(body) if l.strip().startswith("init = tf.global_variables_initializer()"))
# Change 2: the tower count, not the machine's GPUs (the line that asks is left out).
graph_lines = "\n".join(l[4:] for l in body[:last + 1] if l.strip() != "gpu_num = check_available_gpus()")
# Change 1: TF1's names under TensorFlow 2.21.
tf = tf_module.compat.v1
tf.contrib = types.SimpleNamespace(layers=types.SimpleNamespace(flatten=tf.layers.flatten))
g = tf.Graph()
with g.as_default():
    tf.set_random_seed(%(seed)d)  # Change 3: the same dropout masks and weights in every run.
    scope = {"tf": tf, "gpu_num": towers}  # Change 2 (above): the tower count.
    exec(compile(ast.Module(body=[model_def], type_ignores=[]), source, "exec"), scope)
    exec(compile(graph_lines, source, "exec"), scope)
    # Change 4: names for the nodes a run asks for.
    tf.identity(scope["loss"], name="loss")
    with tf.control_dependencies([scope["optimizer"]]):
        tf.no_op(name="train")
    print(scope["X"].op.name, scope["Y"].op.name)
tf_module.io.write_graph(g.as_graph_def(), os.path.dirname(out), os.path.basename(out), as_text=False)
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True, help=f"many-GPUs-MNIST.py at commit {COMMIT}")
    ap.add_argument("--python", default=sys.executable, help="a Python with TensorFlow 2.21 and tf_keras")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "graphs", "tf"))
    a = ap.parse_args()
    with open(a.source, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != SOURCE_SHA256:
        sys.exit(f"{a.source}: SHA-256 {digest}, not the file at commit {COMMIT} ({SOURCE_SHA256})")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    for towers in TOWER_COUNTS:
        out = os.path.abspath(os.path.join(a.out, f"golbin_tower_{towers}.pb"))
        p = subprocess.run([a.python, "-c", BUILD % {"seed": SEED}, a.source, str(towers), out], env=env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{towers} towers: TensorFlow failed:\n{p.stderr[-3000:]}")
        print(f"{out}: {towers} tower{'s' if towers > 1 else ''} (placeholders {p.stdout.strip()})")


if __name__ == "__main__":
    main()
