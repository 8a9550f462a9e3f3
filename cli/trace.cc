#include "cli/trace.h"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "cli/report.h"

namespace tfrun {
namespace {

// Microseconds since the trace's origin, as the format wants them.
double Micros(int64_t ns, int64_t origin_ns) { return static_cast<double>(ns - origin_ns) / 1000.0; }

class TraceWriter {
 public:
  explicit TraceWriter(const TraceInput& in) : in_(in) {
    for (const Device& d : in.devices->devices()) clustered_ = clustered_ || d.task != 0;
  }

  std::string Write() {
    AddProcesses();
    for (const TracePhase& p : in_.phases) {
      Complete(tfrun_pid_, "Phase", p.name, p.start_ns, p.end_ns, fmt::format("{{\"name\":{}}}", Quote(p.name)));
    }
    for (const RunResult* run : in_.runs) AddRun(*run);
    return fmt::format("{{\"traceEvents\":[\n{}\n],\"displayTimeUnit\":\"ms\"}}\n", fmt::join(events_, ",\n"));
  }

 private:
  // timeline.py's _allocate_pids: one process per device (and per GPU
  // stream), then the allocators; tfrun's phases first.
  void AddProcesses() {
    tfrun_pid_ = Process("tfrun");
    for (int d = 0; d < in_.devices->size(); ++d) {
      const Device& device = (*in_.devices)[d];
      compute_pid_.push_back(Process(device.name + " Compute"));
      stream_pid_.push_back(device.queue != nullptr ? Process(device.name + "/stream:all Compute") : -1);
    }
    allocators_pid_ = Process("Allocators");
  }

  int Process(const std::string& name) {
    const int pid = next_pid_++;
    events_.push_back(fmt::format("{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":{}}}}}",
                                  pid, Quote(name)));
    events_.push_back(
        fmt::format("{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", pid,
                    pid));
    return pid;
  }

  void Complete(int pid, const char* category, const std::string& name, int64_t start_ns, int64_t end_ns,
                const std::string& args) {
    events_.push_back(fmt::format(
        "{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":{:.3f},\"dur\":{:.3f},\"args\":{}}}",
        category, Quote(name), pid, Micros(start_ns, in_.origin_ns),
        static_cast<double>(std::max<int64_t>(end_ns - start_ns, 0)) / 1000.0, args));
  }

  // Where a node's event is drawn: its device's stream for device-side
  // spans, else its device's Compute process.
  struct Drawn {
    int pid = 0;
    int64_t start_ns = 0, end_ns = 0;
  };

  void AddRun(const RunResult& run) {
    const Graph& g = *in_.graph;
    std::map<int, Drawn> drawn;  // node id -> where and when, in this run
    for (const NodeEvent& e : run.events) {
      const Node& node = g.nodes[e.node];
      const int device = in_.placement->device_of[e.node];
      std::string args = fmt::format("{{\"name\":{},\"op\":{}", Quote(node.name), Quote(node.op));
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        args += fmt::format(",\"input{}\":{}", i, Quote(g.OutputName(node.input(i))));
      }
      args += "}";
      Complete(compute_pid_[device], "Op", node.op, e.start_ns, e.end_ns, args);
      Drawn d{compute_pid_[device], e.start_ns, e.end_ns};
      if (e.on_device_queue && stream_pid_[device] >= 0 && e.device_end_ns > 0) {
        Complete(stream_pid_[device], "Op", node.op, e.device_start_ns, e.device_end_ns, args);
        d = {stream_pid_[device], e.device_start_ns, e.device_end_ns};
      }
      drawn[e.node] = d;
      // Every task of a cluster has a "cpu" allocator: name it with its task.
      const Device& dev = (*in_.devices)[device];
      const std::string memory =
          clustered_ ? dev.name.substr(0, dev.name.find("/device:")) + " " + e.memory : e.memory;
      events_.push_back(fmt::format(
          "{{\"ph\":\"C\",\"cat\":\"Memory\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":{:.3f},\"args\":{{{}:{}}}}}",
          Quote(memory), allocators_pid_, Micros(e.end_ns, in_.origin_ns), Quote(memory), e.memory_bytes));
    }
    // A flow per edge between devices, from the producer's end to the
    // consumer's start (timeline.py's _show_dataflow).
    for (const NodeEvent& e : run.events) {
      const Node& node = g.nodes[e.node];
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const int producer = node.inputs[i];
        auto from = drawn.find(producer);
        if (from == drawn.end()) continue;  // fed, or run before (an initializer)
        if (in_.placement->device_of[producer] == in_.placement->device_of[e.node]) continue;
        const Drawn& to = drawn[e.node];
        const std::string name = Quote(g.OutputName(node.input(i)));
        const int id = next_flow_++;
        events_.push_back(fmt::format(
            "{{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":{:.3f},\"id\":{}}}", name,
            from->second.pid, Micros(from->second.end_ns, in_.origin_ns), id));
        events_.push_back(fmt::format(
            "{{\"ph\":\"t\",\"cat\":\"DataFlow\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":{:.3f},\"id\":{},"
            "\"bp\":\"e\"}}",
            name, to.pid, Micros(to.start_ns, in_.origin_ns), id));
      }
    }
  }

  const TraceInput& in_;
  std::vector<std::string> events_;
  std::vector<int> compute_pid_, stream_pid_;
  int tfrun_pid_ = 0, allocators_pid_ = 0;
  int next_pid_ = 0;
  int next_flow_ = 0;
  bool clustered_ = false;  // devices of several tasks
};

}  // namespace

std::string ChromeTrace(const TraceInput& input) { return TraceWriter(input).Write(); }

// One line per run ("run"), then one per event: node start end queued
// device_start device_end bytes memory.
std::string EncodeRunEvents(const std::vector<const RunResult*>& runs) {
  std::string out;
  for (const RunResult* run : runs) {
    out += "run\n";
    for (const NodeEvent& e : run->events) {
      out += fmt::format("{} {} {} {} {} {} {} {}\n", e.node, e.start_ns, e.end_ns, e.on_device_queue ? 1 : 0,
                         e.device_start_ns, e.device_end_ns, e.memory_bytes, e.memory);
    }
  }
  return out;
}

Status DecodeRunEvents(const std::string& text, size_t nodes, std::vector<RunResult>* runs) {
  std::istringstream in(text);
  std::string line;
  int run = -1;
  while (std::getline(in, line)) {
    if (line == "run") {
      if (static_cast<size_t>(++run) >= runs->size()) runs->emplace_back();
      continue;
    }
    std::istringstream fields(line);
    NodeEvent e;
    int queued = 0;
    if (run < 0 || !(fields >> e.node >> e.start_ns >> e.end_ns >> queued >> e.device_start_ns >> e.device_end_ns >>
                     e.memory_bytes >> e.memory) ||
        e.node < 0 || static_cast<size_t>(e.node) >= nodes) {
      return RuntimeError(fmt::format("a task sent a trace event tfrun cannot read: '{}'", line));
    }
    e.on_device_queue = queued != 0;
    (*runs)[run].events.push_back(std::move(e));
  }
  return Status::Ok();
}

}  // namespace tfrun
