// A TensorFlow queue as a session resource (FIFOQueueV2, PaddingFIFOQueueV2,
// RandomShuffleQueueV2): its kernels are kernels/cpu/queue_kernels.cc; a
// session's queue runners (session.cc) read how full it is.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/philox.h"
#include "core/base/shape.h"
#include "core/base/tensor.h"

namespace tfrun {

enum class QueueKind { kFifo, kPaddingFifo, kRandomShuffle };

struct QueueResource {
  QueueKind kind = QueueKind::kFifo;
  std::string name;  // TensorFlow's: the shared_name, or "_N_" and the node's
  std::vector<DType> types;
  // Each component's shape: nullopt unknown; dims of -1 unknown (padding).
  std::vector<std::optional<Shape>> shapes;
  int64_t capacity = std::numeric_limits<int32_t>::max();
  int64_t min_after_dequeue = 0;
  bool closed = false;
  std::deque<std::vector<Tensor>> elements;  // each a tuple of components
  PhiloxRandom generator;                    // RandomShuffleQueue's
  std::array<uint32_t, 4> samples{};         // SingleSampleAdapter's buffer
  int used = 4;

  std::string_view KindName() const {
    switch (kind) {
      case QueueKind::kFifo: return "FIFOQueue";
      case QueueKind::kPaddingFifo: return "PaddingFIFOQueue";
      case QueueKind::kRandomShuffle: return "RandomShuffleQueue";
    }
    return "";
  }
  // SingleSampleAdapter<PhiloxRandom>: one 32-bit sample at a time.
  uint32_t NextSample() {
    if (used == 4) {
      samples = generator.Next();
      used = 0;
    }
    return samples[used++];
  }
};

}  // namespace tfrun
