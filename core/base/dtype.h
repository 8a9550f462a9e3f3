// The tensor element types of graph format version 1.
#pragma once

#include <Eigen/Core>  // Eigen::half, Eigen::bfloat16

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tfrun {

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt32,
  kInt64,
  kBool,
  // Bytes of any length per element (TensorFlow's tstring, NumPy's S):
  // stored packed (tensor.h), never dispatched to numeric kernels.
  kString,
  // Unsigned integers, after string so that the numbers other processes
  // read (task_exchange.cc) keep their meaning. They hold what programs
  // decode and seed with (DecodeRaw's bytes, the stateless random ops' keys
  // and counters) and move between kernels; no arithmetic kernel takes them.
  kUInt8,
  kUInt64,
  // TensorFlow's DT_VARIANT: one object per tensor (a TensorList), held by
  // the tensor (Tensor::variant), never an element of numbers. Only
  // kernels bound for it take it; it is in no dtype set below, so a graph
  // file cannot declare it and no numeric kernel is dispatched on it.
  kVariant,
};

inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                       DType::kBFloat16, DType::kInt32,  DType::kInt64,
                                       DType::kBool,     DType::kString, DType::kUInt8,
                                       DType::kUInt64};

struct DTypeInfo {
  DType dtype;
  std::string_view name;      // graph files, NumPy and tf.DType.name: "float32"
  std::string_view tf_name;   // TensorFlow's DataTypeString: "float", "half"
  std::string_view npy_descr; // .npy header descr
  size_t size;                // bytes per element; 0 for string (variable)
  bool is_float;
  bool is_integer;
};

const DTypeInfo& Info(DType dtype);
inline std::string_view Name(DType dtype) { return Info(dtype).name; }
std::optional<DType> ParseDType(std::string_view name);

// A small bit set of dtypes, for kernel tables.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dtypes) {
    for (DType d : dtypes) bits_ |= Bit(d);
  }
  constexpr bool Contains(DType d) const { return (bits_ & Bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet other) const {
    DTypeSet s;
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  constexpr DTypeSet operator&(DTypeSet other) const {
    DTypeSet s;
    s.bits_ = bits_ & other.bits_;
    return s;
  }

 private:
  static constexpr uint32_t Bit(DType d) { return 1u << static_cast<int>(d); }
  uint32_t bits_ = 0;
};

inline constexpr DTypeSet kFloatTypes = {DType::kFloat16, DType::kBFloat16,
                                         DType::kFloat32, DType::kFloat64};
inline constexpr DTypeSet kIntTypes = {DType::kInt32, DType::kInt64};
inline constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
inline constexpr DTypeSet kAllTypes = kNumericTypes | DTypeSet{DType::kBool};
inline constexpr DTypeSet kUnsignedTypes = {DType::kUInt8, DType::kUInt64};
// What ops that only move tensors (Const, Identity, Cast, the slicers) take
// besides kAllTypes.
inline constexpr DTypeSet kMovedTypes = kAllTypes | kUnsignedTypes;
// Ops that only move tensors and never look at an element also take strings.
inline constexpr DTypeSet kEveryDType = kMovedTypes | DTypeSet{DType::kString};

// The C++ type that stores one element of a dtype.
template <DType D> struct CppTypeOf;
template <> struct CppTypeOf<DType::kFloat32> { using type = float; };
template <> struct CppTypeOf<DType::kFloat64> { using type = double; };
template <> struct CppTypeOf<DType::kFloat16> { using type = Eigen::half; };
template <> struct CppTypeOf<DType::kBFloat16> { using type = Eigen::bfloat16; };
template <> struct CppTypeOf<DType::kInt32> { using type = int32_t; };
template <> struct CppTypeOf<DType::kInt64> { using type = int64_t; };
template <> struct CppTypeOf<DType::kBool> { using type = bool; };
template <> struct CppTypeOf<DType::kUInt8> { using type = uint8_t; };
template <> struct CppTypeOf<DType::kUInt64> { using type = uint64_t; };

template <typename T> struct TypeTag { using type = T; };

// The element type DispatchDType gives strings: a byte that is no number.
using StringByte = char;

// Calls fn(TypeTag<T>{}) with T the element type of `dtype`. Strings have
// no fixed-size element: callers check for them first (char, the packed
// bytes, keeps a mistake from reading past the buffer).
template <typename Fn>
decltype(auto) DispatchDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(TypeTag<float>{});
    case DType::kFloat64: return fn(TypeTag<double>{});
    case DType::kFloat16: return fn(TypeTag<Eigen::half>{});
    case DType::kBFloat16: return fn(TypeTag<Eigen::bfloat16>{});
    case DType::kInt32: return fn(TypeTag<int32_t>{});
    case DType::kInt64: return fn(TypeTag<int64_t>{});
    case DType::kBool: return fn(TypeTag<bool>{});
    case DType::kString: return fn(TypeTag<StringByte>{});
    case DType::kUInt8: return fn(TypeTag<uint8_t>{});
    case DType::kUInt64: return fn(TypeTag<uint64_t>{});
    case DType::kVariant: break;  // no element type: no kernel binds a numeric body to it
  }
  return fn(TypeTag<float>{});
}

}  // namespace tfrun
