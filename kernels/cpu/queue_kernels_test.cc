// Queues in tfrun's one-op-at-a-time runs: what TensorFlow would block on
// (no other thread will ever enqueue, dequeue or close) is an error at
// once, naming the queue, never a hang; and a queue lives across runs.
// TensorFlow's own texts and values are the goldens' (graphs/tf/queue_run,
// testdata/bad/tf/queue_*).
#include <gtest/gtest.h>

#include <string>

#include "core/devices/device_set.h"
#include "core/graph_def/graph_file_loader.h"
#include "core/placement/compat_profile.h"
#include "core/placement/placer.h"
#include "core/runtime/executor.h"
#include "kernels/cpu/cpu_kernels.h"

namespace tfrun {
namespace {

class QueueRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<Graph> g = LoadAnyGraphFile("graphs/tf/queue_run.pbtxt", LoadOptions(), GraphDefImportOptions(), nullptr);
    ASSERT_TRUE(g.ok()) << g.status().message();
    graph_ = std::move(*g);
    ASSERT_TRUE(PlaceGraph(graph_, devices_, false, *FindProfile("tf2"), &placement_).ok());
    RegisterCpuKernels(&kernels_);
    executor_ = std::make_unique<Executor>(graph_, devices_, placement_, kernels_);
  }
  Status Target(const std::string& name) { return executor_->RunTargets({graph_.Find(name)->id}); }
  StatusOr<RunResult> Fetch(const std::string& name) { return executor_->Run({{graph_.Find(name)->id, 0}}); }

  const DeviceSet devices_ = DeviceSet::CpuOnly();
  Graph graph_;
  Placement placement_;
  KernelRegistry kernels_;
  std::unique_ptr<Executor> executor_;
};

TEST_F(QueueRuns, ADequeueTensorFlowWouldWaitOnFailsAtOnce) {
  // The shuffle queue keeps 2 back (min_after_dequeue) and asks for 8.
  ASSERT_TRUE(Target("q2_enq").ok());
  ASSERT_TRUE(Target("q2_enq").ok());  // 20 elements: enough
  StatusOr<RunResult> first = Fetch("q2_deq");
  ASSERT_TRUE(first.ok()) << first.status().message();
  StatusOr<RunResult> second = Fetch("q2_deq");
  ASSERT_TRUE(second.ok()) << second.status().message();
  StatusOr<RunResult> third = Fetch("q2_deq");  // 4 left, 2 kept back: 2 of 8 available
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("RandomShuffleQueue '_0_q2' has 4 elements (min_after_dequeue 2) and "
                                          "QueueDequeueManyV2 asked for 8; TensorFlow waits here for another thread "
                                          "(a queue runner) to change that; tfrun runs one op at a time"),
            std::string::npos)
      << third.status().message();
}

TEST_F(QueueRuns, AnEnqueueIntoAFullQueueFailsAtOnce) {
  // q1 holds 5; each enqueue_many adds 3.
  ASSERT_TRUE(Target("q1_enq").ok());
  const Status full = Target("q1_enq");
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.message().find("FIFOQueue '_0_q1' is full (3 of 5 elements)"), std::string::npos) << full.message();
}

}  // namespace
}  // namespace tfrun
