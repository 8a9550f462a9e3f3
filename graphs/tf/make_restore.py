#!/usr/bin/env python3
"""restore_run (issue 44): a TF1 graph whose Saver restores the checkpoint
testdata/checkpoints/dtypes/model (make_checkpoints.py) into variables of
every dtype it holds and a partitioned one, then prints each, as a
program that restores before it runs does. TensorFlow 2.21 builds the
graph, writes restore_run.pbtxt, and runs it from graphs/tf (the Saver's
filename is relative to it, as tfrun test runs the golden there).

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


if __name__ == "__main__":
    main()
