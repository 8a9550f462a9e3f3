#!/usr/bin/env python3
"""Writes docs/op-coverage.md: the ops of the real programs in graphs/tf
(and of the op goldens), each with the dtypes tfrun runs it in on the CPU
and on GPUs, read from the binary itself (`tfrun ops --json`), so the
table says what the code does.

  tools/op_coverage_table.py --tfrun bazel-bin/cli/tfrun [--out docs/op-coverage.md]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")

def golden_call(path):
    """The function a golden's `# args:` calls (its name changes each time
    the generator traces it again)."""
    with open(os.path.join(ROOT, path)) as f:
        args = f.readline().split()
    return args[args.index("--call") + 1]


# (title, graph files): the programs people run, then the op goldens.
PROGRAMS = [
    ("golbin's tower sample (tf.layers, 8 towers)", ["graphs/tf/golbin_tower_8.pb"]),
    ("TensorFlow's CIFAR-10 multi-GPU trainer (4 towers)", ["graphs/tf/cifar10_multi_gpu_4.pb"]),
    ("tf_cnn_benchmarks (trivial, lenet, resnet20; 2 towers; each variable mode)",
     [f"graphs/tf/tfcnn_{m}_{u}.pb" for m in ("trivial", "lenet", "resnet20")
      for u in ("ps", "replicated", "independent")]),
    ("the README's tower sample (tf.nn, 8 towers)", ["graphs/tf/tower_sample_8.pb"]),
    ("issue 44's Keras SavedModels and TF2 calls (each call's body)",
     ["graphs/tf/sm_keras_dense#signature:serving_default", "graphs/tf/sm_keras_conv#signature:serving_default",
      "graphs/tf/sm_keras_lstm#signature:serving_default", "graphs/tf/sm_module#signature:serving_default",
      "graphs/tf/call_tensor_array.pbtxt#call:__inference_f_101", "graphs/tf/call_depthwise.pbtxt#call:__inference_f_56"]),
    ("issue 44's MirroredStrategy train step (Keras 3, 2 replicas)",
     [f"graphs/tf/call_mirrored_2.pbtxt#call:{golden_call('graphs/tf/call_mirrored_2.call.expected')}"]),
    ("issue 42's op goldens", ["graphs/tf/classifier_ops_run.pbtxt", "graphs/tf/strided_slice_run.pbtxt",
                               "graphs/tf/pool_lrn_run.pbtxt", "graphs/tf/batch_norm_run.pbtxt",
                               "graphs/tf/scatter_run.pbtxt", "graphs/tf/summary_run.pbtxt",
                               "graphs/tf/math_ops_run.pbtxt", "graphs/tf/random_int_run.pbtxt",
                               "graphs/tf/equal_run.pbtxt", "graphs/tf/queue_run.pbtxt",
                               "graphs/tf/stateless_random_run.pbtxt", "graphs/tf/reader_pipeline.meta"]),
]


def split_spec(spec):
    """A PROGRAMS entry: a graph file, or FILE#signature:NAME / FILE#call:FUNCTION
    for a call's body; its path and the flags that choose the call."""
    path, _, call = spec.partition("#")
    if not call:
        return path, []
    kind, _, name = call.partition(":")
    return path, [f"--{kind}", name]


def ops_of(tfrun, spec):
    """The op types of a graph file (or a call's body), from its GraphDef as
    tfrun writes it placed."""
    path, call = split_spec(spec)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "g.pbtxt")
        p = subprocess.run([tfrun, path, *call, "--place-only", "--device-count", "CPU=3", "--soft-placement",
                            "--quiet", "--write-graph-placed", out], capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0:
            sys.exit(f"{path}: {p.stderr.strip()}")
        with open(out) as f:
            return set(re.findall(r'^  op: "([^"]+)"$', f.read(), flags=re.M))


def missing_on_gpus(tfrun, specs):
    """The ops `tfrun ops --coverage` finds no kernel for once the graphs
    (or calls) are placed on eight simulated P40s (as a real GPU would need
    them)."""
    missing = set()
    for spec in specs:
        path, call = split_spec(spec)
        p = subprocess.run([tfrun, "ops", "--coverage", path, *call, "--devices", "testdata/topologies/p40_x8.yaml",
                            "--soft-placement", "--device-count", "CPU=3"], capture_output=True, text=True, cwd=ROOT)
        missing |= set(re.findall(r"^  (\S+) \(.*\) on GPU: ", p.stdout, flags=re.M))
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tfrun", required=True)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "op-coverage.md"))
    a = ap.parse_args()
    tfrun = os.path.abspath(a.tfrun)
    sections = []
    for title, paths in PROGRAMS:
        ops = set()
        for path in paths:
            ops |= ops_of(tfrun, path)
        listing = json.loads(subprocess.run([tfrun, "ops", "--json"] + sorted(ops), capture_output=True, text=True,
                                            check=True).stdout)
        missing = missing_on_gpus(tfrun, paths)
        rows = []
        for op in listing["ops"]:
            # DEFAULT: registered for every device type (DEVICE_DEFAULT:
            # NoOp, ReadVariableOp, CollectiveReduceV2, ...).
            gpu_kernels = any(k["device_type"] in ("GPU", "DEFAULT") for k in op["kernels"])
            runs = op["runs"]
            cpu = ", ".join(runs.get("CPU", [])) or "**no**"
            if op["op"] in missing:
                gpu = "**no**"
            elif not gpu_kernels:
                gpu = "on the CPU (no GPU kernel in TensorFlow)"
            elif runs.get("GPU"):
                gpu = ", ".join(runs["GPU"])
            else:
                gpu = "the CPU's (TensorFlow keeps it in host memory)"
            rows.append(f"| `{op['op']}` | {cpu} | {gpu} |")
        sections.append(f"## {title}\n\n{len(rows)} ops ({', '.join(f'`{p}`' for p in paths)}).\n\n"
                        "| op | tfrun runs on the CPU | on GPUs |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    with open(a.out, "w") as f:
        f.write("# The ops of real programs, and what tfrun runs of them\n\n"
                "Written by `tools/op_coverage_table.py` from the binary (`tfrun ops --json`); the dtypes are\n"
                "the node dtypes (outputs) each backend binds. `tfrun ops --coverage GRAPH...` says the same for\n"
                "any graph, placed as TensorFlow places it. The GPU column is for the graphs placed on eight\n"
                "GPUs (`--devices testdata/topologies/p40_x8.yaml --soft-placement`): \"no\" means a real GPU\n"
                "would find no tfrun kernel for a node TensorFlow puts there (simulated GPUs run the host's).\n\n" +
                "\n".join(sections))
    print(f"{a.out}: {sum(s.count(chr(10) + '| `') for s in sections)} rows")


if __name__ == "__main__":
    main()
