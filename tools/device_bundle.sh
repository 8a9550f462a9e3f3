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
# falls back to the CPU (no --soft-placement). Each step has its own time
# limit and the whole run a budget (RUN_BUDGET seconds, default 420): a
# step that would start past it is listed as not run, so one slow or hung
# step never costs the rest. The log goes to $OUT/run.log when $OUT is set.
# Steps can be chosen by name: bash .device/run.sh tests graphs ...
set -uo pipefail
export TFRUN_REQUIRE_GPU=1
budget=${RUN_BUDGET:-420}
began=$(date +%s)
if [ -n "${OUT:-}" ]; then exec > >(tee "$OUT/run.log") 2>&1; fi
tar xzf .device/bundle.tgz -C .device
export LD_LIBRARY_PATH="$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failed=(); skipped=()
wanted=" ${*:-all} "
# step NAME SECONDS COMMAND...: runs COMMAND under a time limit, unless the
# budget is spent or NAME's group was not asked for; records the outcome.
step() {
  local name=$1 limit=$2; shift 2
  local group=${name%%:*}
  if [ "$wanted" != " all " ] && [[ "$wanted" != *" $group "* ]]; then return 0; fi
  local now=$(( $(date +%s) - began ))
  if [ $(( now + 10 )) -gt "$budget" ]; then skipped+=("$name"); echo "== $name: not run (budget ${budget}s spent)"; return 0; fi
  [ $(( now + limit )) -gt "$budget" ] && limit=$(( budget - now ))
  echo "== $name (limit ${limit}s, at ${now}s)"
  local t0=$(date +%s)
  timeout -k 5 "$limit" bash -c '"$@"' step "$@"   # bash: the command may be a function below (exported)
  local rc=$?
  echo "-- $name: rc=$rc in $(( $(date +%s) - t0 ))s"
  [ "$rc" -eq 0 ] || failed+=("$name (rc $rc)")
}
devices=$(.device/tfrun devices 2>&1)
echo "$devices"
nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv
missing=$(for b in .device/tfrun .device/*_test; do ldd "$b" | grep 'not found' | sed "s|^|$b: |"; done)
[ -z "$missing" ] || { echo "run.sh: libraries missing on this machine:"; echo "$missing"; }
if ! grep -q "^[1-9][0-9]* Physical GPU" <<<"$devices"; then
  echo "run.sh: no GPU: tfrun sees none, so nothing here would run on a GPU"
  exit 1
fi
# cuBLAS: the toolkit's, else the one in a Python venv's NVIDIA wheel
# (CUDA 13 wheels: nvidia/cu13/lib; older: nvidia/cublas/lib); TFRUN_CUBLAS
# wins. cuDNN 9 likewise (its wheel: nvidia/cudnn/lib).
wheel_lib() {
  python3 - "$@" <<'PY' 2>/dev/null
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()]
for pattern in sys.argv[1:]:
    for root in roots:
        hits = glob.glob(os.path.join(root, pattern))
        if hits:
            print(hits[0]); raise SystemExit
PY
}
if [ -z "${TFRUN_CUBLAS:-}" ] && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
  found=$(wheel_lib nvidia/cu13/lib/libcublas.so.13 nvidia/cublas/lib/libcublas.so.13)
  if [ -z "$found" ]; then echo "run.sh: no libcublas.so.13 (toolkit or Python wheel); set TFRUN_CUBLAS"; exit 1; fi
  export TFRUN_CUBLAS="$found"
fi
echo "TFRUN_CUBLAS=${TFRUN_CUBLAS:-/usr/local/cuda/lib64/libcublas.so.13}"
if [ -z "${TFRUN_CUDNN:-}" ] && [ ! -e /usr/local/cuda/lib64/libcudnn.so.9 ]; then
  found=$(wheel_lib nvidia/cudnn/lib/libcudnn.so.9 nvidia/cu13/lib/libcudnn.so.9)
  if [ -n "$found" ]; then export TFRUN_CUDNN="$found"; else echo "run.sh: no libcudnn.so.9 found (set TFRUN_CUDNN)"; fi
fi
echo "TFRUN_CUDNN=${TFRUN_CUDNN:-/usr/local/cuda/lib64/libcudnn.so.9}"
mkdir -p cli && cp .device/tfrun cli/tfrun   # cli:gpu_test runs cli/tfrun from the root
# A binary that skipped cases (or ran none) fails: a GPU check that did not
# run is not a pass.
gtest() {
  local out rc
  out=$(".device/$1" --gtest_brief=1 2>&1); rc=$?
  echo "$out"
  if grep -q '^\[  SKIPPED \]' <<<"$out"; then echo "run.sh: $1 skipped cases (above)"; rc=1; fi
  if ! grep -q '^\[  PASSED  \] [1-9]' <<<"$out"; then echo "run.sh: $1 passed no case"; rc=1; fi
  return $rc
}
export -f gtest
for t in cublas_test cuda_elementwise_test cudnn_test executor_test gpu_kernels_test gpu_test; do
  step "tests:$t" 120 gtest "$t"
done
# Tutorial graphs on the GPU (no soft placement: a node that cannot run there is an error).
for g in graphs/matmul.yaml graphs/addn.yaml graphs/variable_int32_gpu.yaml; do
  step "graphs:$g" 30 .device/tfrun "$g" --log-placement
done
step "graphs:multi_tower on four virtual GPUs" 30 \
  .device/tfrun graphs/multi_tower.yaml --log-placement --virtual-devices 1024,1024,1024,1024
# The TF2 GPU guide's eager transcripts on the real GPU, against the goldens
# (whose own run uses a simulated GPU, their # args: line).
golden() { diff <(.device/tfrun "graphs/$1.yaml" --log-placement --compat eager 2>&1) <(grep -v '^# ' "graphs/$1.eager_gpu.expected"); }
export -f golden
for g in tf2_guide_matmul tf2_guide_cpu_pinned; do step "graphs:$g golden" 30 golden "$g"; done
step "graphs:tf2_guide_replicate" 30 .device/tfrun graphs/tf2_guide_replicate.yaml --log-placement --compat eager
# v1 control flow with the GPU present (unrequested nodes go to GPU:0):
# the same values as with the GPU hidden, and where each node went.
control_flow() {
  local g=$1; shift
  set -- --device-count CPU=3 "$@"   # the goldens' three CPUs
  .device/tfrun "graphs/tf/$g.pbtxt" "$@" --place-only --log-placement | grep -c "device:GPU:0" || return 1
  diff <(.device/tfrun "graphs/tf/$g.pbtxt" "$@" 2>&1) <(CUDA_VISIBLE_DEVICES=-1 .device/tfrun "graphs/tf/$g.pbtxt" "$@" 2>&1)
}
export -f control_flow
step "controlflow:while_cond on GPU vs CPU" 30 control_flow while_cond --fetch loop/Exit --fetch loop/Exit_1 --fetch c/Merge
step "controlflow:accumulate_n_loop on GPU vs CPU" 30 control_flow accumulate_n_loop
# Issue 42's ops on the GPU (their CUDA kernels; TensorFlow's placement puts
# them there) against the same program with the GPU hidden, within a
# tolerance (cuDNN-free kernels sum in other orders), then under memcheck.
ops_vs_cpu() {
  local g=$1 args
  args=$(head -1 "graphs/tf/$g.run.expected" | sed 's/^# args: //; s/--log-placement //; s/--rtol [^ ]* //; s/--atol [^ ]* //')
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES=-1 .device/tfrun "graphs/tf/$g.pbtxt" $args > "/tmp/$g.cpu" || return 1
  # shellcheck disable=SC2086
  .device/tfrun "graphs/tf/$g.pbtxt" $args --place-only --log-placement | grep -c "device:GPU:0" || return 1
  # shellcheck disable=SC2086
  .device/tfrun "graphs/tf/$g.pbtxt" $args --expect "/tmp/$g.cpu" --rtol 1e-4 --atol 1e-5 > /dev/null || return 1
  # shellcheck disable=SC2086
  compute-sanitizer --tool memcheck --error-exitcode 9 .device/tfrun "graphs/tf/$g.pbtxt" $args > /dev/null
}
export -f ops_vs_cpu
for g in classifier_ops_run strided_slice_run pool_lrn_run batch_norm_run scatter_run; do
  step "ops:$g on GPU vs CPU" 60 ops_vs_cpu "$g"
done
# Issue 44's TF2 calls and Keras SavedModels (depthwise convolutions, tensor
# lists in an LSTM's loop, Transpose, LogicalAnd) on the GPU against the CPU.
tf2_vs_cpu() {
  local graph=$1 golden=$2 args
  args=$(head -1 "graphs/tf/$golden.expected" | sed 's/^# args: //; s/--device-count CPU=3//')
  # shellcheck disable=SC2086
  (cd graphs/tf && CUDA_VISIBLE_DEVICES=-1 ../../.device/tfrun "$graph" $args > "/tmp/$golden.cpu") || return 1
  # shellcheck disable=SC2086
  (cd graphs/tf && ../../.device/tfrun "$graph" $args --place-only --log-placement | grep -c "device:GPU:0") || return 1
  # shellcheck disable=SC2086
  (cd graphs/tf && ../../.device/tfrun "$graph" $args --expect "/tmp/$golden.cpu" --rtol 1e-4 --atol 1e-5 > /dev/null)
}
export -f tf2_vs_cpu
step "tf2:depthwise call on GPU vs CPU" 30 tf2_vs_cpu call_depthwise.pbtxt call_depthwise.run
step "tf2:tensor-array call on GPU vs CPU" 30 tf2_vs_cpu call_tensor_array.pbtxt call_tensor_array.run
for m in keras_conv keras_lstm; do step "tf2:sm_$m on GPU vs CPU" 30 tf2_vs_cpu "sm_$m" "sm_$m.run"; done
# The MirroredStrategy train step (SplitV, BroadcastTo, CollectiveReduceV2
# across two GPUs) on the GPU split into two virtual GPUs, against its run
# on simulated GPUs (the host's kernels, TensorFlow's losses).
mirrored_on_gpus() {
  local args
  args=$(head -1 graphs/tf/call_mirrored_gpu_2.train.expected | sed 's/^# args: //; s#--devices [^ ]*##')
  # shellcheck disable=SC2086
  (cd graphs/tf && CUDA_VISIBLE_DEVICES=-1 ../../.device/tfrun call_mirrored_gpu_2.pbtxt $args \
    --devices ../../testdata/topologies/p40_x8.yaml > /tmp/mirrored.sim) || return 1
  # shellcheck disable=SC2086
  (cd graphs/tf && ../../.device/tfrun call_mirrored_gpu_2.pbtxt $args --virtual-devices 4096,4096 \
    --expect /tmp/mirrored.sim --rtol 1e-5 --atol 1e-6 > /dev/null)
}
export -f mirrored_on_gpus
step "tf2:MirroredStrategy train step on 2 virtual GPUs vs simulated" 30 mirrored_on_gpus
# The real programs on the GPU against the CPU: golbin's tf.layers towers
# (stateless initializers) fed as train_conformance feeds them, and
# TensorFlow's CIFAR-10 trainer (its data drawn in the graph).
real_program_vs_cpu() {
  local graph=$1; shift
  CUDA_VISIBLE_DEVICES=-1 .device/tfrun "graphs/tf/$graph" --soft-placement --quiet --init init --targets train \
    --fetch loss --steps 5 "$@" > "/tmp/$graph.cpu" || return 1
  .device/tfrun "graphs/tf/$graph" --soft-placement --quiet --init init --targets train --fetch loss --steps 5 "$@" \
    --expect "/tmp/$graph.cpu" --rtol 1e-3 --atol 1e-4 > /dev/null
}
export -f real_program_vs_cpu
step "train:golbin's towers (1) on GPU vs CPU" 60 real_program_vs_cpu golbin_tower_1.pb --batch 8 \
  --feed Placeholder=@testdata/train/tower_x16.npy --feed Placeholder_1=@testdata/train/tower_y16.npy
step "train:CIFAR-10 trainer (1 tower) on GPU vs CPU" 60 real_program_vs_cpu cifar10_multi_gpu_1.pb
tfcnn_vs_cpu() {  # tf_cnn_benchmarks' resnet20 (Pad's CUDA kernel among others), 3 steps
  CUDA_VISIBLE_DEVICES=-1 .device/tfrun graphs/tf/tfcnn_resnet20_ps.pb --soft-placement --quiet --init init \
    --init local_var_init_op_group --targets main_fetch_group --fetch average_loss/Mean --steps 3 > /tmp/tfcnn.cpu || return 1
  .device/tfrun graphs/tf/tfcnn_resnet20_ps.pb --soft-placement --quiet --init init --init local_var_init_op_group \
    --targets main_fetch_group --fetch average_loss/Mean --steps 3 --expect /tmp/tfcnn.cpu --rtol 1e-3 --atol 1e-4
}
export -f tfcnn_vs_cpu
step "train:tf_cnn_benchmarks resnet20 on GPU vs CPU" 90 tfcnn_vs_cpu
step "train:tower sample, 4 steps at batch 8" 60 \
  .device/tfrun graphs/tf/tower_sample_1.pb --init init --targets train --fetch loss --steps 4 --batch 8 \
  --feed x=@testdata/train/tower_x16.npy --feed y=@testdata/train/tower_y16.npy
cat > /tmp/mm8192.yaml <<'G'
nodes:
  - {name: a, op: Const, device: /gpu:0, shape: [8192, 8192], random: {distribution: uniform, min: -1, max: 1, seed: 1}}
  - {name: b, op: Const, device: /gpu:0, shape: [8192, 8192], random: {distribution: uniform, min: -1, max: 1, seed: 2}}
  - {name: c, op: MatMul, device: /gpu:0, inputs: [a, b]}
fetch: [c]
G
mm8192() { .device/tfrun /tmp/mm8192.yaml --benchmark 10 "$@" > /dev/null; }   # timings on stderr
export -f mm8192
step "bench:8192^3 float32 MatMul, TF32 on" 60 mm8192
step "bench:8192^3 float32 MatMul, TF32 off" 60 mm8192 --tf32 off
step "bench:against torch.mm" 120 python3 bench/bench.py --tfrun .device/tfrun --gpu-only
# 60 steps, 3 rounds: with 10 steps and one round, the difference of two
# runs was within cuDNN's start-up noise (negative times, 2026-11-28).
step "scaling:tower table at batch 256" 150 \
  python3 bench/train.py --tfrun .device/tfrun --scaling --real --steps 60 --warmup 5 --rounds 3
# Out-of-bounds and misaligned accesses in the elementwise and training kernels.
step "sanitizer:memcheck cuda_elementwise_test" 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
  .device/cuda_elementwise_test --gtest_brief=1
# The training kernels (and cuDNN's calls) on the training_ops golden's fetches.
memcheck_training() {
  local args
  args=$(head -1 graphs/tf/training_ops.run.expected | sed 's/^# args: //; s/--rtol [^ ]* //; s/--atol [^ ]* //')
  # shellcheck disable=SC2086
  compute-sanitizer --tool memcheck --error-exitcode 9 .device/tfrun graphs/tf/training_ops.pbtxt $args --tf32 off > /dev/null
}
export -f memcheck_training
step "sanitizer:memcheck training_ops" 120 memcheck_training
echo "== summary after $(( $(date +%s) - began ))s: ${#failed[@]} failed, ${#skipped[@]} not run"
for f in "${failed[@]}"; do echo "FAILED: $f"; done
for f in "${skipped[@]}"; do echo "NOT RUN: $f"; done
[ ${#failed[@]} -eq 0 ] && [ ${#skipped[@]} -eq 0 ]
RUN
chmod +x .device/run.sh
du -sh .device
