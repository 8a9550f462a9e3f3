#!/usr/bin/env bash
# Builds the libFuzzer targets (clang from Debian's packages, with ASan and
# UBSan) and runs one from its checked-in corpus:
#   graph  tools/fuzz/graph_fuzzer.cc, from tools/fuzz/corpus plus the graphs
#          of graphs/ and testdata/ (YAML, and TensorFlow's graph files of
#          graphs/tf/ up to 4 KB: bytes that are not YAML are read as one);
#   input  tools/fuzz/input_fuzzer.cc (.npy files and --json's error
#          report), from tools/fuzz/input_corpus, under a 1 MB stack.
# A crash, sanitizer report or broken invariant ends it with a non-zero
# status and the input in $FUZZ_DIR/findings/.
#   tools/fuzz.sh [SECONDS] [graph|input]   (default 600 s, graph; .ci/run runs both)
# To grow a checked-in corpus after a long run (inputs that add coverage):
#   $FUZZ_DIR/graph_fuzzer -merge=1 -max_len=4096 tools/fuzz/corpus $FUZZ_DIR/corpus
#   $FUZZ_DIR/input_fuzzer -merge=1 -max_len=65536 tools/fuzz/input_corpus $FUZZ_DIR/input_corpus
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target=${2:-graph}
case "$target" in
  graph | input) ;;
  *) echo "usage: tools/fuzz.sh [SECONDS] [graph|input]" >&2; exit 2 ;;
esac
dir=${FUZZ_DIR:-/tmp/tfrun-fuzz}
mkdir -p "$dir/corpus" "$dir/input_corpus" "$dir/findings" "$dir/obj" "$dir/gen/core/tables" "$dir/gen/core/graph_def"
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
srcs=(core/allocator.cc core/array_printer.cc core/atomic_file.cc core/cluster_spec.cc core/compat_profile.cc core/device_name.cc
      core/colocation_graph.cc core/device_types.cc core/kernel_lookup.cc core/node_attrs.cc core/tables/tf_tables.cc
      core/device_set.cc core/did_you_mean.cc core/dtype.cc core/executor.cc core/float_format.cc core/graph.cc
      core/host_memory.cc core/kernel_registry.cc core/kernel_shapes.cc core/node_def_summary.cc core/npy.cc core/op_registry.cc core/parallel.cc
      core/eager_program.cc core/placement_log.cc core/placer.cc core/shape.cc core/status.cc core/tensor.cc
      core/visibility.cc
      $(ls core/graph_file/*.cc | grep -v _test.cc)
      core/graph_def/graph_def_import.cc core/graph_def/tf_graph_file.cc "$dir/gen/core/graph_def/tf_graph.pb.cc"
      kernels/cpu/cpu_kernels.cc kernels/cpu/matmul_avx2_generic.cc third_party/fmt/fmt_compiled.cc
      tools/fuzz/${target}_fuzzer.cc)
[ "$target" = input ] && srcs+=(cli/report.cc)
# An object is stale when its source or any header is newer: a changed
# struct layout must never meet an old object.
newest_header=$(ls -t core/*.h core/graph_file/*.h core/graph_def/*.h "$dir/gen/core/graph_def/tf_graph.pb.h" \
  core/tables/*.h "$inc" kernels/*/*.h cli/report.h | head -1)
# Compiled a few at a time, one per core.
objs=()
jobs=$(nproc)
for src in "${srcs[@]}"; do
  obj="$dir/obj/$(echo "$src" | tr / _).o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_header" -nt "$obj" ]; then
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    clang++ "${flags[@]}" -c "$src" -o "$obj" &
  fi
  objs+=("$obj")
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n; done
# random.cc keeps its exact arithmetic: no FMA contraction; the AVX2 MatMul
# is built as in kernels/BUILD.
clang++ "${flags[@]}" -ffp-contract=off -c core/random.cc -o "$dir/obj/random.o"
clang++ "${flags[@]}" -mavx2 -mfma -c kernels/cpu/matmul_avx2.cc -o "$dir/obj/matmul_avx2.o"
clang++ "${flags[@]}" -mavx2 -mfma -c kernels/cpu/sgemm_avx2.cc -o "$dir/obj/sgemm_avx2.o"
clang++ -fsanitize=fuzzer,address,undefined "${objs[@]}" "$dir/obj/random.o" "$dir/obj/matmul_avx2.o" \
  "$dir/obj/sgemm_avx2.o" \
  -l:libyaml-cpp.a -l:libprotobuf.a -lz -lpthread \
  -o "$dir/${target}_fuzzer"

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
for f in graphs/tf/*.pbtxt graphs/tf/*.pb graphs/tf/*.meta; do
  [ "$(stat -c %s "$f")" -le 4096 ] && cp "$f" "$dir/corpus/"
done
cd "$dir"
./graph_fuzzer -dict="$OLDPWD/tools/fuzz/graph.dict" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix=findings/ -print_final_stats=1 corpus
