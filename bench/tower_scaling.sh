#!/usr/bin/env bash
# The multi-GPU tower sample's headline table: the same step (one fed batch
# split across the devices, one tower of two dense layers per device,
# weights shared from the CPU, the towers' outputs joined) on 1, 2, 4 and 8
# devices, with time per step, speedup against one device and efficiency.
#   bench/tower_scaling.sh [--batch 4096] [--width 1024] [--runs 20]
# Devices: real GPUs when the machine has 8 (visible 1, 2, 4, 8 of them);
# else, with a GPU, 1/2/4/8 virtual GPUs carved from GPU 0; else simulated
# GPUs (eight K20m from a generated topology), whose kernels run on the
# host one after another, so the table is host timings, not GPU scaling.
# The graph and its batch are generated here (tfrun itself writes the .npy).
set -euo pipefail
cd "$(dirname "$0")/.."
batch=4096 width=1024 runs=20
while [ $# -gt 0 ]; do
  case "$1" in
    --batch) batch=$2; shift 2 ;;
    --width) width=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: bench/tower_scaling.sh [--batch N] [--width N] [--runs N]" >&2; exit 2 ;;
  esac
done
[ $((batch % 8)) -eq 0 ] || { echo "tower_scaling: --batch must be a multiple of 8" >&2; exit 2; }
./tools/setup.sh
bazel build -c opt //:tfrun >/dev/null 2>&1 || bazel build -c opt //:tfrun
tfrun=bazel-bin/cli/tfrun
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The batch, written by tfrun from a seeded random Const.
cat > "$work/batch.yaml" <<YAML
nodes:
  - {name: batch, op: Const, shape: [$batch, $width], random: {distribution: normal, stddev: 1.0, seed: 1}}
YAML
"$tfrun" "$work/batch.yaml" --out "$work" >/dev/null

# The towers: graphs/split_towers.yaml's shape at a size that does work.
cat > "$work/towers.yaml" <<YAML
nodes:
  - {name: x, op: Placeholder, dtype: float32, shape: [null, $width]}
  - device: /cpu:0
    nodes:
      - {name: w1, op: Variable, shape: [$width, $width], random: {distribution: normal, stddev: 0.03, seed: 2}}
      - {name: b1, op: Variable, shape: [$width], fill: 0.1}
      - {name: w2, op: Variable, shape: [$width, $width], random: {distribution: normal, stddev: 0.03, seed: 3}}
      - {name: b2, op: Variable, shape: [$width], fill: 0.0}
  - {name: split, op: Split, num_split: GPU, inputs: [x]}
  - for_each_device: GPU
    name_scope: tower
    nodes:
      - {name: h, op: MatMul, inputs: ["split:{i}", w1]}
      - {name: h_bias, op: BiasAdd, inputs: [tower/h, b1]}
      - {name: h_relu, op: Relu, inputs: [tower/h_bias]}
      - {name: logits, op: MatMul, inputs: [tower/h_relu, w2]}
      - {name: out, op: BiasAdd, inputs: [tower/logits, b2]}
  - {name: concat, op: ConcatV2, axis: 0, inputs: [tower/out]}
YAML

# Which kind of device: count the real GPUs.
real=$("$tfrun" devices --json | /usr/bin/python3 -c \
  "import json, sys; print(sum(1 for d in json.load(sys.stdin)['physical_devices'] if d['device_type'] == 'GPU'))" \
  2>/dev/null || echo 0)
if [ "$real" -ge 8 ]; then
  kind="real GPUs"
  device_args() { echo "--visible-devices $(seq -s, 0 $(($1 - 1)))"; }
elif [ "$real" -ge 1 ]; then
  kind="virtual GPUs carved from GPU 0"
  device_args() { echo "--visible-devices 0 --virtual-devices $(yes 1024 | head -n "$1" | paste -sd,)"; }
else
  kind="simulated GPUs (host timings: their kernels run on the host CPU, one after another)"
  {
    echo "gpus:"
    for i in 0 1 2 3 4 5 6 7; do
      echo "  - {name: Tesla K20m, pci_bus_id: \"0000:0$i:00.0\", compute_capability: \"3.5\", memory_mb: 4742}"
    done
  } > "$work/eight.yaml"
  device_args() { echo "--devices $work/eight.yaml --visible-devices $(seq -s, 0 $(($1 - 1)))"; }
fi

echo "tower scaling: batch $batch x $width, two dense layers of $width per tower, $runs runs after 3 warm-ups"
echo "devices: $kind; CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-8s %16s %10s %11s\n' devices "time/step (ms)" speedup efficiency
one=""
for n in 1 2 4 8; do
  # shellcheck disable=SC2046
  ms=$("$tfrun" "$work/towers.yaml" --feed "x=@$work/batch.npy" $(device_args "$n") --benchmark "$runs" --warmup 3 \
        --json - 2>/dev/null | /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['benchmark']['run_ms']['median'])")
  [ -n "$one" ] || one=$ms
  /usr/bin/python3 -c "import sys; n, ms, one = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]); \
print(f'{n:<8d} {ms:16.3f} {one / ms:9.2f}x {100 * one / ms / n:10.0f}%')" "$n" "$ms" "$one"
done
