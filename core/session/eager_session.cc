// The second kind of session: TensorFlow 2's eager context (--compat
// eager). Every op is placed as it executes and the log names each op
// executed (a Variable's reads included), not the graph's nodes; a fetched
// Variable prints as tf.Variable's repr.
#include <chrono>
#include <memory>

#include "core/placement/placement_log.h"
#include "core/printing/array_printer.h"
#include "core/session/keras_build.h"
#include "core/session/session.h"

namespace tfrun {
namespace {

class EagerSession : public Session {
 public:
  using Session::Session;

 protected:
  bool is_eager() const override { return true; }

  Status Place(bool log, std::string* stdout_text) override {
    if (graph_.keras.present) return RunKerasBuild(log, stdout_text);
    // Eager logs each op as it executes: on failure, what ran before it.
    const Status placed = PlanEager(graph_, *devices_, SoftPlacement(), &placement_, &eager_);
    record_.executed = &eager_.executed;
    if (!placed.ok() && log) *stdout_text += ExecutedOpLines(eager_.executed, *devices_);
    return placed;
  }

  void PlacedOnly(bool log, std::string* stdout_text) override {
    if (log) *stdout_text += ExecutedOpLines(eager_.executed, *devices_);
  }

  // Eager prints a Variable's value for it.
  std::vector<NodeOutput> RunFetch() const override {
    std::vector<NodeOutput> fetch = fetch_;
    for (NodeOutput& f : fetch) f.node = EagerValueNode(graph_, eager_, f.node);
    return fetch;
  }

  void AfterRun(bool log, std::string* stdout_text) override {
    if (log) *stdout_text += ExecutedOpLines(eager_.executed, *devices_);
  }

  // The ops printing executes (a Variable's read) join the log.
  std::string PrintFetched(size_t i, bool log, std::string* stdout_text) const override {
    const int id = fetch_[i].node;
    if (log) *stdout_text += ExecutedOpLines(EagerPrintOps(placement_, eager_, id), *devices_);
    switch (eager_.value[id]) {
      case EagerValue::kNone:
        return "None";
      case EagerValue::kVariable:
        return EagerVariableStr(graph_.nodes[eager_.variable_of[id]].eager_name, result_.fetched[i], Numpy2());
      case EagerValue::kTensor:
        break;
    }
    return Session::PrintFetched(i, log, stdout_text);
  }

 private:
  // A Keras program: the ops its build and compile execute, logged as
  // eager logs them; they make no value anything prints (keras_build.h).
  Status RunKerasBuild(bool log, std::string* stdout_text) {
    const KerasBuild build = BuildKerasProgram(graph_.keras, options_.keras_version, *devices_);
    if (!log) return Status::Ok();
    *stdout_text += MirroredStrategyInfoLine(build.replicas, *devices_);
    EagerOpLog eager_log(*devices_, graph_.path);
    for (const EagerOpCall& op : build.ops) {
      TFRUN_ASSIGN_OR_RETURN(std::string lines, eager_log.Execute(op));
      *stdout_text += lines;
    }
    return Status::Ok();
  }

  EagerPlan eager_;  // what TF2 eager executes
};

}  // namespace

std::unique_ptr<Session> MakeEagerSession(const SessionOptions& options, SessionHost* host, SessionObserver* observer,
                                          std::chrono::steady_clock::time_point process_start) {
  return std::unique_ptr<Session>(new EagerSession(options, host, observer, process_start));
}

}  // namespace tfrun
