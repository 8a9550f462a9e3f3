#!/usr/bin/env python3
"""TensorFlow programs that write the graphs in this folder, and the goldens
beside them: what TensorFlow 2.21 itself prints when a Session places each
graph (testdata/golden/DERIVATIONS.md, "graphs/tf").

Run under TensorFlow 2.21's CUDA wheel (tools/setup_tensorflow.sh cuda):

  $(tools/setup_tensorflow.sh cuda) graphs/tf/make_graphs.py [--only CASE...]

Each case builds a tf.compat.v1 graph, writes it (tf.io.write_graph, text or
binary, or export_meta_graph), places it in a Session with
log_device_placement under the case's ConfigProto (and TF_XLA_FLAGS where it
asks for XLA devices: each case runs in a process of its own), and writes
NAME.VARIANT.expected with the `# args:` tfrun takes for the same setup, the
device mapping TensorFlow logs and the placement lines it prints, and
NAME.VARIANT.expected-stderr with TensorFlow's error text, if any (from
"Cannot ..." on, as tfrun prints it after the file's location). Soft
placement cases run tfrun with --quiet: the lines tfrun adds on standard
error about what soft placement moved are tfrun's own, not TensorFlow's.
"""
import functools
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from random_tf1_conformance import normalized  # noqa: E402  (trailing blanks, sorted Node attrs)


def towers(tf):
    """Two towers of a dense layer on CPU:1 and CPU:2, reference variables
    on CPU:0, Adam with gradients colocated with their ops: the multi-tower
    sample's shape on three CPUs."""
    with tf.device("/cpu:0"):
        w = tf.compat.v1.Variable(tf.random.normal([4, 4], seed=1), name="w", use_resource=False)
        b = tf.compat.v1.Variable(tf.zeros([4]), name="b", use_resource=False)
    losses = []
    for t in range(2):
        with tf.device(f"/cpu:{t + 1}"), tf.name_scope(f"tower{t}"):
            x = tf.constant([[1., 2., 3., 4.], [0.5, -1., 2., 0.]], name="x")
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
            losses.append(tf.reduce_mean(tf.square(h)))
    loss = tf.add_n(losses, name="loss")
    tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss, colocate_gradients_with_ops=True, name="train")
    tf.compat.v1.global_variables_initializer()


def resource_xla(tf):
    """A resource variable on CPU:2 and an assign_add asked for on XLA_CPU:0:
    the resource edge keeps it with the variable (the issue's example)."""
    with tf.device("/cpu:2"):
        v = tf.compat.v1.Variable(tf.ones([2]), name="v", use_resource=True)
    with tf.device("/device:XLA_CPU:0"):
        v.assign_add(tf.ones([2]), name="add")
    tf.compat.v1.global_variables_initializer()


def adam_xla(tf):
    """Adam over reference variables asked for on XLA_CPU:0, which has no
    ApplyAdam kernel: the group's error and its Colocation Debug Info."""
    with tf.device("/device:XLA_CPU:0"):
        w = tf.compat.v1.Variable(tf.ones([2, 2]), name="w", use_resource=False)
    loss = tf.reduce_sum(tf.matmul(w, w))
    tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss, name="train")
    tf.compat.v1.global_variables_initializer()


def colocated_conflict(tf):
    """c colocated with a (`_class: loc:@a`) but asking for CPU:2 while a
    asks for CPU:1: a Session refuses to merge them; Python's
    import_graph_def first gives c a's device (notes 2.8)."""
    with tf.device("/cpu:1"):
        a = tf.constant([1.0, 2.0], name="a")
    with tf.compat.v1.colocate_with(a):
        c = tf.negative(a, name="c")
    c.op._set_device("/device:CPU:2")
    tf.identity(c, name="init")


def shape_of(tf):
    """Heuristic B: a Shape without a device goes with its input y on CPU:1
    rather than to the first candidate, CPU:0; Size likewise with z on
    CPU:2. (placeholder_with_default keeps the shapes unknown, so that
    tf.shape and tf.size are ops, not folded to constants.)"""
    x = tf.compat.v1.placeholder_with_default(tf.constant([1.0, -2.0]), shape=None, name="x")
    with tf.device("/cpu:1"):
        y = tf.negative(x, name="y")
    with tf.device("/cpu:2"):
        z = tf.abs(x, name="z")
    tf.group(tf.shape(y, name="s"), tf.size(z, name="n"), name="init")


def const_group(tf):
    """Heuristic A for a group of generators: b colocated with a, both
    Consts without a device, consumed by c on CPU:1. The first of them
    placed follows its consumer, and takes the group along."""
    a = tf.constant([1.0, 2.0], name="a")
    with tf.compat.v1.colocate_with(a):
        b = tf.constant([3.0, 4.0], name="b")
    with tf.device("/cpu:1"):
        c = tf.add(a, b, name="c")
    tf.identity(c, name="init")


def while_cond(tf):
    """v1 control flow (issue 41): a while loop whose body multiplies by a
    Const on CPU:1 (a loop-invariant Enter), then a cond on CPU:2 over a
    placeholder_with_default and the loop's result."""
    tf.compat.v1.disable_control_flow_v2()
    with tf.device("/cpu:1"):
        x = tf.constant(2.0, name="x")
    i0 = tf.constant(0, name="i0")
    r = tf.compat.v1.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * x), [i0, tf.constant(1.0)], name="loop")
    p = tf.compat.v1.placeholder_with_default(True, [], name="p")
    with tf.device("/cpu:2"):
        tf.compat.v1.cond(p, lambda: r[1] + 1.0, lambda: r[1] - 1.0, name="c")


def identity_input(tf):
    """Heuristic B's MatchIdentityOperation (issue 41): an Identity without
    a device between two nodes that ask for CPU:2 goes to CPU:2 with its
    input, not to CPU:0."""
    with tf.device("/cpu:2"):
        x = tf.constant(3.0, name="x")
        mul = tf.multiply(x, 2.0, name="mul")
    i = tf.identity(mul, name="i")
    with tf.device("/cpu:2"):
        tf.add(i, 1.0, name="add")


def ref_edge_request(tf):
    """A reference edge overrides a request (issue 41): an AssignAdd asked
    for on CPU:2 writes a variable on CPU:1, so it goes to CPU:1 and
    TensorFlow logs that it ignored the request. Python colocates an op
    with its reference inputs, device included, so the request is set on
    the op afterwards, as a GraphDef edited by hand or by a tool has it
    (the CIFAR-10 trainer's dequeues get theirs from device scopes)."""
    with tf.device("/cpu:1"):
        v = tf.compat.v1.Variable([1.0], use_resource=False, name="v")
    add = tf.compat.v1.assign_add(v, [2.0], name="as")
    add.op._set_device("/device:CPU:2")


def accumulate_n(tf):
    """AccumulateNV2RemovePass (issue 41): an AccumulateNV2 asked for on
    CPU:1 becomes its accumulator's nodes, "acc/Internal/_N", on CPU:1;
    its consumer `y` then reads the DestroyTemporaryVariable, a node added
    after it."""
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
    b = tf.constant([[1.0, 0.0], [0.0, 1.0]], name="b")
    with tf.device("/CPU:1"):
        acc = tf.raw_ops.AccumulateNV2(inputs=[a, b], shape=[2, 2], name="acc")
    tf.multiply(acc, 2.0, name="y")


def accumulate_n_loop(tf):
    """AccumulateNV2 in a while loop of parallel_iterations 10 becomes an
    AddN of its name (v1 control flow)."""
    tf.compat.v1.disable_control_flow_v2()
    x = tf.constant([1.0, 2.0], name="x")

    def body(i, v):
        return i + 1, tf.raw_ops.AccumulateNV2(inputs=[v, x], shape=[2], name="acc")

    tf.compat.v1.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x], name="loop")


def parallel_concat(tf):
    """ParallelConcatRemovePass (issue 41): a ParallelConcat on CPU:2 of
    two rows becomes a buffer, an update per row and an Identity of its
    name."""
    a = tf.constant([[1.0, 2.0]], name="a")
    b = tf.constant([[3.0, 4.0]], name="b")
    with tf.device("/CPU:2"):
        tf.raw_ops.ParallelConcat(values=[a, b], shape=[2, 2], name="pc")


def reshape_fill(tf):
    """A graph tfrun runs, not only places: MatMul and AddV2 (TF 2's `+`)
    on CPU:1, Reshape with -1 on CPU:2, Shape of a tensor whose shape the
    graph knows only in part (so it is an op, not a constant), and Fill
    over that shape."""
    x = tf.compat.v1.placeholder_with_default(tf.constant([[1.0, 2.0], [3.0, 4.0]]), shape=[None, 2], name="x")
    with tf.device("/cpu:1"):
        y = tf.matmul(x, x, name="y")
        z = tf.add(y, x, name="z")
    with tf.device("/cpu:2"):
        tf.reshape(z, [-1], name="r")
    tf.fill(tf.shape(z, name="s"), 0.5, name="f")


def variables_run(tf):
    """TF1 reference variables run end to end: initialised by the
    program's own init, then doubled by an Assign (a second run, after
    init), then read: tfrun's --targets init --targets double."""
    w = tf.compat.v1.Variable(tf.ones([2, 2]), name="w", use_resource=False)
    b = tf.compat.v1.Variable(tf.zeros([2]), name="b", use_resource=False)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
    tf.add(tf.matmul(x, w), b, name="y")
    double = tf.compat.v1.assign(w, w * 2.0, name="double")
    tf.compat.v1.add_to_collection("train_op", double.op)  # as minimize() files a training step
    tf.compat.v1.global_variables_initializer()


def initializers_run(tf):
    """The initialisers tf.compat.v1.get_variable and tf.Variable write,
    seeded by the graph (set_random_seed: each op's seed2 is its id) and by
    an op seed: RandomUniform (glorot_uniform), RandomStandardNormal,
    TruncatedNormal, zeros; run end to end: init, then the values."""
    tf.compat.v1.set_random_seed(42)
    w = tf.compat.v1.get_variable("w", [3, 4], initializer=tf.compat.v1.glorot_uniform_initializer(),
                                  use_resource=False)
    tf.compat.v1.Variable(tf.random.normal([2, 3], seed=7), name="v", use_resource=False)
    tf.compat.v1.Variable(tf.random.truncated_normal([5], stddev=0.1), name="t", use_resource=False)
    b = tf.compat.v1.get_variable("b", [4], initializer=tf.compat.v1.zeros_initializer(), use_resource=False)
    tf.add(tf.matmul(tf.ones([2, 3]), w), b, name="y")
    tf.compat.v1.global_variables_initializer()


def resource_run(tf):
    """Resource variables, TensorFlow 2's default also in graph mode:
    VarHandleOp, AssignVariableOp (init), ReadVariableOp, VarIsInitializedOp
    and an assign_add that is placed, not run."""
    w = tf.compat.v1.get_variable("w", [2, 2], initializer=tf.compat.v1.ones_initializer(), use_resource=True)
    tf.matmul(tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x"), w, name="y")
    w.assign_add(tf.ones([2, 2]), name="inc")
    tf.compat.v1.global_variables_initializer()


def tower_sample(tf, towers, colocate, device):
    """The multi-GPU tower sample: a fed batch split over `towers` devices,
    each tower a small MNIST convnet (two conv + max-pool layers, a dense
    layer with dropout, logits; variables made by the first tower, on its
    device, and reused), softmax cross entropy per tower, the towers' losses
    concatenated and averaged, Adam, and the initializer. `device` is
    "/gpu:{}" (the sample) or "/cpu:{}" (the same graph on CPUs, which
    TensorFlow can place here)."""
    tf.compat.v1.set_random_seed(1)
    x = tf.compat.v1.placeholder(tf.float32, [None, 28, 28, 1], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 10], name="y")
    xs = tf.split(x, towers)
    ys = tf.split(y, towers)
    losses = []

    def weights(name, shape):
        w = tf.compat.v1.get_variable(f"{name}/w", shape,
                                      initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1))
        b = tf.compat.v1.get_variable(f"{name}/b", shape[-1:], initializer=tf.compat.v1.constant_initializer(0.1))
        return w, b

    for i in range(towers):
        with tf.device(device.format(i)), tf.compat.v1.name_scope(f"tower_{i}"), \
                tf.compat.v1.variable_scope("model", reuse=i > 0):
            h = xs[i]
            for name, c_in, c_out in (("conv1", 1, 32), ("conv2", 32, 64)):
                w, b = weights(name, [5, 5, c_in, c_out])
                h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME"), b))
                h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="SAME")
            h = tf.reshape(h, [-1, 7 * 7 * 64])
            w, b = weights("fc1", [7 * 7 * 64, 1024])
            h = tf.nn.dropout(tf.nn.relu(tf.nn.bias_add(tf.matmul(h, w), b)), rate=0.5)
            w, b = weights("fc2", [1024, 10])
            logits = tf.nn.bias_add(tf.matmul(h, w), b)
            losses.append(tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=ys[i], logits=logits)))
    loss = tf.reduce_mean(tf.concat([tf.reshape(t, [1]) for t in losses], 0), name="loss")
    # Important! colocate_gradients_with_ops=True computes each tower's
    # gradients on its own device; without it they go where the variables
    # are (the first tower's).
    tf.compat.v1.train.AdamOptimizer(0.001).minimize(loss, colocate_gradients_with_ops=colocate, name="train")
    tf.compat.v1.global_variables_initializer()


TOWER_COUNTS = [1, 2, 4, 8]
P40_TOPOLOGY = os.path.join(HERE, "..", "..", "testdata", "topologies", "p40_x8.yaml")


def blog_addn(tf):
    """The TF 1.x blog's AddN (graphs/addn.yaml's program)."""
    a = tf.constant([1.0, 2.0, 3.0], shape=[3], name="a")
    b = tf.constant([1.0, 2.0, 3.0], shape=[3], name="b")
    tf.add_n([a, b], name="c")


def blog_variables(tf):
    """The TF 1.x blog's variables, one asked for on a GPU
    (graphs/tf1_blog_variables.yaml's program)."""
    with tf.device("/cpu:0"):
        tf.compat.v1.Variable(0, name="a_cpu", use_resource=False)
    with tf.device("/gpu:0"):
        tf.compat.v1.Variable(0, name="a_gpu", use_resource=False)
    tf.compat.v1.global_variables_initializer()


def blog_cluster_hello(tf):
    """The TF 1.x blog's ClusterSpec example's graph (graphs/cluster_hello.yaml):
    one string constant, run on the first task's server."""
    tf.constant("Hello ,this is the server1!")


def tutorial_matmul(tf):
    """The "Using GPUs" tutorial's first example (graphs/matmul.yaml)."""
    a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3], name="a")
    b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2], name="b")
    tf.matmul(a, b)


def tutorial_multi_tower(tf):
    """The "Using GPUs" tutorial's towers on GPUs 2 and 3, summed on the CPU
    (graphs/multi_tower.yaml)."""
    c = []
    for d in ["/gpu:2", "/gpu:3"]:
        with tf.device(d):
            a = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
            b = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2])
            c.append(tf.matmul(a, b))
    with tf.device("/cpu:0"):
        tf.add_n(c)


# The same programs as graphs/*.yaml, written by TensorFlow: (graph file,
# variant, the YAML golden of the same run, the flags that give it). tfrun
# must print for TensorFlow's GraphDef what it prints for the YAML file
# (those goldens say where their output comes from).
SAME_AS_YAML = [
    ("blog_addn.pbtxt", "same_as_yaml", "addn.tf2", "--log-placement --fetch c"),
    ("blog_addn.pbtxt", "same_as_yaml_gpu", "addn.gpu1_addn-tf2",
     "--log-placement --devices ../../testdata/topologies/k40c_x1.yaml --fetch c"),
    ("blog_variables.pbtxt", "same_as_yaml", "tf1_blog_variables.tf-log",
     "--log-placement --soft-placement --targets init"),
    ("tutorial_matmul.pbtxt", "same_as_yaml", "matmul.gpu1_matmul-tf2",
     "--log-placement --devices ../../testdata/topologies/k40c_x1.yaml --fetch MatMul"),
    ("tutorial_multi_tower.pbtxt", "same_as_yaml", "multi_tower.gpu4_multi_tower-tf2",
     "--log-placement --soft-placement --devices ../../testdata/topologies/k20m_x4.yaml --fetch AddN"),
]


def ps_worker(tf, train=False):
    """The TF 1.x blog's distributed training shape: tf.compat.v1.train.
    replica_device_setter puts the variables (and their init) on the
    parameter server task and the rest on worker 0, as the program's
    `with tf.device(replica_device_setter(...))` does. With `train`, its
    training step too: a loss, a global step and
    GradientDescentOptimizer.minimize (placed on the cluster: tfrun runs no
    gradient ops yet)."""
    cluster = tf.train.ClusterSpec(PS_WORKER_CLUSTER)
    with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                                       cluster=cluster)):
        w = tf.compat.v1.Variable(tf.ones([2, 2]), name="w", use_resource=False)
        b = tf.compat.v1.Variable(tf.zeros([2]), name="b", use_resource=False)
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
        y = tf.add(tf.matmul(x, w), b, name="y")
        if train:
            loss = tf.reduce_mean(tf.square(y), name="loss")
            step = tf.compat.v1.train.get_or_create_global_step()
            tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step, name="train")
        tf.compat.v1.global_variables_initializer()


def v1_control_flow_on_ps_worker(tf):
    """v1 control flow (tf.compat.v1.disable_control_flow_v2), under the
    ps_worker programs' device function: variables on the parameter
    server, the rest on worker 0."""
    tf.compat.v1.disable_control_flow_v2()
    cluster = tf.train.ClusterSpec(PS_WORKER_CLUSTER)
    return tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(worker_device="/job:worker/task:0",
                                                                        cluster=cluster))


def ps_worker_loop(tf):
    """Control flow across the cluster's tasks (v1 control flow, as a TF1
    program writes it): replica_device_setter puts `w` on the parameter
    server and the loop on worker 0; each iteration multiplies on worker 1
    (reading `w` from the parameter server) and a tf.cond on worker 1
    picks its branch from that product, so values, dead branches and the
    loop's iterations cross all three tasks."""
    with v1_control_flow_on_ps_worker(tf):
        w = tf.compat.v1.Variable([[0.5, -1.0], [1.5, 0.25]], name="w", use_resource=False)
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")

        def body(i, acc):
            with tf.compat.v1.device("/job:worker/task:1"):
                h = tf.matmul(acc, w) * 0.5
                acc = tf.cond(tf.reduce_sum(h) > 4.0, lambda: h - 1.0, lambda: h * 2.0 + 1.0)
            return i + 1, acc

        _, acc = tf.compat.v1.while_loop(lambda i, a: i < 6, body, [tf.constant(0), x])
        tf.identity(acc, name="y")
        tf.compat.v1.global_variables_initializer()


def ps_worker_nested(tf):
    """Harder control flow across the tasks: a loop nested in a loop, a
    tf.cond whose predicate and Switch sit on worker 0 while its branches
    run on worker 1 and the parameter server (so dead tensors cross tasks),
    with parallel iterations; the outer loop's counter is fetched too."""
    with v1_control_flow_on_ps_worker(tf):
        # Powers of two: each product is exact, so every summation order
        # gives TensorFlow's numbers (docs/differences.md, MatMul).
        w = tf.compat.v1.Variable([[0.5, -0.25], [0.25, 0.5]], name="w", use_resource=False)
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")

        def inner(j, a):
            with tf.compat.v1.device("/job:worker/task:1"):
                a = tf.matmul(a, w) + 0.5
            return j + 1, a

        def outer(i, acc):
            _, acc = tf.compat.v1.while_loop(lambda j, a: j < i + 1, inner, [tf.constant(0), acc])

            def big():
                with tf.compat.v1.device("/job:worker/task:1"):
                    return acc * 0.5

            def small():
                with tf.compat.v1.device("/job:ps/task:0"):
                    return acc + 1.0

            acc = tf.cond(tf.reduce_max(acc) > 1.5, big, small)
            return i + 1, acc

        n, acc = tf.compat.v1.while_loop(lambda i, a: i < 4, outer, [tf.constant(0), x], parallel_iterations=3)
        tf.identity(acc, name="y")
        tf.identity(n, name="n")
        tf.compat.v1.global_variables_initializer()


def ps_worker_grad(tf):
    """tf.gradients through a loop on another task: `w` on the parameter
    server, the loop and its gradient loop (with the stacks that keep each
    iteration's input) on worker 1, the loss and the results on worker 0.
    (A loop whose body ran on another task than the loop itself cannot have
    gradients in TensorFlow 1: the stacks would be colocated with both, and
    TensorFlow refuses with "Cannot colocate nodes".) Powers of two keep
    every product exact (docs/differences.md, MatMul)."""
    with v1_control_flow_on_ps_worker(tf):
        w = tf.compat.v1.Variable([[0.5, -0.25], [0.25, 0.5]], name="w", use_resource=False)
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
        with tf.compat.v1.device("/job:worker/task:1"):
            _, acc = tf.compat.v1.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.matmul(a, w) + 0.5),
                                             [tf.constant(0), x])
        y = tf.identity(acc, name="y")
        loss = tf.reduce_sum(y * y)
        tf.compat.v1.global_variables_initializer()
    # Outside the device function: each gradient node goes where its
    # forward op's colocation group goes.
    tf.identity(tf.gradients(loss, w)[0], name="dw")


def math_ops_run(tf):
    """Issue 42's first ops, run (on CPU:0 and, for half of them, CPU:1):
    Floor, Ceil, Round (half to even, also of int32), Elu, LeakyRelu,
    DivNoNan (0 where the divisor is 0), StopGradient and PreventGradient,
    and tf.gradients through relu6 and elu (Relu6Grad, EluGrad) where
    stop_gradient cuts one path."""
    x = tf.constant([-2.5, -1.5, -0.5, -0.2, 0.0, 0.5, 1.5, 2.5, 6.0, 7.25], name="x")
    tf.floor(x, name="floor")
    tf.math.ceil(x, name="ceil")
    tf.round(x, name="round")
    tf.raw_ops.Round(x=tf.constant([-3, 0, 4], name="ints"), name="round_int")
    with tf.device("/cpu:1"):
        e = tf.nn.elu(x, name="elu")
        tf.nn.leaky_relu(x, alpha=0.1, name="leaky")
        r6 = tf.nn.relu6(x * 1.5, name="relu6")
    tf.math.divide_no_nan(x, tf.constant([1.0, 0.0, 2.0, 0.0, 0.0, 4.0, -2.0, 0.5, 3.0, 0.0]), name="div_no_nan")
    s = tf.stop_gradient(e, name="stopped")
    p = tf.raw_ops.PreventGradient(input=r6, name="prevented")
    loss = tf.reduce_sum(e * r6 + s * x)
    tf.identity(tf.gradients(loss, x)[0], name="dx")
    tf.identity(p + 0.0, name="p")
    # The other floating types: half and bfloat16 compute in float.
    h = tf.cast(x, tf.float16)
    tf.math.ceil(h, name="ceil_half")
    tf.round(tf.cast(x, tf.bfloat16) * 1.25, name="round_bf16")
    tf.nn.elu(tf.cast(x, tf.float64), name="elu_f64")
    tf.nn.elu(h, name="elu_half")
    tf.nn.leaky_relu(h, alpha=0.3, name="leaky_half")
    tf.math.divide_no_nan(tf.cast(x, tf.float64), 3.0, name="div_no_nan_f64")


def classifier_ops_run(tf):
    """Issue 42: what a classifier's training step and accuracy use:
    SparseSoftmaxCrossEntropyWithLogits (loss, and through tf.gradients its
    backprop behind PreventGradient) on 10 classes and on 37 (float32 sums
    in TensorFlow's order), ArgMax (ties), ArgMin (int32), InTopKV2,
    LeakyRelu's gradient, IsVariableInitialized before and after init."""
    import math
    rows = [[round(3 * math.sin(1.7 * r + 0.9 * j), 3) for j in range(10)] for r in range(4)]
    rows[1][4] = rows[1][7] = 9.0  # a tie for the largest
    w = tf.compat.v1.Variable(rows, name="w", use_resource=False)
    labels = tf.constant([3, 0, 9, 5], name="labels")
    h = tf.nn.leaky_relu(w * 2.0 - 1.0, alpha=0.1, name="h")
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h, name="xent")
    loss = tf.reduce_mean(xent, name="loss")
    tf.identity(tf.gradients(loss, w)[0], name="dw")
    tf.argmax(h, axis=1, name="argmax")
    tf.argmin(h, axis=0, output_type=tf.int32, name="argmin")
    tf.nn.in_top_k(predictions=h, targets=labels, k=3, name="in_top3")
    tf.identity(tf.compat.v1.is_variable_initialized(w), name="initialized")
    wide = tf.constant([[math.cos(0.37 * r * j) * (1 + j % 5) for j in range(37)] for r in range(3)], name="wide")
    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 36, 17], tf.int64), logits=wide,
                                                   name="wide_xent")
    tf.compat.v1.global_variables_initializer()


def column_sums_run(tf):
    """Issue 42: float32 Sum and Mean over the first axis (the towers'
    gradients averaged), in TensorFlow's order: from 0 down the rows below
    16 rows; from 16, four sums over whole packets of 8 columns, the last
    cols % 8 columns from 0 down; values of magnitudes 1e-3 to 1e3 so that
    every order gives other bits."""
    import math
    for rows, cols in ((2, 9), (15, 11), (16, 13), (19, 10), (33, 17)):
        x = tf.constant([[math.sin(1.3 * r + 0.7 * c) * 10.0 ** ((3 * r + c) % 7 - 3) for c in range(cols)]
                         for r in range(rows)], name=f"x{rows}")
        tf.reduce_sum(x, 0, name=f"sum{rows}")
        tf.reduce_mean(x, 0, name=f"mean{rows}")
    x3 = tf.reshape(tf.constant([math.cos(0.3 * i) * 10.0 ** (i % 5 - 2) for i in range(20 * 2 * 9)]),
                    [20, 2, 9], name="x3")
    tf.reduce_mean(x3, 0, name="mean3d")


def gradient_forms_run(tf):
    """The elementwise gradient ops as TensorFlow's Eigen functors round them
    (cwise_ops_gradients.h): RsqrtGrad -0.5 * (dy * y) * (y * y) and
    ReciprocalGrad -(y * y) * dy, +0 where dy is 0; SqrtGrad (0.5 / y) * dy;
    TanhGrad dy * (1 - y * y); ReluGrad dy * (x > 0). 37 values (whole packets and a tail), one
    dy 0, of magnitudes where another order of the products rounds
    otherwise. SqrtGrad's packets round (0.5 / y) * dy, its scalar tail
    (0.5 * dy) / y, which tfrun does not split: it is checked on 32 values,
    four whole packets of 8."""
    import math
    y = tf.constant([0.1 + 2.9 * (0.5 + 0.5 * math.sin(1.7 * i + 0.3)) for i in range(37)], name="y")
    t = tf.constant([0.98 * math.cos(2.3 * i + 0.1) for i in range(37)], name="t")
    dy = tf.constant([0.0 if i == 5 else math.sin(0.9 * i) * 10.0 ** (i % 5 - 2) for i in range(37)], name="dy")
    tf.raw_ops.RsqrtGrad(y=y, dy=dy, name="rsqrt_grad")
    tf.raw_ops.SqrtGrad(y=tf.slice(y, [0], [32], name="y32"), dy=tf.slice(dy, [0], [32], name="dy32"),
                        name="sqrt_grad")
    tf.raw_ops.ReciprocalGrad(y=y, dy=dy, name="reciprocal_grad")
    tf.raw_ops.TanhGrad(y=t, dy=dy, name="tanh_grad")
    # ReluGrad, gradients * (features > 0): NaN and infinite gradients, -0.0
    # and NaN features, over a whole packet and a tail; relu_grad_large
    # (100,003 values, over the intra-op threads) is checked against the
    # formula by kernels/cpu/cpu_kernels_test.cc, not printed.
    nan, inf = float("nan"), float("inf")
    tf.raw_ops.ReluGrad(gradients=tf.constant([nan, inf, -2.0, 3.0, -0.0, 0.001, 5.0, -inf, 7.0, -1.0, nan],
                                              name="relu_g"),
                        features=tf.constant([1.0, 0.0, -1.0, 2.0, 1.0, nan, -0.0, 0.5, inf, -inf, -1.0],
                                             name="relu_f"), name="relu_grad")
    r = tf.range(-50001.5, 50001.5, 1.0, name="relu_range")
    tf.raw_ops.ReluGrad(gradients=tf.multiply(r, 0.37, name="relu_large_g"),
                        features=tf.subtract(tf.math.floormod(r, 4.0), 1.5, name="relu_large_f"),
                        name="relu_grad_large")


def addn_order_run(tf):
    """AddN in aggregate_ops.h's order: the sum goes into the buffer of the
    first input nothing else holds, which moves to the front (`swapped`:
    two variables' values, which the variables hold, and n2, a Neg nothing
    else reads: (n2 + v1) + v0); more than nine inputs add the first
    num % 8 in one expression and every next 8 as out + (in1 + ... + in8)
    (`eleven`). Values for which left to right rounds otherwise."""
    values = [[1.0, 3.0, 0.5, 1.0], [1e8, 1e8, -1e8, 2e8], [1e8, 1e8, 2e8, 2e8], [1.0, 0.25, 2.0, 1.0],
              [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1e8, 3e8, 1e8, 1e8], [-1e8, -3e8, -1e8, -1e8]]
    values += [[0.0, 0.0, 0.0, 0.0]] * 5
    v = [tf.compat.v1.Variable(x, name=f"v{i}", use_resource=False) for i, x in enumerate(values)]
    tf.add_n([v[0], v[1], tf.negative(v[2], name="n2")], name="swapped")
    tf.add_n(v[3:14], name="eleven")
    tf.compat.v1.global_variables_initializer()


def cond_v2_run(tf):
    """Issue 43: tf.cond in control flow v2, as TensorFlow 2 writes it
    (StatelessIf and If nodes whose branches are functions of the graph's
    library), in a Session on three CPUs: LowerFunctionalOpsPass lowers each
    If into Switch and Merge nodes and inlines both branches; a cond nested
    in a branch, a branch under its own device scope, a stateful branch
    (If), conds on other devices than their inputs; placed and run."""
    tf.compat.v1.enable_control_flow_v2()
    tf.compat.v1.set_random_seed(5)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
    y = tf.constant([[1.0, 0.0], [0.0, 1.0]], name="y")
    m = tf.matmul(x, y, name="MatMul")
    with tf.device("/cpu:1"):
        s = tf.reduce_sum(m, name="s")
    c = tf.cond(s > 0, lambda: m + y, lambda: m - y, name="cond")
    tf.identity(c, name="out")

    def small():
        with tf.device("/cpu:1"):
            return tf.cond(s > 5, lambda: m - 1.0, lambda: y, name="inner")

    with tf.device("/cpu:2"):
        c2 = tf.cond(s < 0, lambda: tf.identity(m * 2.0), small, name="outer")
    tf.identity(c2, name="out2")
    c3 = tf.cond(s > 1, lambda: m + tf.random.uniform([2, 2], seed=3), lambda: m, name="stateful")
    tf.identity(c3, name="out3")


def while_v2_run(tf):
    """Issue 43: tf.while_loop in control flow v2 (StatelessWhile and While
    nodes, cond and body functions of the graph's library) in a Session on
    three CPUs: LowerFunctionalOpsPass lowers each into Enter, Merge,
    Switch, Exit and NextIteration nodes and inlines the cond and body; a
    loop on its own device, loop variables from other devices, a cond
    inside the body, a stateful body (While); placed and run."""
    tf.compat.v1.enable_control_flow_v2()
    tf.compat.v1.set_random_seed(7)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
    with tf.device("/cpu:1"):
        y = tf.constant([[1.0, 0.0], [0.0, 1.0]], name="y")
    i0 = tf.constant(0, name="i0")
    _, a = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.matmul(v, y) + 1.0), [i0, x], name="loop")
    tf.identity(a, name="out")
    with tf.device("/cpu:2"):
        _, b = tf.while_loop(lambda i, v: i < 4,
                             lambda i, v: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: v * 2.0, lambda: v - 1.0)),
                             [i0, y], name="on2")
    tf.identity(b, name="out2")
    _, c = tf.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v + tf.random.uniform([2, 2], seed=1)), [i0, x],
                         name="stateful")
    tf.identity(c, name="out3")


def polymorphic_call_run(tf):
    """Issue 43: a polymorphic library function (its argument a list of N
    tensors of type T, `$T` and `$N` placeholders in its body, a list
    result) called natively (op SumAndNeg, attrs N=3, T=float) from a
    Session graph on three CPUs. Python's importer refuses such a library
    (it wants a type per argument), so the hand-written
    data/polymorphic_call.pbtxt is imported through the C API, as a C++
    program's would be. `run`: the call kept as a node (placed where its
    device says), run by its kernel (issue 44: the function instantiated
    with the call's attrs); `inline`: inlined (do_function_inlining), one
    _Arg per tensor, run."""
    from google.protobuf import text_format
    from tensorflow.python.client import pywrap_tf_session as c_api
    from tensorflow.python.framework import c_api_util
    with open(os.path.join(HERE, "data", "polymorphic_call.pbtxt")) as f:
        graph_def = text_format.Parse(f.read(), tf.compat.v1.GraphDef())
    g = tf.compat.v1.get_default_graph()
    options = c_api.TF_NewImportGraphDefOptions()
    with c_api_util.tf_buffer(graph_def.SerializeToString()) as buffer:
        c_api.TF_GraphImportGraphDefWithResults(g._c_graph, buffer, options)
    g._add_new_tf_operations(compute_devices=False)


def isolate_run(tf):
    """Issue 43: a tf.function that returns a resource (the variable handle
    it was given, through an Identity) called from a Session graph, not
    inlined: IsolatePlacerInspectionRequiredOpsPass keeps the
    PartitionedCall between Identity nodes (v_PartitionedCall, ...,
    PartitionedCall_read) and the placer colocates the variable, the
    Identity into the call, the Identity of its resource result and the
    ReadVariableOp reading it (one group of the call's body); with
    do_function_inlining the call is inlined instead. Placed and run (the
    kept call by its kernel, the function instantiated for its device)."""
    x = tf.constant([1.0, 1.0], name="x")
    with tf.device("/cpu:1"):
        v = tf.compat.v1.Variable([1.0, 2.0], name="v", use_resource=True)

    @tf.function
    def get(h, x):
        with tf.device("/cpu:2"):
            y = x * 2.0
        return tf.identity(h), y

    h, y = get(v.handle, x)
    r = tf.raw_ops.ReadVariableOp(resource=h, dtype=tf.float32, name="read")
    tf.identity(r + y, name="out")
    tf.compat.v1.global_variables_initializer()


def case_v2_run(tf):
    """Issue 43: tf.switch_case in control flow v2 (StatelessCase and Case
    nodes, a function per branch) in a Session on three CPUs:
    LowerFunctionalOpsPass lowers each into a _SwitchN on the branch index
    and a Merge per output, and inlines every branch; an index out of range
    (the last branch runs), a Case on another device, a stateful branch."""
    tf.compat.v1.enable_control_flow_v2()
    tf.compat.v1.set_random_seed(3)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="x")
    i = tf.constant(1, name="i")
    branches = [lambda: x + 1.0, lambda: x * 3.0, lambda: x - 5.0]
    tf.identity(tf.switch_case(i, branches, name="case"), name="out")
    with tf.device("/cpu:2"):
        big = tf.constant(7, name="big")
        c2 = tf.switch_case(big, branches, name="far")
    tf.identity(c2, name="out2")
    with tf.device("/cpu:1"):
        c3 = tf.switch_case(i - 1, [lambda: x + tf.random.uniform([2, 2], seed=2), lambda: x], name="stateful")
    tf.identity(c3, name="out3")


def strided_slice_run(tf):
    """Issue 42: StridedSlice with every mask (shrink, ellipsis, new axis,
    begin and end masks, negative indices and strides, an empty range),
    of float32 and of an int32 shape, and StridedSliceGrad through
    tf.gradients."""
    x = tf.reshape(tf.range(120.0), [2, 3, 4, 5], name="x")
    tf.identity(x[1, :, ::2, -1], name="a")
    tf.identity(x[..., 1:4:2], name="b")
    c = tf.identity(x[:, tf.newaxis, -2:, ::-2, 3], name="c")
    d = tf.identity(x[::-1, 2:0:-1, ..., tf.newaxis], name="d")
    tf.identity(x[0, 5:10], name="e")
    tf.identity(tf.shape(x)[1:-1] * 2, name="dims")
    loss = tf.reduce_sum(x[1, :, ::2, -1] * 2.0) + tf.reduce_sum(c * c) + tf.reduce_sum(d)
    tf.identity(tf.gradients(loss, x)[0], name="dx")


def random_int_run(tf):
    """Issue 42: RandomUniformInt (tf.random.uniform with an integer
    dtype), int32 and int64, with an op seed and with the graph's seed
    alone."""
    tf.compat.v1.set_random_seed(11)
    tf.random.uniform([7], minval=-5, maxval=9, dtype=tf.int32, seed=3, name="ri")
    tf.random.uniform([5], minval=-3, maxval=2 ** 40, dtype=tf.int64, name="rl")
    tf.random.uniform([2, 3], maxval=10, dtype=tf.int32, name="ri2")


def stateless_random_run(tf):
    """Issue 42 (and 44): the stateless random ops tf_keras's initializers
    and tf.random.stateless_* write: StatelessRandomGetKeyCounter (its
    uint64 key and counter fetched), StatelessRandomUniformV2, NormalV2 and
    TruncatedNormalV2 with the auto-selected and the Philox algorithm, int32
    (one negative) and int64 seeds, float32 and float64, an empty shape; the
    V1 ops StatelessRandomUniform, StatelessRandomNormal and
    StatelessTruncatedNormal; and a glorot-uniform kernel as tf_keras 2.21
    initializes one in a graph."""
    seed = tf.constant([7, 11], name="seed")
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed, name="kc")
    tf.identity(key, name="key")
    tf.identity(counter, name="counter")
    tf.random.stateless_uniform([3, 5], seed=[7, 11], name="u")
    tf.random.stateless_uniform([2, 3], seed=tf.constant([-3, 2 ** 31 - 1]), dtype=tf.float64, name="u64")
    tf.random.stateless_normal([7], seed=tf.constant([2 ** 40, -5], tf.int64), name="n")
    tf.random.stateless_truncated_normal([70], seed=[1, 2], name="tn")
    tf.random.stateless_truncated_normal([3], seed=[1, 2], dtype=tf.float64, name="tn64")
    tf.random.stateless_uniform([0, 4], seed=[1, 2], name="empty")
    tf.raw_ops.StatelessRandomUniformV2(shape=[5], key=key, counter=counter, alg=1, name="philox")
    tf.raw_ops.StatelessRandomNormalV2(shape=[2, 2], key=key, counter=counter, alg=3, name="normal_v2")
    tf.raw_ops.StatelessRandomUniform(shape=[6], seed=[1, 2], name="v1_uniform")
    tf.raw_ops.StatelessRandomNormal(shape=[5], seed=tf.constant([3, 4], tf.int64), dtype=tf.float64,
                                     name="v1_normal")
    tf.raw_ops.StatelessTruncatedNormal(shape=[9], seed=[5, 6], name="v1_truncated")
    tf.identity(tf.random.stateless_uniform([300, 7], seed=[5, 6])[295:], name="wide_tail")
    limit = (6.0 / (9 + 64)) ** 0.5
    glorot = tf.random.stateless_uniform([3, 3, 1, 64], seed=[751295828, 0], minval=-limit, maxval=limit)
    tf.identity(glorot[0, 0, 0, :6], name="glorot")


def reader_pipeline(tf, num_epochs=None):
    """Issue 42: a TF1 input pipeline as CIFAR-10's reader builds one,
    started by the .meta's queue runners: string_input_producer over two
    files of fixed-length records (data/records_{0,1}.bin: a 2-byte header,
    3 records of a label byte and a 3x2x2 image, a 1-byte footer, written
    here), FixedLengthRecordReader, decode_raw to uint8, the label and the
    image sliced out, the image transposed to HWC and cast, and
    tf.train.batch of 4 (one thread: FIFO, TensorFlow's order). The
    program runs three steps, each print(sess.run([images, labels, keys])).
    With `num_epochs` (2), string_input_producer counts the epochs with
    CountUpTo on a local variable: after 12 records the filename queue
    closes, then the reader's read and the batch queue, and a fourth step
    fails OutOfRange, as TensorFlow's does."""
    data = os.path.join(HERE, "data")
    os.makedirs(data, exist_ok=True)
    for f in range(2):
        records = b"".join(bytes([10 * f + r]) + bytes((f * 64 + r * 16 + k) % 251 for k in range(12))
                           for r in range(3))
        with open(os.path.join(data, f"records_{f}.bin"), "wb") as out:
            out.write(b"HD" + records + b"F")
    names = ["data/records_0.bin", "data/records_1.bin"]  # relative: both run in graphs/tf
    queue = tf.compat.v1.train.string_input_producer(names, shuffle=False, num_epochs=num_epochs, name="files")
    reader = tf.compat.v1.FixedLengthRecordReader(record_bytes=13, header_bytes=2, footer_bytes=1, name="reader")
    key, value = reader.read(queue, name="read")
    raw = tf.io.decode_raw(value, tf.uint8, name="raw")
    label = tf.cast(tf.strided_slice(raw, [0], [1]), tf.int32)
    label.set_shape([1])  # as cifar10_input.py does
    image = tf.reshape(tf.strided_slice(raw, [1], [13]), [3, 2, 2])
    image = tf.cast(tf.transpose(image, [1, 2, 0]), tf.float32)
    images, labels, keys = tf.compat.v1.train.batch([image, label, key], batch_size=4, capacity=8, name="batch")
    tf.identity(images, name="images")
    tf.identity(labels, name="labels")
    tf.identity(keys, name="keys")
    if num_epochs:
        tf.group(tf.compat.v1.global_variables_initializer(), tf.compat.v1.local_variables_initializer(),
                 name="init_all")  # "init" is global_variables_initializer's


def equal_run(tf):
    """Issue 42: Equal and NotEqual on every dtype: strings (also
    broadcast), bools, int64, float16 with a NaN."""
    tf.equal(tf.constant(["a", "b", "c"]), tf.constant(["a", "x", "c"]), name="eq_str")
    tf.not_equal(tf.constant([True, False]), tf.constant([True, True]), name="ne_bool")
    tf.equal(tf.constant([1, 2], tf.int64), tf.constant([1, 3], tf.int64), name="eq_i64")
    tf.equal(tf.constant([1.5, float("nan")], tf.float16), tf.constant([1.5, float("nan")], tf.float16),
             name="eq_half")
    tf.not_equal(tf.constant(["a", "b"]), tf.constant("b"), name="ne_bcast")


def summary_run(tf):
    """Issue 42: the summaries a TF1 trainer fetches: ScalarSummary of a
    float32 loss, of an int32 step, of a vector of tags and of 0,
    HistogramSummary, and MergeSummary of them (tf.compat.v1.summary.merge_all), as the bytes
    print(sess.run(t)) shows."""
    loss = tf.constant(2.5, name="loss")
    tf.compat.v1.summary.scalar("loss", loss)
    tf.compat.v1.summary.scalar("step", tf.constant(7), family="train")
    tf.raw_ops.ScalarSummary(tags=tf.constant(["a", "b/c"]), values=tf.constant([0.1, -3.0]), name="pair")
    tf.compat.v1.summary.scalar("zero", tf.constant(0.0))
    # HistogramSummary (CIFAR-10's activation summaries): TensorFlow's
    # buckets, empty runs folded; float32 with a 0 and a negative, int32,
    # and no values at all.
    tf.compat.v1.summary.histogram("activations", tf.constant([0.5, 0.0, -2.0, 1e-13, 3.5, 0.55, 1e6]))
    tf.compat.v1.summary.histogram("counts", tf.constant([[1, 2], [2, 40]]))
    tf.raw_ops.HistogramSummary(tag=tf.constant("none"), values=tf.zeros([0]), name="empty_histogram")
    tf.compat.v1.summary.merge_all(name="merged")
    # Bytes that are no Summary (a field 1 whose length runs past the end).
    tf.raw_ops.MergeSummary(inputs=[tf.constant(b"\x0a\x7f\x0a")], name="bad_merge")
    tf.raw_ops.MergeSummary(inputs=[tf.constant(b"\x0a\x03\x0a\x01x"), tf.constant(b"\x0a\x03\x0a\x01x")],
                            name="duplicate_merge")


def unread_values_run(tf):
    """A value read only through control edges, as a gradient's tuple reads
    the first layer's input gradient: Grappler makes it and its inputs
    NoOps, so a run that needs it only for its control edge does not fail
    on its bad shape; fetching it does."""
    x = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], name="x")
    shape = tf.compat.v1.placeholder_with_default(tf.constant([4, 4]), [None], name="shape")
    bad = tf.reshape(x, shape, name="bad")
    t = tf.identity(tf.square(bad), name="t")
    group = tf.group(t, name="group")
    with tf.control_dependencies([group]):
        return tf.identity(x * 2.0, name="out")


def unread_values_cond_run(tf):
    """The same under v1 control flow (the frame-aware executor): a cond
    reads the result."""
    tf.compat.v1.disable_control_flow_v2()
    out = unread_values_run(tf)
    p = tf.compat.v1.placeholder_with_default(True, [], name="p")
    tf.compat.v1.cond(p, lambda: out + 1.0, lambda: out - 1.0, name="c")


def pool_lrn_run(tf):
    """Issue 42: AvgPool (SAME and VALID, strided, float64, a window wider
    than the input) and AvgPoolGrad through tf.gradients, whose window
    TensorFlow counts differently from the forward's when it passes both
    ends of the input; LRN with CIFAR-10's parameters (beta 0.75: Eigen's
    log and exp, 8 at a time and the tail), beta 1 and 0.5, a depth above
    384 (TensorFlow's running sum), and LRNGrad; Rsqrt and Reciprocal of
    float32, whose packets of 8 take Eigen's fast estimates (the last 5 of
    21 values its exact scalar path)."""
    import math

    def values(shape, a, b):
        n = 1
        for d in shape:
            n *= d
        flat = [round(2 * math.sin(a * i + b) + math.cos(0.37 * i), 4) for i in range(n)]
        return tf.reshape(tf.constant(flat), shape)

    x = values([2, 5, 7, 3], 0.61, 0.2)
    a = tf.nn.avg_pool2d(x, 3, 2, "SAME", name="avg_same")
    b = tf.nn.avg_pool2d(x, [2, 3], [1, 2], "VALID", name="avg_valid")
    small = values([1, 4, 4, 2], 1.3, 0.5)
    wide = tf.nn.avg_pool2d(small, 5, 1, "SAME", name="avg_wide")
    tf.nn.avg_pool2d(tf.cast(x, tf.float64), [1, 2], [1, 1], "SAME", name="avg_f64")
    loss = tf.reduce_sum(a * a) + tf.reduce_sum(b * 3.0)
    tf.identity(tf.gradients(loss, x)[0], name="davg")
    tf.identity(tf.gradients(tf.reduce_sum(wide * wide), small)[0], name="davg_wide")
    y = values([2, 3, 3, 13], 0.83, 1.1)
    lrn = tf.nn.lrn(y, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="lrn")
    tf.nn.lrn(y, 2, bias=2.0, alpha=0.5, beta=1.0, name="lrn_beta1")
    tf.nn.lrn(y, 1, bias=1.5, alpha=0.25, beta=0.5, name="lrn_half")
    tf.nn.lrn(values([1, 1, 1, 400], 0.29, 0.4), 3, bias=1.0, alpha=0.1, beta=0.5, name="lrn_deep")
    tf.identity(tf.gradients(tf.reduce_sum(lrn * y), y)[0], name="dlrn")
    z = tf.constant([0.37 * 1.9 ** i for i in range(-6, 15)], name="z")
    tf.math.rsqrt(z, name="rsqrt")
    tf.math.reciprocal(z, name="reciprocal")


def batch_norm_run(tf):
    """Issue 42: FusedBatchNormV3 as tf.compat.v1.nn.fused_batch_norm and
    Keras' fused batch normalization emit it: training (the batch's
    statistics; the running ones with exponential_avg_factor 1 and 0.5,
    Bessel's correction), inference, NHWC and NCHW, and
    FusedBatchNormGradV3 through tf.gradients in both modes. TensorFlow's
    numbers here are its Eigen kernels' (make_graphs runs it with
    TF_ENABLE_ONEDNN_OPTS=0), tfrun's oneDNN's: within the golden's rtol."""
    import math

    def values(shape, a, b, scale=1.0):
        n = 1
        for d in shape:
            n *= d
        flat = [round(scale * (2 * math.sin(a * i + b) + math.cos(0.37 * i)) + 0.3, 4) for i in range(n)]
        return tf.reshape(tf.constant(flat), shape)

    x = values([2, 4, 5, 8], 0.61, 0.2, 3.0)
    scale = tf.constant([0.5 + 0.1 * i for i in range(8)], name="scale")
    offset = tf.constant([0.2 * i - 0.7 for i in range(8)], name="offset")
    y, mean, var = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, is_training=True, name="train")
    tf.identity(mean, name="batch_mean")
    tf.identity(var, name="batch_var")
    tf.identity(y, name="y")
    _, m2, v2 = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean=tf.fill([8], 0.5),
                                                 variance=tf.fill([8], 2.0), is_training=True,
                                                 exponential_avg_factor=0.5, name="train_avg")
    tf.identity(m2, name="avg_mean")
    tf.identity(v2, name="avg_var")
    yi, _, _ = tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean=tf.fill([8], 0.25),
                                                variance=tf.constant([1.0 + 0.5 * i for i in range(8)]),
                                                is_training=False, name="infer")
    tf.identity(yi, name="y_infer")
    w = values([2, 4, 5, 8], 1.7, 0.9)
    dx, dscale, doffset = tf.gradients(tf.reduce_sum(y * w), [x, scale, offset])
    tf.identity(dx, name="dx")
    tf.identity(dscale, name="dscale")
    tf.identity(doffset, name="doffset")
    tf.identity(tf.gradients(tf.reduce_sum(yi * w), x)[0], name="dx_infer")
    xc = values([2, 3, 4, 5], 0.43, 1.3, 2.0)
    yc, mc, _ = tf.compat.v1.nn.fused_batch_norm(xc, tf.constant([1.5, 0.5, 1.0]), tf.constant([0.1, 0.2, 0.3]),
                                                 is_training=True, data_format="NCHW", name="train_nchw")
    tf.identity(yc, name="y_nchw")
    tf.identity(mc, name="mean_nchw")
    tf.identity(tf.gradients(tf.reduce_sum(yc * yc), xc)[0], name="dx_nchw")


def scatter_run(tf):
    """Issue 42: ScatterAdd (duplicate indices, in order), ScatterSub
    (2-D indices, int32), ScatterSub of a scalar update, ScatterUpdate on
    reference variables; ResourceScatterAdd and ResourceScatterUpdate; and
    a sparse gradient step: embedding lookups (GatherV2, ResourceGather)
    trained by GradientDescent, which applies their IndexedSlices
    gradients with ScatterSub (reference) and ResourceScatterAdd
    (resource). Each op has a variable of its own: TensorFlow runs each
    fetch in a Session run of its own, tfrun all in one."""
    def ref(value, name):
        return tf.compat.v1.Variable(value, name=name, use_resource=False)

    rows = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    add = tf.compat.v1.scatter_add(ref(rows, "v_add"), [2, 0, 2], [[1.0, 1.0], [0.5, 0.5], [10.0, 10.0]],
                                   name="add")
    sub = tf.compat.v1.scatter_sub(ref([10, 20, 30, 40, 50], "k_sub"), [[4, 0], [1, 4]], [[1, 2], [3, 4]],
                                   name="sub")
    sub_scalar = tf.raw_ops.ScatterSub(ref=ref([10, 20, 30, 40, 50], "k_scalar")._ref(), indices=[3, 1], updates=7,
                                       name="sub_scalar")
    upd = tf.compat.v1.scatter_update(ref(rows, "v_upd"), [3], [[-1.0, -2.0]], name="upd")
    r_add = tf.compat.v1.Variable([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], name="r_add", use_resource=True)
    r_upd = tf.compat.v1.Variable([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], name="r_upd", use_resource=True)
    radd = tf.compat.v1.scatter_add(r_add, [1, 1], [[1.0, 1.0], [2.0, 2.0]], name="radd")
    rupd = tf.compat.v1.scatter_update(r_upd, [0], [[9.0, 9.0]], name="rupd")
    tf.identity(add, name="after_add")
    tf.identity(sub, name="after_sub")
    tf.identity(sub_scalar, name="after_sub_scalar")
    tf.identity(upd, name="after_upd")
    tf.identity(radd, name="after_radd")
    tf.identity(rupd, name="after_rupd")
    emb = ref([[0.1 * (i + j) for j in range(3)] for i in range(5)], "emb")
    remb = tf.compat.v1.Variable([[0.2 * (i - j) for j in range(3)] for i in range(5)], name="remb", use_resource=True)
    ids = tf.constant([1, 3, 1], name="ids")
    loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids))) + \
        tf.reduce_sum(tf.square(tf.nn.embedding_lookup(remb, ids)))
    tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="step")
    tf.identity(emb, name="emb_now")
    tf.identity(remb.read_value(), name="remb_now")
    tf.compat.v1.global_variables_initializer()


def queue_run(tf):
    """Issue 42: queues. A FIFOQueue of two components filled with
    enqueue_many, closed, then dequeue_up_to asking for more than it holds;
    a seeded RandomShuffleQueue (min_after_dequeue 2) and its dequeue_many;
    a PaddingFIFOQueue padding two vectors; strings; size and is_closed.
    Each fetch reads a queue of its own, once (TensorFlow runs each fetch in
    a Session run of its own, tfrun all of them in one: a dequeue's
    components are fetched as one tensor); the enqueues and closes are
    targets, run first in order by both."""
    tf.compat.v1.set_random_seed(7)
    q1 = tf.queue.FIFOQueue(5, [tf.float32, tf.int32], shapes=[[2], []], name="q1")
    q1.enqueue_many(([[1., 2.], [3., 4.], [5., 6.]], [7, 8, 9]), name="q1_enq")
    q1.close(name="q1_close")
    a, b = q1.dequeue_up_to(5, name="q1_upto")
    tf.concat([a, tf.cast(b[:, None], tf.float32)], 1, name="q1_rows")
    q2 = tf.queue.RandomShuffleQueue(20, 2, [tf.int32], shapes=[[]], seed=3, name="q2")
    q2.enqueue_many([tf.range(10)], name="q2_enq")
    tf.identity(q2.dequeue_many(8), name="q2_deq")
    q3 = tf.queue.PaddingFIFOQueue(5, [tf.int32, tf.float32], shapes=[[None], [None, 2]], name="q3")
    q3.enqueue([tf.constant([1, 2, 3]), tf.constant([[1., 2.]])], name="q3_e1")
    q3.enqueue([tf.constant([4]), tf.constant([[3., 4.], [5., 6.]])], name="q3_e2")
    c, d = q3.dequeue_many(2, name="q3_deq")
    tf.concat([tf.cast(c, tf.float32), tf.reshape(d, [2, 4])], 1, name="q3_rows")
    q4 = tf.queue.FIFOQueue(3, [tf.string], shapes=[[]], name="q4")
    q4.enqueue_many([tf.constant(["a", "bc"])], name="q4_enq")
    tf.identity(q4.dequeue(), name="q4_deq")
    q5 = tf.queue.FIFOQueue(3, [tf.int64], name="q5")
    q5.enqueue([tf.constant(1, tf.int64)], name="q5_enq")
    tf.identity(q5.size(), name="q5_count")
    q6 = tf.queue.FIFOQueue(3, [tf.int32], name="q6")
    q6.close(name="q6_close")
    tf.identity(q6.is_closed(), name="q6_closed")


CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
PS_WORKER_CLUSTER = {"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]}


# name: (builder, file written, [(variant, ConfigProto kwargs, XLA devices, import semantics, tfrun args[,
#        fetches: run and printed, as print(sess.run(t)) prints them, instead of placing by running `init`;
#        "^op" runs op (or a collection's ops, in one run) and prints nothing: tfrun's --targets, which run
#        before the fetches])])
CASES = {
    "towers": (towers, "towers.pbtxt", [
        ("cpu3", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3"),
        ("cpu2_soft", {"device_count": {"CPU": 2}, "allow_soft_placement": True}, False, "session",
         "--device-count CPU=2 --soft-placement --quiet"),
        ("cpu2_hard", {"device_count": {"CPU": 2}}, False, "session", "--device-count CPU=2"),
    ]),
    "towers_binary": (towers, "towers_binary.pb", [
        ("cpu3", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3"),
    ]),
    "towers_meta": (towers, "towers_meta.meta", [
        ("cpu3", {"device_count": {"CPU": 3}}, False, "python", "--device-count CPU=3 --import python"),
    ]),
    "resource_xla": (resource_xla, "resource_xla.pbtxt", [
        ("soft", {"device_count": {"CPU": 3}, "allow_soft_placement": True}, True, "session",
         "--device-count CPU=3 --soft-placement --quiet"),
    ]),
    "adam_xla": (adam_xla, "adam_xla.pbtxt", [
        ("hard", {"device_count": {"CPU": 3}}, True, "session", "--device-count CPU=3"),
        ("soft", {"device_count": {"CPU": 3}, "allow_soft_placement": True}, True, "session",
         "--device-count CPU=3 --soft-placement --quiet"),
    ]),
    "shape_of": (shape_of, "shape_of.pbtxt", [
        ("cpu3", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3"),
    ]),
    "const_group": (const_group, "const_group.pbtxt", [
        ("cpu3", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3"),
    ]),
    "while_cond": (while_cond, "while_cond.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3",
         ["loop/Exit", "loop/Exit_1", "c/Merge"]),
    ]),
    "identity_input": (identity_input, "identity_input.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["add"]),
    ]),
    "ref_edge_request": (ref_edge_request, "ref_edge_request.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["^v/Assign", "as"]),
    ]),
    "accumulate_n": (accumulate_n, "accumulate_n.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["acc", "y"]),
    ]),
    "accumulate_n_loop": (accumulate_n_loop, "accumulate_n_loop.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["loop/Exit_1"]),
    ]),
    "parallel_concat": (parallel_concat, "parallel_concat.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["pc"]),
    ]),
    "reshape_fill": (reshape_fill, "reshape_fill.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["z", "r", "s", "f"]),
    ]),
    "math_ops_run": (math_ops_run, "math_ops_run.pbtxt", [
        ("run", {"device_count": {"CPU": 2}}, False, "session", "--device-count CPU=2",
         ["floor", "ceil", "round", "round_int", "elu", "leaky", "relu6", "div_no_nan", "stopped", "p", "dx",
          "ceil_half", "round_bf16", "elu_f64", "elu_half", "leaky_half", "div_no_nan_f64"]),
    ]),
    "classifier_ops_run": (classifier_ops_run, "classifier_ops_run.pbtxt", [
        ("uninit", {}, False, "session", "", ["initialized"]),
        ("run", {}, False, "session", "",
         ["^init", "initialized", "xent/xent", "loss", "dw", "argmax", "argmin", "in_top3/in_top3",
          "wide_xent/wide_xent"]),
    ]),
    "column_sums_run": (column_sums_run, "column_sums_run.pbtxt", [
        ("run", {}, False, "session", "",
         ["sum2", "mean2", "sum15", "mean15", "sum16", "mean16", "sum19", "mean19", "sum33", "mean33", "mean3d"]),
    ]),
    "gradient_forms_run": (gradient_forms_run, "gradient_forms_run.pbtxt", [
        ("run", {}, False, "session", "", ["rsqrt_grad", "sqrt_grad", "reciprocal_grad", "tanh_grad", "relu_grad"]),
    ]),
    "addn_order_run": (addn_order_run, "addn_order_run.pbtxt", [
        ("run", {}, False, "session", "", ["^init", "swapped", "eleven"]),
    ]),
    "cond_v2_run": (cond_v2_run, "cond_v2_run.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["out", "out2", "out3"]),
    ]),
    "while_v2_run": (while_v2_run, "while_v2_run.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["out", "out2", "out3"]),
    ]),
    "polymorphic_call_run": (polymorphic_call_run, "polymorphic_call_run.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["out0", "out1", "out2"]),
        ("inline", {"device_count": {"CPU": 3}, "graph_options": {"optimizer_options": {"do_function_inlining": True}}},
         False, "session", "--device-count CPU=3 --do-function-inlining", ["out0", "out1", "out2"]),
    ]),
    "isolate_run": (isolate_run, "isolate_run.pbtxt", [
        # The call kept as a node, run by its kernel (issue 44).
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["^init", "out"]),
        ("inline", {"device_count": {"CPU": 3}, "graph_options": {"optimizer_options": {"do_function_inlining": True}}},
         False, "session", "--device-count CPU=3 --do-function-inlining", ["^init", "out"]),
    ]),
    "case_v2_run": (case_v2_run, "case_v2_run.pbtxt", [
        ("run", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3", ["out", "out2", "out3"]),
    ]),
    "strided_slice_run": (strided_slice_run, "strided_slice_run.pbtxt", [
        ("run", {}, False, "session", "", ["a", "b", "c", "d", "e", "dims", "dx"]),
    ]),
    "unread_values_run": (unread_values_run, "unread_values_run.pbtxt", [
        ("run", {}, False, "session", "", ["out"]),
        ("fetched", {}, False, "session", "", ["@1 t"]),
    ]),
    "unread_values_cond_run": (unread_values_cond_run, "unread_values_cond_run.pbtxt", [
        ("run", {}, False, "session", "", ["c/Merge"]),
    ]),
    "pool_lrn_run": (pool_lrn_run, "pool_lrn_run.pbtxt", [
        ("run", {}, False, "session", "",
         ["avg_same", "avg_valid", "avg_wide", "avg_f64", "davg", "davg_wide", "lrn", "dlrn"]),
        # Eigen's fast reciprocal and rsqrt start from the processor's
        # estimate: this machine's maker's values (PROCESSOR_VARIANT).
        ("estimates-{processor}", {}, False, "session", "", ["lrn_beta1", "lrn_half", "lrn_deep", "rsqrt", "reciprocal"]),
    ]),
    "batch_norm_run": (batch_norm_run, "batch_norm_run.pbtxt", [
        ("run", {}, False, "session", "--rtol 1e-5 --atol 1e-6",
         ["batch_mean", "batch_var", "y", "avg_mean", "avg_var", "y_infer", "dx", "dscale", "doffset", "dx_infer",
          "y_nchw", "mean_nchw", "dx_nchw"]),
    ]),
    "scatter_run": (scatter_run, "scatter_run.pbtxt", [
        ("run", {}, False, "session", "",
         ["^init", "after_add", "after_sub", "after_sub_scalar", "after_upd", "after_radd", "after_rupd", "^step",
          "emb_now", "remb_now"]),
    ]),
    "queue_run": (queue_run, "queue_run.pbtxt", [
        ("run", {}, False, "session", "",
         ["^q1_enq", "^q1_close", "^q2_enq", "^q3_e1", "^q3_e2", "^q4_enq", "^q5_enq", "^q6_close", "q1_rows",
          "q2_deq", "q3_rows", "q4_deq", "q5_count", "q6_closed"]),
    ]),
    "random_int_run": (random_int_run, "random_int_run.pbtxt", [
        ("run", {}, False, "session", "", ["ri", "rl", "ri2"]),
    ]),
    "stateless_random_run": (stateless_random_run, "stateless_random_run.pbtxt", [
        ("run", {}, False, "session", "",
         ["key", "counter", "u", "u64", "n", "tn", "tn64", "empty", "philox", "normal_v2", "v1_uniform",
          "v1_normal", "v1_truncated", "wide_tail", "glorot"]),
    ]),
    "reader_pipeline": (reader_pipeline, "reader_pipeline.meta", [
        ("steps", {}, False, "session", "", ["!queue_runners", "@3 images,labels,keys"]),
    ]),
    "reader_pipeline_epochs": (functools.partial(reader_pipeline, num_epochs=2), "reader_pipeline_epochs.meta", [
        ("steps", {}, False, "session", "", ["%init_all", "!queue_runners", "@4 images,labels,keys"]),
    ]),
    "equal_run": (equal_run, "equal_run.pbtxt", [
        ("run", {}, False, "session", "", ["eq_str", "ne_bool", "eq_i64", "eq_half", "ne_bcast"]),
    ]),
    "summary_run": (summary_run, "summary_run.pbtxt", [
        ("run", {}, False, "session", "",
         ["loss_1", "pair", "zero", "activations", "counts", "empty_histogram", "merged/merged"]),
    ]),
    "variables_run": (variables_run, "variables_run.pbtxt", [
        ("run", {}, False, "session", "", ["^init", "^double", "y"]),
    ]),
    "initializers_run": (initializers_run, "initializers_run.pbtxt", [
        ("run", {}, False, "session", "", ["^init", "w", "v", "t", "y"]),
    ]),
    "resource_run": (resource_run, "resource_run.pbtxt", [
        ("run", {"device_count": {"CPU": 2}}, False, "session", "--device-count CPU=2", ["^init", "y"]),
    ]),
    "variables_meta": (variables_run, "variables_meta.meta", [
        ("run", {}, False, "session", "", ["^init", "^train_op", "y"]),
    ]),
    # The cluster run below places and runs it; alone, without its cluster,
    # even soft placement cannot place a node asked for on another job
    # (TensorFlow's error).
    "ps_worker": (ps_worker, "ps_worker.pbtxt", [
        ("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet"),
    ]),
    "ps_worker_train": (functools.partial(ps_worker, train=True), "ps_worker_train.pbtxt", [
        ("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet"),
    ]),
    # Their cluster runs below run them (as ps_worker's); alone, TensorFlow's error.
    "ps_worker_loop": (ps_worker_loop, "ps_worker_loop.pbtxt", [
        ("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet"),
    ]),
    "ps_worker_grad": (ps_worker_grad, "ps_worker_grad.pbtxt", [
        ("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet"),
    ]),
    "ps_worker_nested": (ps_worker_nested, "ps_worker_nested.pbtxt", [
        ("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet"),
    ]),
    # Written only: their goldens are the YAML files' (SAME_AS_YAML).
    "blog_addn": (blog_addn, "blog_addn.pbtxt", []),
    "blog_variables": (blog_variables, "blog_variables.pbtxt", []),
    # Its wrapper blog_cluster_hello.yaml runs it on the blog's cluster
    # (testdata/golden/cluster_cases.txt).
    "blog_cluster_hello": (blog_cluster_hello, "blog_cluster_hello.pbtxt", []),
    "tutorial_matmul": (tutorial_matmul, "tutorial_matmul.pbtxt", []),
    "tutorial_multi_tower": (tutorial_multi_tower, "tutorial_multi_tower.pbtxt", []),
    "colocated_conflict": (colocated_conflict, "colocated_conflict.pbtxt", [
        ("session", {"device_count": {"CPU": 3}}, False, "session", "--device-count CPU=3"),
        ("python", {"device_count": {"CPU": 3}}, False, "python", "--device-count CPU=3 --import python"),
    ]),
}


# YAML wrappers of a graph file above (graph_def: plus config and fetch):
# wrapper file: (case, variant) whose run the wrapper spells out. TensorFlow
# runs the same program, so its golden is that variant's, run as
# `tfrun WRAPPER --log-placement`.
WRAPPERS = {
    "reshape_fill_wrapper.yaml": ("reshape_fill", "run"),
}


# The tower sample at each tower count, with and without
# colocate_gradients_with_ops: the GPU graph (written only: TensorFlow cannot
# place it on this machine's CPU) and the same graph on CPUs, which
# TensorFlow places on `device_count` CPUs.
for _towers in TOWER_COUNTS:
    for _suffix, _colocate in (("", True), ("_nocolocate", False)):
        CASES[f"tower_sample_{_towers}{_suffix}"] = (
            functools.partial(tower_sample, towers=_towers, colocate=_colocate, device="/gpu:{}"),
            f"tower_sample_{_towers}{_suffix}.pb", [])
        CASES[f"tower_sample_cpu_{_towers}{_suffix}"] = (
            functools.partial(tower_sample, towers=_towers, colocate=_colocate, device="/cpu:{}"),
            f"tower_sample_cpu_{_towers}{_suffix}.pb",
            [(f"cpu{_towers}", {"device_count": {"CPU": _towers}}, False, "session", f"--device-count CPU={_towers}")])


def imported_graph(tf, file_name):
    """A graph another tool wrote (tools/golbin_tower_sample.py,
    tools/cifar10_multi_gpu_sample.py, tools/tf_cnn_benchmarks_graphs.py),
    imported as it is: make_graphs writes it back unchanged and places it."""
    graph_def = tf.compat.v1.GraphDef()
    with open(os.path.join(HERE, file_name), "rb") as f:
        graph_def.ParseFromString(f.read())
    tf.compat.v1.import_graph_def(graph_def, name="")


# The seed's own tower sample (golbin's many-GPUs-MNIST.py with tf.layers,
# tools/golbin_tower_sample.py): its GPU towers on this machine's one CPU,
# as TensorFlow's soft placement puts them.
# TensorFlow's CIFAR-10 multi-GPU trainer (tools/cifar10_multi_gpu_sample.py),
# placed as its session asks (allow_soft_placement) on this machine's CPU.
for _towers in (1, 2, 4):
    CASES[f"cifar10_multi_gpu_{_towers}"] = (
        functools.partial(imported_graph, file_name=f"cifar10_multi_gpu_{_towers}.pb"),
        f"cifar10_multi_gpu_{_towers}.pb",
        [("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet")])
# tf_cnn_benchmarks' graphs (tools/tf_cnn_benchmarks_graphs.py): two GPU
# towers, placed with the soft placement its session asks for on this
# machine's CPU.
for _model in ("trivial", "lenet", "resnet20"):
    for _update in ("ps", "replicated", "independent"):
        CASES[f"tfcnn_{_model}_{_update}"] = (
            functools.partial(imported_graph, file_name=f"tfcnn_{_model}_{_update}.pb"),
            f"tfcnn_{_model}_{_update}.pb",
            [("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet")])
for _towers in TOWER_COUNTS:
    CASES[f"golbin_tower_{_towers}"] = (
        functools.partial(imported_graph, file_name=f"golbin_tower_{_towers}.pb"), f"golbin_tower_{_towers}.pb",
        [("soft", {"allow_soft_placement": True}, False, "session", "--soft-placement --quiet")])


def write_p40_goldens():
    """The GPU graph on eight simulated P40s, derived: every op of the
    sample has a GPU kernel for its dtypes in TensorFlow's tables, so the
    placer makes the same groups and choices over GPUs as over CPUs, and
    the placement is TensorFlow's own CPU placement (the cpuN goldens) with
    each CPU:i read as GPU:i; the device mapping is TensorFlow's lines for
    the topology's GPUs."""
    import yaml
    with open(P40_TOPOLOGY) as f:
        gpus = yaml.safe_load(f)["gpus"]
    mapping = ["Device mapping:"] + [
        f"/job:localhost/replica:0/task:0/device:GPU:{i} -> device: {i}, name: {g['name']}, pci bus id: "
        f"{g['pci_bus_id']}, compute capability: {g['compute_capability']}" for i, g in enumerate(gpus)]
    for towers in TOWER_COUNTS:
        for suffix in ("", "_nocolocate"):
            with open(os.path.join(HERE, f"tower_sample_cpu_{towers}{suffix}.cpu{towers}.expected")) as f:
                cpu = f.read().splitlines()
            placement = [line.replace("/device:CPU:", "/device:GPU:") for line in cpu if ": (" in line]
            stem = os.path.join(HERE, f"tower_sample_{towers}{suffix}.p40")
            with open(stem + ".expected", "w") as f:
                f.write("# args: --place-only --log-placement --devices ../../testdata/topologies/p40_x8.yaml\n" +
                        "".join(line + "\n" for line in mapping + placement))
            open(stem + ".expected-stderr", "w").close()
            print(f"tower_sample_{towers}{suffix}.p40: {len(placement)} placement lines (derived)")


# Cluster runs of a graph file above, as tfrun's ps_worker_cluster.yaml wraps
# it (cli/cluster_test.cc runs it under mpirun): one in-process
# tf.distribute.Server per task, on loopback ports of their own, the
# session on worker 0 (the master): `sess.run(init)`, then
# `print(sess.run(y))`. Golden: testdata/golden/GOLDEN.out.
CLUSTER_RUNS = {
    "tf_ps_worker.log": ("ps_worker.pbtxt", ["^init", "y"], True),
    "tf_ps_worker.plain": ("ps_worker.pbtxt", ["^init", "y"], False),
    # The session places the whole graph at its first run: `init` logs every
    # node, the training step's included.
    "tf_ps_worker_train.log": ("ps_worker_train.pbtxt", ["^init"], True),
    # Ten training steps, each print(sess.run([loss, train])[:1]) (tfrun:
    # --init init --targets train --fetch loss --steps 10).
    "tf_ps_worker_train.steps": ("ps_worker_train.pbtxt", ["^init", "@10 loss ^train"], False),
    "tf_ps_worker_loop.log": ("ps_worker_loop.pbtxt", ["^init", "y"], True),
    "tf_ps_worker_loop.plain": ("ps_worker_loop.pbtxt", ["^init", "y"], False),
    "tf_ps_worker_grad.log": ("ps_worker_grad.pbtxt", ["^init", "y", "dw"], True),
    "tf_ps_worker_grad.plain": ("ps_worker_grad.pbtxt", ["^init", "y", "dw"], False),
    "tf_ps_worker_nested.log": ("ps_worker_nested.pbtxt", ["^init", "y", "n"], True),
    "tf_ps_worker_nested.plain": ("ps_worker_nested.pbtxt", ["^init", "y", "n"], False),
}


def run_cluster(golden):
    """In a process of its own: prints what the master's session logs and
    prints."""
    import ctypes
    import tensorflow as tf
    from google.protobuf import text_format
    tf.compat.v1.disable_eager_execution()
    file_name, steps, log = CLUSTER_RUNS[golden]
    ports = iter(range(23500, 23600))
    spec = {job: [f"localhost:{next(ports)}" for _ in tasks] for job, tasks in PS_WORKER_CLUSTER.items()}
    cluster = tf.train.ClusterSpec(spec)
    servers = {(job, i): tf.distribute.Server(cluster, job_name=job, task_index=i, start=True)
               for job in spec for i in range(len(spec[job]))}
    with open(os.path.join(HERE, file_name)) as f:
        graph_def = text_format.Parse(f.read(), tf.compat.v1.GraphDef())
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    config = tf.compat.v1.ConfigProto(log_device_placement=log)
    with tf.compat.v1.Session(servers[("worker", 0)].target, graph=g, config=config) as s:
        for step in steps:
            if step.startswith("^"):
                s.run(g.get_operation_by_name(step[1:]))
                continue
            if step.startswith("@"):  # "@N fetch ^target": N steps, each printing the fetch in a list
                count, fetch, target = step[1:].split(" ")
                for _ in range(int(count)):
                    value = s.run([g.get_tensor_by_name(fetch + ":0"), g.get_operation_by_name(target[1:])])[:1]
                    sys.stdout.flush()
                    ctypes.CDLL(None).fflush(None)
                    print(value, flush=True)
                continue
            value = s.run(g.get_tensor_by_name(step + ":0"))
            sys.stdout.flush()
            ctypes.CDLL(None).fflush(None)
            print(value, flush=True)


def run_case(name, variant):
    """In a process of its own: build, write, place; prints the placement
    lines and TF-ERROR: (escaped newlines) on standard output."""
    import ctypes
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    builder, file_name, variants = CASES[name]
    if variant == "--write-only":
        variants = [(variant, {}, False, "session", "")]
    _, config, _, semantics, _, *fetches = next(v for v in variants if v[0] == variant)
    g = tf.Graph()
    with g.as_default():
        builder(tf)
    path = os.path.join(HERE, file_name)
    if file_name.endswith(".meta"):
        tf.compat.v1.train.export_meta_graph(path, graph=g)
    else:
        tf.io.write_graph(g.as_graph_def(), HERE, file_name, as_text=file_name.endswith(".pbtxt"))
    if variant == "--write-only":
        return
    if semantics == "python":
        graph_def = g.as_graph_def()
        if file_name.endswith(".meta"):
            meta = tf.compat.v1.MetaGraphDef()
            with open(path, "rb") as f:
                meta.ParseFromString(f.read())
            graph_def = meta.graph_def
        g = tf.Graph()
        with g.as_default():
            tf.compat.v1.import_graph_def(graph_def, name="")
    with tf.compat.v1.Session(graph=g, config=tf.compat.v1.ConfigProto(log_device_placement=True, **config)) as s:
        try:
            if fetches:
                for name in fetches[0]:
                    if name == "!queue_runners":  # tf.train.start_queue_runners (tfrun: a .meta's, by default)
                        coordinator = tf.compat.v1.train.Coordinator()
                        tf.compat.v1.train.start_queue_runners(sess=s, coord=coordinator)
                        continue
                    if name.startswith("@"):  # "@N a,b": N steps of print(sess.run([a, b])) (tfrun --steps N)
                        steps, names = name[1:].split(" ")
                        tensors = [g.get_tensor_by_name(n + ":0") for n in names.split(",")]
                        for step in range(int(steps)):
                            try:
                                values = s.run(tensors)
                            except tf.errors.OpError as e:
                                sys.stdout.flush()
                                ctypes.CDLL(None).fflush(None)
                                text = e.message.splitlines()
                                text = "\\n".join(text[text.index(f"Node: '{e.op.name}'") + 1:])
                                print(f"TF-STEP-ERROR: {step + 1} {type(e).__name__} {e.op.name} {text}", flush=True)
                                break
                            sys.stdout.flush()
                            ctypes.CDLL(None).fflush(None)
                            print(values, flush=True)
                        continue
                    if name.startswith("^") or name.startswith("%"):
                        ops = [op for op in g.get_operations() if op.name == name[1:]] or g.get_collection(name[1:])
                        s.run(ops)
                        continue
                    value = s.run(g.get_tensor_by_name(name + ":0"))
                    sys.stdout.flush()
                    ctypes.CDLL(None).fflush(None)  # the placement lines (C's stdout) first
                    print(value, flush=True)
            else:
                s.run(g.get_operation_by_name("init"))
        except tf.errors.OpError as e:
            sys.stdout.flush()
            ctypes.CDLL(None).fflush(None)
            print("TF-ERROR: " + e.message.replace("\n", "\\n"), flush=True)


def node_location(file_name, node):
    """Where tfrun locates a node of a text GraphDef: its `name` field's
    line and column; a binary file has no lines."""
    if not file_name.endswith(".pbtxt"):
        return file_name
    with open(os.path.join(HERE, file_name)) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip("\n") == f'  name: "{node}"':
                return f"{file_name}:{number}:3"
    sys.exit(f"{file_name}: no node {node}")


def tfrun_error(line, file_name):
    """TensorFlow's status text as tfrun prints it: after the file's
    location of the node TensorFlow names in its trailing [[{{node x}}]],
    from "Cannot ..." on, the "Node attrs:" sorted (TensorFlow prints them
    in its protobuf map's order, which changes from run to run)."""
    text = line.split(": ", 1)[1]
    # Python may shorten the trailing [[{{node x}}]] to [[x]].
    node = re.search(r"\[\[(?:\{\{node )?([^}\]]*)(?:\}\})?\]\]", text).group(1)
    text = text[text.find("Cannot "):].split("\\n\t [[")[0]
    lines = normalized(text.split("\\n"))
    return f"tfrun: error: {node_location(file_name, node)}: InvalidArgumentError: " + "\n".join(lines) + "\n"


# PROCESSOR_VARIANT: a variant named with "{processor}" holds values that
# start from the processor's estimates (rcpps, rsqrtps), whose bits differ
# between processor makers: its file is named for this machine's maker
# (NAME.estimates-GenuineIntel.expected) and says `# processor: MAKER`, so
# `tfrun test` checks it only on that maker's processors.
def processor_vendor():
    with open("/proc/cpuinfo") as f:
        return next((l.split(":", 1)[1].strip() for l in f if l.startswith("vendor_id")), "unknown")


def tfrun_fetch_args(entry):
    """A CASES fetch entry as tfrun's flags: "^op" a target, "%op" an init,
    "!queue_runners"
    nothing (tfrun starts a .meta's), "@N a,b" N steps fetching a and b."""
    if entry.startswith("^"):
        return f" --targets {entry[1:]}"
    if entry.startswith("%"):  # sess.run(init) before the steps
        return f" --init {entry[1:]}"
    if entry == "!queue_runners":
        return ""
    if entry.startswith("@"):
        steps, names = entry[1:].split(" ")
        return f" --steps {steps}" + "".join(f" --fetch {n}" for n in names.split(","))
    return f" --fetch {entry}"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--cluster":
        run_cluster(sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] != "--only":
        run_case(sys.argv[1], sys.argv[2])
        return
    # --only NAME...: those cases alone (the rest needs the CUDA wheel).
    only = set(sys.argv[2:]) if len(sys.argv) > 2 and sys.argv[1] == "--only" else None
    for name, (_, file_name, variants) in CASES.items():
        if only is not None and name not in only:
            continue
        if not variants:
            subprocess.run([sys.executable, __file__, name, "--write-only"], check=True, capture_output=True,
                           env=dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3"))
            print(f"{name}: written")
        for variant, _, xla, _, args, *fetches in variants:
            env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="0", TF_ENABLE_ONEDNN_OPTS="0")
            if xla:
                env["TF_XLA_FLAGS"] = "--tf_xla_enable_xla_devices"
            p = subprocess.run([sys.executable, __file__, name, variant], capture_output=True, text=True, env=env)
            placement = [l for l in p.stdout.splitlines() if re.match(r"^\S+: \(\w+\): /job:", l)]
            # What the program printed after placement: the fetched values.
            printed = [l for l in p.stdout.splitlines() if l not in placement and not l.startswith("TF-ERROR: ")] \
                if fetches else []
            errors = [l for l in p.stdout.splitlines() if l.startswith("TF-ERROR: ")]
            # A run's error in a --steps loop: tfrun's line for the step, the node and TensorFlow's text.
            step_errors = [l.split(" ", 4)[1:] for l in p.stdout.splitlines() if l.startswith("TF-STEP-ERROR: ")]
            printed = [l for l in printed if not l.startswith("TF-STEP-ERROR: ")]
            # The mapping DirectSession logs (standard error, LOG(INFO)).
            mapping = []
            lines = p.stderr.splitlines()
            for i, l in enumerate(lines):
                m = re.search(r"direct_session\.cc:\d+\] (Device mapping:.*)$", l)
                if m:
                    mapping = [m.group(1)]
                    mapping += [x for x in lines[i + 1:] if x.startswith("/job:")]
                    break
            if not mapping:
                sys.exit(f"{name}.{variant}: no device mapping in TensorFlow's log:\n{p.stderr[-2000:]}")
            tfrun_args = ("TF_XLA_FLAGS=--tf_xla_enable_xla_devices " if xla else "") + \
                (("--log-placement " + args).rstrip() + "".join(tfrun_fetch_args(f) for f in fetches[0]) if fetches
                 else "--place-only --log-placement " + args)
            stem = os.path.join(HERE, f"{name}.{variant}".replace("{processor}", processor_vendor()))
            with open(stem + ".expected", "w") as f:
                f.write(f"# args: {tfrun_args}\n" + ("# exit: 3\n" if errors else "") +
                        (f"# processor: {processor_vendor()}\n" if "{processor}" in variant else "") +
                        ("# exit: 4\n" if step_errors else "") +
                        "".join(x + "\n" for x in mapping + placement + printed))
            # What TensorFlow logs while it builds the colocation groups
            # (LOG(INFO)), which tfrun prints as its own info lines.
            notes = [m.group(1) for m in (re.search(r"colocation_graph\.cc:\d+\] (Ignoring device specification .*)$", l)
                                          for l in p.stderr.splitlines()) if m]
            with open(stem + ".expected-stderr", "w") as f:
                f.write("".join(f"tfrun: info: {n}\n" for n in notes))
                if errors:
                    f.write(tfrun_error(errors[0], file_name))
                for step, kind, node, text in step_errors:
                    text = text.replace("\\n", "\n")
                    f.write(f"tfrun: error: step {step}: {node_location(file_name, node)}: node '{node}' on {CPU0}: "
                            f"{kind}: {text}\n")
            print(f"{name}.{variant}: {len(placement)} placement lines{', an error' if errors else ''}")
    if only is not None:
        return
    write_p40_goldens()
    for graph_file, variant, golden, args in SAME_AS_YAML:
        stem = os.path.join(HERE, graph_file.rsplit(".", 1)[0] + "." + variant)
        for ext in (".expected", ".expected-stderr"):
            with open(os.path.join(HERE, "..", golden + ext)) as f:
                lines = f.read().splitlines(keepends=True)
            if ext == ".expected":
                lines = [f"# args: {args}\n"] + [line for line in lines if not line.startswith("# args:")]
            else:  # a path tfrun names, from one folder further down
                lines = [line.replace(" ../testdata/", " ../../testdata/") for line in lines]
            with open(stem + ext, "w") as f:
                f.write("".join(lines))
        print(f"{graph_file}: graphs/{golden}'s output")
    for golden in CLUSTER_RUNS:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
        p = subprocess.run([sys.executable, __file__, "--cluster", golden], capture_output=True, text=True, env=env,
                           timeout=300)
        if p.returncode != 0:
            sys.exit(f"{golden}: the cluster run failed:\n{p.stderr[-2000:]}")
        with open(os.path.join(HERE, "..", "..", "testdata", "golden", golden + ".out"), "w") as f:
            f.write(p.stdout)
        print(f"{golden}: {len(p.stdout.splitlines())} lines")
    for wrapper, (name, variant) in WRAPPERS.items():
        stem = os.path.join(HERE, f"{name}.{variant}")
        with open(stem + ".expected") as f:
            lines = f.read().split("\n", 1)[1]
        wrapper_stem = os.path.join(HERE, wrapper.rsplit(".", 1)[0])
        with open(wrapper_stem + ".expected", "w") as f:
            f.write("# args: --log-placement\n" + lines)
        with open(stem + ".expected-stderr") as src, open(wrapper_stem + ".expected-stderr", "w") as dst:
            dst.write(src.read())
        print(f"{wrapper}: {name}.{variant}'s run")


if __name__ == "__main__":
    main()
