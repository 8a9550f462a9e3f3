// CopyBytes: memcpy between host memories; device memory copied by the
// allocator that owns it, whichever side it is on.
#include "core/base/allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace tfrun {
namespace {

// Device memory the host "cannot" read: host bytes behind a flag, copied
// only through CopyDeviceBytes, which records the calls.
class FakeDeviceAllocator final : public Allocator {
 public:
  explicit FakeDeviceAllocator(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  void* Allocate(size_t bytes) override { return new char[bytes]; }
  void Deallocate(void* ptr, size_t) override { delete[] static_cast<char*>(ptr); }
  bool host_accessible() const override { return false; }
  Status CopyDeviceBytes(Allocator* dst_allocator, void* dst, Allocator* src_allocator, const void* src,
                         size_t bytes) override {
    calls.push_back(src_allocator->name() + "->" + dst_allocator->name());
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  std::vector<std::string> calls;

 private:
  std::string name_;
};

TEST(CopyBytesTest, DeviceMemoryIsCopiedByItsOwnAllocator) {
  HostAllocator host("cpu");
  FakeDeviceAllocator gpu0("GPU_0_bfc"), gpu1("GPU_1_bfc");
  const char text[] = "abc";
  char on_host[4] = {};
  void* on_gpu0 = gpu0.Allocate(4);
  void* on_gpu1 = gpu1.Allocate(4);
  ASSERT_TRUE(CopyBytes(&gpu0, on_gpu0, &host, text, 4).ok());    // to the device: the destination's
  ASSERT_TRUE(CopyBytes(&gpu1, on_gpu1, &gpu0, on_gpu0, 4).ok());  // between devices: the destination's
  ASSERT_TRUE(CopyBytes(&host, on_host, &gpu1, on_gpu1, 4).ok());  // to the host: the source's
  EXPECT_STREQ(on_host, "abc");
  EXPECT_EQ(gpu0.calls, std::vector<std::string>({"cpu->GPU_0_bfc"}));
  EXPECT_EQ(gpu1.calls, std::vector<std::string>({"GPU_0_bfc->GPU_1_bfc", "GPU_1_bfc->cpu"}));
  gpu0.Deallocate(on_gpu0, 4);
  gpu1.Deallocate(on_gpu1, 4);
}

TEST(CopyBytesTest, AnAllocatorThatCannotCopySaysSo) {
  class Opaque final : public Allocator {
   public:
    const std::string& name() const override { return name_; }
    void* Allocate(size_t) override { return nullptr; }
    void Deallocate(void*, size_t) override {}
    bool host_accessible() const override { return false; }
    std::string name_ = "opaque";
  } opaque;
  HostAllocator host("cpu");
  char a[1] = {1}, b[1] = {0};
  const Status s = CopyBytes(&opaque, b, &host, a, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "no copy is known from cpu to opaque");
  EXPECT_TRUE(CopyBytes(&opaque, b, &host, a, 0).ok());  // nothing to copy
}

}  // namespace
}  // namespace tfrun
