#include "core/graph/cluster_spec.h"

#include <fmt/format.h>

#include <algorithm>

namespace tfrun {

void ClusterSpec::AddJob(std::string job, const std::vector<std::string>& addresses) {
  for (size_t i = 0; i < addresses.size(); ++i) tasks_.push_back({job, static_cast<int>(i), addresses[i]});
}

void ClusterSpec::AddJob(std::string job, int task_count) {
  for (int i = 0; i < task_count; ++i) tasks_.push_back({job, i, ""});
}

void ClusterSpec::Finish() {
  std::stable_sort(tasks_.begin(), tasks_.end(), [](const ClusterTask& a, const ClusterTask& b) {
    return a.job != b.job ? a.job < b.job : a.index < b.index;
  });
}

bool ClusterSpec::HasJob(std::string_view job) const {
  return std::any_of(tasks_.begin(), tasks_.end(), [&](const ClusterTask& t) { return t.job == job; });
}

int ClusterSpec::Find(std::string_view job, int index) const {
  for (int r = 0; r < size(); ++r) {
    if (tasks_[r].job == job && tasks_[r].index == index) return r;
  }
  return -1;
}

std::string ClusterSpec::TaskName(int rank) const {
  return fmt::format("/job:{}/replica:0/task:{}", tasks_[rank].job, tasks_[rank].index);
}

}  // namespace tfrun
