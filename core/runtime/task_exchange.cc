#include "core/runtime/task_exchange.h"

#include <fmt/format.h>
#include <sched.h>

#include <cstring>
#include <iterator>
#include <thread>

namespace tfrun {
namespace {

using Clock = std::chrono::steady_clock;

// Tags below kFirstTensorTag are the protocol's own; tensor transfer t
// travels under kFirstTensorTag + t.
constexpr int kFailureTag = 1;
constexpr int kGatherTag = 2;
constexpr int kStatusTag = 3;
constexpr int kLeaveTag = 4;
constexpr int kFirstTensorTag = 16;

// After one wait has timed out, the others only get this long: the run
// has failed already, and its verdict must not take a timeout per task.
constexpr std::chrono::milliseconds kGraceAfterTimeout{500};

// Between two polls of the transport: spin first (a message is usually on
// its way), then back off so a long wait costs no core.
void PauseBeforePoll(int polls) {
  if (polls < 2000) {
    sched_yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(polls < 20000 ? 50 : 1000));
  }
}

// A status on the wire: its kind (0 for OK), whether another task's
// failure caused it, then the message.
std::string EncodeStatus(const Status& s, bool caused_by_peer) {
  std::string out(2, '\0');
  out[0] = static_cast<char>(s.ok() ? 0 : static_cast<int>(s.kind()) + 1);
  out[1] = caused_by_peer ? 1 : 0;
  if (!s.ok()) out += s.message();
  return out;
}

Status DecodeStatus(const std::string& bytes, bool* caused_by_peer) {
  *caused_by_peer = bytes.size() > 1 && bytes[1] != 0;
  const int kind = bytes.empty() ? 0 : static_cast<unsigned char>(bytes[0]);
  if (kind == 0 || kind > static_cast<int>(ErrorKind::kRuntime) + 1) return Status::Ok();
  return Status(static_cast<ErrorKind>(kind - 1), bytes.size() > 2 ? bytes.substr(2) : std::string());
}

}  // namespace

TaskExchange::TaskExchange(Transport* transport, const ClusterSpec& cluster, int master,
                           std::chrono::milliseconds timeout)
    : transport_(transport), cluster_(cluster), master_(master), timeout_(timeout) {}

std::chrono::milliseconds TaskExchange::WaitBudget() const {
  return timed_out_ ? std::min(timeout_, kGraceAfterTimeout) : timeout_;
}

Status TaskExchange::Post(int to, int tag, std::string bytes, Tensor tensor) {
  // A list: the entry (and a short string's inline bytes) never moves
  // while the send is in flight.
  pending_.push_back(PendingSend{0, std::move(bytes), std::move(tensor)});
  PendingSend& kept = pending_.back();
  const void* data = kept.tensor.is_valid() ? kept.tensor.raw() : kept.bytes.data();
  const size_t size = kept.tensor.is_valid() ? kept.tensor.num_bytes() : kept.bytes.size();
  StatusOr<int64_t> request = transport_->StartSend(to, tag, data, size);
  if (!request.ok()) {
    pending_.pop_back();
    return request.status();
  }
  kept.request = *request;
  return Status::Ok();
}

template <typename Allocate>
Status TaskExchange::Await(int from, int tag, const std::string& what, std::chrono::milliseconds budget,
                           Allocate&& allocate, bool sender_failures_only) {
  const auto deadline = Clock::now() + budget;
  for (int polls = 0;; ++polls) {
    // The failure notice is looked for before the message: a task's
    // messages arrive in the order it sent them, so a message sent before
    // its notice is there by now and is taken (looking the other way round,
    // a message and then the notice could both arrive between the looks).
    std::optional<Transport::Arrived> failure;
    if (tag != kStatusTag) {
      TFRUN_ASSIGN_OR_RETURN(failure,
                             transport_->Probe(sender_failures_only ? from : Transport::kAnySource, kFailureTag));
    }
    TFRUN_ASSIGN_OR_RETURN(std::optional<Transport::Arrived> arrived, transport_->Probe(from, tag));
    if (arrived) {
      TFRUN_ASSIGN_OR_RETURN(void* data, allocate(arrived->bytes));
      return transport_->Receive(from, tag, data, arrived->bytes);
    }
    if (failure) {
      // Another task failed: stop waiting for what it will never send.
      std::string text(failure->bytes, '\0');
      TFRUN_RETURN_IF_ERROR(transport_->Receive(failure->source, kFailureTag, text.data(), text.size()));
      bool unused;
      Status told = DecodeStatus(text, &unused);
      if (told.ok()) told = RuntimeError("a task failed");
      peer_failure_ = Status(told.kind(), fmt::format("{} failed: {}", TaskName(failure->source), told.message()));
      return *peer_failure_;
    }
    if (Clock::now() > deadline) {
      timed_out_ = true;
      return RuntimeError(fmt::format("DeadlineExceededError: {} did not answer {} within {} ms ({}; "
                                      "--operation-timeout-ms {})",
                                      TaskName(from), TaskName(local_task()), budget.count(), what,
                                      timeout_.count()));
    }
    PauseBeforePoll(polls);
  }
}

StatusOr<std::vector<std::string>> TaskExchange::AllGather(const std::string& mine) {
  const int n = transport_->size();
  std::vector<std::string> all(n);
  all[local_task()] = mine;
  for (int r = 0; r < n; ++r) {
    if (r != local_task()) TFRUN_RETURN_IF_ERROR(Post(r, kGatherTag, mine));
  }
  // Every task sends its piece before it goes on, so a task that failed
  // after the gather has sent it: another task's failure notice must not
  // stop the gather, or the master would fail before placing and lose the
  // placement log TensorFlow prints (seen 1 run in ~15 under load, when a
  // fast worker failed while the master still waited for a slow one). Only
  // the awaited task's own notice ends the wait; the others stay queued
  // for the run's next wait.
  for (int r = 0; r < n; ++r) {
    if (r == local_task()) continue;
    std::string& blob = all[r];
    TFRUN_RETURN_IF_ERROR(Await(
        r, kGatherTag, "waiting for its devices", WaitBudget(),
        [&](size_t bytes) -> StatusOr<void*> {
          blob.resize(bytes);
          return static_cast<void*>(blob.data());
        },
        /*sender_failures_only=*/true));
  }
  TFRUN_RETURN_IF_ERROR(Flush());
  return all;
}

Status TaskExchange::TagFor(int transfer, int* tag) const {
  if (transfer > transport_->max_tag() - kFirstTensorTag) {
    return RuntimeError(fmt::format("node {} is beyond the largest message tag the MPI library carries ({})", transfer,
                                    transport_->max_tag()));
  }
  *tag = kFirstTensorTag + transfer;
  return Status::Ok();
}

Status TaskExchange::Send(int to_task, int transfer, const Tensor& tensor, bool dynamic_shape) {
  int tag = 0;
  TFRUN_RETURN_IF_ERROR(TagFor(transfer, &tag));
  if (dynamic_shape) {
    // The dimensions first, on the same tag: MPI keeps one sender's
    // messages of one tag in order.
    std::string dims(tensor.shape().size() * sizeof(int64_t), '\0');
    if (!dims.empty()) std::memcpy(dims.data(), tensor.shape().data(), dims.size());
    TFRUN_RETURN_IF_ERROR(Post(to_task, tag, std::move(dims)));
  }
  return Post(to_task, tag, std::string(), tensor);
}

StatusOr<Tensor> TaskExchange::Receive(int from_task, int transfer, std::string_view name, DType dtype,
                                       const Shape& static_shape, bool dynamic_shape) {
  int tag = 0;
  TFRUN_RETURN_IF_ERROR(TagFor(transfer, &tag));
  Shape shape = static_shape;
  if (dynamic_shape) {
    std::string dims;
    TFRUN_RETURN_IF_ERROR(Await(from_task, tag, fmt::format("waiting for the shape of node '{}'", name), WaitBudget(),
                                [&](size_t bytes) -> StatusOr<void*> {
                                  if (bytes % sizeof(int64_t) != 0 || bytes > kMaxRank * sizeof(int64_t)) {
                                    return RuntimeError(fmt::format("{} sent a {}-byte shape for node '{}'",
                                                                    TaskName(from_task), bytes, name));
                                  }
                                  dims.resize(bytes);
                                  return static_cast<void*>(dims.data());
                                }));
    shape.assign(dims.size() / sizeof(int64_t), 0);
    if (!dims.empty()) std::memcpy(shape.data(), dims.data(), dims.size());
    for (int64_t d : shape) {
      if (d < 0) return RuntimeError(fmt::format("{} sent a negative dimension for node '{}'", TaskName(from_task), name));
    }
  }
  return AwaitTensor(from_task, tag, name, dtype, shape);
}

StatusOr<Tensor> TaskExchange::AwaitTensor(int from_task, int tag, std::string_view name, DType dtype,
                                           const Shape& shape) {
  const std::string cpu = fmt::format("{}/device:CPU:0", TaskName(local_task()));
  Tensor received;
  TFRUN_RETURN_IF_ERROR(Await(from_task, tag, fmt::format("waiting for the output of node '{}'", name), WaitBudget(),
                              [&](size_t bytes) -> StatusOr<void*> {
                                const std::optional<int64_t> n = NumElements(shape);
                                if (dtype != DType::kString && (!n || bytes != *n * Info(dtype).size)) {
                                  return RuntimeError(fmt::format(
                                      "{} sent {} bytes for node '{}', whose {} {} needs {}", TaskName(from_task),
                                      bytes, name, Name(dtype), ShapeDebugString(shape),
                                      n ? *n * static_cast<int64_t>(Info(dtype).size) : -1));
                                }
                                TFRUN_ASSIGN_OR_RETURN(received,
                                                       Tensor::AllocateBytes(dtype, shape, bytes, CpuAllocator(), cpu));
                                return received.raw();
                              }));
  return received;
}

// An outcome on the wire: `where`, a NUL, then per output a flags byte
// (1: live, 2: its value follows) and, for a value, its dtype, rank and
// dimensions; then each value, in output order, on the same tag.
Status TaskExchange::SendOutcome(int to_task, int node, const std::string& where, const std::vector<bool>& live,
                                 const std::vector<Tensor>& values) {
  int tag = 0;
  TFRUN_RETURN_IF_ERROR(TagFor(node, &tag));
  std::string header = where;
  header += '\0';
  for (size_t i = 0; i < live.size(); ++i) {
    const bool has_value = i < values.size() && values[i].is_valid();
    header += static_cast<char>((live[i] ? 1 : 0) | (has_value ? 2 : 0));
    if (!has_value) continue;
    header += static_cast<char>(values[i].dtype());
    header += static_cast<char>(values[i].rank());
    const size_t at = header.size();
    header.resize(at + values[i].shape().size() * sizeof(int64_t));
    if (!values[i].shape().empty()) std::memcpy(header.data() + at, values[i].shape().data(), header.size() - at);
  }
  TFRUN_RETURN_IF_ERROR(Post(to_task, tag, std::move(header)));
  for (size_t i = 0; i < live.size() && i < values.size(); ++i) {
    if (values[i].is_valid()) TFRUN_RETURN_IF_ERROR(Post(to_task, tag, std::string(), values[i]));
  }
  return Status::Ok();
}

Status TaskExchange::ReceiveOutcome(int from_task, int node, std::string_view name, const std::string& where,
                                    std::vector<bool>* live, std::vector<Tensor>* values) {
  int tag = 0;
  TFRUN_RETURN_IF_ERROR(TagFor(node, &tag));
  std::string header;
  TFRUN_RETURN_IF_ERROR(Await(from_task, tag, fmt::format("waiting for node '{}' in {}", name, where), WaitBudget(),
                              [&](size_t bytes) -> StatusOr<void*> {
                                header.resize(bytes);
                                return static_cast<void*>(header.data());
                              }));
  const auto malformed = [&](std::string_view why) {
    return RuntimeError(fmt::format("{} sent a malformed outcome of node '{}': {}", TaskName(from_task), name, why));
  };
  const size_t nul = header.find('\0');
  if (nul == std::string::npos) return malformed("no frame key");
  if (std::string_view(header).substr(0, nul) != where) {
    return RuntimeError(fmt::format("{} sent node '{}' of {}, but this task is at {}: the tasks' frames disagree",
                                    TaskName(from_task), name, header.substr(0, nul), where));
  }
  std::vector<std::pair<DType, Shape>> valued(live->size());
  std::vector<bool> has_value(live->size(), false);
  size_t at = nul + 1;
  for (size_t i = 0; i < live->size(); ++i) {
    if (at >= header.size()) return malformed("too few outputs");
    const int flags = static_cast<unsigned char>(header[at++]);
    (*live)[i] = (flags & 1) != 0;
    has_value[i] = (flags & 2) != 0;
    if (!has_value[i]) continue;
    if (at + 2 > header.size()) return malformed("a value without its dtype and rank");
    const int dtype = static_cast<unsigned char>(header[at]);
    const int rank = static_cast<unsigned char>(header[at + 1]);
    at += 2;
    if (dtype >= static_cast<int>(std::size(kAllDTypes)) || rank > kMaxRank ||
        at + rank * sizeof(int64_t) > header.size()) {
      return malformed("a bad dtype or shape");
    }
    Shape shape(rank, 0);
    if (rank > 0) std::memcpy(shape.data(), header.data() + at, rank * sizeof(int64_t));
    at += rank * sizeof(int64_t);
    for (int64_t d : shape) {
      if (d < 0) return malformed("a negative dimension");
    }
    valued[i] = {static_cast<DType>(dtype), std::move(shape)};
  }
  if (at != header.size()) return malformed("too many outputs");
  values->assign(live->size(), Tensor());
  for (size_t i = 0; i < live->size(); ++i) {
    if (!has_value[i]) continue;
    TFRUN_ASSIGN_OR_RETURN((*values)[i], AwaitTensor(from_task, tag, name, valued[i].first, valued[i].second));
  }
  return Status::Ok();
}

Status TaskExchange::Flush() {
  const auto deadline = Clock::now() + WaitBudget();
  for (int polls = 0; !pending_.empty(); ++polls) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      TFRUN_ASSIGN_OR_RETURN(bool done, transport_->SendDone(it->request));
      it = done ? pending_.erase(it) : std::next(it);
    }
    if (pending_.empty()) break;
    if (Clock::now() > deadline) {
      timed_out_ = true;
      return RuntimeError(fmt::format("DeadlineExceededError: {} could not deliver {} message(s) within {} ms "
                                      "(--operation-timeout-ms {})",
                                      TaskName(local_task()), pending_.size(), WaitBudget().count(),
                                      timeout_.count()));
    }
    PauseBeforePoll(polls);
  }
  return Status::Ok();
}

void TaskExchange::LeaveTogether() {
  if (is_master()) {
    for (int r = 0; r < transport_->size(); ++r) {
      if (r != local_task()) Post(r, kLeaveTag, "").ok();
    }
    Flush().ok();
    return;
  }
  if (!master_answered_) return;  // it may be gone: nothing to wait for
  std::string unused;
  Await(master_, kLeaveTag, "waiting for the end of the run", WaitBudget(), [&](size_t size) -> StatusOr<void*> {
    unused.resize(size);
    return static_cast<void*>(unused.data());
  }).ok();
}

void TaskExchange::TellFailure(const Status& failure) {
  const std::string notice = EncodeStatus(failure, false);
  for (int r = 0; r < transport_->size(); ++r) {
    if (r != local_task()) Post(r, kFailureTag, notice).ok();  // best effort: the verdict follows anyway
  }
}

Status TaskExchange::Conclude(const Status& mine) {
  const int n = transport_->size();
  const bool mine_caused_by_peer = !mine.ok() && peer_failure_.has_value();
  std::vector<Status> outcome(n);
  std::vector<bool> caused_by_peer(n, false);
  outcome[local_task()] = mine;
  caused_by_peer[local_task()] = mine_caused_by_peer;
  const std::string encoded = EncodeStatus(mine, mine_caused_by_peer);
  for (int r = 0; r < n; ++r) {
    if (r != local_task()) Post(r, kStatusTag, encoded).ok();
  }
  for (int r = 0; r < n; ++r) {
    if (r == local_task()) continue;
    std::string bytes;
    // A task may itself wait one timeout for another before it concludes.
    const auto budget = timed_out_ ? WaitBudget() : 2 * timeout_ + kGraceAfterTimeout;
    Status heard = Await(r, kStatusTag, "waiting for its outcome", budget, [&](size_t size) -> StatusOr<void*> {
      bytes.resize(size);
      return static_cast<void*>(bytes.data());
    });
    if (!heard.ok()) {
      if (r == master_) master_answered_ = false;
      outcome[r] = heard;
      continue;
    }
    bool peer = false;
    outcome[r] = DecodeStatus(bytes, &peer);
    caused_by_peer[r] = peer;
  }
  // Failure notices nobody waited for are received, so none is left queued.
  while (true) {
    StatusOr<std::optional<Transport::Arrived>> notice = transport_->Probe(Transport::kAnySource, kFailureTag);
    if (!notice.ok() || !notice->has_value()) break;
    std::string text((*notice)->bytes, '\0');
    if (!transport_->Receive((*notice)->source, kFailureTag, text.data(), text.size()).ok()) break;
  }
  Flush().ok();  // what is still pending is abandoned at shutdown
  int root = -1;
  for (int r = 0; r < n && root < 0; ++r) {
    if (!outcome[r].ok() && !caused_by_peer[r]) root = r;
  }
  for (int r = 0; r < n && root < 0; ++r) {
    if (!outcome[r].ok()) root = r;
  }
  if (root < 0) return Status::Ok();
  // Errors every task met alike (the graph, placement) read as TensorFlow
  // prints them; a run-time failure names its task.
  const std::string& message = outcome[root].message();
  if (outcome[root].kind() != ErrorKind::kRuntime || message.rfind("DeadlineExceededError", 0) == 0 ||
      message.find(" failed: ") != std::string::npos) {
    return outcome[root];
  }
  return Status(outcome[root].kind(), fmt::format("{} failed: {}", TaskName(root), outcome[root].message()));
}

}  // namespace tfrun
