#!/usr/bin/env bash
# Installs what the benchmarks compare against (Debian's python3-numpy on
# OpenBLAS), builds tfrun with -c opt and prints the ratios (bench/bench.py).
#   bench/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
missing=()
for p in python3-numpy libopenblas0-pthread; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bazel build -c opt //cli:tfrun >/dev/null 2>&1 || bazel build -c opt //cli:tfrun
exec /usr/bin/python3 bench/bench.py --tfrun bazel-bin/cli/tfrun "$@"
