// One process's part in a cluster run (graph-format.md, "Additions"): the
// graph's cluster has more than one task and mpirun started one process per
// task. Checks the launch, starts MPI, joins every task's devices into one
// DeviceSet named as distributed TensorFlow names them, and ends the run
// with one verdict all tasks agree on.
#pragma once

#include <memory>
#include <string>

#include "cli/flags.h"
#include "core/devices/device_set.h"
#include "core/graph/graph.h"
#include "core/runtime/task_exchange.h"
#include "core/runtime/transport.h"

namespace tfrun {

class ClusterSession {
 public:
  // Fails with exit 2 when the launch does not fit the cluster (no MPI
  // launcher, another number of processes, an unknown --target task), or
  // with exit 4 when MPI cannot be started. `quiet` is set for every process
  // but the first when the failure is the same on all of them.
  // `eager`: --compat eager, which has no cluster runs.
  static StatusOr<std::unique_ptr<ClusterSession>> Start(const Graph& graph, const RunOptions& options, bool eager,
                                                         bool* quiet);

  int rank() const { return transport_->rank(); }
  bool is_master() const { return exchange_->is_master(); }
  TaskExchange& exchange() { return *exchange_; }

  // Names `devices` (this process's) as its task's, then adds every other
  // task's devices, in task order, as remote devices.
  Status JoinDevices(DeviceSet* devices);

  // Tells the others when this task failed, then exchanges every task's
  // outcome: the run's verdict, the same on every task.
  Status Conclude(const Status& mine);

  // Shuts MPI down; a library that does not return within a few seconds
  // (a peer is gone) is not waited for: the process exits with `exit_code`.
  void Shutdown(int exit_code);

 private:
  ClusterSession(const ClusterSpec& cluster, std::unique_ptr<Transport> transport, int master, int64_t timeout_ms);

  const ClusterSpec& cluster_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<TaskExchange> exchange_;
};

}  // namespace tfrun
