#include "cli/cluster_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

#include "kernels/mpi/mpi_transport.h"

namespace tfrun {
namespace {

std::string TaskList(const ClusterSpec& cluster) {
  std::vector<std::string> names;
  for (int r = 0; r < cluster.size(); ++r) names.push_back(fmt::format("/job:{}/task:{}", cluster[r].job, cluster[r].index));
  return fmt::format("{}", fmt::join(names, ", "));
}

// --target /job:J/task:T (tf.Session(server.target)): the master's rank.
StatusOr<int> MasterRank(const ClusterSpec& cluster, const std::string& target) {
  if (target.empty()) return 0;
  StatusOr<DeviceSpec> spec = DeviceSpec::Parse(target);
  if (!spec.ok() || !spec->job || !spec->task || spec->type || spec->id) {
    return BadInput(fmt::format("--target {}: expected a task such as /job:worker/task:0", target));
  }
  const int rank = cluster.Find(*spec->job, *spec->task);
  if (rank < 0) {
    return BadInput(fmt::format("--target {}: the cluster has no such task (tasks: {})", target, TaskList(cluster)));
  }
  return rank;
}

// One device per line: what placement and the placement log need of a
// device in another process.
std::string EncodeDevices(const DeviceSet& devices) {
  std::string out;
  for (const Device& d : devices.devices()) {
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", d.type, d.id, d.cuda_ordinal, d.gpu_name, d.pci_bus_id,
                       d.compute_capability, d.memory_limit_bytes, d.simulated ? 1 : 0);
  }
  return out;
}

Status DecodeDevices(const std::string& text, const ClusterTask& task, int rank, DeviceSet* devices) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '\t');) f.push_back(x);
    if (f.size() != 8) return RuntimeError(fmt::format("task {} sent a malformed device list", rank));
    Device d = Device::Local(f[0], std::stoi(f[1]), nullptr);
    d.cuda_ordinal = std::stoi(f[2]);
    d.gpu_name = f[3];
    d.pci_bus_id = f[4];
    d.compute_capability = f[5];
    d.memory_limit_bytes = std::stoll(f[6]);
    d.simulated = f[7] == "1";
    d.MoveToTask(task.job, task.index, rank);
    d.remote = true;
    devices->Add(std::move(d));
  }
  return Status::Ok();
}

}  // namespace

ClusterSession::ClusterSession(const ClusterSpec& cluster, std::unique_ptr<Transport> transport, int master,
                               int64_t timeout_ms)
    : cluster_(cluster), transport_(std::move(transport)) {
  exchange_ = std::make_unique<TaskExchange>(transport_.get(), cluster_, master, std::chrono::milliseconds(timeout_ms));
}

StatusOr<std::unique_ptr<ClusterSession>> ClusterSession::Start(const Graph& graph, const RunOptions& options,
                                                                bool eager, bool* quiet) {
  const ClusterSpec& cluster = graph.config.cluster;
  const int tasks = cluster.size();
  const MpiLaunch launch = DetectMpiLaunch();
  // The same on every process: only the first says it.
  *quiet = launch.launched && launch.rank != 0;
  // The file that holds config.cluster, and that mpirun is to be given:
  // the one named on the command line (a YAML wrapper, not the GraphDef
  // it wraps).
  const std::string& file = options.graph_path == "-" ? graph.path : options.graph_path;
  if (eager) {
    return BadInput(fmt::format("{}: --compat eager runs in one process; a cluster graph runs in graph mode "
                                "(--compat tf0, tf1 or tf2)",
                                file));
  }
  if (!launch.launched) {
    return BadInput(fmt::format("{}: config.cluster has {} tasks ({}): start one process per task with "
                                "`mpirun -n {} tfrun {} ...`",
                                file, tasks, TaskList(cluster), tasks, file));
  }
  if (launch.size != tasks) {
    return BadInput(fmt::format("{}: config.cluster has {} tasks but the MPI launcher started {} process{}: use "
                                "`mpirun -n {}`",
                                file, tasks, launch.size, launch.size == 1 ? "" : "es", tasks));
  }
  TFRUN_ASSIGN_OR_RETURN(const int master, MasterRank(cluster, options.target));
  *quiet = false;  // from here on, failures may differ between tasks
  TFRUN_ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, StartMpiTransport());
  if (transport->size() != tasks || transport->rank() != launch.rank) {
    transport->Shutdown(false);
    return RuntimeError(fmt::format("MPI reports rank {} of {}, the launcher's environment rank {} of {}",
                                    transport->rank(), transport->size(), launch.rank, launch.size));
  }
  const int64_t timeout = options.operation_timeout_ms > 0             ? options.operation_timeout_ms
                          : graph.config.operation_timeout_in_ms > 0 ? graph.config.operation_timeout_in_ms
                                                                       : kDefaultOperationTimeoutMs;
  return std::unique_ptr<ClusterSession>(new ClusterSession(cluster, std::move(transport), master, timeout));
}

Status ClusterSession::JoinDevices(DeviceSet* devices) {
  const ClusterTask& mine = cluster_[rank()];
  devices->MoveToTask(mine.job, mine.index, rank());
  TFRUN_ASSIGN_OR_RETURN(std::vector<std::string> all, exchange_->AllGather(EncodeDevices(*devices)));
  for (int r = 0; r < cluster_.size(); ++r) {
    if (r != rank()) TFRUN_RETURN_IF_ERROR(DecodeDevices(all[r], cluster_[r], r, devices));
  }
  devices->SortByTask();
  devices->set_master_task(exchange_->master_task());
  return Status::Ok();
}

Status ClusterSession::Conclude(const Status& mine) {
  if (!mine.ok()) exchange_->TellFailure(mine);
  return exchange_->Conclude(mine);
}

void ClusterSession::Shutdown(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  exchange_->LeaveTogether();
  // After a failure every task exits non-zero, and mpirun ends the job at
  // the first such exit, dropping output it has not forwarded yet, so the
  // others give the master's exit a lead; the master's exit ends the job,
  // so a prompt master costs them nothing. (The placement log once thought
  // lost this way was never written: see TaskExchange::AllGather.)
  if (exit_code != 0 && !exchange_->is_master()) std::this_thread::sleep_for(std::chrono::seconds(3));
  // MPI_Finalize waits for every process; one that is gone (or silent)
  // must not hang us.
  const auto patience = exchange_->all_answered() ? std::chrono::milliseconds(5000) : std::chrono::milliseconds(300);
  std::thread([exit_code, patience] {
    std::this_thread::sleep_for(patience);
    _exit(exit_code);
  }).detach();
  transport_->Shutdown(exchange_->has_pending_sends());
}

}  // namespace tfrun
