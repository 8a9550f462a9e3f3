#include <gtest/gtest.h>

#include "core/graph/function_library.h"

#include <string>

#include "core/graph_def/graph_def_export.h"
#include "core/graph_def/graph_def_import.h"
#include "core/graph_file/loader.h"
#include "core/graph_def/tf_graph_file.h"

namespace tfrun {
namespace {

StatusOr<Graph> Import(const std::string& text, ImportSemantics semantics = ImportSemantics::kSession,
                       const std::string& name = "g.pbtxt") {
  TFRUN_ASSIGN_OR_RETURN(TfGraphFile file, ParseTfGraphBytes(text, name, ""));
  GraphDefImportOptions options;
  options.semantics = semantics;
  return ImportGraphDef(file, name, options);
}

std::string ErrorOf(const std::string& text) {
  StatusOr<Graph> g = Import(text);
  EXPECT_FALSE(g.ok());
  return g.ok() ? "" : g.status().message();
}

constexpr const char* kConst = R"(attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1.5 } } })";

std::string ConstNode(const std::string& name, const std::string& device = "") {
  return "node { name: \"" + name + "\" op: \"Const\" " + (device.empty() ? "" : "device: \"" + device + "\" ") +
         kConst + " }\n";
}

std::string NegNode(const std::string& name, const std::string& input, const std::string& extra = "") {
  return "node { name: \"" + name + "\" op: \"Neg\" input: \"" + input +
         "\" attr { key: \"T\" value { type: DT_FLOAT } } " + extra + " }\n";
}

// A v1 while loop (TensorFlow 2.21 wrote graphs/tf/while_cond.pbtxt): its
// Merges are imported once their Enter is, before the NextIterations that
// feed them, and each back edge joins its Merge afterwards.
TEST(GraphDefImport, WhileLoopBackEdgesJoinTheirMerges) {
  StatusOr<Graph> g = LoadTfGraph("graphs/tf/while_cond.pbtxt", GraphDefImportOptions());
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* merge = g->Find("loop/Merge_1");
  const Node* next = g->Find("loop/NextIteration_1");
  ASSERT_TRUE(merge != nullptr && next != nullptr);
  EXPECT_EQ(merge->cls, NodeClass::kMerge);
  EXPECT_EQ(next->cls, NodeClass::kNextIteration);
  EXPECT_EQ(g->Find("c/Switch")->cls, NodeClass::kSwitch);
  EXPECT_LT(merge->id, next->id);
  ASSERT_EQ(merge->inputs.size(), 2u);
  EXPECT_EQ(merge->inputs[0], g->Find("loop/Enter_1")->id);
  EXPECT_EQ(merge->inputs[1], next->id);
  EXPECT_TRUE(g->IsBackEdge(*merge, 1));
  EXPECT_FALSE(g->IsBackEdge(*merge, 0));
  EXPECT_EQ(next->consumers, std::vector<int>{merge->id});
  EXPECT_TRUE(g->HasControlFlow());
  // The order TensorFlow's placement log shows: Enters, then Merges.
  EXPECT_EQ(g->nodes[3].name, "loop/Enter");
  EXPECT_EQ(g->nodes[5].name, "loop/Merge");
}

// A NextIteration may feed only a Merge on a cycle (TensorFlow 2.21: "2
// nodes in a cycle" for an AddV2 it feeds back into).
TEST(GraphDefImport, ACycleThroughNextIterationWithoutMergeIsRefused) {
  const std::string text = ConstNode("x") +
                           "node { name: \"a\" op: \"AddV2\" input: \"x\" input: \"n\" "
                           "attr { key: \"T\" value { type: DT_FLOAT } } }\n"
                           "node { name: \"n\" op: \"NextIteration\" input: \"a\" "
                           "attr { key: \"T\" value { type: DT_FLOAT } } }\n";
  EXPECT_EQ(ErrorOf(text), "g.pbtxt:3:8: node 'a': 2 nodes in a cycle (a cycle must run through a while loop's "
                           "NextIteration and Merge)");
}

// GraphConstructor's order: the lowest-index ready node first (notes 2.1).
TEST(GraphDefImport, NodesInGraphConstructorsOrder) {
  const std::string text = "node { name: \"c\" op: \"AddV2\" input: \"a\" input: \"b\" "
                           "attr { key: \"T\" value { type: DT_FLOAT } } }\n" +
                           NegNode("d", "a") + ConstNode("a") + ConstNode("b");
  StatusOr<Graph> g = Import(text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->nodes.size(), 4u);
  EXPECT_EQ(g->nodes[0].name, "a");
  EXPECT_EQ(g->nodes[1].name, "d");
  EXPECT_EQ(g->nodes[2].name, "b");
  EXPECT_EQ(g->nodes[3].name, "c");
  EXPECT_EQ(g->nodes[3].inputs, (std::vector<int>{0, 2}));
}

TEST(GraphDefImport, AttrsTypesValuesDevicesAndColocation) {
  const std::string text = ConstNode("a", "/device:CPU:1") +
                           NegNode("c", "a", "attr { key: \"_class\" value { list { s: \"loc:@a\" } } }") +
                           "node { name: \"v\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
                           "attr { key: \"shape\" value { shape { dim { size: 3 } } } } }\n";
  StatusOr<Graph> g = Import(text);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node& a = *g->Find("a");
  EXPECT_EQ(a.requested_device.ToString(), "/device:CPU:1");
  ASSERT_TRUE(a.value.is_valid());
  EXPECT_EQ(a.value.num_elements(), 2);
  EXPECT_EQ(a.value.GetAsDouble(1), 1.5);  // float_val's last value repeats
  const Node& c = *g->Find("c");
  EXPECT_EQ(c.colocation, (std::vector<std::string>{"a"}));
  const NodeProperties& v = *g->PropertiesOf(*g->Find("v"));
  EXPECT_EQ(v.output_types, (std::vector<std::string>{"FLOAT_REF"}));
  // Defaults come from TensorFlow's OpDef.
  ASSERT_EQ(v.attrs.count("container"), 1u);
  EXPECT_EQ(SummarizeAttrs(v.attrs), "container=\"\", dtype=DT_FLOAT, shape=[3], shared_name=\"\"");
  EXPECT_EQ(g->Find("v")->shape, (Shape{3}));
}

// importer.py: a `_class` member takes its group's device, or none.
TEST(GraphDefImport, PythonImportRewritesColocatedDevices) {
  const std::string text = ConstNode("a", "/device:CPU:1") +
                           NegNode("c", "a", "device: \"/device:CPU:2\" "
                                             "attr { key: \"_class\" value { list { s: \"loc:@a\" } } }") +
                           NegNode("n", "a", "device: \"/device:CPU:2\"");
  StatusOr<Graph> session = Import(text);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->Find("c")->requested_device.ToString(), "/device:CPU:2");
  StatusOr<Graph> python = Import(text, ImportSemantics::kPython);
  ASSERT_TRUE(python.ok());
  EXPECT_EQ(python->Find("c")->requested_device.ToString(), "/device:CPU:1");
  EXPECT_EQ(python->Find("n")->requested_device.ToString(), "/device:CPU:2");
}

TEST(GraphDefImport, ErrorsNameFileLineAndNode) {
  EXPECT_EQ(ErrorOf(ConstNode("a") + NegNode("b", "x")), "g.pbtxt:3:8: node 'b': Unknown input node 'x'");
  EXPECT_EQ(ErrorOf(ConstNode("a") + ConstNode("a")), "g.pbtxt:3:8: Node 'a' is not unique");
  EXPECT_NE(ErrorOf("node { name: \"w\" op: \"NoSuchOp\" }").find("Op type not registered 'NoSuchOp'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("node { name: \"w\" op: \"SymbolicGradient\" }").find("SymbolicGradient is not supported yet"), std::string::npos);
  // GraphConstructor's words (TensorFlow 2.21: "2 nodes in a cycle").
  EXPECT_NE(ErrorOf(NegNode("a", "b") + NegNode("b", "a")).find("node 'a': 2 nodes in a cycle"), std::string::npos);
  EXPECT_EQ(ErrorOf(ConstNode("a") + NegNode("b", "a:1")),
            "g.pbtxt:3:8: node 'b': Connecting to invalid output 1 of source node a which has 1 outputs.");
  EXPECT_EQ(ErrorOf(ConstNode("a") + "node { name: \"b\" op: \"Neg\" input: \"a\" "
                                     "attr { key: \"T\" value { type: DT_INT32 } } }"),
            "g.pbtxt:3:8: node 'b': Input 0 of node b was passed float from a:0 incompatible with expected int32.");
  EXPECT_EQ(ErrorOf("node { name: \"b\" op: \"Neg\" }"), "g.pbtxt:1:8: node 'b': NodeDef missing attr 'T' from "
                                                          "Op<name=Neg>; NodeDef: {{node b}}");
  EXPECT_EQ(ErrorOf("node { name: \"b\" op: \"Neg\" attr { key: \"T\" value { type: DT_FLOAT } } }"),
            "g.pbtxt:1:8: node 'b': Neg takes 1 inputs; the NodeDef has 0");
  // An attr of the wrong kind: TensorFlow 2.21's words (import_graph_def's
  // ValueError for the same NodeDef), its Op<...> summary shortened. One
  // the OpDef lacks TensorFlow ignores (and runs the node), and so does
  // tfrun.
  EXPECT_EQ(ErrorOf("node { name: \"a\" op: \"Const\" attr { key: \"dtype\" value { i: 3 } } "
                    "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }"),
            "g.pbtxt:1:8: node 'a': AttrValue had value with type 'int' when 'type' expected for attr 'dtype'; "
            "NodeDef: {{node a}}; Op<name=Const>");
  EXPECT_TRUE(Import("node { name: \"a\" op: \"Const\" attr { key: \"foo\" value { i: 3 } } " +
                     std::string(kConst) + " }")
                  .ok());
  // A file without nodes (a MetaGraphDef without its graph_def).
  EXPECT_EQ(ErrorOf(""), "g.pbtxt: the GraphDef holds no nodes: nothing to place or run");
  {
    StatusOr<TfGraphFile> meta = ParseTfGraphBytes("meta_info_def { tags: \"serve\" }\n", "m.meta", "");
    ASSERT_TRUE(meta.ok()) << meta.status().message();
    StatusOr<Graph> g = ImportGraphDef(*meta, "m.meta", GraphDefImportOptions());
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().message(), "m.meta: the MetaGraphDef holds no nodes: nothing to place or run");
  }
  // The text parser's own error, located.
  const std::string syntax = ErrorOf("node { name: \"a\" op: }");
  EXPECT_EQ(syntax.rfind("g.pbtxt:1:", 0), 0u) << syntax;
}

TEST(TfGraphFile, KindsByNameAndContent) {
  EXPECT_TRUE(IsTfGraphPath("m.pbtxt", "anything"));
  EXPECT_TRUE(IsTfGraphPath("m.pb", ""));
  EXPECT_TRUE(IsTfGraphPath("m.meta", ""));
  EXPECT_FALSE(IsTfGraphPath("m.yaml", "node {"));
  EXPECT_TRUE(IsTfGraphPath("model", std::string("\n\x03\n\x01" "a", 5)));  // binary bytes
  EXPECT_TRUE(IsTfGraphPath("model.txt", "# written by TF\nnode {\n  name: \"a\"\n}\n"));
  EXPECT_FALSE(IsTfGraphPath("model.txt", "nodes:\n  - {name: a, op: Const}\n"));

  // The same graph as text, binary GraphDef and binary MetaGraphDef.
  StatusOr<TfGraphFile> text = ParseTfGraphBytes(ConstNode("a") + NegNode("b", "a"), "x.pbtxt", "");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->kind, "GraphDef");
  std::string binary;
  ASSERT_TRUE(text->graph_def.SerializeToString(&binary));
  StatusOr<TfGraphFile> from_binary = ParseTfGraphBytes(binary, "x", "");
  ASSERT_TRUE(from_binary.ok()) << from_binary.status().message();
  EXPECT_EQ(from_binary->kind, "GraphDef");
  EXPECT_EQ(from_binary->graph_def.node_size(), 2);
  tfproto::MetaGraphDef meta;
  meta.mutable_meta_info_def()->add_tags("serve");
  *meta.mutable_graph_def() = text->graph_def;
  std::string meta_bytes;
  ASSERT_TRUE(meta.SerializeToString(&meta_bytes));
  StatusOr<TfGraphFile> from_meta = ParseTfGraphBytes(meta_bytes, "x", "");
  ASSERT_TRUE(from_meta.ok()) << from_meta.status().message();
  EXPECT_EQ(from_meta->kind, "MetaGraphDef");
  EXPECT_EQ(from_meta->graph_def.node_size(), 2);

  tfproto::SavedModel saved;
  *saved.add_meta_graphs() = meta;
  std::string saved_bytes;
  ASSERT_TRUE(saved.SerializeToString(&saved_bytes));
  StatusOr<TfGraphFile> from_saved = ParseTfGraphBytes(saved_bytes, "dir/saved_model.pb", "serve");
  ASSERT_TRUE(from_saved.ok()) << from_saved.status().message();
  EXPECT_EQ(from_saved->graph_def.node_size(), 2);
  StatusOr<TfGraphFile> no_tag = ParseTfGraphBytes(saved_bytes, "dir/saved_model.pb", "train");
  ASSERT_FALSE(no_tag.ok());
  EXPECT_EQ(no_tag.status().message(), "dir/saved_model.pb: Could not find meta graph def matching supplied tags: "
                                       "{ train }. Available tag-sets: [{ serve }]");
  EXPECT_FALSE(ParseTfGraphBytes(std::string("\x0a\xff\xff\xff\xff\x0f", 6), "x.pb", "").ok());

  // A binary GraphDef whose first node writes its op before its name (its
  // fields in any order are valid): decided by parsing, a GraphDef, not a
  // MetaGraphDef with no nodes.
  const std::string op_first_node = std::string("\x12\x04NoOp\x0a\x01" "a", 9);
  const std::string op_first = "\x0a" + std::string(1, static_cast<char>(op_first_node.size())) + op_first_node;
  StatusOr<TfGraphFile> unordered = ParseTfGraphBytes(op_first, "model", "");
  ASSERT_TRUE(unordered.ok()) << unordered.status().message();
  EXPECT_EQ(unordered->kind, "GraphDef");
  ASSERT_EQ(unordered->graph_def.node_size(), 1);
  EXPECT_EQ(unordered->graph_def.node(0).name(), "a");
  // A string that is not UTF-8: one message, libprotobuf's line in it, not
  // on standard error.
  const std::string bad_name_node = std::string("\x0a\x02\xff\xfe\x12\x04NoOp", 10);
  testing::internal::CaptureStderr();
  StatusOr<TfGraphFile> bad_utf8 =
      ParseTfGraphBytes("\x0a" + std::string(1, static_cast<char>(bad_name_node.size())) + bad_name_node, "m.pb", "");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_FALSE(bad_utf8.ok());
  EXPECT_EQ(bad_utf8.status().message(),
            "m.pb: not a binary GraphDef (the protobuf does not parse: String field 'tfrun.tfproto.NodeDef.name' "
            "contains invalid UTF-8 data when parsing a protocol buffer. Use the 'bytes' type if you intend to send "
            "raw bytes.)");
}

// ValidateNodeDef's checks on every imported NodeDef, in the texts
// TensorFlow 2.21's import_graph_def raised for the same NodeDefs (its
// Op<...> summary shortened, its "\n\t; " as "; "). A Split of 0 outputs
// divided by zero when it ran.
TEST(GraphDefImport, OpDefConstraintsAreEnforcedAsTensorFlowDoes) {
  const std::string four = ConstNode("c");
  const std::string axis = "node { name: \"d\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
                           "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n";
  const std::string image = "node { name: \"i\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
                            "attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } "
                            "dim { size: 2 } dim { size: 2 } dim { size: 1 } } float_val: 1 } } } }\n";
  auto conv = [&](const std::string& attrs) {
    return image + "node { name: \"cv\" op: \"Conv2D\" input: \"i\" input: \"i\" attr { key: \"T\" value { type: "
                   "DT_FLOAT } } " + attrs + " }\n";
  };
  const std::string strides = "attr { key: \"strides\" value { list { i: 1 i: 1 i: 1 i: 1 } } }";
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {four + axis + "node { name: \"s\" op: \"Split\" input: \"d\" input: \"c\" attr { key: \"T\" value { type: "
                     "DT_FLOAT } } attr { key: \"num_split\" value { i: 0 } } }",
       "g.pbtxt:4:8: node 's': Value for attr 'num_split' of 0 must be at least minimum 1; NodeDef: {{node s}}; "
       "Op<name=Split>"},
      {"node { name: \"a\" op: \"AddN\" attr { key: \"T\" value { type: DT_FLOAT } } attr { key: \"N\" value { i: 0 } } }",
       "g.pbtxt:1:8: node 'a': Value for attr 'N' of 0 must be at least minimum 1; NodeDef: {{node a}}; Op<name=AddN>"},
      {"node { name: \"b\" op: \"Const\" attr { key: \"dtype\" value { type: DT_BOOL } } attr { key: \"value\" value "
       "{ tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }\nnode { name: \"m\" op: \"MatMul\" input: "
       "\"b\" input: \"b\" attr { key: \"T\" value { type: DT_BOOL } } }",
       "g.pbtxt:2:8: node 'm': Value for attr 'T' of bool is not in the list of allowed values: bfloat16, half, float, "
       "double, int32, int64, uint8, uint16, uint32, uint64, complex64, complex128; NodeDef: {{node m}}; "
       "Op<name=MatMul>"},
      {conv("attr { key: \"padding\" value { s: \"FOO\" } } " + strides),
       "g.pbtxt:2:8: node 'cv': Value for attr 'padding' of \"FOO\" is not in the list of allowed values: \"SAME\", "
       "\"VALID\", \"EXPLICIT\"; NodeDef: {{node cv}}; Op<name=Conv2D>"},
      {conv("attr { key: \"padding\" value { s: \"SAME\" } } attr { key: \"data_format\" value { s: \"XYZ\" } } " +
            strides),
       "g.pbtxt:2:8: node 'cv': Value for attr 'data_format' of \"XYZ\" is not in the list of allowed values: "
       "\"NHWC\", \"NCHW\"; NodeDef: {{node cv}}; Op<name=Conv2D>"},
      {conv("attr { key: \"padding\" value { s: \"SAME\" } }"),
       "g.pbtxt:2:8: node 'cv': NodeDef missing attr 'strides' from Op<name=Conv2D>; NodeDef: {{node cv}}"},
      {image + "node { name: \"mp\" op: \"MaxPool\" input: \"i\" attr { key: \"padding\" value { s: \"SAME\" } } "
               "attr { key: \"ksize\" value { list { i: 1 i: 1 } } } " + strides + " }",
       "g.pbtxt:2:8: node 'mp': Length for attr 'ksize' of 2 must be at least minimum 4; NodeDef: {{node mp}}; "
       "Op<name=MaxPool>"},
      {"node { name: \"k\" op: \"Const\" attr { key: \"dtype\" value { type: DT_FLOAT_REF } } attr { key: \"value\" "
       "value { tensor { dtype: DT_FLOAT_REF tensor_shape { } float_val: 3 } } } }",
       "g.pbtxt:1:8: node 'k': AttrValue must not have reference type value of float_ref for attr 'dtype'; NodeDef: "
       "{{node k}}; Op<name=Const>"},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.text), c.error) << c.text;
}

// What a few bytes of GraphDef may ask for is counted before it is
// allocated: a string Const's offsets and payload (its last string_val
// repeated over its shape; 10^9 elements of a 78-byte file aborted), list
// inputs and outputs (--max-nodes bounds the outputs as it bounds nodes).
TEST(GraphDefImport, WhatAFileAsksForIsCountedBeforeItIsAllocated) {
  auto strings = [](int64_t n) {
    return "node { name: \"s\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } } attr { key: \"value\" "
           "value { tensor { dtype: DT_STRING tensor_shape { dim { size: " + std::to_string(n) +
           " } } string_val: \"ab\" string_val: \"abcdefghijklmnopqrstuvwxyz\" } } } }\n";
  };
  GraphDefImportOptions options;
  options.max_tensor_bytes = 1000;
  auto import = [&](const std::string& text) -> StatusOr<Graph> {
    TFRUN_ASSIGN_OR_RETURN(TfGraphFile file, ParseTfGraphBytes(text, "g.pbtxt", ""));
    return ImportGraphDef(file, "g.pbtxt", options);
  };
  StatusOr<Graph> small = import(strings(20));  // 21 offsets, 2 + 19 * 26 bytes: 664
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->Find("s")->value.num_bytes(), 21 * 8 + 2 + 19 * 26u);
  EXPECT_EQ(small->Find("s")->value.StringAt(19), "abcdefghijklmnopqrstuvwxyz");
  for (int64_t n : {int64_t{30}, int64_t{1000000000}, int64_t{1} << 62}) {
    StatusOr<Graph> big = import(strings(n));
    ASSERT_FALSE(big.ok()) << n;
    EXPECT_EQ(big.status().message(), "g.pbtxt:1:8: node 's': the constants need more than --max-tensor-bytes (1000)");
  }

  options.max_nodes = 1000;
  const std::string split = ConstNode("c") +
                            "node { name: \"d\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
                            "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
                            "node { name: \"s\" op: \"Split\" input: \"d\" input: \"c\" attr { key: \"T\" value { "
                            "type: DT_FLOAT } } attr { key: \"num_split\" value { i: 998 } } }\n";
  EXPECT_TRUE(import(split).ok());
  StatusOr<Graph> over = import(split + "node { name: \"t\" op: \"Split\" input: \"d\" input: \"c\" attr { key: \"T\" "
                                        "value { type: DT_FLOAT } } attr { key: \"num_split\" value { i: 2 } } }\n");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "g.pbtxt:5:8: node 't': the graph's nodes have more than 1000 outputs in all "
                                     "(--max-nodes bounds the outputs too)");
  StatusOr<Graph> addn = import(ConstNode("c") + "node { name: \"a\" op: \"AddN\" input: \"c\" attr { key: \"T\" "
                                                 "value { type: DT_FLOAT } } attr { key: \"N\" value { i: 1000000000 } } }");
  ASSERT_FALSE(addn.ok());
  EXPECT_EQ(addn.status().message(), "g.pbtxt:3:8: node 'a': AddN takes 1000000000 inputs; the NodeDef has 1");
}

// TensorFlow's name rule (GraphConstructor, in its words, the name
// escaped): names with a newline, an escape sequence, bytes that are not
// UTF-8 or a leading underscore made two-line errors, raw escapes on the
// terminal, invalid --json and GraphDefs TensorFlow rejects.
TEST(GraphDefImport, NodeNamesFollowTensorFlowsRule) {
  struct Case {
    std::string name, shown;
  };
  for (const Case& c : {Case{"a\\nb", "a\\nb"}, Case{"a\\033[31mb", "a\\x1b[31mb"}, Case{"a\\377b", "a\\xffb"},
                        Case{"_ab", "_ab"}, Case{"-ab", "-ab"}, Case{"/ab", "/ab"}, Case{"a b", "a b"},
                        Case{"a:b", "a:b"}}) {
    EXPECT_EQ(ErrorOf("node { name: \"" + c.name + "\" op: \"NoOp\" }"),
              "g.pbtxt:1:8: Node '" + c.shown + "': Node name contains invalid characters")
        << c.name;
  }
  EXPECT_TRUE(Import("node { name: \".a>b-c_d/e.1\" op: \"NoOp\" }").ok());
  EXPECT_EQ(ErrorOf("node { name: \"ab\" }"), "g.pbtxt:1:8: Node 'ab' does not specify an operation");
}

// ConstantOp's constructor: a value that does not parse, or of another
// dtype, imports and places, then fails the node when it runs (it printed
// 0.0); the texts are TensorFlow 2.21's (testdata/bad/tf has the run).
TEST(GraphDefImport, ConstsTensorFlowCannotMakeFailWhenTheyRun) {
  auto kernel_error = [](const std::string& attr_type, const std::string& proto_type) {
    StatusOr<Graph> g = Import("node { name: \"k\" op: \"Const\" attr { key: \"dtype\" value { type: " + attr_type +
                               " } } attr { key: \"value\" value { tensor { dtype: " + proto_type +
                               " tensor_shape { } float_val: 3 } } } }");
    EXPECT_TRUE(g.ok()) << g.status().message();
    return g.ok() ? g->properties[0].kernel_error : "";
  };
  EXPECT_EQ(kernel_error("DT_INT32", "DT_FLOAT"), "Type mismatch between value (float) and dtype (int32)");
  EXPECT_EQ(kernel_error("DT_FLOAT", "-5"), "Cannot parse tensor from proto: dtype: -5 tensor_shape { } float_val: 3");
  EXPECT_EQ(kernel_error("DT_FLOAT", "DT_FLOAT_REF"),
            "Cannot parse tensor from proto: dtype: DT_FLOAT_REF tensor_shape { } float_val: 3");
  EXPECT_EQ(kernel_error("DT_FLOAT", "DT_FLOAT"), "");
}

// Text files nest messages at most 100 deep, as binary ones do: 20,000
// levels of an unknown field (160 KB) took the stack, and nesting through
// attr maps memory quadratic in the depth. One located line, exit 2.
TEST(TfGraphFile, NestingIsBoundedAsInTheBinaryParser) {
  auto nested = [](const std::string& open, int depth, const std::string& inner) {
    std::string text;
    for (int i = 0; i < depth; ++i) text += open + " { ";
    text += inner;
    for (int i = 0; i < depth; ++i) text += " }";
    return text;
  };
  const std::string deep_unknown = "node { name: \"a\" op: \"NoOp\" " + nested("unknown", 20000, "") + " }\n";
  const std::string too_deep = "Message is too deep, the parser exceeded the configured recursion limit of 100.";
  struct Case {
    std::string name, text, kind;
  };
  for (const Case& c : {Case{"g.pbtxt", deep_unknown, "GraphDef"},
                        Case{"m.meta", "meta_info_def { } graph_def { " + deep_unknown + " }", "MetaGraphDef"},
                        Case{"saved_model.pbtxt", "meta_graphs { graph_def { " + deep_unknown + " } }", "SavedModel"},
                        Case{"g.pbtxt",
                             "node { name: \"a\" op: \"NoOp\" attr { key: \"k\" value { " +
                                 nested("func { name: \"f\" attr { key: \"k\" value", 40, "i: 1") +
                                 std::string(80, '}') + " } } }",
                             "GraphDef"}}) {
    StatusOr<TfGraphFile> file = ParseTfGraphBytes(c.text, c.name, "");
    ASSERT_FALSE(file.ok()) << c.name;
    EXPECT_EQ(file.status().kind(), ErrorKind::kBadInput);
    const std::string& message = file.status().message();
    EXPECT_EQ(message.rfind(c.name + ":1:", 0), 0u) << message;
    EXPECT_NE(message.find(too_deep + " (text " + c.kind + ")"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // 90 levels (30 of func, attr entry, value) are fine.
  const std::string ok = "node { name: \"a\" op: \"NoOp\" attr { key: \"k\" value { " +
                         nested("func { name: \"f\" attr { key: \"k\" value", 29, "i: 1") + std::string(58, '}') +
                         " } } }";
  StatusOr<TfGraphFile> file = ParseTfGraphBytes(ok, "g.pbtxt", "");
  EXPECT_TRUE(file.ok()) << file.status().message();
}

// A graph file's Consts written as tensor_util.make_tensor_proto writes the
// program's value (TensorFlow 2.21's protos for the same calls,
// DERIVATIONS.md "Hostile graphs"): a fill as its one value (a 10000x10000
// fill was 1.3 GB of tensor_content, TensorFlow's 267 bytes), an array as
// its bytes, bools listed.
TEST(GraphDefExport, ConstsAsMakeTensorProtoWritesThem) {
  StatusOr<Graph> g = LoadGraphText(R"(nodes:
  - {name: fill, op: Const, shape: [10000, 10000], fill: 1.0}
  - {name: array, op: Const, value: [[1.0, 1.0]]}
  - {name: flags, op: Const, dtype: bool, value: [true, false, true]}
  - {name: half, op: Const, dtype: bfloat16, value: [1.5, 2.0]}
  - {name: one, op: Const, dtype: int32, value: 5}
)",
                                    "g.yaml");
  ASSERT_TRUE(g.ok()) << g.status().message();
  StatusOr<std::string> bytes = GraphDefBytes(*g, std::vector<std::string>(g->nodes.size()), false, "");
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  EXPECT_LT(bytes->size(), 1000u);
  tfproto::GraphDef written;
  ASSERT_TRUE(written.ParseFromString(*bytes));
  auto value = [&](const std::string& name) {
    for (const tfproto::NodeDef& n : written.node()) {
      if (n.name() == name) return n.attr().at("value").tensor().ShortDebugString();
    }
    return std::string();
  };
  EXPECT_EQ(value("fill"), "dtype: DT_FLOAT tensor_shape { dim { size: 10000 } dim { size: 10000 } } float_val: 1");
  EXPECT_EQ(value("array"),
            "dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 2 } } tensor_content: \"\\000\\000\\200?\\000\\000\\200?\"");
  EXPECT_EQ(value("flags"), "dtype: DT_BOOL tensor_shape { dim { size: 3 } } bool_val: true bool_val: false bool_val: true");
  EXPECT_EQ(value("half"), "dtype: DT_BFLOAT16 tensor_shape { dim { size: 2 } } tensor_content: \"\\300?\\000@\"");
  EXPECT_EQ(value("one"), "dtype: DT_INT32 tensor_shape { } int_val: 5");
}

// The files TensorFlow wrote for graphs/tf: the text GraphDef, the binary
// one and the MetaGraphDef hold the same nodes.
TEST(TfGraphFile, ReadsWhatTensorFlowWrote) {
  GraphDefImportOptions options;
  StatusOr<Graph> text = LoadTfGraph("graphs/tf/towers.pbtxt", options);
  StatusOr<Graph> binary = LoadTfGraph("graphs/tf/towers_binary.pb", options);
  StatusOr<Graph> meta = LoadTfGraph("graphs/tf/towers_meta.meta", options);
  ASSERT_TRUE(text.ok()) << text.status().message();
  ASSERT_TRUE(binary.ok()) << binary.status().message();
  ASSERT_TRUE(meta.ok()) << meta.status().message();
  EXPECT_GT(text->nodes.size(), 100u);
  EXPECT_EQ(text->NodeNames(), binary->NodeNames());
  EXPECT_EQ(text->NodeNames(), meta->NodeNames());
  EXPECT_GT(text->Find("w")->location.line, 0);
  EXPECT_EQ(binary->Find("w")->location.line, 0);
}

}  // namespace
}  // namespace tfrun

namespace tfrun {
namespace {

// A text GraphDef large enough to be parsed in pieces: the nodes in file
// order with their locations, the other fields merged, and a piece's
// error reported as the whole file's parse reports it.
TEST(TfGraphFile, ALargeTextGraphParsedInPiecesIsTheWholeFilesParse) {
  std::string text = "versions { producer: 27 }\n";
  const int nodes = 6000;  // about 400 KB
  for (int i = 0; i < nodes; ++i) {
    text += "node {\n  name: \"n" + std::to_string(i) + "\"\n  op: \"NoOp\"\n  device: \"/cpu:0\"\n" +
            std::string(40, ' ') + "# padding to make the file large\n}\n";
  }
  text += "library {}\n";
  ASSERT_GE(text.size(), 256u << 10);
  StatusOr<TfGraphFile> file = ParseTfGraphBytes(text, "large.pbtxt", "");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->graph_def.node_size(), nodes);
  for (int i = 0; i < nodes; ++i) {
    ASSERT_EQ(file->graph_def.node(i).name(), "n" + std::to_string(i));
    ASSERT_EQ(file->node_locations[i].line, 3 + 6 * i);
    ASSERT_EQ(file->node_locations[i].column, 3);
  }
  EXPECT_EQ(file->graph_def.versions().producer(), 27);
  // An error in the last piece: located in the whole file.
  std::string broken = text;
  const size_t at = broken.rfind("op: \"NoOp\"");
  broken.replace(at, 10, "op: ]");
  StatusOr<TfGraphFile> bad = ParseTfGraphBytes(broken, "large.pbtxt", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("large.pbtxt:" + std::to_string(6 * nodes - 2) + ":7: ", 0), 0u)
      << bad.status().message();
  // A scalar field twice is the parser's error, even where the pieces
  // would each have had one.
  StatusOr<TfGraphFile> twice = ParseTfGraphBytes("version: 1\n" + text + "version: 2\n", "twice.pbtxt", "");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("specified multiple times"), std::string::npos) << twice.status().message();
}

// A polymorphic function instantiated for a call's attrs, as
// FunctionInstantiationHelper does: one _Arg per tensor of a list argument
// (xs_0, xs_1, xs_2), the $T placeholders bound, one _Retval per tensor of
// a list result; without attrs, an error naming the attr.
TEST(TfGraphFile, APolymorphicFunctionTakesItsCallsAttrs) {
  StatusOr<Graph> g = LoadTfGraph("graphs/tf/polymorphic_call_run.pbtxt", GraphDefImportOptions());
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node& call = *g->Find("call");
  EXPECT_EQ(g->PropertiesOf(call)->input_types, (std::vector<std::string>{"FLOAT", "FLOAT", "FLOAT"}));
  EXPECT_EQ(g->PropertiesOf(call)->output_types.size(), 4u);  // sum, then the three negs
  EXPECT_EQ(g->Find("out2")->input(0).index, 3);
  StatusOr<FunctionBody> body = g->functions->Instantiate("SumAndNeg", &g->PropertiesOf(call)->attrs);
  ASSERT_TRUE(body.ok()) << body.status().message();
  std::vector<std::string> args, rets;
  for (int a : body->args) args.push_back(body->graph.nodes[a].name);
  for (int r : body->rets) rets.push_back(body->graph.nodes[r].name);
  EXPECT_EQ(args, (std::vector<std::string>{"xs_0", "xs_1", "xs_2"}));
  EXPECT_EQ(rets, (std::vector<std::string>{"sum_RetVal", "negs_RetVal_0", "negs_RetVal_1", "negs_RetVal_2"}));
  const Node& sum = *body->graph.Find("s");
  EXPECT_EQ(sum.inputs.size(), 3u);
  EXPECT_EQ(body->graph.AttrText(sum, "T"), "FLOAT");
  const StatusOr<FunctionBody> unbound = g->functions->Instantiate("SumAndNeg");
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("argument 'xs' takes its type from attr 'T'"), std::string::npos)
      << unbound.status().message();
}

}  // namespace
}  // namespace tfrun
