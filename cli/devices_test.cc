#include "cli/devices.h"

#include <gtest/gtest.h>

#include "core/graph_file/loader.h"

namespace tfrun {
namespace {

Graph Load(const std::string& text) {
  StatusOr<Graph> graph = LoadGraphText(text, "inline.yaml");
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return graph.ok() ? std::move(*graph) : Graph();
}

const char kAllOnCpu0[] = R"(
nodes:
  - {name: a, op: Const, device: /cpu:0, value: [1.0, 2.0]}
  - {name: b, op: Const, device: /job:localhost/replica:0/task:0/device:CPU:0, value: [3.0, 4.0]}
  - {op: Add, device: /device:CPU:0, inputs: [a, b]}
)";

TEST(InventoryForRunTest, CpuOnlyGraphNeverTouchesTheGpus) {
  EXPECT_EQ(InventoryForRun(Load(kAllOnCpu0), DeviceFlags(), GpuOptions(), false), GpuInventory::kNone);
}

TEST(InventoryForRunTest, AnythingThatCanShowOrUseAGpuEnumeratesThem) {
  const Graph cpu_graph = Load(kAllOnCpu0);
  // The mapping, --json and --dot list the GPUs.
  EXPECT_EQ(InventoryForRun(cpu_graph, DeviceFlags(), GpuOptions(), true), GpuInventory::kDevices);
  // visible_device_list, virtual devices and the memory fraction are
  // checked against the GPUs present.
  GpuOptions visible;
  visible.visible_device_list = "1";
  EXPECT_EQ(InventoryForRun(cpu_graph, DeviceFlags(), visible, false), GpuInventory::kDevices);
  GpuOptions fraction;
  fraction.per_process_gpu_memory_fraction = 0.5;
  EXPECT_EQ(InventoryForRun(cpu_graph, DeviceFlags(), fraction, false), GpuInventory::kDevices);
  DeviceFlags topology;
  topology.topology_path = "testdata/topologies/k20m_x4.yaml";
  EXPECT_EQ(InventoryForRun(cpu_graph, topology, GpuOptions(), false), GpuInventory::kDevices);
  // A node without a device, on a GPU, or on another CPU id may depend on
  // the GPUs (placement, or the "available devices" of an error).
  for (const char* device : {"", "device: /gpu:0, ", "device: /cpu:1, ", "device: /job:worker/cpu:0, "}) {
    const Graph graph = Load(std::string("nodes:\n  - {name: a, op: Const, ") + device + "value: [1.0]}\n");
    EXPECT_EQ(InventoryForRun(graph, DeviceFlags(), GpuOptions(), false), GpuInventory::kDevices) << device;
  }
}

TEST(BuildDevicesTest, NoInventoryIsCpu0Alone) {
  StatusOr<Devices> devices = BuildDevices(DeviceFlags(), GpuOptions(), GpuInventory::kNone);
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->set.size(), 1);
  EXPECT_EQ(devices->set[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(devices->physical.empty());
}

}  // namespace
}  // namespace tfrun
