#include "core/graph_file/graph_config.h"

#include <gtest/gtest.h>

#include "core/graph_file/yaml_texts_for_tests.h"

namespace tfrun {
namespace {

class GraphConfigTest : public ::testing::Test {
 protected:
  Status Read(const std::string& text) {
    config_ = GraphConfig();
    return ReadGraphConfig(fields_, texts_.Parse(text), &config_);
  }
  GraphConfig config_;
  FieldReader fields_{"g.yaml"};
  YamlTexts texts_;
};

TEST_F(GraphConfigTest, EveryField) {
  ASSERT_TRUE(Read(R"({log_device_placement: true, allow_soft_placement: TRUE, visible_device_list: "1,0",
                      allow_growth: true, per_process_gpu_memory_fraction: 0.5, virtual_devices: [[1024, 512], [256]],
                      tensor_float_32: false, intra_op_parallelism_threads: 2, inter_op_parallelism_threads: 3})")
                  .ok());
  EXPECT_TRUE(config_.log_device_placement);
  EXPECT_TRUE(config_.allow_soft_placement);
  EXPECT_EQ(config_.visible_device_list, "1,0");
  EXPECT_TRUE(config_.allow_growth);
  EXPECT_EQ(config_.per_process_gpu_memory_fraction, 0.5);
  EXPECT_EQ(config_.virtual_devices, (std::vector<std::vector<double>>{{1024, 512}, {256}}));
  EXPECT_FALSE(config_.tensor_float_32);
  EXPECT_EQ(config_.intra_op_parallelism_threads, 2);
  EXPECT_EQ(config_.inter_op_parallelism_threads, 3);
  EXPECT_TRUE(Read("~").ok());
}

TEST_F(GraphConfigTest, DeviceCountAsConfigProtoTakesIt) {
  ASSERT_TRUE(Read("{device_count: {CPU: 3, GPU: 0}}").ok());
  EXPECT_EQ(config_.cpu_device_count, 3);
  EXPECT_EQ(config_.gpu_device_count, 0);
  const Status bad_type = Read("{device_count: {TPU: 1}}");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.message().find("device_count: unknown device type 'TPU' (CPU or GPU)"), std::string::npos)
      << bad_type.message();
  EXPECT_FALSE(Read("{device_count: {CPU: -1}}").ok());
  EXPECT_FALSE(Read("{device_count: 3}").ok());
}

TEST_F(GraphConfigTest, ClusterAsClusterSpecTakesIt) {
  ASSERT_TRUE(Read(R"({cluster: {worker: ["w0:2222", "w1:2222"], ps: 1}, operation_timeout_in_ms: 250})").ok());
  const ClusterSpec& c = config_.cluster;
  ASSERT_EQ(c.size(), 3);
  // Jobs by name, then task index: rank 0 is the ps.
  EXPECT_EQ(c[0].job, "ps");
  EXPECT_EQ(c[0].address, "");
  EXPECT_EQ(c[2].job, "worker");
  EXPECT_EQ(c[2].index, 1);
  EXPECT_EQ(c[2].address, "w1:2222");
  EXPECT_EQ(config_.operation_timeout_in_ms, 250);
  EXPECT_EQ(Read("{cluster: [a]}").message(),
            "g.yaml:1:11: cluster must map job names to lists of task addresses or to task counts");
  EXPECT_EQ(Read("{cluster: {1job: 2}}").message(),
            "g.yaml:1:12: invalid job name '1job' (a letter, then letters, digits or '_')");
  EXPECT_EQ(Read("{cluster: {w: []}}").message(), "g.yaml:1:15: job 'w' has no tasks");
  EXPECT_EQ(Read("{cluster: {w: 0}}").message().substr(0, 16), "g.yaml:1:15: job");
  EXPECT_EQ(Read("{cluster: {w: 1, w: 2}}").ok(), false);
  EXPECT_EQ(Read("{cluster: {w: 5000}}").ok(), false);
  EXPECT_EQ(Read("{cluster: {w: [[1]]}}").message(),
            "g.yaml:1:16: a task address must be a string such as \"localhost:2222\"");
}

TEST_F(GraphConfigTest, Errors) {
  EXPECT_EQ(Read("[1]").message(), "g.yaml:1:1: config must be a mapping");
  EXPECT_EQ(Read("{allow_growth: yes}").message(), "g.yaml:1:16: allow_growth must be true or false");
  EXPECT_EQ(Read("{per_process_gpu_memory_fraction: -0.1}").message(),
            "g.yaml:1:35: per_process_gpu_memory_fraction must not be negative");
  EXPECT_EQ(Read("{virtual_devices: [[0]]}").message(),
            "g.yaml:1:21: a virtual device memory limit must be positive");
  // Aliases can repeat a long list; the count is what is checked.
  EXPECT_EQ(Read("{virtual_devices: [&g [1, 1, 1, 1, 1, 1, 1, 1], " + [] {
              std::string aliases;
              for (int i = 0; i < 600; ++i) aliases += "*g, ";
              return aliases;
            }() + "*g]}")
                .message(),
            "g.yaml:1:24: virtual_devices lists more than 4096 logical GPUs");
  EXPECT_EQ(Read("{intra_op_parallelism_threads: 2000}").message(),
            "g.yaml:1:32: intra_op_parallelism_threads must be an integer from 0 to 1024");
}

}  // namespace
}  // namespace tfrun
