#!/usr/bin/env python3
"""Writes a tf.function call as a file tfrun places (issue 43): the
function's concrete graph, its library with the function itself added, and
the call facts (which function, where its arguments live) as tfrun's flags.

In your TensorFlow 2 program, after the tensors and variables the function
reads exist:

    import sys; sys.path.insert(0, "/path/to/tfrun/tools")
    from export_tf2_function import export_call
    flags = export_call(f, x, y, path="f.pbtxt")   # f: a tf.function; x, y: its arguments
    print(flags)                                    # --call __inference_f_9 --arg-device x=/job:...

then `tfrun f.pbtxt $FLAGS --log-placement --device-count CPU=3` prints the
placement eager TensorFlow 2 logs when it calls f(x, y) on that machine
(add --call-device DEVICE for a call made under tf.device(DEVICE);
--devices or --topology for GPUs you do not have). A function whose
arguments live on GPUs this machine lacks: give `arg_devices` (a device per
argument, captured variables last) instead of the tensors' own.

A MirroredStrategy train step meant for N GPUs, on a machine without them:
TensorFlow cannot trace it for GPUs it lacks (eager soft placement moves the
replicas' variables to the CPU, and the traced step names that device).
Trace it on N+1 logical CPUs instead, CPU:1..CPU:N standing in for
GPU:0..GPU:N-1 and CPU:0 the host, with the program under
tf.device("/CPU:1"), where a GPU machine's default device (GPU:0) puts it:

    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * (N + 1))
    with tf.device("/CPU:1"):
        strategy = tf.distribute.MirroredStrategy([f"/CPU:{i + 1}" for i in range(N)])
        ...  # build, compile and fit the model as the program does
    flags = export_concrete(concrete, path="step.pbtxt", arg_devices=devices, stand_in_gpus=True)

`stand_in_gpus` writes each device CPU:k (k >= 1) as GPU:k-1 and the
collectives' communication hint as NCCL, as a GPU machine traces the step
(MirroredStrategy picks NCCL for physical GPUs and ring for CPUs; nothing
else in its step depends on the device type: mirrored_strategy.py,
cross_device_utils.py). graphs/tf/make_tf2_calls.py's mirrored_gpu_N cases
do this; tfrun places the file with --devices.
"""
import re

import tensorflow as tf


def export_call(fn, *args, path, arg_devices=None, **kwargs):
    """`fn`'s concrete function for `args` written to `path` (text GraphDef
    for .pbtxt, else binary); returns tfrun's flags for the call."""
    concrete = fn.get_concrete_function(*args, **kwargs)
    if arg_devices is None:
        # Where each argument lives: the tensors given, then the captured
        # variables' handles (the FunctionDef's inputs in that order).
        given = [t.device for t in tf.nest.flatten((args, kwargs)) if isinstance(t, (tf.Tensor, tf.Variable))]
        arg_devices = given + [t.device for t in concrete.captured_inputs]
    return export_concrete(concrete, path=path, arg_devices=arg_devices)


def stand_in_gpu(device):
    """CPU:k (k >= 1) as GPU:k-1; CPU:0, the host, and others as they are."""
    m = re.match(r"^(.*(?:device:|/))(?:CPU|cpu):(\d+)$", device)
    return f"{m.group(1)}GPU:{int(m.group(2)) - 1}" if m and int(m.group(2)) >= 1 else device


def _stand_in_gpus(graph_def):
    """Every node's and function node's device through stand_in_gpu; the
    collectives' communication hint as a GPU machine sets it."""
    nodes = list(graph_def.node) + [n for f in graph_def.library.function for n in f.node_def]
    for node in nodes:
        node.device = stand_in_gpu(node.device)
        if node.op.startswith("Collective") and "communication_hint" in node.attr:
            node.attr["communication_hint"].s = b"nccl"


def export_concrete(concrete, path, arg_devices, stand_in_gpus=False):
    """A concrete function (one Keras traced: model.train_function's) written
    as export_call writes one; `arg_devices`: a device per FunctionDef input
    ("" for the call's). `stand_in_gpus`: logical CPUs 1..N stood in for
    GPUs 0..N-1 (this file's docstring)."""
    graph_def = concrete.graph.as_graph_def()
    name = concrete.function_def.signature.name
    if all(f.signature.name != name for f in graph_def.library.function):
        graph_def.library.function.add().CopyFrom(concrete.function_def)
    if stand_in_gpus:
        _stand_in_gpus(graph_def)
        arg_devices = [stand_in_gpu(d) for d in arg_devices]
    names = [a.name for a in concrete.function_def.signature.input_arg]
    directory, file_name = path.rsplit("/", 1) if "/" in path else (".", path)
    tf.io.write_graph(graph_def, directory, file_name, as_text=path.endswith(".pbtxt"))
    flags = ["--call", name]
    for arg, device in zip(names, arg_devices):
        if device:
            flags += ["--arg-device", f"{arg}={device}"]
    return " ".join(flags)


def variable_values():
    """Every resource variable's value now, by its handle's id: call it
    before a Keras train step's first call, pass the result to
    train_step_feeds after the step was traced (and ran)."""
    import gc
    from tensorflow.python.ops import resource_variable_ops
    return {id(v.handle): v.numpy() for v in gc.get_objects()
            if isinstance(v, resource_variable_ops.BaseResourceVariable) and v.handle is not None}


def train_step_feeds(concrete, before, arg_devices=False):
    """tfrun's flags (an argv list) that give a traced train step's captured
    arguments what they held before its first step: each variable's value
    (from `before`, variable_values()'s; a variable made while tracing,
    which only a collective's ordering token is, read now and checked
    unwritten), each call-time int32 (a collective's instance key);
    with `arg_devices`, each variable's device too."""
    import json
    import numpy as np
    names = [a.name for a in concrete.function_def.signature.input_arg]
    flags = []
    for name, value in zip(names[len(names) - len(concrete.captured_inputs):], concrete.captured_inputs):
        if value.dtype != tf.resource:
            flags += ["--feed", f"{name}={int(value.numpy())}"]
            continue
        held = before.get(id(value))
        if held is None:
            held = tf.raw_ops.ReadVariableOp(resource=value, dtype=tf.float32).numpy()
            assert held.shape == () and held == 0.0, f"{name}: a variable made while tracing holds {held}"
        if arg_devices:
            flags += ["--arg-device", f"{name}={value.device}"]
        flags += ["--feed", f"{name}={json.dumps(np.asarray(held).tolist()).replace(' ', '')}"]
    return flags
