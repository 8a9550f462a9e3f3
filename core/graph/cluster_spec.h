// tf.train.ClusterSpec as a graph file's `config.cluster` gives it: jobs and
// their tasks, in TensorFlow's order (jobs by name, then task index). Under
// MPI, rank r is task r of that order (graph-format.md, "Additions").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tfrun {

struct ClusterTask {
  std::string job;
  int index = 0;
  std::string address;  // "localhost:2998", or "" when the job gave a count
};

class ClusterSpec {
 public:
  // Adds job `job`'s tasks; the order is restored by Finish().
  void AddJob(std::string job, const std::vector<std::string>& addresses);
  void AddJob(std::string job, int task_count);
  // Sorts the tasks as ClusterSpec.jobs and task_indices list them.
  void Finish();

  bool empty() const { return tasks_.empty(); }
  int size() const { return static_cast<int>(tasks_.size()); }
  const ClusterTask& operator[](int rank) const { return tasks_[rank]; }
  bool HasJob(std::string_view job) const;
  // The rank of /job:JOB/task:INDEX, or -1.
  int Find(std::string_view job, int index) const;
  // "/job:worker/replica:0/task:1".
  std::string TaskName(int rank) const;

 private:
  std::vector<ClusterTask> tasks_;
};

}  // namespace tfrun
