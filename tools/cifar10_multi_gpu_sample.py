#!/usr/bin/env python3
"""Writes graphs/tf/cifar10_multi_gpu_{1,2,4}.pb: TensorFlow's own CIFAR-10
multi-GPU tower trainer (tensorflow/models, tutorials/image/cifar10:
cifar10_multi_gpu_train.py as stored at commit
337c66ed3fd3274ee7e0c64a5937c3fb86546994 and cifar10.py as stored at commit
a2c785e02e44aa3d9f5317fe31f4c77d82b52087, the same era: tf.app.flags, each
tower building its own input), built by TensorFlow 2.21 at 1, 2 and 4
towers, one per GPU as the program asks.

cifar10.py as a whole and cifar10_multi_gpu_train.py's functions and flags,
with train()'s body up to `init = tf.global_variables_initializer()`, are
taken from the upstream files unchanged and run with these changes, each
marked where it is made below:
  1. the imports: `tf` is TensorFlow 2.21's `tf.compat.v1` after
     `disable_v2_behavior()` (a TF1 program: reference variables, v1 shapes
     and control flow), with `tf.contrib.deprecated.scalar_summary` and
     `histogram_summary` as `tf.compat.v1.summary.scalar` and `histogram`
     (contrib is gone; the same ops);
  2. `cifar10_input` gives only its constants (24-pixel images, 10
     classes, 50,000 and 10,000 examples per epoch);
  3. synthetic data: `cifar10.distorted_inputs()` returns a batch of
     seeded random images (uniform in [-1, 1), the range of the standardized
     images the reader returns) and labels, drawn anew each step, instead of
     reading the CIFAR-10 files through 16 reader threads and a shuffling
     queue (whose order is TensorFlow's scheduler's);
  4. a graph-level random seed (`set_random_seed(42)`), so the initial
     weights and the data are the same in every run (TensorFlow's and
     tfrun's);
  5. names a run can ask for: `loss` (an Identity of the last tower's loss,
     which the program prints) and `train` (a NoOp after `train_op`); the
     initializer is `init`, as TensorFlow names it;
  6. the towers' loop inside `with tf.variable_scope(tf.get_variable_scope()):`,
     the fix upstream made later (commit 00e6186d of the same file): without
     it `reuse_variables()` outlives the towers and the moving averages'
     variables cannot be made (TensorFlow >= 1.1 refuses).
The program's flags --batch_size (16 here, not 128: CI trains it on two
cores) and --num_gpus are set as a user sets them. Its session, queue
runners, summary writer and saver calls are not run: tfrun and
tools/train_conformance.py run the graph.

  tools/cifar10_multi_gpu_sample.py --train-source cifar10_multi_gpu_train.py \\
      --model-source cifar10.py [--python PY]

The sources are checked against their SHA-256 (read them from the
repository at those commits).
"""
import argparse
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_COMMIT = "337c66ed3fd3274ee7e0c64a5937c3fb86546994"
MODEL_COMMIT = "a2c785e02e44aa3d9f5317fe31f4c77d82b52087"
TRAIN_SHA256 = "d72bcd3bcc70af91d09b87aeb6f115044e43b417aebf9bed84cbdc9498df710d"
MODEL_SHA256 = "cbc6d10fe6d1bc2368b31e21999cdd2571e07d6e58ea2a233ba074a61f846d0b"
TOWER_COUNTS = [1, 2, 4]
BATCH_SIZE = 16
SEED = 42

BUILD = r'''
import ast, os, re, sys, tarfile, types, urllib
import tensorflow as tf_module
train_source, model_source, towers, batch_size, out = sys.argv[1:6]
# Change 1: TF1 under TensorFlow 2.21, contrib's deprecated summaries as v1's.
tf_module.compat.v1.disable_v2_behavior()
tf = tf_module.compat.v1
tf.contrib = types.SimpleNamespace(deprecated=types.SimpleNamespace(scalar_summary=tf.summary.scalar,
                                                                    histogram_summary=tf.summary.histogram))
# Change 2: cifar10_input's constants, not its reader.
cifar10_input = types.SimpleNamespace(IMAGE_SIZE=24, NUM_CLASSES=10, NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN=50000,
                                      NUM_EXAMPLES_PER_EPOCH_FOR_EVAL=10000)


def without_imports(path, drop=()):
    """The module's statements but its imports (given below) and `drop`."""
    tree = ast.parse(open(path).read())
    keep = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
            and not (isinstance(n, ast.FunctionDef) and n.name in drop)]
    return ast.Module(body=keep, type_ignores=[])


cifar10 = types.ModuleType("cifar10")
cifar10.__dict__.update(tf=tf, cifar10_input=cifar10_input, os=os, re=re, sys=sys, tarfile=tarfile, urllib=urllib)
exec(compile(without_imports(model_source), model_source, "exec"), cifar10.__dict__)
program = {"tf": tf, "cifar10": cifar10, "re": re, "os": os, "xrange": range}
train_tree = without_imports(train_source)
train_def = next(n for n in train_tree.body if isinstance(n, ast.FunctionDef) and n.name == "train")
graph_block = next(n for n in train_def.body if isinstance(n, ast.With))
last = next(i for i, n in enumerate(graph_block.body) if ast.unparse(n) == "init = tf.global_variables_initializer()")
# Change 6: the towers' loop in a variable scope of its own (upstream's later fix).
towers_at = next(i for i, n in enumerate(graph_block.body) if isinstance(n, ast.For))
scoped = ast.parse("with tf.variable_scope(tf.get_variable_scope()):\n    pass").body[0]
scoped.body = [graph_block.body[towers_at]]
graph_block.body[towers_at] = scoped
# Change 4 (first in the graph) and change 5 (after init); nothing after init runs.
graph_block.body = ast.parse("tf.set_random_seed(%(seed)d)").body + graph_block.body[:last + 1] + ast.parse(
    "tf.identity(loss, name='loss')\n"
    "with tf.control_dependencies([train_op]):\n"
    "    tf.no_op(name='train')\n"
    "built.append(tf.get_default_graph())").body
exec(compile(ast.fix_missing_locations(train_tree), train_source, "exec"), program)
tf.app.flags.FLAGS([train_source, "--batch_size=" + batch_size, "--num_gpus=" + towers])


def distorted_inputs():
    """Change 3: synthetic data, drawn anew each step."""
    images = tf.random_uniform([cifar10.FLAGS.batch_size, 24, 24, 3], -1.0, 1.0)
    labels = tf.random_uniform([cifar10.FLAGS.batch_size], 0, 10, dtype=tf.int32)
    return images, labels


cifar10.distorted_inputs = distorted_inputs
built = []
program["built"] = built
program["train"]()
g = built[0]
tf_module.io.write_graph(g.as_graph_def(), os.path.dirname(out), os.path.basename(out), as_text=False)
print(len(g.get_operations()))
'''


def check(path, digest, commit):
    with open(path, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
    if got != digest:
        sys.exit(f"{path}: SHA-256 {got}, not the file as stored at commit {commit} ({digest})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train-source", required=True, help=f"cifar10_multi_gpu_train.py at commit {TRAIN_COMMIT}")
    ap.add_argument("--model-source", required=True, help=f"cifar10.py at commit {MODEL_COMMIT}")
    ap.add_argument("--python", default=sys.executable, help="a Python with TensorFlow 2.21")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "graphs", "tf"))
    a = ap.parse_args()
    check(a.train_source, TRAIN_SHA256, TRAIN_COMMIT)
    check(a.model_source, MODEL_SHA256, MODEL_COMMIT)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    for towers in TOWER_COUNTS:
        out = os.path.abspath(os.path.join(a.out, f"cifar10_multi_gpu_{towers}.pb"))
        p = subprocess.run([a.python, "-c", BUILD % {"seed": SEED}, os.path.abspath(a.train_source),
                            os.path.abspath(a.model_source), str(towers), str(BATCH_SIZE), out],
                           env=env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{towers} towers: TensorFlow failed:\n{p.stderr[-3000:]}")
        print(f"{out}: {towers} tower{'s' if towers > 1 else ''}, {p.stdout.strip()} nodes")


if __name__ == "__main__":
    main()
