#!/usr/bin/env python3
"""restore_run and sm_tf1 (issue 44). restore_run: a TF1 graph whose Saver restores the checkpoint
testdata/checkpoints/dtypes/model (make_checkpoints.py) into variables of
every dtype it holds and a partitioned one, then prints each, as a
program that restores before it runs does. TensorFlow 2.21 builds the
graph, writes restore_run.pbtxt, and runs it from graphs/tf (the Saver's
filename is relative to it, as tfrun test runs the golden there).

sm_tf1: a SavedModel written by TensorFlow 1's Builder (tf.compat.v1),
its variables restored by TensorFlow 1's loader (its saver's restore op fed
variables/variables, then its main op, which adds 1 to a counter), then a
matmul of a fed x and the restored weights.

  /root/.cache/tfrun/tf-venv/bin/python graphs/tf/make_restore.py
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKPOINT = "../../testdata/checkpoints/dtypes/model"
FETCHES = ["f32", "f64", "i32", "i64", "b", "s", "h", "u8", "scalar", "part"]

PROGRAM = r'''
import sys
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
g = tf.Graph()
with g.as_default():
    values = {"f32": np.zeros([2, 2], np.float32), "f64": np.zeros([2], np.float64), "i32": np.zeros([3], np.int32),
              "i64": np.zeros([2], np.int64), "b": np.zeros([3], bool), "s": np.array([b"", b"", b""]),
              "h": np.zeros([2], np.float16), "u8": np.zeros([2], np.uint8), "scalar": np.float32(0)}
    for name, value in values.items():
        v = tf.compat.v1.Variable(value, name=name)
        tf.identity(v, name=name + "/value")
    part = tf.compat.v1.get_variable("part", shape=[6, 2], initializer=tf.compat.v1.zeros_initializer(),
                                     partitioner=tf.compat.v1.fixed_size_partitioner(3))
    tf.identity(tf.concat(list(part), 0), name="part/value")
    saver = tf.compat.v1.train.Saver(filename=sys.argv[1])
tf.io.write_graph(g.as_graph_def(), ".", "restore_run.pbtxt")
with tf.compat.v1.Session(graph=g) as s:
    s.run(saver.saver_def.restore_op_name)
    for name in sys.argv[2:]:
        print(s.run(name + "/value:0"), flush=True)
'''


SAVED_MODEL = r'''
import shutil, sys
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
shutil.rmtree("sm_tf1", ignore_errors=True)
g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    w = tf.compat.v1.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    b = tf.compat.v1.Variable([0.5, -0.5], name="b")
    c = tf.compat.v1.Variable(40.0, name="c")
    y = tf.identity(tf.matmul(x, w) + b, name="y")
    tf.identity(c, name="c_value")
    main_op = tf.group(c.assign_add(1.0), name="main_op")
    with tf.compat.v1.Session(graph=g) as s:
        s.run(tf.compat.v1.global_variables_initializer())
        s.run([w.assign(w * 2.0), b.assign(b + 1.0)])  # saved values, not the initial ones
        builder = tf.compat.v1.saved_model.Builder("sm_tf1")
        builder.add_meta_graph_and_variables(s, ["serve"], main_op=main_op)
        builder.save(as_text=False)
with tf.compat.v1.Session(graph=tf.Graph()) as s:
    tf.compat.v1.saved_model.loader.load(s, ["serve"], "sm_tf1")
    print(s.run("y:0", {"x:0": np.array([[1.0, 2.0]], np.float32)}), flush=True)
    print(s.run("c_value:0"), flush=True)
'''


def make_saved_model(env):
    p = subprocess.run([sys.executable, "-c", SAVED_MODEL], cwd=HERE, capture_output=True, text=True, env=env,
                       check=True)
    with open(os.path.join(HERE, "sm_tf1.run.expected"), "w") as f:
        f.write("# args: --fetch y --feed x=[[1.0,2.0]]\n" + p.stdout.splitlines(keepends=True)[0])
    with open(os.path.join(HERE, "sm_tf1.counter.expected"), "w") as f:
        f.write("# args: --fetch c_value\n" + p.stdout.splitlines(keepends=True)[1])
    for variant in ("run", "counter"):
        with open(os.path.join(HERE, f"sm_tf1.{variant}.expected-stderr"), "w") as f:
            f.write("")
    print(p.stdout)


def main():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run([sys.executable, "-c", PROGRAM, CHECKPOINT, *FETCHES], cwd=HERE, capture_output=True, text=True,
                       env=env, check=True)
    fetches = " ".join(f"--fetch {name}/value" for name in FETCHES)
    with open(os.path.join(HERE, "restore_run.run.expected"), "w") as f:
        f.write(f"# args: --targets save/restore_all {fetches}\n" + p.stdout)
    with open(os.path.join(HERE, "restore_run.run.expected-stderr"), "w") as f:
        f.write("")
    print(p.stdout)
    make_saved_model(env)


if __name__ == "__main__":
    main()
