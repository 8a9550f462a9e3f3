#!/usr/bin/env bash
# Makes (once) a virtual environment with a reference TensorFlow 2.21 and
# prints its Python:
#   tools/setup_tensorflow.sh        tensorflow-cpu (about 300 MB): what the
#                                    random differential run compares with;
#   tools/setup_tensorflow.sh cuda   the CUDA build (about 600 MB), whose
#                                    kernel table tools/gen_tf_tables.py
#                                    writes into core/tables (tensorflow-cpu
#                                    lists 470 GPU kernels of its 5,017). It
#                                    needs no GPU and no driver.
# Cached under ~/.cache/tfrun (TFRUN_TF_VENV, TFRUN_TF_CUDA_VENV override):
# the first run downloads from PyPI, later runs reuse it.
set -euo pipefail

case "${1:-cpu}" in
  cpu) venv="${TFRUN_TF_VENV:-$HOME/.cache/tfrun/tf-venv}"; want="tensorflow-cpu==2.21.0" ;;
  cuda) venv="${TFRUN_TF_CUDA_VENV:-$HOME/.cache/tfrun/tf-cuda-venv}"; want="tensorflow==2.21.0" ;;
  *) echo "usage: tools/setup_tensorflow.sh [cpu|cuda]" >&2; exit 2 ;;
esac

# tf_keras: Keras 2 under TF_USE_LEGACY_KERAS=1, for the Keras programs'
# goldens and conformance (tools/keras_compile_conformance.py).
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow, yaml, tf_keras' >/dev/null 2>&1; then
  echo "tfrun setup: installing $want into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >&2 || {
    # Debian's python3 needs python3-venv for ensurepip.
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    python3 -m venv "$venv" >&2
  }
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$want" pyyaml "tf_keras==2.21.0" >&2
fi
echo "$venv/bin/python"
