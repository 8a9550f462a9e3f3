#!/usr/bin/env python3
"""The tensor bundles core/checkpoint's tests read, written by TensorFlow
2.21 (a V1 Saver's V2 checkpoint): dtypes/model, one variable of each dtype
tfrun stores (float32, float64, int32, int64, bool, string with an empty
element and a NUL byte, float16, uint8, a scalar) and a partitioned
variable (3 slices of [6, 2], each initialized with seed 3).

  /root/.cache/tfrun/tf-venv/bin/python testdata/checkpoints/make_checkpoints.py
"""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
tf.compat.v1.disable_eager_execution()
g = tf.Graph()
with g.as_default():
    tf.compat.v1.Variable(np.array([[1.5, -2.25], [3.0, 4.125]], np.float32), name="f32")
    tf.compat.v1.Variable(np.array([1e-300, 2.5], np.float64), name="f64")
    tf.compat.v1.Variable(np.array([1, -2, 3], np.int32), name="i32")
    tf.compat.v1.Variable(np.array([2**40, -5], np.int64), name="i64")
    tf.compat.v1.Variable(np.array([True, False, True]), name="b")
    tf.compat.v1.Variable(np.array([b"hello", b"", b"w\x00rld"]), name="s")
    tf.compat.v1.Variable(np.array([0.5, -1.0], np.float16), name="h")
    tf.compat.v1.Variable(np.array([0, 255], np.uint8), name="u8")
    tf.compat.v1.Variable(7.0, name="scalar")
    tf.compat.v1.get_variable("part", shape=[6, 2], initializer=tf.compat.v1.random_uniform_initializer(seed=3),
                              partitioner=tf.compat.v1.fixed_size_partitioner(3))
    saver = tf.compat.v1.train.Saver()
    with tf.compat.v1.Session() as s:
        s.run(tf.compat.v1.global_variables_initializer())
        print(saver.save(s, os.path.join(HERE, "dtypes", "model"), write_meta_graph=False, write_state=False))
