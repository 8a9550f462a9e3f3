#!/usr/bin/env python3
"""Hostile TensorFlow graphs (issue 40) and what TensorFlow 2.21 does with
each: the goldens beside them (testdata/golden/DERIVATIONS.md, "Hostile
graphs").

Run under TensorFlow 2.21 (tools/setup_tensorflow.sh):

  $(tools/setup_tensorflow.sh) testdata/bad/tf/make_hostile_graphs.py

Each case builds a tf.compat.v1 graph with raw ops (so Python's own checks
cannot stop it), writes it as NAME.pbtxt, runs its one fetch or target in a
Session and writes NAME.expected (`# args:`, `# exit:` and what the program
prints) and NAME.expected-stderr: TensorFlow's error text, after the
location and device tfrun puts before every node error, with TensorFlow's
trailing [[{{node x}}]] line. Cases where TensorFlow itself crashes are not
here: tfrun's line for those is its own (the unit tests hold them).
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def read_wrong_dtype(tf, rv):
    """A bool variable read through a second handle of its shared name that
    says double: the read would hand MatMul 8 bytes an element of 1."""
    h = rv.var_handle_op(dtype=tf.bool, shape=[2, 2], shared_name="w", name="w")
    a = rv.assign_variable_op(h, tf.constant([[True, False], [True, True]]), name="assign")
    h2 = rv.var_handle_op(dtype=tf.double, shape=[2, 2], shared_name="w", name="w2")
    with tf.control_dependencies([a]):
        r = rv.read_variable_op(h2, dtype=tf.double, name="read")
    tf.matmul(r, tf.ones([2, 2], tf.double), name="product")
    return "--fetch product"


def assign_wrong_dtype(tf, rv):
    """A float variable assigned a double through a second handle."""
    h = rv.var_handle_op(dtype=tf.float32, shape=[2], shared_name="w", name="w")
    a = rv.assign_variable_op(h, tf.constant([1., 2.]), name="assign")
    h2 = rv.var_handle_op(dtype=tf.double, shape=[2], shared_name="w", name="w2")
    with tf.control_dependencies([a]):
        rv.assign_variable_op(h2, tf.constant([1., 2.], tf.double), name="assign2")
    return "--targets assign2"


def assign_add_wrong_dtype(tf, rv):
    """assign_add of an int32 to a float variable through a second handle."""
    h = rv.var_handle_op(dtype=tf.float32, shape=[2], shared_name="w", name="w")
    a = rv.assign_variable_op(h, tf.constant([1., 2.]), name="assign")
    h2 = rv.var_handle_op(dtype=tf.int32, shape=[2], shared_name="w", name="w2")
    with tf.control_dependencies([a]):
        rv.assign_add_variable_op(h2, tf.constant([1, 2]), name="add")
    return "--targets add"


def held(tf, value, dtype, name):
    """A value the graph holds but shape inference does not fold (so
    Python's graph construction cannot refuse what the kernel must)."""
    import numpy as np
    return tf.compat.v1.placeholder_with_default(np.array(value, dtype), shape=None, name=name)


def sum_duplicate_axes(tf, rv):
    """reduce_sum over axes [0, 0]: TensorFlow reduces, it does not refuse."""
    tf.raw_ops.Sum(input=held(tf, [[1., 2.], [3., 4.]], "float32", "x"), axis=held(tf, [0, 0], "int32", "axes"),
                   name="sum")
    return "--fetch sum"


def max_duplicate_axes(tf, rv):
    """reduce_max over axes [1, -1] keeping dimensions."""
    tf.raw_ops.Max(input=held(tf, [[1., 2.], [3., 4.]], "float32", "x"), axis=held(tf, [1, -1], "int32", "axes"),
                   keep_dims=True, name="max")
    return "--fetch max"


def conv_empty_filter(tf, rv):
    """A Conv2D whose filter has a zero dimension."""
    import numpy as np
    tf.raw_ops.Conv2D(input=held(tf, np.ones([1, 3, 3, 2]), "float32", "image"),
                      filter=held(tf, np.ones([3, 3, 2, 0]), "float32", "filter"), strides=[1, 1, 1, 1],
                      padding="SAME", name="conv")
    return "--fetch conv"


def floormod_most_negative(tf, rv):
    """FloorMod(INT_MIN, -1): 0 in TensorFlow (SIGFPE in C++'s %)."""
    tf.raw_ops.FloorMod(x=held(tf, [-2 ** 31, 7, -7], "int32", "x"), y=held(tf, [-1, -1, -1], "int32", "y"),
                        name="mod")
    return "--fetch mod"


def reshape_overflow(tf, rv):
    """An empty tensor reshaped to [2^62, 2^62, -1]."""
    tf.raw_ops.Reshape(tensor=held(tf, [], "float32", "x"), shape=held(tf, [2 ** 62, 2 ** 62, -1], "int64", "shape"),
                       name="reshaped")
    return "--fetch reshaped"


def range_wider_than_int64(tf, rv):
    """Range from -2^63 + 5 to 2^63 - 1 by 2^62: a span past int64."""
    tf.raw_ops.Range(start=held(tf, -2 ** 63 + 5, "int64", "start"), limit=held(tf, 2 ** 63 - 1, "int64", "limit"),
                     delta=held(tf, 2 ** 62, "int64", "delta"), name="range")
    return "--fetch range"


def const_of_another_dtype(tf, rv):
    """A Const whose TensorProto is float and whose dtype attr int32."""
    from tensorflow.core.framework import attr_value_pb2, tensor_pb2, types_pb2
    value = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[3.0])
    op = tf.compat.v1.get_default_graph().create_op(
        "Const", [], [tf.int32], name="k",
        attrs={"dtype": attr_value_pb2.AttrValue(type=types_pb2.DT_INT32),
               "value": attr_value_pb2.AttrValue(tensor=value)})
    tf.identity(op.outputs[0], name="y")
    return "--fetch y"


def avg_pool_grad_wrong_grad(tf, rv):
    """AvgPoolGrad of a 4x4 input pooled 2x2 (a 2x2 output) given a 3x3
    gradient: TensorFlow's kernel would index past it."""
    import numpy as np
    tf.raw_ops.AvgPoolGrad(orig_input_shape=held(tf, [1, 4, 4, 1], "int32", "shape"),
                           grad=held(tf, np.ones([1, 3, 3, 1]), "float32", "grad"), ksize=[1, 2, 2, 1],
                           strides=[1, 2, 2, 1], padding="VALID", name="dx")
    return "--fetch dx"


def lrn_of_a_matrix(tf, rv):
    """LRN of a 2-D tensor."""
    import numpy as np
    tf.raw_ops.LRN(input=held(tf, np.ones([3, 4]), "float32", "x"), name="lrn")
    return "--fetch lrn"


def lrn_grad_shapes(tf, rv):
    """LRNGrad whose output image is smaller than its input image."""
    import numpy as np
    tf.raw_ops.LRNGrad(input_grads=held(tf, np.ones([1, 2, 2, 3]), "float32", "g"),
                       input_image=held(tf, np.ones([1, 2, 2, 3]), "float32", "x"),
                       output_image=held(tf, np.ones([1, 2, 1, 3]), "float32", "y"), name="dlrn")
    return "--fetch dlrn"


def batch_norm_short_scale(tf, rv):
    """FusedBatchNormV3 for inference with 2 scales for 3 channels."""
    import numpy as np
    tf.raw_ops.FusedBatchNormV3(x=held(tf, np.ones([1, 2, 2, 3]), "float32", "x"),
                                scale=held(tf, [1.0, 1.0], "float32", "scale"),
                                offset=held(tf, [0.0, 0.0, 0.0], "float32", "offset"),
                                mean=held(tf, [0.0, 0.0, 0.0], "float32", "mean"),
                                variance=held(tf, [1.0, 1.0, 1.0], "float32", "variance"),
                                is_training=False, name="bn")
    return "--fetch bn"


def scatter_index_out_of_range(tf, rv):
    """ScatterAdd whose 2-D indices hold a row past the variable."""
    v = tf.compat.v1.Variable([1.0, 2.0, 3.0], name="v", use_resource=False)
    with tf.control_dependencies([v.initializer]):
        tf.raw_ops.ScatterAdd(ref=v._ref(), indices=held(tf, [[0, 2], [5, 1]], "int32", "indices"),
                              updates=held(tf, [[1.0, 1.0], [1.0, 1.0]], "float32", "updates"), name="add")
    return "--targets add"


def histogram_of_nan(tf, rv):
    """A histogram summary of values holding a NaN."""
    tf.raw_ops.HistogramSummary(tag=tf.constant("h"), values=held(tf, [1.0, float("nan")], "float32", "values"),
                                name="histogram")
    return "--fetch histogram"


def queue_closed_and_short(tf, rv):
    """dequeue_many(3) of a closed FIFOQueue holding 2."""
    q = tf.queue.FIFOQueue(5, [tf.float32], shapes=[[]], name="q")
    enq = q.enqueue_many([tf.constant([1.0, 2.0])])
    with tf.control_dependencies([enq]):
        close = q.close()
    with tf.control_dependencies([close]):
        tf.identity(q.dequeue_many(3), name="rows")
    return "--fetch rows"


def queue_enqueue_after_close(tf, rv):
    """An enqueue into a closed queue."""
    q = tf.queue.FIFOQueue(5, [tf.int32], name="q")
    close = q.close()
    with tf.control_dependencies([close]):
        q.enqueue([tf.constant(1)], name="late")
    return "--targets late"


def queue_shape_mismatch(tf, rv):
    """A [3] vector into a queue of [2] vectors."""
    q = tf.queue.FIFOQueue(5, [tf.float32], shapes=[[2]], name="q")
    q.enqueue([held(tf, [1.0, 2.0, 3.0], "float32", "x")], name="enq")
    return "--targets enq"


def queue_signature_mismatch(tf, rv):
    """An int32 component into a float queue."""
    q = tf.queue.FIFOQueue(5, [tf.float32], name="q")
    tf.raw_ops.QueueEnqueueV2(handle=q.queue_ref, components=[tf.constant([1, 2])], name="enq")
    return "--targets enq"


def queue_many_without_shapes(tf, rv):
    """dequeue_many of a FIFOQueue whose components have no shapes."""
    q = tf.queue.FIFOQueue(5, [tf.float32], name="q")
    enq = q.enqueue([tf.constant([1.0])])
    with tf.control_dependencies([enq]):
        tf.identity(q.dequeue_many(1), name="rows")
    return "--fetch rows"


def stateless_seed_shape(tf, rv):
    """StatelessRandomGetKeyCounter of a seed of 3 numbers."""
    tf.raw_ops.StatelessRandomGetKeyCounter(seed=held(tf, [1, 2, 3], "int32", "seed"), name="kc")
    return "--fetch kc"


def stateless_counter_short(tf, rv):
    """StatelessRandomUniformV2 with ThreeFry's id and a counter of one
    number (TensorFlow checks the counter's length against the id)."""
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2])
    tf.raw_ops.StatelessRandomUniformV2(shape=[3], key=key, counter=counter[:1], alg=held(tf, 2, "int32", "alg"),
                                        name="u")
    return "--fetch u"


def stateless_unknown_algorithm(tf, rv):
    """StatelessRandomNormalV2 with an algorithm id TensorFlow has not."""
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=[1, 2])
    tf.raw_ops.StatelessRandomNormalV2(shape=[3], key=key, counter=counter, alg=held(tf, 7, "int32", "alg"),
                                       name="n")
    return "--fetch n"


def decode_raw_sizes_differ(tf, rv):
    """DecodeRaw of two strings of 4 and 2 bytes."""
    tf.io.decode_raw(held(tf, [b"abcd", b"ef"], "object", "bytes"), tf.uint8, name="raw")
    return "--fetch raw"


def decode_raw_not_a_multiple(tf, rv):
    """DecodeRaw of 6 bytes as int32."""
    tf.io.decode_raw(held(tf, [b"abcdef"], "object", "bytes"), tf.int32, name="raw")
    return "--fetch raw"


def transpose_perm_repeats(tf, rv):
    """Transpose of a 2x3 matrix by perm [0, 0]."""
    tf.transpose(tf.constant([[1, 2, 3], [4, 5, 6]]), held(tf, [0, 0], "int32", "perm"), name="t")
    return "--fetch t"


CASES = [read_wrong_dtype, assign_wrong_dtype, assign_add_wrong_dtype, sum_duplicate_axes, max_duplicate_axes,
         conv_empty_filter, floormod_most_negative, reshape_overflow, range_wider_than_int64, const_of_another_dtype,
         avg_pool_grad_wrong_grad, lrn_of_a_matrix, lrn_grad_shapes, batch_norm_short_scale,
         scatter_index_out_of_range, histogram_of_nan, queue_closed_and_short, queue_enqueue_after_close,
         queue_shape_mismatch, queue_signature_mismatch, queue_many_without_shapes, stateless_seed_shape,
         stateless_counter_short, stateless_unknown_algorithm, decode_raw_sizes_differ, decode_raw_not_a_multiple,
         transpose_perm_repeats]


def node_line(text, node):
    """Where tfrun locates a node of a text GraphDef: its name's line."""
    for number, line in enumerate(text.splitlines(), 1):
        if line == f'  name: "{node}"':
            return number
    sys.exit(f"no node {node}")


def run_case(builder):
    """In a process of its own: build, write, run; prints the case's tfrun
    flags, then OK and the value, or ERROR, the node and TensorFlow's text."""
    import numpy as np  # noqa: F401  (the printed value is NumPy's str)
    import tensorflow as tf
    from tensorflow.python.ops import gen_resource_variable_ops as rv
    tf.compat.v1.disable_eager_execution()
    g = tf.Graph()
    with g.as_default():
        args = builder(tf, rv)
    tf.io.write_graph(g.as_graph_def(), HERE, builder.__name__ + ".pbtxt", as_text=True)
    print(args)
    flag, name = args.split()
    with tf.compat.v1.Session(graph=g) as s:
        try:
            if flag == "--fetch":
                print("OK", s.run(g.get_tensor_by_name(name + ":0")))
            else:
                s.run(g.get_operation_by_name(name))
                print("OK")
        except tf.errors.OpError as e:
            lines = e.message.splitlines()
            text = "\n".join(lines[lines.index(f"Node: '{e.op.name}'") + 1:])
            print("ERROR", e.op.name, type(e).__name__)
            print(text)


def main():
    if len(sys.argv) == 2:
        run_case(next(c for c in CASES if c.__name__ == sys.argv[1]))
        return
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    for case in CASES:
        p = subprocess.run([sys.executable, __file__, case.__name__], capture_output=True, text=True, env=env,
                           check=True)
        args, out = p.stdout.split("\n", 1)
        graph_file = case.__name__ + ".pbtxt"
        with open(os.path.join(HERE, graph_file)) as f:
            graph_text = f.read()
        stem = os.path.join(HERE, case.__name__)
        if out.startswith("ERROR"):
            head, text = out.split("\n", 1)
            _, node, kind = head.split()
            stderr = (f"tfrun: error: {graph_file}:{node_line(graph_text, node)}:3: node '{node}' on {CPU0}: "
                      f"{kind}: {text}")
            expected = f"# args: {args}\n# exit: 4\n"
        else:
            stderr = ""
            expected = f"# args: {args}\n" + out[3:]
        with open(stem + ".expected", "w") as f:
            f.write(expected)
        with open(stem + ".expected-stderr", "w") as f:
            f.write(stderr)
        print(f"{case.__name__}: {'an error' if stderr else 'a value'}")


if __name__ == "__main__":
    main()
