#!/usr/bin/env python3
"""Writes TensorFlow's own op and kernel tables into core/tables/.

Run under TensorFlow 2.21's CUDA build (tools/setup_tensorflow.sh cuda),
which registers every GPU kernel without a GPU or a driver:

  $(tools/setup_tensorflow.sh cuda) tools/gen_tf_tables.py core/tables/tf_ops.tsv

One line per op, sorted by the bytes of its name: tfrun embeds the file and
finds an op by binary search, so a run reads only the lines of the ops its
graph uses. Lines starting with '#' (the header: the TensorFlow version and
counts) sort first. Fields are separated by tabs:

  NAME  FLAGS  INPUTS  OUTPUTS  ATTRS  KERNEL...

FLAGS   comma-separated: stateful, no_op_def (kernels registered for an op
        without an OpDef), allows_uninitialized_input; "-" for none.
INPUTS, OUTPUTS
        ';'-separated ArgDefs NAME:SPEC, SPEC one of
          =TYPE  a fixed type          T      type_attr
          N*T    number_attr of T      N*=TYPE number_attr of a fixed type
          [L]    type_list_attr
        with a trailing '&' for a reference (is_ref).
ATTRS   ';'-separated AttrDefs NAME:TYPE[=DEFAULT][@ALLOWED][>MINIMUM].
KERNEL  one field per KernelDef of any device type (TPU and XLA_*_JIT
        included: TensorFlow's "Registered kernels:" texts list them), in
        the order `import tensorflow` lists them (the order of those texts):
          DEVICE_TYPE|PRIORITY|LABEL|HOST_MEMORY_ARGS|CONSTRAINTS
        then, each prefixed '+', the kernels TensorFlow registers only once
        the XLA devices exist (TF_XLA_FLAGS=--tf_xla_enable_xla_devices).
        Last, for an op whose kernels TensorFlow lists in another order
        once those exist (its registry is a hash map, rehashed as they
        register), a field @I,J,K...: the kernel fields' indices (from 0)
        in that order.
        HOST_MEMORY_ARGS comma-separated; CONSTRAINTS ';'-separated
        NAME:KIND=VALUES, KIND one of type, string, int, bool.

Values: types without their DT_ prefix (FLOAT, INT32, RESOURCE); strings
%-escaped outside [A-Za-z0-9_./ -]; bools true/false; shapes ?
(unknown rank) or (2x-1); lists comma-separated (a list attr's value, or
ALLOWED). The tool enables the XLA devices and creates a Session to list those.
"""
import collections
import os
import sys

os.environ["TF_XLA_FLAGS"] = "--tf_xla_enable_xla_devices"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import op_def_pb2, types_pb2  # noqa: E402
from tensorflow.python.client import pywrap_tf_session as c_api  # noqa: E402
from tensorflow.python.framework import kernels  # noqa: E402

SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./ -")


def type_name(t):
    name = types_pb2.DataType.Name(t)
    assert name.startswith("DT_"), name
    return name[3:]


def string(b):
    return "".join(chr(c) if c in SAFE else "%%%02X" % c for c in b)


def shape(s):
    return "?" if s.unknown_rank else "(" + "x".join(str(d.size) for d in s.dim) + ")"


def scalar(kind, x):
    if kind == "s":
        return string(x)
    if kind == "i":
        return str(x)
    if kind == "f":
        return repr(x)
    if kind == "b":
        return "true" if x else "false"
    if kind == "type":
        return type_name(x)
    if kind == "shape":
        return shape(x)
    if kind == "func":
        return string(x.name.encode())
    raise ValueError(kind)


def value(v):
    """An AttrValue: a scalar, or a list's elements comma-separated."""
    kind = v.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "list":
        for k in ("s", "i", "f", "b", "type", "shape", "func"):
            items = getattr(v.list, k)
            if items:
                return ",".join(scalar(k, x) for x in items)
        return ""
    if kind == "tensor":
        # A handful of OpDefs default to a tensor; placement never reads it.
        return string(" ".join(str(v.tensor).split()).encode())
    if kind == "placeholder":
        return string(v.placeholder.encode())
    return scalar(kind, getattr(v, kind))


def list_kind(v):
    """The element kind of a constraint's allowed values."""
    kinds = {"s": "string", "i": "int", "b": "bool", "type": "type"}
    for k, name in kinds.items():
        if getattr(v.list, k):
            return name
    return "type"


def arg(a):
    if a.type_list_attr:
        spec = "[" + a.type_list_attr + "]"
    else:
        base = a.type_attr if a.type_attr else "=" + type_name(a.type)
        spec = (a.number_attr + "*" if a.number_attr else "") + base
    return a.name + ":" + spec + ("&" if a.is_ref else "")


def attr_def(a):
    out = a.name + ":" + a.type
    if a.HasField("default_value"):
        out += "=" + value(a.default_value)
    if a.HasField("allowed_values"):
        out += "@" + value(a.allowed_values)
    if a.has_minimum:
        out += ">" + str(a.minimum)
    return out


def kernel_def(k):
    """(device type, the KernelDef's field)."""
    constraints = ";".join(
        c.name + ":" + list_kind(c.allowed_values) + "=" + value(c.allowed_values) for c in k.constraint)
    return k.device_type, "|".join([k.device_type, str(k.priority), k.label, ",".join(k.host_memory_arg),
                                    constraints])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_tf_tables.py OUT.tsv")
    # What `import tensorflow` registers, in a process's listing order...
    static = [kernel_def(k) + (k.op,) for k in kernels.get_all_registered_kernels().kernel]
    # ...and what the XLA devices add once a Session has created them.
    with tf.compat.v1.Session() as _:
        pass
    everything = [kernel_def(k) + (k.op,) for k in kernels.get_all_registered_kernels().kernel]
    lazy = collections.Counter(everything) - collections.Counter(static)
    op_list = op_def_pb2.OpList()
    op_list.ParseFromString(c_api.TF_GetBuffer(c_api.TF_GetAllOpList()))

    kernels_of = {}
    counts = collections.Counter()
    for device_type, text, op in static:
        counts[device_type] += 1
        kernels_of.setdefault(op, []).append(text)
    for (device_type, text, op), n in sorted(lazy.items(), key=lambda kv: everything.index(kv[0])):
        counts["+" + device_type] += n
        kernels_of.setdefault(op, []).extend(["+" + text] * n)
    # The order of each op's kernels in the listing with XLA devices.
    listed = {}
    for device_type, text, op in everything:
        listed.setdefault(op, []).append(text)
    for op, fields in kernels_of.items():
        remaining = list(enumerate(f.lstrip("+") for f in fields))
        order = []
        for text in listed.get(op, []):
            i = next(k for k, (_, t) in enumerate(remaining) if t == text)
            order.append(remaining.pop(i)[0])
        if order != list(range(len(fields))):
            fields.append("@" + ",".join(map(str, order)))

    lines = {}
    for op in op_list.op:
        flags = []
        if op.is_stateful:
            flags.append("stateful")
        if op.allows_uninitialized_input:
            flags.append("allows_uninitialized_input")
        lines[op.name] = [op.name, ",".join(flags) or "-", ";".join(arg(a) for a in op.input_arg),
                          ";".join(arg(a) for a in op.output_arg), ";".join(attr_def(a) for a in op.attr)]
    for name in kernels_of:
        lines.setdefault(name, [name, "no_op_def", "", "", ""])
    for name, fields in lines.items():
        fields.extend(kernels_of.get(name, []))
        for f in fields:
            assert "\t" not in f and "\n" not in f, (name, f)

    with open(sys.argv[1], "w", encoding="ascii", newline="\n") as f:
        f.write("# TensorFlow %s (%s): every OpDef and every KernelDef.\n" %
                (tf.__version__, "tensorflow, the CUDA build" if tf.test.is_built_with_cuda() else "tensorflow-cpu"))
        f.write("# Written by tools/gen_tf_tables.py, which describes the format. %d ops; kernels: %s.\n" %
                (len(op_list.op), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
        for name in sorted(lines, key=lambda n: n.encode()):
            f.write("\t".join(lines[name]) + "\n")
    print("%s: TensorFlow %s, %d ops, kernels %s" % (sys.argv[1], tf.__version__, len(op_list.op), dict(counts)),
          file=sys.stderr)


if __name__ == "__main__":
    main()
