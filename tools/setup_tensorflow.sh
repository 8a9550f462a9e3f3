#!/usr/bin/env bash
# Makes (once) the virtual environment with the reference TensorFlow that
# the random differential run compares tfrun with, and prints its Python.
# Cached under ~/.cache/tfrun (TFRUN_TF_VENV overrides): the first run
# downloads tensorflow-cpu from PyPI (about 300 MB), later runs reuse it.
set -euo pipefail

venv="${TFRUN_TF_VENV:-$HOME/.cache/tfrun/tf-venv}"
want="tensorflow-cpu==2.21.0"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow, yaml' >/dev/null 2>&1; then
  echo "tfrun setup: installing $want into $venv" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv" >&2 || {
    # Debian's python3 needs python3-venv for ensurepip.
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    python3 -m venv "$venv" >&2
  }
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$want" pyyaml >&2
fi
echo "$venv/bin/python"
