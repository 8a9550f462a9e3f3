#!/usr/bin/env python3
"""Writes graphs/tf/tfcnn_{trivial,lenet,resnet20}_{ps,replicated,independent}.pb:
tf_cnn_benchmarks (tensorflow/benchmarks, scripts/tf_cnn_benchmarks at
commit 8fb79079265933ad39bea628b777af662f5bf15d) run as written by
TensorFlow 2.21 with tf_keras (TF_USE_LEGACY_KERAS=1: the program uses
Keras 2's layers), writing its training graph with its own --graph_file.

No line of the program is changed; the runs differ only in flags a user
passes:
  --device=gpu --num_gpus=2 --data_format=NHWC   two GPU towers (on this
                                                 machine TensorFlow runs
                                                 them on the CPU under the
                                                 soft placement the program
                                                 asks for)
  --model=trivial|lenet|resnet20 (resnet20 with --data_name=cifar10)
  --variable_update=parameter_server|replicated|independent
  --batch_size=4 --num_batches=1 --num_warmup_batches=0   (CI's two cores)
  --init_learning_rate=0.00001  the default rate makes the synthetic
                                images' loss blow up within three steps
                                (to inf in TensorFlow), and 1e-4 still
                                does for lenet (nan by step 7), which no
                                comparison survives
The data is the program's synthetic data (no --data_dir): random images
drawn once into a local variable under the program's --tf_random_seed
(1234), the same in every run.

  tools/tf_cnn_benchmarks_graphs.py --benchmarks DIR [--python PY]

DIR is a checkout of tensorflow/benchmarks at the commit above; two of its
files are checked against their SHA-256.
"""
import argparse
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMMIT = "8fb79079265933ad39bea628b777af662f5bf15d"
PINNED = {
    "scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py": "2ed36e335c00a309238d1a276de2437cebb410292ef866c1324721be2125c1fe",
    "scripts/tf_cnn_benchmarks/benchmark_cnn.py": "899a8833331a4f050249721e878763c1fbeab3c123d101091a2b3d7a9816a0d8",
}
MODELS = ["trivial", "lenet", "resnet20"]
UPDATES = {"parameter_server": "ps", "replicated": "replicated", "independent": "independent"}
LEARNING_RATE = "0.00001"


def graph_name(model, update):
    return f"tfcnn_{model}_{UPDATES[update]}.pb"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--benchmarks", required=True, help=f"a tensorflow/benchmarks checkout at {COMMIT}")
    ap.add_argument("--python", default=sys.executable, help="a Python with TensorFlow 2.21 and tf_keras")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "graphs", "tf"))
    a = ap.parse_args()
    for path, digest in PINNED.items():
        with open(os.path.join(a.benchmarks, path), "rb") as f:
            got = hashlib.sha256(f.read()).hexdigest()
        if got != digest:
            sys.exit(f"{path}: SHA-256 {got}, not the file at commit {COMMIT} ({digest})")
    program = os.path.join(a.benchmarks, "scripts", "tf_cnn_benchmarks")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1")
    for model in MODELS:
        for update in UPDATES:
            out = os.path.abspath(os.path.join(a.out, graph_name(model, update)))
            flags = ["--device=gpu", "--num_gpus=2", "--data_format=NHWC", f"--model={model}",
                     f"--variable_update={update}", "--batch_size=4", "--num_batches=1", "--num_warmup_batches=0",
                     f"--init_learning_rate={LEARNING_RATE}", f"--graph_file={out}"]
            if model == "resnet20":
                flags.append("--data_name=cifar10")
            p = subprocess.run([a.python, "tf_cnn_benchmarks.py"] + flags, cwd=program, env=env,
                               capture_output=True, text=True)
            if p.returncode != 0 or not os.path.exists(out):
                sys.exit(f"{model}, {update}: tf_cnn_benchmarks failed:\n{p.stderr[-3000:]}")
            print(f"{out}: {model}, {update}")


if __name__ == "__main__":
    main()
