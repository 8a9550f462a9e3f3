// The protocol the tasks of a cluster run speak over a Transport, in the
// role of TensorFlow's remote rendezvous and its master's RunStep: device
// inventories gathered at start, tensors sent from producer to consumer
// task, a failing task's error told to the others, and one verdict at the
// end that every task agrees on. Every wait is bounded by the operation
// timeout, so a task that died or stopped answering is reported, never
// waited for forever.
#pragma once

#include <chrono>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/cluster_spec.h"
#include "core/runtime/executor.h"
#include "core/runtime/transport.h"

namespace tfrun {

class TaskExchange : public TensorChannel {
 public:
  // `transport` and `cluster` must outlive it; rank r is cluster task r.
  TaskExchange(Transport* transport, const ClusterSpec& cluster, int master, std::chrono::milliseconds timeout);

  int local_task() const override { return transport_->rank(); }
  int master_task() const override { return master_; }
  bool is_master() const { return local_task() == master_; }

  // Every task's `mine`, by rank.
  StatusOr<std::vector<std::string>> AllGather(const std::string& mine);

  // TensorChannel: `transfer` names the tensor (its producer's node id)
  // the same on both sides.
  Status Send(int to_task, int transfer, const Tensor& tensor, bool dynamic_shape) override;
  StatusOr<Tensor> Receive(int from_task, int transfer, std::string_view name, DType dtype, const Shape& shape,
                           bool dynamic_shape) override;
  Status Flush() override;
  Status SendOutcome(int to_task, int node, const std::string& where, const std::vector<bool>& live,
                     const std::vector<Tensor>& values) override;
  Status ReceiveOutcome(int from_task, int node, std::string_view name, const std::string& where,
                        std::vector<bool>* live, std::vector<Tensor>* values) override;

  // Tells every other task that this one failed, so none waits for it.
  void TellFailure(const Status& failure);

  // Every task's outcome, exchanged: the root failure (the first task's
  // own error, not one caused by another's), or OK when all succeeded.
  // The message names the task that failed.
  Status Conclude(const Status& mine);

  // After the master has written the run's output: the others wait for its
  // word before they exit, so the launcher (which ends the job when a
  // process exits with an error) never cuts the master short.
  void LeaveTogether();

  // After Conclude: whether the master's outcome arrived.
  bool master_answered() const { return master_answered_; }
  // Whether every wait so far was answered (no task went silent).
  bool all_answered() const { return !timed_out_; }

  // Whether sends are still pending (their receiver gave up).
  bool has_pending_sends() const { return !pending_.empty(); }

 private:
  struct PendingSend {
    int64_t request;
    std::string bytes;  // control messages own their bytes
    Tensor tensor;      // tensor messages keep the data alive
  };
  // Waits for a message from `from` under `tag` (or a failure notice: from
  // anyone, or with `sender_failures_only` from `from` alone), receiving it
  // into memory `allocate(bytes)` returns. `budget`: how long to wait (the
  // operation timeout unless one has passed already, WaitBudget()).
  template <typename Allocate>
  Status Await(int from, int tag, const std::string& what, std::chrono::milliseconds budget, Allocate&& allocate,
               bool sender_failures_only = false);
  Status Post(int to, int tag, std::string bytes, Tensor tensor = Tensor());
  // A tensor of `dtype` and `shape` from `from_task` under `tag`, into host memory.
  StatusOr<Tensor> AwaitTensor(int from_task, int tag, std::string_view name, DType dtype, const Shape& shape);
  Status TagFor(int transfer, int* tag) const;
  std::chrono::milliseconds WaitBudget() const;
  std::string TaskName(int rank) const { return cluster_.TaskName(rank); }

  Transport* transport_;
  const ClusterSpec& cluster_;
  int master_;
  std::chrono::milliseconds timeout_;
  bool timed_out_ = false;
  bool master_answered_ = true;  // later waits get only a short grace
  std::list<PendingSend> pending_;
  std::optional<Status> peer_failure_;  // the first failure another task told
};

}  // namespace tfrun
