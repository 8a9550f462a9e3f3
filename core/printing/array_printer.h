// str() of a NumPy array or scalar (numpy/core/arrayprint.py), and TF2's
// eager tf.Tensor(...) repr built on it.
#pragma once

#include <string>
#include <string_view>

#include "core/base/tensor.h"

namespace tfrun {

struct NumpyPrintOptions {
  bool legacy_113 = false;  // np.set_printoptions(legacy='1.13')
  bool numpy2 = false;      // NumPy 2's float rules (float_format.h), else NumPy 1.14+'s
  int linewidth = 75;
  int threshold = 1000;
  int edgeitems = 3;
};

// repr() of a Python bytes object: b'Hello', b"it's", b'\xc3\xa9'.
std::string PythonBytesRepr(std::string_view bytes);

// What print(sess.run(t)) shows: str() of the ndarray, or of the NumPy
// scalar that Session.run returns for a rank-0 tensor.
std::string NumpyStr(const Tensor& t, const NumpyPrintOptions& options);

// repr() of the ndarray: "array([1., 2.], dtype=float32)" (what a
// tf.Variable's repr shows after numpy=).
std::string NumpyRepr(const Tensor& t, bool numpy2 = false);
// repr() of what sess.run returns for `t` inside a printed list: a NumPy
// scalar for rank 0 (np.float32(2.5) under NumPy 2, 2.5 under NumPy 1;
// bytes for a string), else the array's repr.
std::string PythonListItemRepr(const Tensor& t, bool numpy2);

// print(t) for an eager tensor: "tf.Tensor(<numpy str>, shape=(2, 2),
// dtype=float32)", the value on its own line when it spans several.
std::string EagerTensorStr(const Tensor& t, bool numpy2 = false);

// repr(t) for an eager tensor, as a printed tuple shows each of its
// items: "<tf.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>".
std::string EagerTensorRepr(const Tensor& t, bool numpy2 = false);

// print(v) for an eager tf.Variable named `name` holding `t`:
// "<tf.Variable 'v:0' shape=(2,) dtype=int32, numpy=array([1, 2], dtype=int32)>".
std::string EagerVariableStr(const std::string& name, const Tensor& t, bool numpy2 = false);

}  // namespace tfrun
