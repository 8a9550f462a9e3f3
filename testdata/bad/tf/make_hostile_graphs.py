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


CASES = [read_wrong_dtype, assign_wrong_dtype, assign_add_wrong_dtype]


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
