// The work queue of a device that runs kernels asynchronously (a real GPU's
// CUDA stream), as the executor sees it: timed spans around each node's
// work, and one wait at the end of a run. Host devices and simulated GPUs
// have none: their kernels are done when they return. Copies between
// queues are ordered by the backend's copier (allocator.h), with events.
#pragma once

#include <vector>

#include "core/base/status.h"

namespace tfrun {

// A span's time on the device: when it started, in milliseconds after the
// first span of the batch started, and how long it ran.
struct SpanTime {
  double start_ms = 0;
  double duration_ms = 0;
};

class DeviceQueue {
 public:
  virtual ~DeviceQueue() = default;
  // Marks the start of a node's work on the queue; returns the span's index.
  virtual StatusOr<int> BeginSpan() = 0;
  // Marks the end of span `span`'s work.
  virtual Status EndSpan(int span) = 0;
  // Waits for everything queued so far (this queue only, not the whole
  // device), then returns each span's device times, by index, and forgets
  // the spans.
  virtual StatusOr<std::vector<SpanTime>> Finish() = 0;
};

}  // namespace tfrun
