// The session's stages with a host that has one CPU and no kernels: what
// it prints, which outputs it tells and when, the errors of each stage,
// and the two kinds (graph and eager). Runs that need kernels are the
// command line's tests (cli/cli_test.cc, the goldens).
#include "core/session/session.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace tfrun {
namespace {

class OneCpuHost : public SessionHost {
 public:
  StatusOr<DeviceSet*> BuildDevices(const Graph&, const GraphConfig&, bool) override {
    ++builds;
    return &devices;
  }
  Status StartCluster(const Graph&, bool) override { return Status::Ok(); }
  Status JoinCluster(const Graph&, DeviceSet*) override { return Status::Ok(); }
  TensorChannel* channel() override { return nullptr; }
  bool prints_output() const override { return true; }
  StatusOr<std::vector<Feed>> ReadFeeds(const Graph&) override { return std::vector<Feed>(); }
  void BindKernels(KernelRegistry*) override {}
  Status StartCpuThreads(int) override { return Status::Ok(); }

  DeviceSet devices = DeviceSet::CpuOnly();
  int builds = 0;
};

// Which outputs were told, in order.
class RecordingObserver : public SessionObserver {
 public:
  Status Loaded(const Graph&) override { return Told("loaded"); }
  Status Resolved(const Graph&, const std::vector<NodeOutput>& fetch) override {
    return Told("resolved " + std::to_string(fetch.size()));
  }
  Status Placed(const Graph&, const DeviceSet&, const Placement&) override { return Told("placed"); }
  Status FirstRun(Executor&, const std::vector<NodeOutput>&, const std::vector<Feed>&) override {
    return Told("first run");
  }

  std::vector<std::string> told;
  std::string fail_at;  // the output that fails, if any

 private:
  Status Told(const std::string& what) {
    told.push_back(what);
    return what.rfind(fail_at, 0) == 0 && !fail_at.empty() ? BadInput("cannot write " + what) : Status::Ok();
  }
};

std::string WriteGraph(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const char kGraph[] =
    "nodes:\n"
    "  - {name: a, op: Const, value: [1.0, 2.0]}\n"
    "  - {name: b, op: Const, value: [3.0, 4.0]}\n"
    "  - {name: c, op: AddN, inputs: [a, b]}\n"
    "fetch: [c]\n";

SessionOptions OptionsFor(const std::string& path, std::string_view compat = "tf2") {
  SessionOptions options;
  options.graph_path = path;
  options.profile = FindProfile(compat);
  return options;
}

TEST(SessionTest, PlacesOnlyAndTellsEachOutputOnceInOrder) {
  OneCpuHost host;
  RecordingObserver observer;
  SessionOptions options = OptionsFor(WriteGraph("place_only.yaml", kGraph));
  options.place_only = true;
  options.log_placement = true;
  std::unique_ptr<Session> session = Session::Create(options, &host, &observer, std::chrono::steady_clock::now());
  std::string out;
  ASSERT_TRUE(session->Run(&out).ok());
  EXPECT_EQ(observer.told, (std::vector<std::string>{"loaded", "resolved 1", "placed"}));
  EXPECT_NE(out.find("Device mapping: no known devices.\n"), std::string::npos) << out;
  EXPECT_NE(out.find("c: (AddN): /job:localhost/replica:0/task:0/device:CPU:0\n"), std::string::npos) << out;
  EXPECT_TRUE(session->place_only());
  EXPECT_EQ(host.builds, 1);
  const SessionRecord& record = session->record();
  EXPECT_NE(record.graph, nullptr);
  EXPECT_NE(record.placement, nullptr);
  EXPECT_EQ(record.result, nullptr);  // nothing ran
  ASSERT_EQ(session->phases().size(), 3u);
  EXPECT_EQ(session->phases()[2].name, "placement");
}

TEST(SessionTest, AnUnknownFetchStopsBeforePlacementWithASuggestion) {
  OneCpuHost host;
  RecordingObserver observer;
  SessionOptions options = OptionsFor(WriteGraph("unknown_fetch.yaml", kGraph));
  options.fetch = {"cc"};
  std::unique_ptr<Session> session = Session::Create(options, &host, &observer, std::chrono::steady_clock::now());
  std::string out;
  const Status s = session->Run(&out);
  EXPECT_EQ(s.kind(), ErrorKind::kBadInput);
  EXPECT_NE(s.message().find("--fetch cc: "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("has no node named 'cc' (did you mean 'c'?)"), std::string::npos) << s.message();
  EXPECT_EQ(observer.told, (std::vector<std::string>{"loaded"}));
  EXPECT_EQ(out, "");
  EXPECT_EQ(session->record().placement, nullptr);
}

// An output that cannot be written stops the run there, as the flag's own error.
TEST(SessionTest, AnOutputsErrorStopsTheRun) {
  OneCpuHost host;
  RecordingObserver observer;
  observer.fail_at = "placed";
  SessionOptions options = OptionsFor(WriteGraph("failing_output.yaml", kGraph));
  options.place_only = true;
  std::unique_ptr<Session> session = Session::Create(options, &host, &observer, std::chrono::steady_clock::now());
  std::string out;
  const Status s = session->Run(&out);
  EXPECT_EQ(s.message(), "cannot write placed");
  EXPECT_EQ(session->record().timings.total_ms, 0);  // a failed run reports no total
}

// A fetch that is fed is answered from the feed, as session.py does: nothing
// is placed and no kernel runs.
TEST(SessionTest, AFedFetchIsAnsweredWithoutPlacing) {
  class FeedingHost : public OneCpuHost {
   public:
    StatusOr<std::vector<Feed>> ReadFeeds(const Graph& graph) override {
      TFRUN_ASSIGN_OR_RETURN(Tensor value, Tensor::AllocateHost(DType::kFloat32, Shape{2}));
      value.data<float>()[0] = 5;
      value.data<float>()[1] = 6;
      return std::vector<Feed>{Feed{NodeOutput{graph.Find("c")->id, 0}, value}};
    }
  } host;
  RecordingObserver observer;
  const SessionOptions options = OptionsFor(WriteGraph("fed.yaml", kGraph));
  std::unique_ptr<Session> session = Session::Create(options, &host, &observer, std::chrono::steady_clock::now());
  std::string out;
  const Status s = session->Run(&out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out, "[5. 6.]\n");
  EXPECT_EQ(observer.told, (std::vector<std::string>{"loaded", "resolved 1"}));
  EXPECT_EQ(session->record().placement, nullptr);
  ASSERT_NE(session->record().result, nullptr);
  EXPECT_EQ(session->record().printed, (std::vector<std::string>{"[5. 6.]"}));
}

// The eager kind: TensorFlow 2's eager context logs the ops it executes,
// and refuses what only a graph session does.
TEST(SessionTest, EagerIsTheSecondKind) {
  OneCpuHost host;
  RecordingObserver observer;
  const std::string path = WriteGraph("eager.yaml", kGraph);
  SessionOptions options = OptionsFor(path, "eager");
  options.place_only = true;
  options.log_placement = true;
  std::unique_ptr<Session> session = Session::Create(options, &host, &observer, std::chrono::steady_clock::now());
  std::string out;
  ASSERT_TRUE(session->Run(&out).ok());
  EXPECT_NE(out.find("Executing op AddN in device /job:localhost/replica:0/task:0/device:CPU:0\n"), std::string::npos)
      << out;

  SessionOptions training = OptionsFor(path, "eager");
  training.steps = 3;
  std::unique_ptr<Session> refused = Session::Create(training, &host, &observer, std::chrono::steady_clock::now());
  const Status s = refused->Run(&out);
  EXPECT_EQ(s.message(),
            "--steps: --compat eager runs op by op; a training loop runs a graph's session (--compat tf2, tf1 or tf0)");
}

}  // namespace
}  // namespace tfrun
