// Point-to-point messages between the processes of a cluster run, one per
// task (graph-format.md, "Additions"): what tfrun needs of MPI and no more,
// so the protocol above it (task_exchange.h) is tested in one process with
// an in-memory transport and runs on MPI (kernels/mpi) unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/base/status.h"

namespace tfrun {

class Transport {
 public:
  static constexpr int kAnySource = -1;

  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The largest tag the transport carries (MPI_TAG_UB).
  virtual int max_tag() const = 0;

  // Starts sending `bytes` at `data` to rank `to` under `tag`; `data` must
  // stay valid until SendDone says the send is complete. Never blocks.
  virtual StatusOr<int64_t> StartSend(int to, int tag, const void* data, size_t bytes) = 0;
  virtual StatusOr<bool> SendDone(int64_t request) = 0;

  struct Arrived {
    int source = 0;
    size_t bytes = 0;
  };
  // A message from `from` (or kAnySource) under `tag` that has arrived and
  // not been received yet. Never blocks.
  virtual StatusOr<std::optional<Arrived>> Probe(int from, int tag) = 0;
  // Receives the message Probe reported (`bytes` of it) into `data`.
  virtual Status Receive(int from, int tag, void* data, size_t bytes) = 0;

  // Ends the process's part in the cluster. `abandon_sends`: cancel sends
  // whose receiver has gone (after a failure) instead of waiting for them.
  virtual void Shutdown(bool abandon_sends) = 0;
};

}  // namespace tfrun
