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
"""
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


def export_concrete(concrete, path, arg_devices):
    """A concrete function (one Keras traced: model.train_function's) written
    as export_call writes one; `arg_devices`: a device per FunctionDef input
    ("" for the call's)."""
    graph_def = concrete.graph.as_graph_def()
    name = concrete.function_def.signature.name
    if all(f.signature.name != name for f in graph_def.library.function):
        graph_def.library.function.add().CopyFrom(concrete.function_def)
    names = [a.name for a in concrete.function_def.signature.input_arg]
    directory, file_name = path.rsplit("/", 1) if "/" in path else (".", path)
    tf.io.write_graph(graph_def, directory, file_name, as_text=path.endswith(".pbtxt"))
    flags = ["--call", name]
    for arg, device in zip(names, arg_devices):
        if device:
            flags += ["--arg-device", f"{arg}={device}"]
    return " ".join(flags)
