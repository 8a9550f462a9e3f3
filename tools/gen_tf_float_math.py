#!/usr/bin/env python3
"""Writes testdata/math/tf_float_math.MAKER.txt: TensorFlow 2.21's float32 Tanh,
Sigmoid, Exp, Log, Reciprocal and Rsqrt of a fixed set of inputs, as bits,
for kernels/cpu/tf_float_math_test.cc. Reciprocal and Rsqrt start from the
processor's estimate (rcpps, rsqrtps), whose bits differ between processor
makers: the file holds this machine's and is named for its maker
(CPUID's vendor, AuthenticAMD or GenuineIntel); the other columns are the
same on every maker's.

Each case is one tensor run through a TF1 Session on the CPU (the executor
flushes denormals, as tfrun's does): its length decides which elements take
Eigen's packet path (whole packets of 8) and which its scalar path (the rest),
so the cases have lengths 1 to 17 and two long ones (one ending in 5 scalar
elements). Inputs: the edge values (zeros, infinities, NaN, denormals, the
clamps of each approximation) and seeded random values over each
function's range.

  tools/gen_tf_float_math.py --python PY   (a Python with TensorFlow 2.21)
"""
import argparse
import os
import subprocess
import sys

SCRIPT = r'''
import numpy as np, tensorflow as tf
tf.compat.v1.disable_eager_execution()
f32 = np.float32
edges = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.17549435e-38,
                  1e-30, 4e-4, 0.5, 1.0, 2.0, 7.9, 7.90738964, 7.91, 8.0, 8.02, 9.0, -9.0,
                  16.6, 16.6355324, 16.7, 20.0, -20.0, 87.0, 87.1, -87.1, 88.7, 88.723, 88.73, 89.0,
                  100.0, -100.0, -103.9, -104.0, -104.1, -150.0, 3.4e38, -3.4e38, 0.70710677, 0.7071068,
                  1.4142135, 3.0e-39, 2.0**-126, 2.0**-127], f32)
rng = np.random.RandomState(2111)
wide = np.concatenate([rng.uniform(-20, 20, 600), rng.uniform(-1, 1, 300), rng.uniform(-110, 90, 300),
                       np.exp(rng.uniform(-80, 80, 400)), -np.exp(rng.uniform(-5, 5, 20))]).astype(f32)
inputs = [wide[:n] for n in range(1, 18)] + [np.concatenate([edges, wide]), np.concatenate([wide, edges])[:1005]]
g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float32, name='x')
    ops = [tf.tanh(x), tf.sigmoid(x), tf.exp(x), tf.math.log(x), tf.math.reciprocal(x), tf.math.rsqrt(x)]
with tf.compat.v1.Session(graph=g) as s:
    for v in inputs:
        outs = s.run(ops, {x: v})
        print('case %d' % v.size)
        for i in range(v.size):
            print(' '.join('%08x' % int(np.array(a[i], f32).view(np.uint32)) for a in [v] + outs))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", help="default: testdata/math/tf_float_math.MAKER.txt, this processor's maker")
    a = ap.parse_args()
    with open("/proc/cpuinfo") as f:
        lines = [l.split(":", 1)[1].strip() for l in f if l.startswith(("vendor_id", "model name"))]
    maker, model = lines[0], lines[1]
    if a.out is None:
        a.out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "math",
                             f"tf_float_math.{maker}.txt")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    p = subprocess.run([a.python, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True)
    with open(a.out, "w") as f:
        f.write("# TensorFlow 2.21 (CPU wheel, TF1 Session), written by tools/gen_tf_float_math.py:\n"
                "# per case its length, then per element the bits of x, tanh, sigmoid, exp, log,\n"
                f"# reciprocal, rsqrt (the last two as this {maker} processor computes them: {model}).\n")
        f.write(p.stdout)


if __name__ == "__main__":
    main()
