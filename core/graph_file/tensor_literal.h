// A constant's data as a graph file gives it (graph-format.md "Tensors"):
// `dtype`, `shape` and exactly one of `value` (flat, nested or a scalar
// that fills the shape), `fill`, `random` (the same numbers on every
// machine for a seed) or `npy` (a NumPy file beside the graph file).
#pragma once

#include <cstdint>
#include <string>

#include "core/graph/graph.h"
#include "core/graph_file/yaml_fields.h"

namespace tfrun {

// Keeps the running total of constant bytes against --max-tensor-bytes.
// `fields` must outlive it.
class TensorLiteralReader {
 public:
  // `directory` ("" or ending in '/') resolves relative npy paths.
  TensorLiteralReader(const FieldReader& fields, std::string directory, int64_t max_tensor_bytes)
      : fields_(fields), directory_(std::move(directory)), max_tensor_bytes_(max_tensor_bytes) {}

  // Reads `entry`'s data into node->value, ->dtype and ->shape; errors
  // name `node_name`.
  Status Read(const YamlNode& entry, const std::string& node_name, Node* node);

  // A bare `value` (a number, a string or a nested list) of `dtype`, its
  // shape from the nesting: a --feed literal.
  Status ReadValue(const YamlNode& value, const std::string& node_name, DType dtype, Node* node);

 private:
  struct Scalar {  // one parsed element of a value list
    double f = 0;
    int64_t i = 0;
    bool b = false;
    std::string_view text;  // string dtype: the bytes (the document outlives the read)
  };

  Status ReadValueList(const YamlNode& src, const std::string& node_name, DType dtype, std::optional<Shape> shape,
                       Node* node);
  Status ReadFilled(const YamlNode& src, const std::string& source, const std::string& node_name, DType dtype,
                    const Shape& shape, Node* node);
  Status ReadRandom(const YamlNode& r, const std::string& node_name, DType dtype, const Shape& shape, Node* node);
  Status ReadNpy(const YamlNode& src, const std::string& node_name, DType dtype, bool dtype_given,
                 const std::optional<Shape>& shape, Node* node);

  Status Flatten(const YamlNode& n, const std::string& node_name, DType dtype, int depth, int64_t expected,
                 std::vector<Scalar>* leaves, Shape* shape, int* leaf_depth) const;
  Status ParseElement(const YamlNode& n, const std::string& node_name, DType dtype, Scalar* out) const;
  Status Allocate(const YamlNode& where, const std::string& node_name, DType dtype, const Shape& shape, Node* node);
  // A string tensor of `shape` from its elements (or one repeated).
  Status AllocateStrings(const YamlNode& where, const std::string& node_name, const Shape& shape,
                         const std::vector<Scalar>& leaves, Node* node);
  Status OverBudget(const YamlNode& where, const std::string& node_name) const;
  static void Store(const Scalar& v, Tensor& t, int64_t index);

  const FieldReader& fields_;
  std::string directory_;
  int64_t max_tensor_bytes_;
  int64_t total_bytes_ = 0;
};

}  // namespace tfrun
