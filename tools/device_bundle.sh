#!/usr/bin/env bash
# Builds, on this machine, what a lent GPU machine needs (it has no Bazel):
# tfrun and the GPU test binaries, with -c opt, into .device/ (git-ignored),
# plus .device/run.sh, which runs every GPU check there in one command:
#   tools/device_bundle.sh            # here
#   run: bash .device/run.sh          # on the device, with carry: [".device"]
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(//cli:tfrun //cli:gpu_test //cli:gpu_kernels_test //kernels:cublas_test //kernels:cuda_elementwise_test
         //kernels:cudnn_test //core/runtime:executor_test)
bazel build -c opt "${targets[@]}"
rm -rf .device && mkdir -p .device
mkdir -p .device/pack/lib
for t in "${targets[@]}"; do
  path="bazel-bin/${t#//}"; path="${path/://}"
  cp "$path" ".device/pack/$(basename "$path")"
done
# oneDNN (the CPU convolutions the GPU tests compare against) and what it
# links that a bare machine may lack, by soname; compressed with the
# binaries to stay within what a run carries.
for lib in libdnnl.so.2 libOpenCL.so.1 libgomp.so.1; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" ".device/pack/lib/$lib"
done
tar czf .device/bundle.tgz -C .device/pack .
rm -rf .device/pack
cat > .device/run.sh <<'RUN'
#!/usr/bin/env bash
# On the GPU machine, from the repository root. Every GPU test fails, not
# skips, where no GPU is reached (TFRUN_REQUIRE_GPU=1), and no GPU check
# falls back to the CPU (no --soft-placement).
set -uo pipefail
export TFRUN_REQUIRE_GPU=1
tar xzf .device/bundle.tgz -C .device
export LD_LIBRARY_PATH="$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
devices=$(.device/tfrun devices 2>&1)
if ! grep -q "^[1-9][0-9]* Physical GPU" <<<"$devices"; then
  echo "run.sh: no GPU: tfrun sees none, so nothing here would run on a GPU. tfrun devices said:"
  echo "$devices"
  exit 1
fi
echo "$devices"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
# cuBLAS: the toolkit's, else the one in a Python venv's NVIDIA wheel
# (CUDA 13 wheels: nvidia/cu13/lib; older: nvidia/cublas/lib); TFRUN_CUBLAS wins.
if [ -z "${TFRUN_CUBLAS:-}" ] && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
  found=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for pattern in ("nvidia/cu13/lib/libcublas.so.13", "nvidia/cublas/lib/libcublas.so.13"):
    for root in roots:
        hits = glob.glob(os.path.join(root, pattern))
        if hits:
            print(hits[0]); raise SystemExit
PY
)
  if [ -z "$found" ]; then
    echo "run.sh: no libcublas.so.13 (not in /usr/local/cuda/lib64, nor in a Python NVIDIA wheel); set TFRUN_CUBLAS"
    exit 1
  fi
  export TFRUN_CUBLAS="$found"
fi
echo "TFRUN_CUBLAS=${TFRUN_CUBLAS:-/usr/local/cuda/lib64/libcublas.so.13}"
# cuDNN 9 likewise (its wheel: nvidia/cudnn/lib); without it the
# convolution checks fail, naming it.
if [ -z "${TFRUN_CUDNN:-}" ] && [ ! -e /usr/local/cuda/lib64/libcudnn.so.9 ]; then
  found=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
for root in site.getsitepackages() + [site.getusersitepackages()]:
    hits = glob.glob(os.path.join(root, "nvidia/cudnn/lib/libcudnn.so.9")) + glob.glob(os.path.join(root, "nvidia/cu13/lib/libcudnn.so.9"))
    if hits:
        print(hits[0]); raise SystemExit
PY
)
  if [ -n "$found" ]; then export TFRUN_CUDNN="$found"; else echo "run.sh: no libcudnn.so.9 found (set TFRUN_CUDNN)"; fi
fi
echo "TFRUN_CUDNN=${TFRUN_CUDNN:-/usr/local/cuda/lib64/libcudnn.so.9}"
mkdir -p cli && cp .device/tfrun cli/tfrun   # cli:gpu_test runs cli/tfrun from the root
status=0
# A binary that skipped cases (or ran none) fails the run: a GPU check that
# did not run is not a pass.
for t in cublas_test cuda_elementwise_test cudnn_test executor_test gpu_kernels_test gpu_test; do
  echo "== $t"
  out=$(.device/$t --gtest_brief=1 2>&1)
  rc=$?
  echo "$out"
  [ "$rc" -eq 0 ] || status=1
  if grep -q '^\[  SKIPPED \]' <<<"$out"; then
    echo "run.sh: $t skipped cases (above): a GPU check that did not run"
    status=1
  fi
  if ! grep -q '^\[  PASSED  \] [1-9]' <<<"$out"; then
    echo "run.sh: $t passed no case"
    status=1
  fi
done
echo "== tutorial graphs on the GPU (no soft placement: a node that cannot run there is an error)"
for g in graphs/matmul.yaml graphs/addn.yaml graphs/variable_int32_gpu.yaml; do
  .device/tfrun "$g" --log-placement || status=1
done
echo "== two towers on four virtual GPUs of GPU:0"
.device/tfrun graphs/multi_tower.yaml --log-placement --virtual-devices 1024,1024,1024,1024 || status=1
echo "== the TF2 GPU guide's eager transcripts on the real GPU (diff against the goldens)"
for g in tf2_guide_matmul tf2_guide_cpu_pinned; do
  # The expected file's own run uses a simulated GPU (its # args: line); here the real one.
  .device/tfrun graphs/$g.yaml --log-placement --compat eager | diff - <(grep -v '^# ' graphs/$g.eager_gpu.expected) || status=1
done
.device/tfrun graphs/tf2_guide_replicate.yaml --log-placement --compat eager || status=1
echo "== 8192^3 float32 MatMul on GPU:0 (TF32 on, then off)"
cat > /tmp/mm8192.yaml <<'G'
nodes:
  - {name: a, op: Const, device: /gpu:0, shape: [8192, 8192], random: {distribution: uniform, min: -1, max: 1, seed: 1}}
  - {name: b, op: Const, device: /gpu:0, shape: [8192, 8192], random: {distribution: uniform, min: -1, max: 1, seed: 2}}
  - {name: c, op: MatMul, device: /gpu:0, inputs: [a, b]}
fetch: [c]
G
.device/tfrun /tmp/mm8192.yaml --benchmark 10 > /dev/null || status=1
.device/tfrun /tmp/mm8192.yaml --benchmark 10 --tf32 off > /dev/null || status=1
echo "== training on the GPU: the tower sample at batch 8 (--steps), then the scaling table (batch 256)"
.device/tfrun graphs/tf/tower_sample_1.pb --init init --targets train --fetch loss --steps 4 --batch 8 \
  --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy || status=1
python3 bench/train.py --tfrun .device/tfrun --scaling --real || status=1
echo "== bench (c): against torch.mm"
python3 bench/bench.py --tfrun .device/tfrun --gpu-only || status=1
exit $status
RUN
chmod +x .device/run.sh
du -sh .device
