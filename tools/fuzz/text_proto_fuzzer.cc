// libFuzzer target for TensorFlow's text graph files (tools/fuzz.sh runs it
// under a 1 MB stack, inputs up to 256 KB): the bytes as a text GraphDef, a
// text MetaGraphDef and a SavedModel's saved_model.pbtxt, each parsed,
// imported both ways, placed soft and hard, explained and, where soft
// placement put every node on CPU:0, run twice (fuzz_checks.h). Deep
// nesting (a stack overflow at 20,000 levels), nesting through attr maps
// (quadratic memory) and hostile attrs and values reach the importer and
// the kernels from here; a crash, a sanitizer report, libFuzzer's RSS limit
// or a broken invariant is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/allocator.h"
#include "tools/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tfrun::SetHostMemoryBudget(tfrun::fuzz::kFuzzHostBytes);
  const std::string text(reinterpret_cast<const char*>(data), size);
  tfrun::fuzz::FuzzTfGraphFile(text, {"fuzz.pbtxt", "fuzz.meta", "saved_model.pbtxt"});
  return 0;
}
