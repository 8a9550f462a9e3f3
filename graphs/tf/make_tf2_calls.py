#!/usr/bin/env python3
"""TensorFlow 2 function calls, placed by eager TensorFlow 2.21, and the
goldens tfrun's --call is checked against (testdata/golden/DERIVATIONS.md,
"TF2 calls"): each case defines a tf.function, calls it once on three
logical CPUs with set_log_device_placement(True), and keeps the placement
lines TensorFlow prints for that call; tools/export_tf2_function.py writes
the function's graph (call_NAME.pbtxt) and the call's flags.

  /root/.cache/tfrun/tf-venv/bin/python graphs/tf/make_tf2_calls.py [CASE...]

mirrored_2 and mirrored_3 are the TF2 GPU guide's MirroredStrategy program
(Keras 3) on two and three logical CPUs: its train function as fit calls it,
and fit's 10 steps (call_mirrored_N.train); mirrored_keras2_N the same under
Keras 2 (tf_keras, the guide's era).
mirrored_gpu_2 and mirrored_gpu_3: the same over CPU:1..N of N+1 logical
CPUs (call_mirrored_host_N, TensorFlow's lines), and that trace with the
CPUs standing in for GPUs placed on eight simulated P40s
(call_mirrored_gpu_N, TensorFlow's lines through the same stand-in).
sm_tfsave and sm_export: a Keras 3 model saved by tf.saved_model.save and
by model.export (graphs/tf/sm_*/), its serving signature called after
tf.saved_model.load (tfrun --signature serving_default; sm_*.run: the call
run on an input, what print shows); sm_module: a tf.Module with variables
of three dtypes and a captured constant, its signature returning a dict;
sm_keras_{dense,conv,lstm}: Keras 3 models (Dense and Dropout;
Conv2D, BatchNormalization and MaxPooling2D; an LSTM) exported by
model.export and run on a batch from graphs/tf/data/sm_keras_*_x.npy;
sm_*_gpu: loaded
and called under tf.device("/CPU:1") of two logical CPUs, placed on eight
simulated P40s with CPU:1 as GPU:0.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))


def plain(tf):
    @tf.function
    def f(x, y):
        return tf.matmul(x, y) + y
    return f, None


def device(tf):
    @tf.function
    def f(x, y):
        m = tf.matmul(x, y)
        with tf.device("/CPU:2"):
            a = m + y
        return a
    return f, None


def outer(tf):
    @tf.function
    def f(x, y):
        return tf.matmul(x, y) + y
    return f, "/CPU:1"


def const(tf):
    @tf.function
    def f(x, y):
        c = tf.constant([[1.0, 1.0], [1.0, 1.0]])
        with tf.device("/CPU:2"):
            n = -tf.matmul(x, c)
        return n + y
    return f, None


def cond(tf):
    @tf.function
    def f(x, y):
        m = tf.matmul(x, y)
        return tf.cond(tf.reduce_sum(m) > 0.0, lambda: m + y, lambda: m - y)
    return f, None


def loop(tf):
    @tf.function
    def f(x, y):
        def body(i, acc):
            with tf.device("/CPU:1"):
                acc = acc + y
            return i + 1, acc
        _, out = tf.while_loop(lambda i, acc: i < 3, body, [tf.constant(0), x])
        return out
    return f, None


def nested(tf):
    @tf.function
    def inner(a):
        with tf.device("/CPU:2"):
            b = a * 2.0
        return b + 1.0

    @tf.function
    def f(x, y):
        return inner(tf.matmul(x, y))
    return f, "/CPU:1"


def identity_chain(tf):
    @tf.function
    def f(x, y):
        with tf.device("/CPU:2"):
            a = x * y
        return tf.identity(tf.identity(a))
    return f, None


def pair(tf):
    """Two results: print(f(x, y)) shows the tuple of their reprs."""
    @tf.function
    def f(x, y):
        return tf.matmul(x, y), tf.reduce_sum(x + 1.0)
    return f, None


def ints_on_device(tf):
    """A function with experimental_ints_on_device (its int32 argument and
    result _DeviceArg and _DeviceRetval) called from another: inlined
    there, it places; eager TensorFlow refuses to call it directly (a
    multi-device function; tfrun's cli_test checks that text)."""
    def g(x, n):
        return x * tf.cast(n, tf.float32), n + 1
    inner = tf.function(g, experimental_attributes={"experimental_ints_on_device": True})

    @tf.function
    def f(x, y):
        a, b = inner(x, tf.shape(y)[0])
        return a + tf.cast(b, tf.float32)
    return f, None


def tensor_array(tf):
    """TensorArrays in a loop (tensor lists, variants): one unstacked from
    x and read, one of fixed size written and stacked, one growing."""
    @tf.function
    def f(x, y):
        rows = tf.TensorArray(tf.float32, size=2).unstack(x)
        out = tf.TensorArray(tf.float32, size=3)
        grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        for i in tf.range(3):
            scaled = tf.matmul(x, y) * tf.cast(i, tf.float32)
            out = out.write(i, scaled + rows.read(i % 2)[0])
            grown = grown.write(i, tf.reduce_sum(scaled))
        return out.stack(), grown.stack() + tf.cast(grown.size(), tf.float32)
    return f, None


def depthwise(tf):
    """DepthwiseConv2dNative with a channel multiplier of 2, stride 2 and
    SAME padding, and of 1 with VALID; values that round (tenths and
    sevenths), so the order of the sums shows."""
    @tf.function
    def f(x, y):
        image = tf.reshape(tf.cast(tf.range(2 * 7 * 7 * 3), tf.float32) / 10.0, [2, 7, 7, 3]) * x[0, 0]
        kernel = (tf.reshape(tf.cast(tf.range(3 * 3 * 3 * 2), tf.float32) / 7.0, [3, 3, 3, 2]) - 1.0) * y[0, 0]
        same = tf.nn.depthwise_conv2d(image, kernel, [1, 2, 2, 1], "SAME")
        valid = tf.nn.depthwise_conv2d(image, kernel[:, :, :, :1], [1, 1, 1, 1], "VALID")
        return same[:, :2, :, :], valid[:, :2, :2, :]
    return f, None


CASES = {"plain": plain, "device": device, "outer": outer, "const": const, "cond": cond, "loop": loop,
         "nested": nested, "identity_chain": identity_chain, "ints_on_device": ints_on_device, "pair": pair,
         "tensor_array": tensor_array, "depthwise": depthwise}
# Cases whose first argument lives on CPU:1.
ARG_ON_CPU1 = {"outer"}


def run_mirrored(replicas, stand_in=False, keras2=False):
    """The TF2 GPU guide's MirroredStrategy program (a Dense(1) model,
    SGD(0.2), Keras 3) on `replicas` logical CPUs: model.fit's train
    function (multi_step_on_iterator: the step inlined, a CollectiveReduceV2
    per replica) as fit calls it, with the devices its arguments had there
    (read from TensorFlow's own log of the call), and fit's 10 steps of one
    sample per replica: prints the flags that train it in tfrun (each
    replica's batches fed for its IteratorGetNext: replica k of step s reads
    row s * N + k, checked against a distributed dataset of the same rows;
    every captured variable's value before the first step; the instance
    keys the collectives were traced with), then what
    print(model.train_function(iterator)["loss"]) printed after each step.

    stand_in: on replicas + 1 logical CPUs, the replicas on CPU:1..N and
    the program under tf.device("/CPU:1"), CPU:0 the host alone; written
    twice, as traced and with the CPUs standing in for GPUs
    (export_tf2_function.py: a GPU machine's trace).

    Keras 3 programs train with Grappler's constant folding off: on, it
    folds each replica's loss scale and the replica count (x * (1/3) * 3 ->
    x * 1.0), which tfrun does not, and 3 replicas' losses then differ in
    their last bit (testdata/golden/DERIVATIONS.md).

    keras2: the same program under Keras 2 (tf_keras, TF_USE_LEGACY_KERAS=1,
    the guide's era): its train_function is the tf.function itself."""
    import contextlib
    import numpy as np
    import tensorflow as tf
    tf.debugging.set_log_device_placement(True)
    if not keras2:
        tf.config.optimizer.set_experimental_options({"constant_folding": False})
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] *
                                               (replicas + (1 if stand_in else 0)))
    from export_tf2_function import export_concrete, train_step_feeds, variable_values
    steps = 10
    x = ((np.arange(steps * replicas, dtype=np.float32) + 1) / (steps * replicas)).reshape(-1, 1)
    y = 2.0 * x + 1.0
    with tf.device("/CPU:1") if stand_in else contextlib.nullcontext():
        devices = tf.config.list_logical_devices("CPU")[1:] if stand_in else tf.config.list_logical_devices("CPU")
        strategy = tf.distribute.MirroredStrategy(devices)
        with strategy.scope():
            inputs = tf.keras.layers.Input(shape=(1,))
            predictions = tf.keras.layers.Dense(1)(inputs)
            model = tf.keras.models.Model(inputs=inputs, outputs=predictions)
            model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(learning_rate=0.2))
        # Every variable's value before the first step, by handle: each
        # replica's copy of the model's and the optimizer's, the metrics'.
        before = variable_values()
        model.make_train_function()
        train = model.train_function
        losses = []

        def recorded(iterator):
            logs = train(iterator)
            losses.append(str(logs["loss"]))
            return logs
        model.train_function = recorded
        print("==CALL", flush=True)
        model.fit(x, y, batch_size=replicas, epochs=1, verbose=0, shuffle=False)
        print("==END", flush=True)
        # What tf.distribute gave each replica, step by step.
        dist = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices((x, y)).batch(replicas))
        for step, (bx, by) in enumerate(dist):
            for k, (rx, ry) in enumerate(zip(strategy.experimental_local_results(bx),
                                             strategy.experimental_local_results(by))):
                assert np.array_equal(rx.numpy(), x[step * replicas + k:step * replicas + k + 1]), (step, k)
                assert np.array_equal(ry.numpy(), y[step * replicas + k:step * replicas + k + 1]), (step, k)
    # Keras 3 wraps its tf.function in a plain function: the closure holds it.
    traced = [train] if keras2 else [c.cell_contents for c in (train.__closure__ or ())
                                     if hasattr(c.cell_contents, "_list_all_concrete_functions")]
    concrete = traced[0]._list_all_concrete_functions()[0]
    names = [a.name for a in concrete.function_def.signature.input_arg]
    print("==ARGS " + " ".join(names), flush=True)
    print("==NAME " + concrete.function_def.signature.name, flush=True)
    # The argument devices come from the log; written after it is read.
    arg_devices = sys.stdin.readline().split()
    if not stand_in:
        stem = f"call_mirrored_keras2_{replicas}" if keras2 else f"call_mirrored_{replicas}"
        flags = export_concrete(concrete, path=os.path.join(HERE, stem + ".pbtxt"), arg_devices=arg_devices)
        print("==FLAGS " + flags, flush=True)
    else:
        flags = export_concrete(concrete, path=os.path.join(HERE, f"call_mirrored_host_{replicas}.pbtxt"),
                                arg_devices=arg_devices)
        print("==FLAGS " + flags, flush=True)
        flags = export_concrete(concrete, path=os.path.join(HERE, f"call_mirrored_gpu_{replicas}.pbtxt"),
                                arg_devices=arg_devices, stand_in_gpus=True)
        print("==GPU-FLAGS " + flags, flush=True)
    flags = train_step_feeds(concrete, before)
    feeds = [f"{flag} {value}" for flag, value in zip(flags[::2], flags[1::2])]
    kind = "host" if stand_in else "keras2_" if keras2 else ""
    for k in range(replicas):
        for part, values in ((0, x), (1, y)):
            path = f"mirrored_{kind}{replicas}_{'xy'[part]}{k}.npy"
            np.save(os.path.join(HERE, "data", path), values[k::replicas])
            node = "IteratorGetNext" if k == 0 else f"IteratorGetNext_{k}"
            feeds.append(f"--feed {node}:{part}=@data/{path}")
    print(f"==TRAIN-FLAGS --steps {steps} --batch 1 " + " ".join(feeds), flush=True)
    print("==LOSSES", flush=True)
    for line in losses:
        print(line, flush=True)
    print("==LOSSES-END", flush=True)


# Each SavedModel's input for its signature's call (one JSON literal, as
# --feed takes it).
SAVED_MODEL_INPUTS = {
    "tfsave": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    "export": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    "module": [[1.0, 2.0], [3.0, 4.0]],
}


def keras_zoo_model(kind, keras):
    """The Keras 3 models of issue 44's conformance, seeded: a Dense model
    with Dropout, a Conv2D/BatchNormalization/MaxPooling model, an LSTM;
    each with the shape of its input batch."""
    keras.utils.set_random_seed(1)
    if kind == "keras_dense":
        i = keras.Input((6,), name="x")
        h = keras.layers.Dropout(0.5)(keras.layers.Dense(8, activation="relu")(i))
        return keras.Model(i, keras.layers.Dense(3, activation="softmax")(h)), (2, 6)
    if kind == "keras_conv":
        i = keras.Input((8, 8, 3), name="x")
        h = keras.layers.Conv2D(4, 3, activation="relu", padding="same")(i)
        h = keras.layers.MaxPooling2D()(keras.layers.BatchNormalization()(h))
        return keras.Model(i, keras.layers.Dense(2)(keras.layers.Flatten()(h))), (2, 8, 8, 3)
    i = keras.Input((5, 3), name="x")
    return keras.Model(i, keras.layers.Dense(1)(keras.layers.LSTM(4)(i))), (2, 5, 3)


KERAS_ZOO = ("keras_dense", "keras_conv", "keras_lstm")


def saved_module(tf):
    """A tf.Module whose signature reads variables of three dtypes and a
    captured constant (saved as a constant object), and returns a dict."""
    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.5, -2.0], [0.25, 3.0]], name="w")
            self.steps = tf.Variable(7, dtype=tf.int64, name="steps")
            self.scale = tf.Variable([0.5, 2.0], dtype=tf.float64, name="scale")
            self.offset = tf.constant([10.0, 20.0])

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
        def serve(self, x):
            return {"y": tf.matmul(x, self.w) + self.offset, "steps": self.steps + 1,
                    "scaled": tf.cast(x, tf.float64) * self.scale}
    return Module()


def run_saved_model(kind, stand_in=False):
    """A small Keras 3 model (Dense 4 relu, Dense 1; seeded) saved as a
    SavedModel two ways (tf.saved_model.save and model.export), loaded by
    TF2's loader and its serving signature called on three logical CPUs.

    stand_in: the saved folder loaded and called on two logical CPUs under
    tf.device("/CPU:1"), CPU:1 standing in for a GPU machine's default
    device GPU:0 (where the loader makes the variables, the input tensor
    lives and the call goes)."""
    import contextlib
    import shutil
    import tensorflow as tf
    import keras
    tf.debugging.set_log_device_placement(True)
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] *
                                               (2 if stand_in else 3))
    path = os.path.join(HERE, f"sm_{kind}")
    if kind in KERAS_ZOO:
        import numpy as np
        inputs_path = os.path.join(HERE, "data", f"sm_{kind}_x.npy")
        if not stand_in:
            model, shape = keras_zoo_model(kind, keras)
            shutil.rmtree(path, ignore_errors=True)
            model.export(path, verbose=False)
            np.save(inputs_path, np.random.default_rng(0).standard_normal(shape).astype(np.float32).round(2))
        SAVED_MODEL_INPUTS[kind] = np.load(inputs_path)
    elif not stand_in and kind == "module":
        shutil.rmtree(path, ignore_errors=True)
        module = saved_module(tf)
        tf.saved_model.save(module, path, signatures={"serving_default": module.serve})
    elif not stand_in:
        keras.utils.set_random_seed(1)
        inputs = keras.layers.Input(shape=(3,), name="x")
        h = keras.layers.Dense(4, activation="relu", name="hidden")(inputs)
        outputs = keras.layers.Dense(1, name="out")(h)
        model = keras.Model(inputs, outputs, name="small")
        shutil.rmtree(path, ignore_errors=True)
        if kind == "tfsave":
            tf.saved_model.save(model, path)
        else:
            model.export(path, verbose=False)
    with tf.device("/CPU:1") if stand_in else contextlib.nullcontext():
        loaded = tf.saved_model.load(path)
        signature = loaded.signatures["serving_default"]
        name = list(signature.structured_input_signature[1].keys())[0]
        x = tf.constant(SAVED_MODEL_INPUTS[kind])
        print("==CALL", flush=True)
        result = signature(**{name: x})
        print("==END", flush=True)
        # TensorFlow's order of the dict's keys varies from process to
        # process (the loaded signature's structure comes from a protobuf
        # map); printed with the keys sorted, tfrun's order
        # (testdata/golden/DERIVATIONS.md, "SavedModel signatures run").
        print(dict(sorted(result.items())), flush=True)
        print("==RESULT-END", flush=True)
        print("==INPUT " + name, flush=True)


def train_function_block(lines, names):
    """The train function's placement lines in fit's log: from its _Arg
    lines (the signature's names, in order) to the next function's."""
    heads = [f"{n}: (_Arg): " for n in names]
    for i in range(len(lines) - len(names)):
        if all(lines[i + k].startswith(h) for k, h in enumerate(heads)):
            end = next((j for j in range(i + len(names), len(lines)) if ": (_Arg): " in lines[j]), len(lines))
            return lines[i:end]
    sys.exit("the train function's block is not in the log")


def write_golden(stem, args, lines, stderr=""):
    with open(stem + ".expected", "w") as f:
        f.write(f"# args: {args}\n" + "".join(l + "\n" for l in lines))
    with open(stem + ".expected-stderr", "w") as f:
        f.write(stderr)
    print(f"{os.path.basename(stem)}: {len(lines)} placement lines")


def make_mirrored(replicas, env, stand_in=False, keras2=False):
    argv = ([sys.executable, __file__, "--mirrored", str(replicas)] + (["--stand-in"] if stand_in else []) +
            (["--keras2"] if keras2 else []))
    if keras2:
        env = dict(env, TF_USE_LEGACY_KERAS="1")
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    lines = []
    while True:
        line = p.stdout.readline()
        if not line:
            sys.exit("the program ended early")
        line = line.rstrip("\n")
        lines.append(line)
        if line.startswith("==NAME "):
            break
    names = next(l for l in lines if l.startswith("==ARGS ")).split()[1:]
    logged = lines[lines.index("==CALL") + 1:lines.index("==END")]
    block = train_function_block(logged, names)
    devices = [l.split(": (_Arg): ")[1] for l in block[:len(names)]]
    out, _ = p.communicate(" ".join(devices) + "\n")
    if p.returncode != 0:
        sys.exit(f"mirrored {replicas}: exit {p.returncode}")
    out_lines = out.splitlines()
    flags = next(l for l in out_lines if l.startswith("==FLAGS "))[len("==FLAGS "):]
    # The 10 steps: what print(model.train_function(it)["loss"]) printed.
    train = next(l for l in out_lines if l.startswith("==TRAIN-FLAGS "))[len("==TRAIN-FLAGS "):]
    losses = out_lines[out_lines.index("==LOSSES") + 1:out_lines.index("==LOSSES-END")]
    if not stand_in:
        stem = f"call_mirrored_keras2_{replicas}" if keras2 else f"call_mirrored_{replicas}"
        write_golden(os.path.join(HERE, f"{stem}.call"), f"{flags} --log-placement --device-count CPU={replicas}",
                     block)
        write_golden(os.path.join(HERE, f"{stem}.train"), f"{flags} --device-count CPU={replicas} {train}", losses)
        return
    host = f"--call-device /job:localhost/replica:0/task:0/device:CPU:1 --device-count CPU={replicas + 1}"
    write_golden(os.path.join(HERE, f"call_mirrored_host_{replicas}.call"), f"{flags} {host} --log-placement", block)
    write_golden(os.path.join(HERE, f"call_mirrored_host_{replicas}.train"), f"{flags} {host} {train}", losses)
    # On eight GPUs: TensorFlow's lines with each device through the same
    # stand-in (testdata/golden/DERIVATIONS.md, "MirroredStrategy on GPUs").
    from export_tf2_function import stand_in_gpu
    gpu_flags = next(l for l in out.splitlines() if l.startswith("==GPU-FLAGS "))[len("==GPU-FLAGS "):]
    gpu_block = [f"{l.rsplit(': ', 1)[0]}: {stand_in_gpu(l.rsplit(': ', 1)[1])}" for l in block]
    check_gpu_kernels(gpu_block, env)
    write_golden(os.path.join(HERE, f"call_mirrored_gpu_{replicas}.call"),
                 f"{gpu_flags} --log-placement --devices ../../testdata/topologies/p40_x8.yaml", gpu_block)
    # Trained on the simulated GPUs: the CPUs' losses (their kernels are
    # the host's, DERIVATIONS.md).
    topology = "../../testdata/topologies/p40_x8.yaml"
    write_golden(os.path.join(HERE, f"call_mirrored_gpu_{replicas}.train"),
                 f"{gpu_flags} --devices {topology} {train}", losses,
                 stderr=f"tfrun: info: kernels placed on the simulated GPUs of {topology} run on the host\n")


def check_gpu_kernels(lines, env):
    """Each op the derivation puts on a GPU has a GPU kernel in TensorFlow
    2.21's CUDA wheel (else the placer would have moved it to the CPU and
    the stand-in would not hold)."""
    on_gpu = sorted({re.match(r"^\S+: \((\w+)\): .*GPU:\d+$", l).group(1) for l in lines if l.endswith(
        tuple(f"GPU:{i}" for i in range(8)))})
    cuda = subprocess.run([os.path.join(HERE, "..", "..", "tools", "setup_tensorflow.sh"), "cuda"],
                          capture_output=True, text=True, check=True).stdout.strip()
    program = ("import sys\nfrom tensorflow.python.framework import kernels\n"
               "for op in sys.argv[1:]:\n"
               "    types = {k.device_type for k in kernels.get_registered_kernels_for_op(op).kernel}\n"
               "    if not types & {'GPU', 'DEFAULT'}:\n"
               "        print(op)\n")
    # DEFAULT: registered for every device type (DEVICE_DEFAULT: _Arg,
    # NoOp, ReadVariableOp, CollectiveReduceV2, ...).
    missing = subprocess.run([cuda, "-c", program, *on_gpu], capture_output=True, text=True, env=env,
                             check=True).stdout.split()
    if missing:
        sys.exit(f"no GPU kernel in TensorFlow's CUDA wheel for {missing}: the stand-in derivation does not hold")


def run_case(name):
    """In a process of its own: three logical CPUs, the call, its lines."""
    import tensorflow as tf
    tf.debugging.set_log_device_placement(True)  # before anything lists devices
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 3)
    from export_tf2_function import export_call
    f, call_device = CASES[name](tf)
    with tf.device("/CPU:1" if name in ARG_ON_CPU1 else "/CPU:0"):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = tf.constant([[1.0, 0.0], [0.0, 1.0]])
    print("==CALL", flush=True)
    if call_device:
        with tf.device(call_device):
            result = f(x, y)
    else:
        result = f(x, y)
    print("==END", flush=True)
    print(result, flush=True)
    print("==RESULT-END", flush=True)
    flags = export_call(f, x, y, path=os.path.join(HERE, f"call_{name}.pbtxt"))
    print("==FLAGS " + flags + (f" --call-device {call_device}" if call_device else ""), flush=True)


def make_case(name, env):
    """call_NAME.call (the body's lines) and call_NAME.eager (with the
    `Executing op` line eager TensorFlow logs for the call, execute.cc)."""
    env = dict(env, TF_CPP_MIN_LOG_LEVEL="0")
    p = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True, text=True, env=env,
                       check=True)
    lines = p.stdout.splitlines()
    call = lines[lines.index("==CALL") + 1:lines.index("==END")]
    placement = [l for l in call if re.match(r"^\S+: \(\w+\): /job:", l)]
    flags = next(l for l in lines if l.startswith("==FLAGS "))[len("==FLAGS "):]
    function = flags.split()[1]
    executing = [m.group(1) for m in (re.search(r"execute\.cc:\d+\] (Executing op (\S+) in device .*)$", l)
                                      for l in p.stderr.splitlines()) if m and m.group(2) == function]
    # print(f(x, y)): the call run with its arguments fed.
    printed = lines[lines.index("==END") + 1:lines.index("==RESULT-END")]
    stem = os.path.join(HERE, f"call_{name}.run")
    with open(stem + ".expected", "w") as out:
        out.write(f"# args: {flags} --device-count CPU=3 --feed x=[[1.0,2.0],[3.0,4.0]] --feed y=[[1.0,0.0],[0.0,1.0]]\n"
                  + "".join(l + "\n" for l in printed))
    with open(stem + ".expected-stderr", "w") as out:
        out.write("")
    for variant, extra, tail in (("call", "", []), ("eager", " --compat eager", executing[:1])):
        stem = os.path.join(HERE, f"call_{name}.{variant}")
        with open(stem + ".expected", "w") as out:
            out.write(f"# args: {flags}{extra} --log-placement --device-count CPU=3\n" +
                      "".join(l + "\n" for l in placement + tail))
        with open(stem + ".expected-stderr", "w") as out:
            out.write("")
    print(f"call_{name}: {len(placement)} placement lines, {len(executing)} Executing op lines")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        run_case(sys.argv[2])
        return
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--mirrored":
        run_mirrored(int(sys.argv[2]), stand_in=sys.argv[3:] == ["--stand-in"], keras2=sys.argv[3:] == ["--keras2"])
        return
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--saved-model":
        run_saved_model(sys.argv[2], stand_in=sys.argv[3:] == ["--stand-in"])
        return
    names = sys.argv[1:] or list(CASES) + ["mirrored_2", "mirrored_3", "mirrored_gpu_2", "mirrored_gpu_3",
                                           "mirrored_keras2_2", "mirrored_keras2_3", "sm_tfsave",
                                           "sm_export", "sm_module", "sm_tfsave_gpu", "sm_export_gpu",
                                           "sm_module_gpu"] + [f"sm_{k}" for k in KERAS_ZOO]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    for name in names:
        if name in CASES:
            make_case(name, env)
            continue
        if name.startswith("sm_"):
            kind, stand_in = name[3:].removesuffix("_gpu"), name.endswith("_gpu")
            p = subprocess.run([sys.executable, __file__, "--saved-model", kind] + (["--stand-in"] if stand_in else []),
                               capture_output=True, text=True, env=env, check=True)
            lines = p.stdout.splitlines()
            call = lines[lines.index("==CALL") + 1:lines.index("==END")]
            placement = [l for l in call if re.match(r"^\S+: \(\w+\): /job:", l)]
            if not stand_in:
                write_golden(os.path.join(HERE, f"sm_{kind}.serving"),
                             "--signature serving_default --log-placement --device-count CPU=3", placement)
                # print(loaded.signatures["serving_default"](x)): the call run.
                printed = lines[lines.index("==END") + 1:lines.index("==RESULT-END")]
                arg = next(l for l in lines if l.startswith("==INPUT "))[len("==INPUT "):]
                feed = (f"@data/sm_{kind}_x.npy" if kind in KERAS_ZOO
                        else json.dumps(SAVED_MODEL_INPUTS[kind]).replace(" ", ""))
                write_golden(os.path.join(HERE, f"sm_{kind}.run"),
                             f"--signature serving_default --device-count CPU=3 --feed {arg}={feed}", printed)
                continue
            # On eight GPUs: TensorFlow's lines with CPU:1 as GPU:0 (and
            # CPU:0 as itself; testdata/golden/DERIVATIONS.md).
            from export_tf2_function import stand_in_gpu
            placement = [f"{l.rsplit(': ', 1)[0]}: {stand_in_gpu(l.rsplit(': ', 1)[1])}" for l in placement]
            check_gpu_kernels(placement, env)
            write_golden(os.path.join(HERE, f"sm_{kind}.serving_gpu"),
                         "--signature serving_default --log-placement --devices ../../testdata/topologies/p40_x8.yaml",
                         placement)
            continue
        if name.startswith("mirrored_keras2_"):
            make_mirrored(int(name.split("_")[2]), env, keras2=True)
            continue
        if name.startswith("mirrored_gpu_"):
            make_mirrored(int(name.split("_")[2]), env, stand_in=True)
            continue
        if name.startswith("mirrored_"):
            make_mirrored(int(name.split("_")[1]), env)
            continue


if __name__ == "__main__":
    main()
