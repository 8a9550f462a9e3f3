// The cluster protocol over an in-memory transport: tasks are threads of
// one process, so gathering, tensors, failures, verdicts and timeouts are
// checked without MPI (cli/cluster_test.cc runs the same over mpirun).
#include "core/runtime/task_exchange.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace tfrun {
namespace {

// Messages between ranks, delivered in order per (from, to, tag): at once,
// or after a delay set for one (from, to) pair, as a busy MPI progress
// engine may deliver one peer's message later than another's.
class Fabric {
 public:
  void Put(int from, int to, int tag, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto delay = delays_.find({from, to});
    const auto visible = std::chrono::steady_clock::now() +
                         (delay == delays_.end() ? std::chrono::milliseconds(0) : delay->second);
    queues_[{to, from, tag}].push_back({std::move(bytes), visible});
  }
  void Delay(int from, int to, std::chrono::milliseconds delay) { delays_[{from, to}] = delay; }
  std::optional<std::pair<int, size_t>> Peek(int to, int from, int tag) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, queue] : queues_) {
      const auto [dest, source, t] = key;
      if (dest == to && t == tag && (from < 0 || source == from) && !queue.empty() &&
          queue.front().visible <= std::chrono::steady_clock::now()) {
        return std::make_pair(source, queue.front().bytes.size());
      }
    }
    return std::nullopt;
  }
  std::string Take(int to, int from, int tag) {
    std::lock_guard<std::mutex> lock(mu_);
    std::deque<Message>& queue = queues_[{to, from, tag}];
    std::string bytes = std::move(queue.front().bytes);
    queue.pop_front();
    return bytes;
  }

 private:
  struct Message {
    std::string bytes;
    std::chrono::steady_clock::time_point visible;
  };
  std::mutex mu_;
  std::map<std::tuple<int, int, int>, std::deque<Message>> queues_;
  std::map<std::pair<int, int>, std::chrono::milliseconds> delays_;  // set before the tasks start
};

class InMemoryTransport : public Transport {
 public:
  InMemoryTransport(Fabric* fabric, int rank, int size) : fabric_(fabric), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return 1 << 20; }
  StatusOr<int64_t> StartSend(int to, int tag, const void* data, size_t bytes) override {
    fabric_->Put(rank_, to, tag, std::string(static_cast<const char*>(data), bytes));
    return int64_t{1};
  }
  StatusOr<bool> SendDone(int64_t) override { return true; }
  StatusOr<std::optional<Arrived>> Probe(int from, int tag) override {
    auto found = fabric_->Peek(rank_, from, tag);
    if (!found) return std::optional<Arrived>();
    return std::optional<Arrived>(Arrived{found->first, found->second});
  }
  Status Receive(int from, int tag, void* data, size_t bytes) override {
    const std::string message = fabric_->Take(rank_, from, tag);
    EXPECT_EQ(message.size(), bytes);
    std::memcpy(data, message.data(), bytes);
    return Status::Ok();
  }
  void Shutdown(bool) override {}

 private:
  Fabric* fabric_;
  int rank_;
  int size_;
};

ClusterSpec ThreeTasks() {
  ClusterSpec cluster;
  cluster.AddJob("worker", 2);
  cluster.AddJob("ps", 1);
  cluster.Finish();  // ps:0, worker:0, worker:1
  return cluster;
}

// Runs body(rank, exchange) on one thread per task and waits for all.
template <typename Body>
void OnEveryTask(const ClusterSpec& cluster, std::chrono::milliseconds timeout, Body body,
                 const std::function<void(Fabric&)>& setup = nullptr) {
  Fabric fabric;
  if (setup) setup(fabric);
  std::vector<std::thread> threads;
  for (int r = 0; r < cluster.size(); ++r) {
    threads.emplace_back([&, r] {
      InMemoryTransport transport(&fabric, r, cluster.size());
      TaskExchange exchange(&transport, cluster, /*master=*/0, timeout);
      body(r, exchange);
    });
  }
  for (std::thread& t : threads) t.join();
}

TEST(ClusterSpecTest, OrdersTasksAsTensorFlowDoes) {
  const ClusterSpec cluster = ThreeTasks();
  ASSERT_EQ(cluster.size(), 3);
  EXPECT_EQ(cluster.TaskName(0), "/job:ps/replica:0/task:0");
  EXPECT_EQ(cluster.TaskName(2), "/job:worker/replica:0/task:1");
  EXPECT_EQ(cluster.Find("worker", 1), 2);
  EXPECT_EQ(cluster.Find("worker", 2), -1);
}

// Worker 1 gathers everything and fails at once, while worker 0's piece is
// slow to reach the master: the master still gathers every task's devices
// (and so places and logs, as TensorFlow's master does before any worker
// runs), and hears of the failure at its next wait.
TEST(TaskExchangeTest, AFailureAfterTheGatherDoesNotCutTheGatherShort) {
  const ClusterSpec cluster = ThreeTasks();
  std::vector<std::string> gathered[3];
  Status verdict[3];
  OnEveryTask(
      cluster, std::chrono::seconds(10),
      [&](int rank, TaskExchange& exchange) {
        StatusOr<std::vector<std::string>> all = exchange.AllGather("task" + std::to_string(rank));
        ASSERT_TRUE(all.ok()) << "task " << rank << ": " << all.status().message();
        gathered[rank] = *all;
        Status mine = Status::Ok();
        if (rank == 2) {
          mine = RuntimeError("ResourceExhaustedError: OOM");
          exchange.TellFailure(mine);
        }
        verdict[rank] = exchange.Conclude(mine);
      },
      [](Fabric& fabric) { fabric.Delay(1, 0, std::chrono::milliseconds(300)); });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(gathered[r], (std::vector<std::string>{"task0", "task1", "task2"}));
  EXPECT_NE(verdict[0].message().find("/job:worker/replica:0/task:1 failed: ResourceExhaustedError: OOM"),
            std::string::npos)
      << verdict[0].message();
}

TEST(TaskExchangeTest, GathersEveryTasksBlobAndMovesTensors) {
  const ClusterSpec cluster = ThreeTasks();
  std::vector<std::string> gathered[3];
  std::vector<std::string> strings_seen(3);
  OnEveryTask(cluster, std::chrono::seconds(10), [&](int rank, TaskExchange& exchange) {
    StatusOr<std::vector<std::string>> all = exchange.AllGather("task" + std::to_string(rank));
    ASSERT_TRUE(all.ok()) << all.status().message();
    gathered[rank] = *all;
    if (rank == 1) {
      StatusOr<Tensor> t = Tensor::FromStrings({2}, {"Hello", ",server"});
      ASSERT_TRUE(t.ok());
      ASSERT_TRUE(exchange.Send(0, 7, *t, false).ok());
      StatusOr<Tensor> f = Tensor::AllocateHost(DType::kFloat32, {3});
      ASSERT_TRUE(f.ok());
      for (int i = 0; i < 3; ++i) f->data<float>()[i] = 1.5f * i;
      ASSERT_TRUE(exchange.Send(2, 8, *f, false).ok());
      ASSERT_TRUE(exchange.Flush().ok());
    } else if (rank == 0) {
      StatusOr<Tensor> t = exchange.Receive(1, 7, "s", DType::kString, {2}, false);
      ASSERT_TRUE(t.ok()) << t.status().message();
      strings_seen[0] = std::string(t->StringAt(0)) + std::string(t->StringAt(1));
    } else {
      StatusOr<Tensor> f = exchange.Receive(1, 8, "f", DType::kFloat32, {3}, false);
      ASSERT_TRUE(f.ok()) << f.status().message();
      strings_seen[2] = std::to_string(f->data<float>()[2]);
    }
    EXPECT_TRUE(exchange.Conclude(Status::Ok()).ok());
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(gathered[r], (std::vector<std::string>{"task0", "task1", "task2"}));
  EXPECT_EQ(strings_seen[0], "Hello,server");
  EXPECT_EQ(strings_seen[2], "3.000000");
}

TEST(TaskExchangeTest, AFailureStopsTheWaitersAndEveryTaskAgreesOnIt) {
  const ClusterSpec cluster = ThreeTasks();
  Status verdicts[3];
  OnEveryTask(cluster, std::chrono::seconds(10), [&](int rank, TaskExchange& exchange) {
    Status mine;
    if (rank == 2) {
      mine = RuntimeError("ResourceExhaustedError: OOM");
    } else {
      // Waits for what task 2 will never send: its failure notice ends it.
      mine = exchange.Receive(2, 3, "x", DType::kFloat32, {1}, false).status();
      EXPECT_FALSE(mine.ok());
    }
    if (!mine.ok()) exchange.TellFailure(mine);
    verdicts[rank] = exchange.Conclude(mine);
  });
  for (const Status& v : verdicts) {
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.kind(), ErrorKind::kRuntime);
    EXPECT_EQ(v.message(), "/job:worker/replica:0/task:1 failed: ResourceExhaustedError: OOM");
  }
}

TEST(TaskExchangeTest, ASilentTaskIsReportedAfterTheTimeout) {
  ClusterSpec cluster;
  cluster.AddJob("local", 2);
  cluster.Finish();
  Fabric fabric;
  InMemoryTransport transport(&fabric, 0, 2);  // task 1 never runs
  TaskExchange exchange(&transport, cluster, 0, std::chrono::milliseconds(50));
  const auto started = std::chrono::steady_clock::now();
  const Status s = exchange.Receive(1, 4, "MatMul", DType::kFloat32, {2}, false).status();
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(50));
  EXPECT_EQ(s.message(),
            "DeadlineExceededError: /job:local/replica:0/task:1 did not answer /job:local/replica:0/task:0 within 50 ms "
            "(waiting for the output of node 'MatMul'; --operation-timeout-ms 50)");
  EXPECT_FALSE(exchange.all_answered());
  // The verdict does not wait a whole timeout more.
  const Status verdict = exchange.Conclude(s);
  EXPECT_EQ(verdict.message(), s.message());
}

// Two tasks of job local: task 1 sends (`from`), task 0 receives (`to`).
struct SenderAndReceiver {
  static ClusterSpec TwoLocalTasks() {
    ClusterSpec c;
    c.AddJob("local", 2);
    c.Finish();
    return c;
  }
  ClusterSpec cluster = TwoLocalTasks();
  Fabric fabric;
  InMemoryTransport sender{&fabric, 1, 2}, receiver{&fabric, 0, 2};
  TaskExchange from{&sender, cluster, 0, std::chrono::seconds(5)};
  TaskExchange to{&receiver, cluster, 0, std::chrono::seconds(5)};
};

TEST(TaskExchangeTest, RefusesBytesThatDoNotFitTheTensor) {
  SenderAndReceiver pair;
  TaskExchange& from = pair.from;
  TaskExchange& to = pair.to;
  StatusOr<Tensor> t = Tensor::AllocateHost(DType::kFloat32, {3});
  ASSERT_TRUE(from.Send(0, 9, *t, false).ok());
  const Status s = to.Receive(1, 9, "v", DType::kFloat32, {4}, false).status();
  EXPECT_EQ(s.message(), "/job:local/replica:0/task:1 sent 12 bytes for node 'v', whose float32 [4] needs 16");
}

// A fed batch's shape is open in the graph: its dimensions travel first.
TEST(TaskExchangeTest, DynamicShapesTravelWithTheTensor) {
  SenderAndReceiver pair;
  TaskExchange& from = pair.from;
  TaskExchange& to = pair.to;
  StatusOr<Tensor> t = Tensor::AllocateHost(DType::kFloat32, {3, 2});
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 6; ++i) t->data<float>()[i] = static_cast<float>(i);
  StatusOr<Tensor> scalar = Tensor::AllocateHost(DType::kInt32, {});
  ASSERT_TRUE(scalar.ok());
  scalar->data<int32_t>()[0] = 7;
  ASSERT_TRUE(from.Send(0, 9, *t, true).ok());
  ASSERT_TRUE(from.Send(0, 10, *scalar, true).ok());
  StatusOr<Tensor> got = to.Receive(1, 9, "split", DType::kFloat32, {kUnknownDim, 2}, true);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->shape(), (Shape{3, 2}));
  EXPECT_EQ(got->data<float>()[5], 5.0f);
  StatusOr<Tensor> rank0 = to.Receive(1, 10, "any", DType::kInt32, {}, true);  // no known rank
  ASSERT_TRUE(rank0.ok()) << rank0.status().message();
  EXPECT_EQ(rank0->shape(), Shape{});
  EXPECT_EQ(rank0->data<int32_t>()[0], 7);
}

// A node's outcome in a loop: which outputs are live (a Switch's untaken
// side is dead), the values the receiver reads, each with its dtype and
// shape, keyed by node and checked against the receiver's frame and
// iteration.
TEST(TaskExchangeTest, OutcomesCarryLivenessValuesAndTheirIteration) {
  SenderAndReceiver pair;
  StatusOr<Tensor> t = Tensor::AllocateHost(DType::kFloat32, {2, 2});
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 4; ++i) t->data<float>()[i] = static_cast<float>(i) + 0.5f;
  StatusOr<Tensor> index = Tensor::AllocateHost(DType::kInt32, {});
  ASSERT_TRUE(index.ok());
  index->data<int32_t>()[0] = 1;
  const std::string first = "frame '' iteration 0 / frame 'while/while_context' iteration 3";
  const std::string second = "frame '' iteration 0 / frame 'while/while_context' iteration 4";
  // A Switch whose true side (its value read) is live; then a Merge's two outputs.
  ASSERT_TRUE(pair.from.SendOutcome(0, 5, first, {false, true}, {Tensor(), *t}).ok());
  ASSERT_TRUE(pair.from.SendOutcome(0, 5, second, {true, false}, {Tensor(), Tensor()}).ok());
  ASSERT_TRUE(pair.from.SendOutcome(0, 6, first, {true, true}, {*t, *index}).ok());

  std::vector<bool> live(2);
  std::vector<Tensor> values;
  ASSERT_TRUE(pair.to.ReceiveOutcome(1, 6, "merge", first, &live, &values).ok());  // another node: another tag
  EXPECT_EQ(live, (std::vector<bool>{true, true}));
  ASSERT_TRUE(values[0].is_valid() && values[1].is_valid());
  EXPECT_EQ(values[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values[0].data<float>()[3], 3.5f);
  EXPECT_EQ(values[1].dtype(), DType::kInt32);
  EXPECT_EQ(values[1].data<int32_t>()[0], 1);

  ASSERT_TRUE(pair.to.ReceiveOutcome(1, 5, "switch", first, &live, &values).ok());
  EXPECT_EQ(live, (std::vector<bool>{false, true}));
  EXPECT_FALSE(values[0].is_valid());
  ASSERT_TRUE(values[1].is_valid());
  EXPECT_EQ(values[1].data<float>()[0], 0.5f);

  // The next message is iteration 4's: a receiver at another iteration says so.
  const Status s = pair.to.ReceiveOutcome(1, 5, "switch", first, &live, &values);
  EXPECT_EQ(s.message(),
            "/job:local/replica:0/task:1 sent node 'switch' of " + second + ", but this task is at " + first +
                ": the tasks' frames disagree");
}

// An outcome that does not parse is one line naming the sender and node,
// never a read past the message.
TEST(TaskExchangeTest, RefusesMalformedOutcomes) {
  using namespace std::string_literals;
  const std::string where = "frame '' iteration 0";
  const std::string key = where + std::string(1, '\0');
  const std::string dims(8, '\xff');  // -1
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"no key", "no frame key"},
      {key, "too few outputs"},
      {key + "\x03"s, "a value without its dtype and rank"},
      {key + "\x03\x63\x00"s, "a bad dtype or shape"},
      {key + "\x03\x00\x09"s, "a bad dtype or shape"},
      {key + "\x03\x00\x02"s + std::string(8, '\0'), "a bad dtype or shape"},
      {key + "\x03\x00\x01"s + dims, "a negative dimension"},
      {key + "\x01\x01"s, "too many outputs"},
  };
  for (const auto& [bytes, why] : cases) {
    SenderAndReceiver pair;
    pair.fabric.Put(1, 0, 16 + 7, bytes);  // node 7's tag
    std::vector<bool> live(1);
    std::vector<Tensor> values;
    const Status s = pair.to.ReceiveOutcome(1, 7, "n", where, &live, &values);
    EXPECT_EQ(s.message(), "/job:local/replica:0/task:1 sent a malformed outcome of node 'n': " + why) << why;
  }
}

}  // namespace
}  // namespace tfrun
