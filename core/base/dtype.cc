#include "core/base/dtype.h"

namespace tfrun {
namespace {

// bfloat16 has no .npy descr of its own; it is written widened to float32
// (README: "--out").
constexpr DTypeInfo kInfos[] = {
    {DType::kFloat32, "float32", "float", "<f4", 4, true, false},
    {DType::kFloat64, "float64", "double", "<f8", 8, true, false},
    {DType::kFloat16, "float16", "half", "<f2", 2, true, false},
    {DType::kBFloat16, "bfloat16", "bfloat16", "<f4", 2, true, false},
    {DType::kInt32, "int32", "int32", "<i4", 4, false, true},
    {DType::kInt64, "int64", "int64", "<i8", 8, false, true},
    {DType::kBool, "bool", "bool", "|b1", 1, false, false},
    // .npy's descr is |S<longest element>, written by npy.cc.
    {DType::kString, "string", "string", "|S", 0, false, false},
    {DType::kUInt8, "uint8", "uint8", "|u1", 1, false, true},
    {DType::kUInt64, "uint64", "uint64", "<u8", 8, false, true},
    {DType::kVariant, "variant", "variant", "", 0, false, false},
};

}  // namespace

const DTypeInfo& Info(DType dtype) { return kInfos[static_cast<int>(dtype)]; }

std::optional<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kInfos) {
    if (info.name == name && info.dtype != DType::kVariant) return info.dtype;  // no file declares a variant
  }
  return std::nullopt;
}

}  // namespace tfrun
