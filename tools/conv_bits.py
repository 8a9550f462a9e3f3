#!/usr/bin/env python3
"""Convolutions bit for bit against TensorFlow 2.21's (oneDNN on, its
default): Conv2D + BiasAdd + Relu (which TensorFlow's remapper fuses),
Conv2DBackpropFilter and Conv2DBackpropInput on CIFAR-10's two layers and
smaller geometries (VALID, uneven filters, a stride of 2). TensorFlow
computes each on random inputs; the graph tfrun runs holds its results as
constants and counts, per output, the elements that differ and the largest
relative difference. Which of them agree to the bit depends on the
processor (oneDNN picks its kernels by instruction set): this prints what
it finds, and exits 1 only where tfrun fails to run.

  python3 tools/conv_bits.py --python ~/.cache/tfrun/tf-venv/bin/python [--tfrun bazel-bin/cli/tfrun]
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

BUILD = r'''
import sys, numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
work = sys.argv[1]
rng = np.random.default_rng(2)
# (input, filter, padding, stride)
cases = [((16, 24, 24, 3), (5, 5, 3, 64), "SAME", 1), ((16, 12, 12, 64), (5, 5, 64, 64), "SAME", 1),
         ((4, 9, 7, 5), (3, 2, 5, 8), "VALID", 1), ((4, 8, 8, 16), (4, 4, 16, 32), "SAME", 1),
         ((4, 9, 9, 16), (3, 3, 16, 32), "SAME", 2)]
g = tf.Graph(); feeds = {}; outs = []
with g.as_default():
    for n, (ish, fsh, pad, st) in enumerate(cases):
        x = tf.compat.v1.placeholder(tf.float32, ish, name=f"x{n}")
        f = tf.compat.v1.placeholder(tf.float32, fsh, name=f"f{n}")
        b = tf.compat.v1.placeholder(tf.float32, fsh[3:], name=f"b{n}")
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, f, st, pad), b), name=f"conv{n}")
        dy = tf.compat.v1.placeholder(tf.float32, y.shape, name=f"dy{n}")
        strides = [1, st, st, 1]
        dw = tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=tf.constant(fsh), out_backprop=dy,
                                             strides=strides, padding=pad, name=f"filter_grad{n}")
        dx = tf.raw_ops.Conv2DBackpropInput(input_sizes=tf.constant(ish), filter=f, out_backprop=dy,
                                            strides=strides, padding=pad, name=f"input_grad{n}")
        for name, shape in ((f"x{n}", ish), (f"f{n}", fsh), (f"b{n}", fsh[3:]), (f"dy{n}", y.shape)):
            v = rng.standard_normal(shape).astype(np.float32)
            np.save(f"{work}/{name}.npy", v)
            feeds[name + ":0"] = v
        outs += [y, dw, dx]
    with tf.compat.v1.Session() as s:
        results = s.run(outs, feeds)
checked = tf.Graph()
with checked.as_default():
    tf.import_graph_def(g.as_graph_def(), name="")
    for out, value in zip(outs, results):
        t, want = checked.get_tensor_by_name(out.name), tf.constant(value)
        tf.reduce_sum(tf.cast(tf.not_equal(t, want), tf.int32), name="differ_" + out.op.name)
        tf.reduce_max(tf.abs(t - want) / (tf.abs(want) + 1e-30), name="relative_" + out.op.name)
        print(out.op.name, out.shape.num_elements())
open(f"{work}/checked.pb", "wb").write(checked.as_graph_def().SerializeToString())
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", required=True, help="a Python with TensorFlow 2.21")
    ap.add_argument("--tfrun", default=os.path.join(ROOT, "bazel-bin", "cli", "tfrun"))
    ap.add_argument("--tfrun-args", default="", help="more flags for tfrun (\"--inter-op-threads 1\")")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="conv_bits.") as work:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
        built = subprocess.run([a.python, "-c", BUILD, work], env=env, capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"TensorFlow failed:\n{built.stderr[-2000:]}")
        outputs = [line.split() for line in built.stdout.splitlines()]
        args = [a.tfrun, os.path.join(work, "checked.pb")] + a.tfrun_args.split()
        for name in sorted({f[:-4] for f in os.listdir(work) if f.endswith(".npy")}):
            args += ["--feed", f"{name}=@{os.path.join(work, name)}.npy"]
        for name, _ in outputs:
            args += ["--fetch", "differ_" + name, "--fetch", "relative_" + name]
        ran = subprocess.run(args, capture_output=True, text=True)
        if ran.returncode != 0:
            sys.exit(f"tfrun failed:\n{ran.stderr[-2000:]}")
        printed = ran.stdout.split()
        for (name, size), differ, relative in zip(outputs, printed[0::2], printed[1::2]):
            verdict = "bit-equal" if differ == "0" else f"{differ} of {size} differ, largest relative {relative}"
            print(f"{name:16s} {verdict}")


if __name__ == "__main__":
    main()
