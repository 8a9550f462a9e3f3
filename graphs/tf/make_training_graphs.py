#!/usr/bin/env python3
"""Writes the training-kernel graphs of graphs/tf and their goldens, from
TensorFlow 2.21 itself (issue 30):

  training_ops.pbtxt   every op the tower sample and the random training
                       programs run besides the optimizers, on fixed inputs
                       (convolutions and their gradients, pooling, softmax
                       cross entropy, reductions, shape ops, comparisons);
  optimizers.pbtxt     the five optimizers for reference and resource
                       variables, AssignAdd/AssignSub, three steps each.

Each golden (`NAME.run.expected`) is what `print(sess.run(FETCH))` printed
for each fetch in TensorFlow's Session, in order; its `# args:` line
compares numbers within rtol 1e-6, atol 1e-6 (tfrun's kernels round like
TensorFlow's but do not sum in its order everywhere: docs/graph-format.md,
"Training"). Run with the CUDA wheel's Python (tools/setup_tensorflow.sh
cuda): python3 graphs/tf/make_training_graphs.py
"""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
tf.compat.v1.disable_eager_execution()


def training_ops():
    r = np.random.RandomState(7)
    fetches = []
    x = tf.constant(r.uniform(-1, 1, (2, 6, 5, 3)).astype(np.float32), name="x")
    w = tf.constant(r.uniform(-1, 1, (3, 2, 3, 4)).astype(np.float32), name="w")
    for padding, strides in (("SAME", 1), ("VALID", 2)):
        conv = tf.nn.conv2d(x, w, strides=strides, padding=padding, name=f"conv_{padding.lower()}")
        dy = tf.constant(r.uniform(-1, 1, conv.shape).astype(np.float32), name=f"dy_{padding.lower()}")
        dx = tf.compat.v1.nn.conv2d_backprop_input(tf.shape(x), w, dy, strides=[1, strides, strides, 1],
                                                   padding=padding, name=f"conv_dx_{padding.lower()}")
        dw = tf.compat.v1.nn.conv2d_backprop_filter(x, tf.shape(w), dy, strides=[1, strides, strides, 1],
                                                    padding=padding, name=f"conv_dw_{padding.lower()}")
        fetches += [conv, dx, dw]
    dilated = tf.nn.conv2d(x, w, strides=1, padding="SAME", dilations=2, name="conv_dilated")
    pool = tf.nn.max_pool2d(x, ksize=2, strides=2, padding="SAME", name="pool")
    pool_grad = tf.raw_ops.MaxPoolGrad(orig_input=x, orig_output=pool, grad=tf.ones_like(pool) * 1.5,
                                       ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME", name="pool_grad")
    valid_pool = tf.nn.max_pool2d(x, ksize=3, strides=[1, 2], padding="VALID", name="pool_valid")
    fetches += [dilated, pool, pool_grad, valid_pool]
    logits = tf.constant(r.uniform(-3, 3, (4, 5)).astype(np.float32), name="logits")
    labels = tf.constant(np.eye(5, dtype=np.float32)[[0, 3, 4, 1]], name="labels")
    loss, backprop = tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=logits, labels=labels, name="xent")
    fetches += [loss, backprop, tf.nn.softmax(logits, name="softmax"), tf.nn.log_softmax(logits, name="log_softmax")]
    t = tf.constant(r.uniform(-2, 2, (2, 3, 4)).astype(np.float32), name="t")
    fetches += [tf.reduce_sum(t, name="sum_all"), tf.reduce_sum(t, axis=[0, 2], name="sum_02"),
                tf.reduce_mean(t, axis=1, keepdims=True, name="mean_1"), tf.reduce_prod(t, axis=-1, name="prod_last"),
                tf.reduce_max(t, axis=[1, 2], name="max_12"), tf.reduce_min(t, axis=0, name="min_0"),
                tf.nn.l2_loss(t, name="l2"), tf.raw_ops.BiasAddGrad(out_backprop=t, name="bias_grad")]
    u = tf.constant(r.uniform(-2, 2, (3, 4)).astype(np.float32), name="u")
    v = tf.constant(r.uniform(0.5, 2, (4,)).astype(np.float32), name="v")
    fetches += [tf.tanh(u, name="tanh"), tf.sigmoid(u, name="sigmoid"), tf.square(u, name="square"),
                tf.negative(u, name="neg"), tf.math.rsqrt(v, name="rsqrt"), tf.sqrt(v, name="sqrt"),
                tf.exp(u, name="exp"), tf.math.log(v, name="log"), tf.realdiv(u, v, name="realdiv"),
                tf.maximum(u, 0.5, name="maximum"), tf.math.squared_difference(u, v, name="sqdiff"),
                tf.raw_ops.ReluGrad(gradients=u, features=u - 0.5, name="relu_grad"),
                tf.raw_ops.SigmoidGrad(y=tf.sigmoid(u), dy=u, name="sigmoid_grad"),
                tf.raw_ops.TanhGrad(y=tf.tanh(u), dy=u, name="tanh_grad")]
    cond = tf.greater_equal(u, 0.0, name="ge")
    fetches += [cond, tf.where(cond, u, tf.zeros([]), name="select_v2"), tf.cast(cond, tf.float32, name="cast"),
                tf.ones_like(u, name="ones_like"), tf.zeros_like(u, name="zeros_like")]
    k = tf.constant([[1, 2, 3], [4, 5, 6]], name="k")
    fetches += [tf.expand_dims(k, -1, name="expand"), tf.squeeze(tf.expand_dims(k, 1), name="squeeze"),
                tf.stack([k, k * 2], axis=1, name="pack"), tf.slice(k, [0, 1], [-1, 2], name="slice"),
                tf.tile(k, [2, 3], name="tile"), tf.gather(k, [2, 0, 2], axis=1, name="gather"),
                tf.math.floormod(tf.constant([-7, 7, 5]), tf.constant([3, -3, 5]), name="floormod"),
                tf.range(1, 10, 3, name="range"), tf.size(t, name="size"), tf.rank(t, name="rank")]
    s0, s1 = tf.raw_ops.BroadcastGradientArgs(s0=[2, 3, 1], s1=[3, 4], name="bga")
    t0, t1 = tf.raw_ops.BroadcastGradientArgs(s0=[1, 3], s1=[3], name="bga_ones")
    shapes = tf.raw_ops.ShapeN(input=[t, u], name="shape_n")
    offsets = tf.raw_ops.ConcatOffset(concat_dim=1, shape=[[2, 3, 4], [2, 5, 4]], name="concat_offset")
    fetches += [s0, s1, t0, t1, shapes[0], shapes[1], offsets[0], offsets[1]]
    return fetches


def optimizers():
    fetches = []
    r = np.random.RandomState(11)
    x = tf.constant(r.uniform(-1, 1, (3, 4)).astype(np.float32), name="x")
    y = tf.constant(r.uniform(-1, 1, (3, 2)).astype(np.float32), name="y")
    steps = []
    # One optimizer per variable: Adam's beta powers belong to its
    # optimizer, and two steps sharing them would race in TensorFlow.
    for name, make in (("sgd", lambda: tf.compat.v1.train.GradientDescentOptimizer(0.1)),
                       ("momentum", lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9)),
                       ("nesterov", lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)),
                       ("adam", lambda: tf.compat.v1.train.AdamOptimizer(0.01)),
                       ("adagrad", lambda: tf.compat.v1.train.AdagradOptimizer(0.1)),
                       ("rmsprop", lambda: tf.compat.v1.train.RMSPropOptimizer(0.01, momentum=0.5))):
        for resource in (False, True):
            opt = make()
            scope = f"{name}_{'resource' if resource else 'ref'}"
            with tf.compat.v1.variable_scope(scope):
                w = tf.compat.v1.get_variable("w", initializer=r.uniform(-1, 1, (4, 2)).astype(np.float32),
                                              use_resource=resource)
                loss = tf.reduce_mean(tf.square(tf.tanh(tf.matmul(x, w)) - y), name="loss")
                steps.append(opt.minimize(loss, name="step"))
                fetches.append(w)
    with tf.compat.v1.variable_scope("counters"):
        for resource in (False, True):
            c = tf.compat.v1.get_variable(f"c_{'resource' if resource else 'ref'}", initializer=[1.0, 2.0],
                                          use_resource=resource)
            steps.append(c.assign_add([0.5, 0.25]))
            steps.append(c.assign_sub([0.125, 0.125]))
            fetches.append(c)
    tf.group(*steps, name="train")
    tf.compat.v1.global_variables_initializer()
    return fetches


def nan_loss():
    """A loss that overflows and turns NaN by the third step: printed as
    TensorFlow prints it, never a crash (issue 30, item 8)."""
    w = tf.compat.v1.get_variable("w", initializer=[30.0, -2.0], use_resource=True)
    loss = tf.reduce_sum(tf.exp(w) * w, name="loss")
    tf.compat.v1.train.GradientDescentOptimizer(1e12).minimize(loss, name="train")
    tf.compat.v1.global_variables_initializer()


def write_steps(name, build, steps):
    """A training loop's golden: `print(sess.run([loss]))` then
    `sess.run(train)`, `steps` times (the loss is read before the update,
    as sess.run([loss, train]) reads it)."""
    g = tf.Graph()
    with g.as_default():
        build()
    tf.io.write_graph(g.as_graph_def(), HERE, f"{name}.pbtxt", as_text=True)
    lines = []
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run("init")
        for _ in range(steps):
            lines.append(str(sess.run(["loss:0"])))
            sess.run("train")
    with open(os.path.join(HERE, f"{name}.steps.expected"), "w") as f:
        f.write(f"# args: --init init --targets train --fetch loss --steps {steps}\n" + "\n".join(lines) + "\n")
    open(os.path.join(HERE, f"{name}.steps.expected-stderr"), "w").close()
    print(f"{name}: {steps} steps")


def write(name, build, runs_train):
    g = tf.Graph()
    with g.as_default():
        fetches = build()
        names = []
        for f in fetches:
            t = f if isinstance(f, tf.Tensor) else tf.convert_to_tensor(f)
            names.append(t.name[:-2] if t.name.endswith(":0") else t.name)
    tf.io.write_graph(g.as_graph_def(), HERE, f"{name}.pbtxt", as_text=True)
    lines = []
    with tf.compat.v1.Session(graph=g) as sess:
        if runs_train:
            sess.run("init")
            for _ in range(3):
                sess.run("train")
        for n in names:
            lines.append(str(sess.run(n if ":" in n else n + ":0")))
    args = "--rtol 1e-6 --atol 1e-6"
    if runs_train:
        args = "--targets init --targets train --targets train --targets train " + args
    args += "".join(f" --fetch {n}" for n in names)
    with open(os.path.join(HERE, f"{name}.run.expected"), "w") as f:
        f.write(f"# args: {args}\n" + "\n".join(lines) + "\n")
    open(os.path.join(HERE, f"{name}.run.expected-stderr"), "w").close()
    print(f"{name}: {len(names)} fetches")


if __name__ == "__main__":
    write("training_ops", training_ops, False)
    write("optimizers", optimizers, True)
    write_steps("nan_loss", nan_loss, 4)
