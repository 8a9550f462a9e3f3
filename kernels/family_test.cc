// The family tables (elementwise_family.h) drive both backends: every row
// is bound on the CPU and on GPUs for exactly the dtypes the row says,
// so a backend cannot drift from the table (nor from the other backend).
#include <gtest/gtest.h>

#include <string>

#include "core/base/device_types.h"
#include "kernels/backends.h"
#include "kernels/elementwise_family.h"

namespace tfrun {
namespace {

// Which node dtypes `op` is bound for on `device_type`, as "float32 int32 ...".
std::string BoundDTypes(const KernelRegistry& kernels, const char* op, std::string_view device_type) {
  std::string bound;
  for (DType d : kAllDTypes) {
    if (kernels.Find(op, device_type, d) != nullptr) bound += std::string(bound.empty() ? "" : " ") + std::string(Name(d));
  }
  return bound;
}

std::string Names(DTypeSet set) {
  std::string names;
  for (DType d : kAllDTypes) {
    if (set.Contains(d)) names += std::string(names.empty() ? "" : " ") + std::string(Name(d));
  }
  return names;
}

class FamilyTest : public ::testing::Test {
 protected:
  void SetUp() override { BindAllBackendKernels(&kernels_); }
  void ExpectBound(const char* op, DTypeSet dtypes) {
    for (std::string_view device : {kCpu, kGpu}) {
      EXPECT_EQ(BoundDTypes(kernels_, op, device), Names(dtypes)) << op << " on " << device;
    }
  }
  KernelRegistry kernels_;
};

DTypeSet TypesOf(UnaryTypes types) { return types == UnaryTypes::kFloats ? kFloatTypes : kNumericTypes; }

TEST_F(FamilyTest, EveryUnaryRowIsBoundForItsDTypesOnBothBackends) {
  for (const UnaryFamilyRow& row : kUnaryFamily) ExpectBound(row.op, TypesOf(row.types));
}

TEST_F(FamilyTest, EveryBinaryRowIsBoundForItsDTypesOnBothBackends) {
  for (const BinaryFamilyRow& row : kBinaryFamily) ExpectBound(row.op, TypesOf(row.types));
}

TEST_F(FamilyTest, EveryComparisonGivesBoolOnBothBackends) {
  for (const CompareFamilyRow& row : kCompareFamily) ExpectBound(row.op, DTypeSet{DType::kBool});
}

TEST_F(FamilyTest, EveryReductionIsBoundForItsDTypesOnBothBackends) {
  for (const ReduceFamilyRow& row : kReduceFamily) {
    ExpectBound(row.op, row.logical ? DTypeSet{DType::kBool} : kNumericTypes);
  }
}

}  // namespace
}  // namespace tfrun
