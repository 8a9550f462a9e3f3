#include "core/devices/visibility.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/devices/simulated_platform.h"

namespace tfrun {
namespace {

std::vector<PhysicalGpu> FourGpus() {
  std::vector<PhysicalGpu> gpus(4);
  const char* uuids[] = {"GPU-aaaa1111", "GPU-bbbb2222", "GPU-aaaa3333", "GPU-cccc4444"};
  for (int i = 0; i < 4; ++i) {
    gpus[i].name = "Tesla K20m";
    gpus[i].pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
    gpus[i].cc_major = 3;
    gpus[i].cc_minor = 5;
    gpus[i].total_bytes = gpus[i].free_bytes = int64_t{4742} << 20;
    gpus[i].uuid = uuids[i];
  }
  return gpus;
}

TEST(CudaVisibleDevicesTest, CudaRules) {
  auto gpus = FourGpus();
  EXPECT_EQ(CudaVisibleDevices(std::nullopt, gpus), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(CudaVisibleDevices("2,3", gpus), (std::vector<int>{2, 3}));
  EXPECT_EQ(CudaVisibleDevices("0,2,-1,1", gpus), (std::vector<int>{0, 2}));  // invalid entry ends it
  EXPECT_EQ(CudaVisibleDevices("-1", gpus), std::vector<int>{});
  EXPECT_EQ(CudaVisibleDevices("1,1", gpus), std::vector<int>{});  // a repeat empties it
  EXPECT_EQ(CudaVisibleDevices("3,7,1", gpus), std::vector<int>{3});  // out of range ends it
  EXPECT_EQ(CudaVisibleDevices("", gpus), std::vector<int>{});
  EXPECT_EQ(CudaVisibleDevices(" 1 , 0", gpus), (std::vector<int>{1, 0}));
  EXPECT_EQ(CudaVisibleDevices("GPU-bbbb,GPU-cccc4444", gpus), (std::vector<int>{1, 3}));
  EXPECT_EQ(CudaVisibleDevices("0,GPU-aaaa", gpus), std::vector<int>{0});  // ambiguous prefix ends it
  EXPECT_EQ(CudaVisibleDevices("garbage,1", gpus), std::vector<int>{});
}

TEST(LogicalGpusTest, VisibleDeviceListMapsTfIdsToCudaOrdinals) {
  GpuOptions options;
  options.visible_device_list = "1,2";
  StatusOr<std::vector<LogicalGpu>> l = MakeLogicalGpus(FourGpus(), options);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].tf_id, 0);
  EXPECT_EQ((*l)[0].cuda_ordinal, 1);
  EXPECT_EQ((*l)[1].cuda_ordinal, 2);
  options.visible_device_list = " 3";  // absl::SimpleAtoi allows spaces
  EXPECT_EQ(MakeLogicalGpus(FourGpus(), options)->at(0).cuda_ordinal, 3);
}

// device_count {GPU: N}: the first N of the visible list (gpu_device.cc
// num_gpus_to_use); 0 skips the list's checks altogether.
TEST(LogicalGpusTest, DeviceCountTakesTheFirstGpus) {
  GpuOptions options;
  options.visible_device_list = "3,1,2";
  options.max_gpus = 2;
  StatusOr<std::vector<LogicalGpu>> l = MakeLogicalGpus(FourGpus(), options);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].cuda_ordinal, 3);
  EXPECT_EQ((*l)[1].cuda_ordinal, 1);
  options.max_gpus = 9;
  EXPECT_EQ(MakeLogicalGpus(FourGpus(), options)->size(), 3u);
  options.max_gpus = 0;
  options.visible_device_list = "7";  // not even parsed
  ASSERT_TRUE(MakeLogicalGpus(FourGpus(), options).ok());
  EXPECT_TRUE(MakeLogicalGpus(FourGpus(), options)->empty());
}

TEST(LogicalGpusTest, VisibleDeviceListErrorsAreTensorFlowsTexts) {
  GpuOptions options;
  auto error = [&](const std::string& list) {
    options.visible_device_list = list;
    StatusOr<std::vector<LogicalGpu>> l = MakeLogicalGpus(FourGpus(), options);
    EXPECT_FALSE(l.ok());
    EXPECT_EQ(l.status().kind(), ErrorKind::kPlacement);
    return l.status().message();
  };
  EXPECT_EQ(error("4"), "InvalidArgumentError: 'visible_device_list' listed an invalid GPU id '4' but visible "
                        "device count is 4");
  EXPECT_EQ(error("0,x"), "InvalidArgumentError: Could not parse entry in 'visible_device_list': 'x'. "
                          "visible_device_list = 0,x");
  EXPECT_EQ(error("2,2"), "InvalidArgumentError: visible_device_list contained a duplicate entry: 2,2");
  // Without GPUs the list is not checked.
  options.visible_device_list = "9";
  EXPECT_TRUE(MakeLogicalGpus({}, options).ok());
}

TEST(LogicalGpusTest, MemoryLimitsFollowTensorFlow) {
  constexpr int64_t kMiB = 1 << 20;
  auto gpus = FourGpus();
  StatusOr<std::vector<LogicalGpu>> l = MakeLogicalGpus(gpus, GpuOptions());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[0].memory_limit_bytes, (4742 - 500) * kMiB);  // cc 3.5 reserves 500 MiB
  EXPECT_EQ(MinSystemMemory(int64_t{1} << 30, 8), 225 * kMiB);
  EXPECT_EQ(MinSystemMemory(int64_t{40} << 30, 7), 1050 * kMiB);
  EXPECT_EQ(MinSystemMemory(int64_t{40} << 30, 8), 1536 * kMiB);
  EXPECT_EQ(MinSystemMemory(int64_t{80} << 30, 9), 1800 * kMiB);
  GpuOptions fraction;
  fraction.per_process_gpu_memory_fraction = 0.5;
  EXPECT_EQ(MakeLogicalGpus(gpus, fraction)->at(0).memory_limit_bytes, 2371 * kMiB);
  gpus[0].free_bytes = 1000 * kMiB;  // the reserve comes off free memory
  EXPECT_EQ(MakeLogicalGpus(gpus, GpuOptions())->at(0).memory_limit_bytes, 775 * kMiB);
  EXPECT_EQ(DefaultMemoryLimit(1000 * kMiB, 3), 775 * kMiB);
  // Unmeasured free memory: the default limit waits for the first
  // allocation; a fraction of the total needs no measurement.
  gpus[0].free_bytes = PhysicalGpu::kUnmeasured;
  EXPECT_EQ(MakeLogicalGpus(gpus, GpuOptions())->at(0).memory_limit_bytes, LogicalGpu::kLimitOnFirstUse);
  EXPECT_EQ(MakeLogicalGpus(gpus, fraction)->at(0).memory_limit_bytes, 2371 * kMiB);
}

TEST(LogicalGpusTest, VirtualDevicesSplitOneGpu) {
  GpuOptions options;
  options.visible_device_list = "2";
  options.virtual_devices = {{1024, 2048}};
  options.allow_growth = true;
  StatusOr<std::vector<LogicalGpu>> l = MakeLogicalGpus(FourGpus(), options);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].cuda_ordinal, 2);
  EXPECT_EQ((*l)[1].cuda_ordinal, 2);
  EXPECT_EQ((*l)[1].tf_id, 1);
  EXPECT_EQ((*l)[1].memory_limit_bytes, int64_t{2048} << 20);
  EXPECT_TRUE((*l)[0].allow_growth);

  options.per_process_gpu_memory_fraction = 0.3;
  EXPECT_EQ(MakeLogicalGpus(FourGpus(), options).status().message(),
            "InvalidArgumentError: It's invalid to set per_process_gpu_memory_fraction when virtual_devices is set.");
  options.per_process_gpu_memory_fraction = 0;
  options.visible_device_list = "0,1";
  EXPECT_EQ(MakeLogicalGpus(FourGpus(), options).status().message(),
            "InvalidArgumentError: The number of GPUs in visible_device_list doesn't match the number of elements "
            "in the virtual_devices list. #GPUs in visible_device_list: 2 virtual_devices.size(): 1");
  options.visible_device_list = "";
  EXPECT_EQ(MakeLogicalGpus(FourGpus(), options).status().message(),
            "UnknownError: The number of valid GPUs doesn't match the number of elements in the virtual_devices "
            "list. #valid GPUs: 4 virtual_devices.size(): 1");
}

std::string WriteTopology(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(SimulatedPlatformTest, ReadsTopologyAndAppliesCudaVisibleDevices) {
  std::string path = WriteTopology("two.yaml", R"(gpus:
  - {name: A, pci_bus_id: "0000:01:00.0", compute_capability: "8.0", memory_mb: 1000}
  - {name: B, pci_bus_id: "0000:02:00.0", compute_capability: "9.0", memory_mb: 2000, free_mb: 1500})");
  auto platform = LoadSimulatedPlatform(path, std::string("1"));
  ASSERT_TRUE(platform.ok()) << platform.status().message();
  auto gpus = (*platform)->VisibleGpus(false);
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].name, "B");
  EXPECT_EQ((*gpus)[0].cc_major, 9);
  EXPECT_EQ((*gpus)[0].free_bytes, int64_t{1500} << 20);
  EXPECT_TRUE((*platform)->simulated());
}

TEST(SimulatedPlatformTest, BadTopologiesAreLocatedErrors) {
  auto error = [](const std::string& text) {
    auto p = LoadSimulatedPlatform(WriteTopology("bad.yaml", text), std::nullopt);
    EXPECT_FALSE(p.ok());
    EXPECT_EQ(p.status().kind(), ErrorKind::kBadInput);
    return p.status().message();
  };
  EXPECT_NE(error("gpus: [{name: A, pci_bus_id: '0000:01:00.0', compute_capability: '8.0'}]").find("needs 'memory_mb'"),
            std::string::npos);
  EXPECT_NE(error("gpus: [{name: A, pci_bus_id: 'bus', compute_capability: '8.0', memory_mb: 1}]")
                .find("pci_bus_id 'bus'"),
            std::string::npos);
  EXPECT_NE(error("gpus: [{name: A, pci_bus_id: '0000:01:00.0', compute_capability: 'eight', memory_mb: 1}]")
                .find("compute_capability 'eight'"),
            std::string::npos);
  EXPECT_NE(error("gpus: [{name: A, pci_bus_id: '0000:01:00.0', compute_capability: '8.0', memory_mb: -5}]")
                .find("memory_mb must be a positive"),
            std::string::npos);
  EXPECT_NE(error("gpus: [{name: A, pci_bus_id: '0000:01:00.0', compute_capability: '8.0', memory_mb: 5, memory_mv: 1}]")
                .find("did you mean 'memory_mb'"),
            std::string::npos);
  EXPECT_NE(error("gpu: []").find("bad.yaml"), std::string::npos);
  EXPECT_NE(error("gpus: [").find("YAML syntax error"), std::string::npos);
}

}  // namespace
}  // namespace tfrun
