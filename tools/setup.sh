#!/usr/bin/env bash
# Installs the Debian packages tfrun builds with, if any are missing
# (idempotent; silent when everything is there). The CUDA toolkit is part of
# the machine image at /usr/local/cuda; it is checked, not installed.
set -euo pipefail

# openmpi-bin and libopenmpi-dev: cluster runs (mpirun, and the MPI plugin's
# headers and libmpi; tfrun itself runs without them). python3-jsonschema:
# the tests validate JSON reports against docs/json-report.schema.json.
# python3-matplotlib: tools/plot_trace.py draws --trace files (tested).
# clang and libclang-rt-14-dev: tools/fuzz.sh (libFuzzer), which .ci/run runs.
# libprotobuf-dev, protobuf-compiler and zlib1g-dev: TensorFlow's graph files.
# libdnnl-dev: oneDNN, the CPU's convolutions (kernels/cpu/nn_kernels.cc; its
# headers, and libdnnl.so.2, which tfrun opens when a convolution runs).
# libyaml-dev: graph files' YAML, read first by libyaml (yaml-cpp is the
# authority: core/graph_file/yaml_document.h).
# libleveldb-dev and libsnappy-dev: a checkpoint's index is a LevelDB table
# (core/checkpoint/tensor_bundle.h).
packages=(bazel-bootstrap bazel-rules-java libyaml-cpp-dev libyaml-dev libcli11-dev libdnnl-dev
          libspdlog-dev libfmt-dev libeigen3-dev libgtest-dev
          libprotobuf-dev protobuf-compiler zlib1g-dev libleveldb-dev libsnappy-dev
          openmpi-bin libopenmpi-dev python3-jsonschema python3-matplotlib
          clang libclang-rt-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "tfrun setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -f /usr/local/cuda/lib64/libcudart_static.a ]; then
  echo "tfrun setup: the CUDA toolkit is expected at /usr/local/cuda (nvcc, libcudart_static.a)" >&2
  exit 1
fi
