#!/usr/bin/env bash
# Builds the libFuzzer targets (clang from Debian's packages, with ASan and
# UBSan) and runs one from its checked-in corpus:
#   graph  tools/fuzz/graph_fuzzer.cc, from tools/fuzz/corpus plus the graphs
#          of graphs/ and testdata/ (YAML, and TensorFlow's graph files of
#          graphs/tf/ up to 4 KB: bytes that are not YAML are read as one);
#   input  tools/fuzz/input_fuzzer.cc (.npy files, --json's error report
#          and tensor bundles), from tools/fuzz/input_corpus, under a 1 MB stack;
#   text   tools/fuzz/text_proto_fuzzer.cc (TensorFlow's text GraphDef,
#          MetaGraphDef and SavedModel files, up to 256 KB), from
#          tools/fuzz/text_corpus plus graphs/tf's and testdata/bad/tf's
#          text files, under a 1 MB stack.
# A crash, sanitizer report or broken invariant ends it with a non-zero
# status and the input in $FUZZ_DIR/findings/.
#   tools/fuzz.sh [SECONDS] [graph|input|text]   (default 600 s, graph; .ci/run runs all three)
# To grow a checked-in corpus after a long run (inputs that add coverage):
#   $FUZZ_DIR/graph_fuzzer -merge=1 -max_len=4096 tools/fuzz/corpus $FUZZ_DIR/corpus
#   $FUZZ_DIR/input_fuzzer -merge=1 -max_len=65536 tools/fuzz/input_corpus $FUZZ_DIR/input_corpus
#   $FUZZ_DIR/text_fuzzer -merge=1 -max_len=262144 tools/fuzz/text_corpus $FUZZ_DIR/text_corpus
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target=${2:-graph}
case "$target" in
  graph | input | text) ;;
  *) echo "usage: tools/fuzz.sh [SECONDS] [graph|input|text]" >&2; exit 2 ;;
esac
dir=${FUZZ_DIR:-/tmp/tfrun-fuzz}
mkdir -p "$dir/corpus" "$dir/input_corpus" "$dir/text_corpus" "$dir/findings" "$dir/gen/core/tables" "$dir/gen/core/graph_def"
# TensorFlow's tables, embedded as core/tables/BUILD embeds them.
inc="$dir/gen/core/tables/tf_ops_tsv.inc"
if [ ! -f "$inc" ] || [ core/tables/tf_ops.tsv -nt "$inc" ]; then
  (printf 'R"tfrun_tables('; cat core/tables/tf_ops.tsv; printf ')tfrun_tables"\n') > "$inc"
fi

# TensorFlow's graph file messages, generated as core/graph_def/BUILD does.
if [ ! -f "$dir/gen/core/graph_def/tf_graph.pb.cc" ] || [ core/graph_def/tf_graph.proto -nt "$dir/gen/core/graph_def/tf_graph.pb.cc" ]; then
  /usr/bin/protoc --proto_path=. --cpp_out="$dir/gen" core/graph_def/tf_graph.proto
fi

flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -I. -I"$dir/gen" -I/usr/include/eigen3 -DSPDLOG_COMPILED_LIB -DEIGEN_MPL2_ONLY)
# Every library source of core/ (random.cc below, with its own flags).
srcs=($(ls core/{base,tables,printing,graph,devices,placement,passes,runtime}/*.cc | grep -v -e _test.cc -e core/base/random.cc)
      $(ls core/graph_file/*.cc | grep -v _test.cc)
      $(ls core/graph_def/*.cc | grep -v -e _test.cc -e graph_file_loader.cc) "$dir/gen/core/graph_def/tf_graph.pb.cc"
      kernels/cpu/cpu_kernels.cc kernels/cpu/cpu_eigen.cc kernels/cpu/array_kernels.cc kernels/cpu/nn_kernels.cc
      kernels/cpu/summary_kernels.cc kernels/cpu/queue_kernels.cc kernels/cpu/checkpoint_kernels.cc
      core/checkpoint/tensor_bundle.cc core/session/keras_build.cc
      kernels/cpu/dnnl_loader.cc kernels/cpu/matmul_avx2_generic.cc third_party/fmt/fmt_compiled.cc
      tools/fuzz/${target/text/text_proto}_fuzzer.cc)
[ "$target" = input ] && srcs+=(cli/report.cc)
[ "$target" = input ] || srcs+=(tools/fuzz/fuzz_checks.cc)
# Objects are kept by content, not by time: a fresh clone has new mtimes
# but the same files, and CI clones afresh. An object's key hashes the
# compiler, the flags, every header the sources can include and the
# source itself, so a changed struct layout never meets an old object.
cache=${FUZZ_OBJ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tfrun/fuzz-obj}
mkdir -p "$cache"
find "$cache" -name '*.o' -mtime +14 -delete 2>/dev/null || true
# (The folder of this run's generated files is not part of any key.)
headers_key=$({ clang++ --version; echo "${flags[*]//$dir/FUZZ_DIR}";
  cat $(ls core/*/*.h kernels/*/*.h cli/report.h tools/fuzz/*.h | sort) \
    "$dir/gen/core/graph_def/tf_graph.pb.h" "$inc"; } | sha256sum | cut -c1-16)
objs=()
jobs=$(nproc)
# compile SRC [EXTRA FLAGS...]: the object's path appended to objs; built
# in the background (one job per core) unless the cache has it.
compile() {
  local src=$1 obj key
  shift
  key=$({ echo "$headers_key $*"; cat "$src"; } | sha256sum | cut -c1-16)
  obj="$cache/$(echo "${src#"$dir"/}" | tr / _)-$key.o"
  objs+=("$obj")
  if [ -f "$obj" ]; then touch "$obj"; return; fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  # Written under a temporary name: a concurrent run never links half an object.
  (clang++ "${flags[@]}" "$@" -c "$src" -o "$obj.tmp.$$" && mv "$obj.tmp.$$" "$obj") &
}
for src in "${srcs[@]}"; do compile "$src"; done
# random.cc keeps its exact arithmetic: no FMA contraction; the AVX2 MatMul
# is built as in kernels/BUILD.
compile core/base/random.cc -ffp-contract=off
compile kernels/cpu/matmul_avx2.cc -mavx2 -mfma
compile kernels/cpu/sgemm_avx2.cc -mavx2 -mfma
compile kernels/cpu/depthwise_avx2.cc -mavx2 -ffp-contract=off
# The math, optimizer and fused elementwise kernels: Eigen's exact sqrt (kernels/BUILD).
compile kernels/cpu/math_kernels.cc -ffp-contract=off -DEIGEN_FAST_MATH=0
compile kernels/cpu/optimizer_kernels.cc -ffp-contract=off -DEIGEN_FAST_MATH=0
compile kernels/cpu/fused_elementwise.cc -ffp-contract=off -DEIGEN_FAST_MATH=0
compile kernels/cpu/fused_elementwise_avx2.cc -mavx2 -ffp-contract=off
# TensorFlow's tanh, sigmoid, exp and log: every multiply-add rounds twice;
# their eight-lane forms for AVX2 as kernels/BUILD builds them.
compile kernels/cpu/tf_float_math.cc -ffp-contract=off
compile kernels/cpu/tf_float_math_avx2.cc -mavx2 -ffp-contract=off
# The C library's powf in packets: its FMA build's fused multiply-adds, explicit.
compile kernels/cpu/glibc_powf.cc
compile kernels/cpu/glibc_powf_avx2.cc -mavx2 -mfma -ffp-contract=off
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || exit 1; done
clang++ -fsanitize=fuzzer,address,undefined "${objs[@]}" \
  -l:libyaml-cpp.a -l:libyaml.a -l:libprotobuf.a -l:libleveldb.a -l:libsnappy.a -lz -lpthread -ldl \
  -o "$dir/${target}_fuzzer"

if [ "$target" = text ]; then
  cp tools/fuzz/text_corpus/* "$dir/text_corpus/"
  for f in graphs/tf/*.pbtxt testdata/bad/tf/*.pbtxt; do
    [ "$(stat -c %s "$f")" -le 262144 ] && cp "$f" "$dir/text_corpus/"
  done
  cd "$dir"
  # 1 MB of stack: a parser that recurses per level of nesting fails here.
  ulimit -s 1024
  exec ./text_fuzzer -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=262144 \
    -artifact_prefix=findings/ -print_final_stats=1 text_corpus
fi
if [ "$target" = input ]; then
  cp tools/fuzz/input_corpus/* "$dir/input_corpus/"
  cd "$dir"
  # 1 MB of stack: a reader that recurses per byte of input fails here.
  ulimit -s 1024
  exec ./input_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix=findings/ -print_final_stats=1 input_corpus
fi
cp tools/fuzz/corpus/* graphs/*.yaml testdata/graphs/*.yaml testdata/bad/*.yaml "$dir/corpus/" 2>/dev/null || true
# TensorFlow's graph files, the smaller ones (text and binary).
for f in graphs/tf/*.pbtxt graphs/tf/*.pb graphs/tf/*.meta testdata/bad/tf/*.pbtxt; do
  [ "$(stat -c %s "$f")" -le 4096 ] && cp "$f" "$dir/corpus/"
done
cd "$dir"
./graph_fuzzer -dict="$OLDPWD/tools/fuzz/graph.dict" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix=findings/ -print_final_stats=1 corpus
