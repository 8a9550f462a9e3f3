// NumPy .npy files (format versions 1.0 to 3.0): read for `npy:` constants,
// written for --out.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "core/base/status.h"
#include "core/base/tensor.h"

namespace tfrun {

// Errors name the file and what is wrong (truncated, corrupt header,
// unsupported dtype, ...).
StatusOr<Tensor> ReadNpy(const std::string& path);

// Writes `t` as a version 1.0 .npy file to `path` (bfloat16 widened to
// float32, which NumPy has). Writes to a temporary file and renames, so a
// failure leaves nothing behind.
Status WriteNpy(const std::string& path, const Tensor& t);

// What WriteNpy writes, for a caller that writes files together (FileBatch).
// It keeps `t` (a shared buffer) alive.
std::function<bool(FILE*)> NpyWriter(const Tensor& t);

}  // namespace tfrun
