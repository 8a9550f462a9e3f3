#!/usr/bin/env bash
# Makes (once) the virtual environment with TensorFlow 2.21's CUDA build,
# the one whose kernel table tools/gen_tf_tables.py writes into core/tables
# (tensorflow-cpu lists 470 GPU kernels of the CUDA build's 5,017), and
# prints its Python. It needs no GPU and no driver. Cached under
# ~/.cache/tfrun (TFRUN_TF_CUDA_VENV overrides); the first run downloads
# about 600 MB from PyPI.
set -euo pipefail

venv="${TFRUN_TF_CUDA_VENV:-$HOME/.cache/tfrun/tf-cuda-venv}"
want="tensorflow==2.21.0"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow' >/dev/null 2>&1; then
  echo "tfrun setup: installing $want into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >&2 || {
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    python3 -m venv "$venv" >&2
  }
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$want" pyyaml >&2
fi
echo "$venv/bin/python"
