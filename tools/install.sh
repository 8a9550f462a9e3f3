#!/usr/bin/env bash
# Installs tfrun like a Unix tool: PREFIX/bin/tfrun and its MPI plugin
# PREFIX/lib/tfrun/libtfrun_mpi.so, where the installed binary looks for it.
#
#   tools/install.sh PREFIX      builds with -c opt (Bazel), then copies
#   e.g. tools/install.sh ~/.local   (then ~/.local/bin on PATH)
#
# TFRUN_INSTALL_FROM=DIR copies DIR/cli/tfrun and
# DIR/kernels/mpi/libtfrun_mpi.so instead of building (the tests use it).
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
  echo "usage: tools/install.sh PREFIX   (installs PREFIX/bin/tfrun and PREFIX/lib/tfrun/libtfrun_mpi.so)" >&2
  exit 2
fi
prefix=$1

if [ -n "${TFRUN_INSTALL_FROM:-}" ]; then
  from=$TFRUN_INSTALL_FROM
else
  cd "$(dirname "$0")/.."
  bazel build -c opt //:tfrun //kernels:mpi/libtfrun_mpi.so >&2
  from=$(bazel info -c opt bazel-bin 2>/dev/null)
fi
for f in cli/tfrun kernels/mpi/libtfrun_mpi.so; do
  [ -f "$from/$f" ] || { echo "tools/install.sh: $from/$f is missing" >&2; exit 1; }
done

mkdir -p "$prefix/bin" "$prefix/lib/tfrun"
# Copied to a temporary name and renamed: a running tfrun is never
# overwritten in place.
install -m 0755 "$from/cli/tfrun" "$prefix/bin/.tfrun.new"
mv -f "$prefix/bin/.tfrun.new" "$prefix/bin/tfrun"
install -m 0755 "$from/kernels/mpi/libtfrun_mpi.so" "$prefix/lib/tfrun/.libtfrun_mpi.so.new"
mv -f "$prefix/lib/tfrun/.libtfrun_mpi.so.new" "$prefix/lib/tfrun/libtfrun_mpi.so"
echo "installed $prefix/bin/tfrun and $prefix/lib/tfrun/libtfrun_mpi.so" >&2
