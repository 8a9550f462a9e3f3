// TensorFlow's LowerFunctionalOpsPass (lower_functional_ops.cc,
// lower_if_op.cc, lower_case_op.cc, lower_while_op.cc,
// lower_function_call_op.cc, 2.21): an If or StatelessIf (a Case, a While)
// marked _lower_using_switch_merge (v2 control flow outside XLA) becomes
// v1 control flow, Switch nodes into a call of each branch and Merge nodes
// out, named "<if>/<infix>/_N" (Graph::NewName, one counter for the
// graph); the calls that lowering makes (_lower_as_multi_device_function),
// and every call where do_function_inlining is asked for, are inlined
// (inline_function_body.h). Nodes are visited in id order, new ones too,
// so nested conds and calls in inlined bodies are lowered in turn.
#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "core/graph/function_library.h"
#include "core/graph/node_builder.h"
#include "core/passes/inline_function_body.h"
#include "core/passes/pass_registry.h"

namespace tfrun {
namespace {

// Inlining a function that calls itself never ends; a graph this large
// is refused as --max-nodes refuses a file's.
constexpr size_t kMaxNodesAfterLowering = 1000000;
// An inlined node's name is its caller's, a slash, and its own: calls
// nested N deep make names N levels long, their bytes growing as N^2 (a
// chain of 10,000 nested functions: 600 MB of names). Refused past this.
constexpr size_t kMaxNameBytesAfterLowering = size_t{64} << 20;

bool BoolAttrIsTrue(const Graph& graph, const Node& node, std::string_view attr) {
  const AttrValue* value = graph.AttrOf(node, attr);
  return value != nullptr && value->type == "bool" && value->items == std::vector<std::string>{"true"};
}

bool StringAttrIsSet(const Graph& graph, const Node& node, std::string_view attr) {
  return !graph.AttrText(node, attr).empty();
}

// A node made from `from` that TensorFlow gives its assigned device
// (NodeBuilder::AssignedDevice): pinned as `from` is.
void CopyPin(Graph* graph, int from, int to) {
  graph->nodes[to].pin = graph->nodes[from].pin;
  graph->nodes[to].pinned_device = graph->nodes[from].pinned_device;
}

// A `_class` list attr of the colocation groups `groups` ("loc:@" each).
AttrValue ColocationAttr(const std::vector<std::string>& groups) {
  AttrValue value{"list(string)", {}};
  for (const std::string& g : groups) value.items.push_back("loc:@" + g);
  return value;
}

// Output 0 of each of `nodes`.
std::vector<NodeOutput> FirstOutputs(const std::vector<int>& nodes) {
  std::vector<NodeOutput> outputs;
  for (int id : nodes) outputs.push_back({id, 0});
  return outputs;
}

// CondBuilder (lower_if_op.cc).
Status RewriteIfNode(Graph* graph, int if_id, bool keep_node_fetchable) {
  const Node n = graph->nodes[if_id];  // a copy: adding nodes moves the vector
  const std::string then_fn = graph->AttrText(n, "then_branch");
  const std::string else_fn = graph->AttrText(n, "else_branch");
  auto bad = [&](const std::string& text) { return NodeError(*graph, n, text); };
  if (then_fn.empty()) return bad("Then branch function missing");
  if (else_fn.empty()) return bad("Else branch function missing");
  for (const std::string& f : {then_fn, else_fn}) {
    if (!graph->functions->Contains(f)) return bad(fmt::format("the graph's library has no function '{}'", f));
    // Each branch returns every output of the If (a Merge of the two).
    TFRUN_ASSIGN_OR_RETURN(const FunctionSignature signature, graph->functions->Signature(f));
    if (signature.output_types.size() != static_cast<size_t>(n.num_outputs)) {
      return bad(fmt::format("If branch '{}' returns {} values for the If's {} outputs", f,
                             signature.output_types.size(), n.num_outputs));
    }
  }
  const std::string device = n.requested_device_text;
  const NodeOutput pred = n.input(0);
  // The If's own colocation goes to the nodes that stand for it
  // (SetColocationAndFinalize).
  auto spec = [&](std::string op, std::string name) {
    NodeSpec s = ReplacementSpec(n, std::move(op), std::move(name));
    s.device = device;
    return s;
  };
  auto colocated = [&](std::string op, std::string name) {
    NodeSpec s = spec(std::move(op), std::move(name));
    if (!n.colocation.empty()) s.attrs["_class"] = ColocationAttr(n.colocation);
    return s;
  };
  // The branch calls' names come first; the calls themselves after the
  // Switch nodes that feed them.
  const std::string then_name = graph->NewName(n.name + "/then");
  const std::string else_name = graph->NewName(n.name + "/else");

  NodeSpec switch_pred = colocated("Switch", graph->NewName(n.name + "/switch_pred"));
  switch_pred.inputs = {pred, pred};
  TFRUN_ASSIGN_OR_RETURN(const int switch_pred_id, AddNode(graph, std::move(switch_pred)));
  NodeSpec pivot_f = colocated("Identity", graph->NewName(n.name + "/pivot_f"));
  pivot_f.inputs = {{switch_pred_id, 0}};
  TFRUN_ASSIGN_OR_RETURN(const int pivot_f_id, AddNode(graph, std::move(pivot_f)));
  NodeSpec pivot_t = colocated("Identity", graph->NewName(n.name + "/pivot_t"));
  pivot_t.inputs = {{switch_pred_id, 1}};
  TFRUN_ASSIGN_OR_RETURN(const int pivot_t_id, AddNode(graph, std::move(pivot_t)));

  // A Switch per data input, on its producer's device and colocated with
  // it (legacy tf.cond's colocate_with(input, ignore_existing=True)).
  NodeSpec then_call = spec(then_fn, then_name);
  NodeSpec else_call = spec(else_fn, else_name);
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    const NodeOutput src = n.input(i);
    const Node& producer = graph->nodes[src.node];
    NodeSpec s = ReplacementSpec(n, "Switch", graph->NewName(n.name + "/" + producer.name));
    s.device = producer.requested_device_text;
    s.inputs = {src, pred};
    s.attrs["_class"] = ColocationAttr({producer.name});
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(s)));
    then_call.inputs.push_back({id, 1});
    else_call.inputs.push_back({id, 0});
  }
  for (int c : n.control_inputs) graph->AddControlEdge(c, switch_pred_id);

  then_call.attrs["_lower_as_multi_device_function"] = BoolAttr(true);
  else_call.attrs["_lower_as_multi_device_function"] = BoolAttr(true);
  then_call.control_inputs = {pivot_t_id};
  else_call.control_inputs = {pivot_f_id};
  TFRUN_ASSIGN_OR_RETURN(const int then_id, AddNode(graph, std::move(then_call)));
  TFRUN_ASSIGN_OR_RETURN(const int else_id, AddNode(graph, std::move(else_call)));

  std::vector<int> merges;
  for (int i = 0; i < graph->nodes[then_id].num_outputs; ++i) {
    NodeSpec merge = colocated("Merge", graph->NewName(n.name + "/output"));
    merge.inputs = {{then_id, i}, {else_id, i}};
    merge.attrs["N"] = IntAttr(2);
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(merge)));
    merges.push_back(id);
  }
  // Waits for both calls, so that a branch without outputs still runs.
  NodeSpec executed = colocated("Merge", graph->NewName(n.name + "/branch_executed"));
  executed.inputs = {{pivot_t_id, 0}, {pivot_f_id, 0}};
  executed.attrs["N"] = IntAttr(2);
  executed.control_inputs = {then_id, else_id};
  TFRUN_ASSIGN_OR_RETURN(const int executed_id, AddNode(graph, std::move(executed)));

  // The If's name stays: an IdentityN of the merges, or a NoOp.
  NodeSpec lowered = spec("", n.name);
  lowered.control_inputs = {executed_id};
  TFRUN_ASSIGN_OR_RETURN(const int lowered_id,
                         AddNameKeeper(graph, std::move(lowered), FirstOutputs(merges), keep_node_fetchable));
  RewireReaders(graph, if_id, FirstOutputs(merges), executed_id, lowered_id);
  graph->Remove(if_id);
  return Status::Ok();
}

// CaseBuilder (lower_case_op.cc): an If of N branches, a _SwitchN on the
// branch index where the If has a Switch.
Status RewriteCaseNode(Graph* graph, int case_id, bool keep_node_fetchable) {
  const Node n = graph->nodes[case_id];  // a copy: adding nodes moves the vector
  auto bad = [&](const std::string& text) { return NodeError(*graph, n, text); };
  const AttrValue* branches_attr = graph->AttrOf(n, "branches");
  if (branches_attr == nullptr || branches_attr->items.empty()) return bad("branch functions missing");
  const std::vector<std::string> branches = branches_attr->items;
  for (const std::string& f : branches) {
    if (!graph->functions->Contains(f)) return bad(fmt::format("the graph's library has no function '{}'", f));
    TFRUN_ASSIGN_OR_RETURN(const FunctionSignature signature, graph->functions->Signature(f));
    if (signature.output_types.size() != static_cast<size_t>(n.num_outputs)) {
      return bad(fmt::format("Case branch '{}' returns {} values for the Case's {} outputs", f,
                             signature.output_types.size(), n.num_outputs));
    }
  }
  const int count = static_cast<int>(branches.size());
  const std::string device = n.requested_device_text;
  const NodeOutput index = n.input(0);
  auto spec = [&](std::string op, std::string name) {
    NodeSpec s = ReplacementSpec(n, std::move(op), std::move(name));
    s.device = device;
    return s;
  };
  std::vector<NodeSpec> calls;
  for (int b = 0; b < count; ++b) {
    calls.push_back(spec(branches[b], graph->NewName(fmt::format("{}/branch{}", n.name, b))));
    calls.back().attrs["_lower_as_multi_device_function"] = BoolAttr(true);
  }
  NodeSpec selector = spec("_SwitchN", graph->NewName(n.name + "/branch_index"));
  selector.inputs = {index, index};
  selector.attrs["num_outs"] = IntAttr(count);
  TFRUN_ASSIGN_OR_RETURN(const int selector_id, AddNode(graph, std::move(selector)));
  std::vector<int> pivots;
  for (int b = 0; b < count; ++b) {
    NodeSpec pivot = spec("Identity", graph->NewName(fmt::format("{}/pivot_{}", n.name, b)));
    pivot.inputs = {{selector_id, b}};
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(pivot)));
    pivots.push_back(id);
  }
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    const NodeOutput src = n.input(i);
    const Node& producer = graph->nodes[src.node];
    NodeSpec s = ReplacementSpec(n, "_SwitchN", graph->NewName(n.name + "/" + producer.name));
    s.device = producer.requested_device_text;
    s.inputs = {src, index};
    // (Without "loc:@": lower_case_op.cc colocates nothing here.)
    s.attrs["_class"] = AttrValue{"list(string)", {producer.name}};
    s.attrs["num_outs"] = IntAttr(count);
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(s)));
    for (int b = 0; b < count; ++b) calls[b].inputs.push_back({id, b});
  }
  for (int c : n.control_inputs) graph->AddControlEdge(c, selector_id);
  std::vector<int> call_ids;
  for (int b = 0; b < count; ++b) {
    calls[b].control_inputs = {pivots[b]};
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(calls[b])));
    call_ids.push_back(id);
  }
  std::vector<int> merges;
  for (int i = 0; i < graph->nodes[call_ids[0]].num_outputs; ++i) {
    NodeSpec merge = spec("Merge", graph->NewName(n.name + "/merge"));
    for (int c : call_ids) merge.inputs.push_back({c, i});
    merge.attrs["N"] = IntAttr(count);
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(merge)));
    merges.push_back(id);
  }
  NodeSpec executed = spec("Merge", graph->NewName(n.name + "/branch_executed"));
  for (int p : pivots) executed.inputs.push_back({p, 0});
  executed.attrs["N"] = IntAttr(count);
  executed.control_inputs = call_ids;
  TFRUN_ASSIGN_OR_RETURN(const int executed_id, AddNode(graph, std::move(executed)));
  NodeSpec lowered = spec("", n.name);
  lowered.control_inputs = {executed_id};
  TFRUN_ASSIGN_OR_RETURN(const int lowered_id,
                         AddNameKeeper(graph, std::move(lowered), FirstOutputs(merges), keep_node_fetchable));
  RewireReaders(graph, case_id, FirstOutputs(merges), executed_id, lowered_id);
  graph->Remove(case_id);
  return Status::Ok();
}

// LowerWhileHelper (lower_while_op.cc): Enter, Merge, a call of the cond
// function, LoopCond, Switch, a call of the body, Exit and NextIteration
// nodes; a resource input only enters the frame (is_constant).
Status RewriteWhileNode(Graph* graph, int while_id, bool keep_node_fetchable) {
  const Node n = graph->nodes[while_id];  // a copy: adding nodes moves the vector
  auto bad = [&](const std::string& text) { return NodeError(*graph, n, text); };
  const std::string cond_fn = graph->AttrText(n, "cond");
  const std::string body_fn = graph->AttrText(n, "body");
  if (cond_fn.empty()) return bad("While cond function missing");
  if (body_fn.empty()) return bad("While body function missing");
  for (const std::string& f : {cond_fn, body_fn}) {
    if (!graph->functions->Contains(f)) return bad(fmt::format("the graph's library has no function '{}'", f));
  }
  const std::string parallel = graph->AttrText(n, "parallel_iterations");
  if (parallel.empty()) return bad("parallel_iterations attr missing");
  if (std::strtoll(parallel.c_str(), nullptr, 10) < 1) return bad("parallel_iterations must be > 0");
  if (n.inputs.empty()) return bad("a While without loop variables");
  // The body returns the next value of every loop variable (the lowered
  // loop's NextIteration reads each of its results).
  TFRUN_ASSIGN_OR_RETURN(const FunctionSignature body_signature, graph->functions->Signature(body_fn));
  if (body_signature.output_types.size() != n.inputs.size()) {
    return bad(fmt::format("While body '{}' returns {} values for {} loop variables", body_fn,
                           body_signature.output_types.size(), n.inputs.size()));
  }
  const std::string device = n.requested_device_text;
  const std::vector<std::string> input_types = graph->PropertiesOf(n)->input_types;  // a copy, as `n` is
  auto is_resource = [&](size_t i) { return input_types[i] == "RESOURCE"; };
  auto spec = [&](std::string op, std::string name, std::string on) {
    NodeSpec s = ReplacementSpec(n, std::move(op), std::move(name));
    s.device = std::move(on);
    return s;
  };
  const std::string cond_name = graph->NewName(n.name + "/cond");
  const std::string body_name = graph->NewName(n.name + "/body");

  std::vector<int> enters;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const NodeOutput src = n.input(i);
    NodeSpec enter = spec("Enter", graph->NewName(n.name + "/enter"), graph->nodes[src.node].requested_device_text);
    enter.inputs = {src};
    enter.attrs["frame_name"] = StringAttr(n.name);
    enter.attrs["parallel_iterations"] = IntAttr(std::strtoll(parallel.c_str(), nullptr, 10));
    if (is_resource(i)) enter.attrs["is_constant"] = BoolAttr(true);
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(enter)));
    if (graph->nodes[src.node].pin == Node::Pin::kExact) CopyPin(graph, src.node, id);
    enters.push_back(id);
  }
  if (!n.control_inputs.empty()) {
    NodeSpec control = spec("NoOp", graph->NewName(n.name + "/LoopControlInputs"), device);
    control.control_inputs = n.control_inputs;
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(control)));
    for (int e : enters) graph->AddControlEdge(id, e);
  }
  std::vector<int> lowered(n.inputs.size(), -1);  // input i -> its Merge/Switch/Exit/NextIteration index
  std::vector<int> merges;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (is_resource(i)) continue;
    lowered[i] = static_cast<int>(merges.size());
    NodeSpec merge = spec("Merge", graph->NewName(n.name + "/merge"), graph->nodes[enters[i]].requested_device_text);
    merge.inputs = {{enters[i], 0}, {enters[i], 0}};
    merge.attrs["N"] = IntAttr(2);
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(merge)));
    CopyPin(graph, enters[i], id);
    merges.push_back(id);
  }
  if (merges.empty()) return bad("a While whose loop variables are all resources");
  NodeSpec cond_call = spec(cond_fn, cond_name, device);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    cond_call.inputs.push_back(is_resource(i) ? NodeOutput{enters[i], 0} : NodeOutput{merges[lowered[i]], 0});
  }
  cond_call.attrs["_lower_as_multi_device_function"] = BoolAttr(true);
  cond_call.control_inputs = {merges[0]};
  TFRUN_ASSIGN_OR_RETURN(const int cond_id, AddNode(graph, std::move(cond_call)));
  NodeSpec loop_cond = spec("LoopCond", graph->NewName(n.name + "/LoopCond"), device);
  loop_cond.inputs = {{cond_id, 0}};
  TFRUN_ASSIGN_OR_RETURN(const int loop_cond_id, AddNode(graph, std::move(loop_cond)));

  std::vector<int> switches;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (is_resource(i)) continue;
    const int merge = merges[lowered[i]];
    const std::string& input_name = graph->nodes[n.inputs[i]].name;
    NodeSpec sw = spec("Switch", graph->NewName(n.name + "/" + input_name + "_switch"),
                       graph->nodes[merge].requested_device_text);
    sw.inputs = {{merge, 0}, {loop_cond_id, 0}};
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(sw)));
    CopyPin(graph, merge, id);
    switches.push_back(id);
  }
  NodeSpec body_call = spec(body_fn, body_name, device);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    body_call.inputs.push_back(is_resource(i) ? NodeOutput{enters[i], 0} : NodeOutput{switches[lowered[i]], 1});
  }
  body_call.attrs["_lower_as_multi_device_function"] = BoolAttr(true);
  TFRUN_ASSIGN_OR_RETURN(const int body_id, AddNode(graph, std::move(body_call)));
  NodeSpec body_control = spec("Identity", graph->NewName(n.name + "/loop_body_control"), device);
  body_control.inputs = {{switches[0], 1}};
  TFRUN_ASSIGN_OR_RETURN(const int body_control_id, AddNode(graph, std::move(body_control)));
  graph->AddControlEdge(body_control_id, body_id);

  std::vector<int> exits;
  std::vector<NodeOutput> outputs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (is_resource(i)) {
      outputs.push_back(n.input(i));  // never read; the IdentityN needs one
      continue;
    }
    const int sw = switches[lowered[i]];
    NodeSpec exit = spec("Exit", graph->NewName(n.name + "/exit"), graph->nodes[sw].requested_device_text);
    exit.inputs = {{sw, 0}};
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(exit)));
    CopyPin(graph, sw, id);
    exits.push_back(id);
    outputs.push_back({id, 0});
  }
  NodeSpec executed = spec("NoOp", graph->NewName(n.name + "/LoopExecuted"), device);
  executed.control_inputs = exits;
  TFRUN_ASSIGN_OR_RETURN(const int executed_id, AddNode(graph, std::move(executed)));
  // (Its IdentityN waits for nothing; its NoOp for the loop.)
  NodeSpec kept = spec("", n.name, device);
  if (!keep_node_fetchable) kept.control_inputs = {executed_id};
  TFRUN_ASSIGN_OR_RETURN(const int kept_id, AddNameKeeper(graph, std::move(kept), outputs, keep_node_fetchable));

  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (is_resource(i)) continue;
    const int merge = merges[lowered[i]];
    NodeSpec next = spec("NextIteration", graph->NewName(n.name + "/next_iteration"),
                         graph->nodes[merge].requested_device_text);
    next.inputs = {{body_id, static_cast<int>(i)}};
    next.control_inputs = {body_id};
    TFRUN_ASSIGN_OR_RETURN(const int id, AddNode(graph, std::move(next)));
    CopyPin(graph, merge, id);
    graph->SetInput(merge, 1, {id, 0});
  }

  // Readers read the exits (a resource output: what entered); control
  // edges leave LoopExecuted.
  std::vector<NodeOutput> results;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    results.push_back(is_resource(i) ? n.input(i) : NodeOutput{exits[lowered[i]], 0});
  }
  RewireReaders(graph, while_id, results, executed_id, kept_id);
  graph->Remove(while_id);
  return Status::Ok();
}

// RewriteFunctionCallNode (lower_function_call_op.cc).
Status RewriteFunctionCallNode(Graph* graph, int id, const std::string& function, bool keep_caller_fetchable) {
  const Node& n = graph->nodes[id];
  InlineOptions options;
  options.keep_caller_fetchable = keep_caller_fetchable;
  const bool multi_device = n.op == "PartitionedCall" || n.op == "StatefulPartitionedCall" ||
                            BoolAttrIsTrue(*graph, n, "_lower_as_multi_device_function");
  options.placer = multi_device ? InlinedBodyPlacer::kMultiDevice : InlinedBodyPlacer::kSingleDevice;
  options.output_control_from_control_rets = multi_device;
  if (!graph->functions->Contains(function)) {
    return NodeError(*graph, n, fmt::format("the graph's library has no function '{}'", function));
  }
  // A native call's attrs bind a polymorphic function's (a PartitionedCall's
  // `f` keeps no attrs in tfrun's graph: its function must need none).
  const NodeProperties* props = graph->PropertiesOf(n);
  const NodeAttrs* call_attrs = n.op == function && props != nullptr ? &props->attrs : nullptr;
  StatusOr<FunctionBody> body = graph->functions->Instantiate(function, call_attrs);
  if (!body.ok()) return body.status();
  // TensorFlow leaves a call it may not inline as it is.
  if (!WhyNotInlined(*graph, n, function, *body).empty()) return Status::Ok();
  return InlineFunctionBody(graph, id, *body, options);
}

}  // namespace

Status LowerFunctionalOpsPass(PassContext& context) {
  Graph& graph = *context.graph;
  if (graph.functions == nullptr) return Status::Ok();
  // A function's graph (it has _Arg or _Retval nodes) keeps NoOps where a
  // Session's keeps fetchable IdentityN nodes.
  const bool keep_fetchable = std::none_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& node) {
    return node.op == "_Arg" || node.op == "_Retval";
  });
  // The functions each inlined node came from, innermost first: a call of
  // a function already on its node's stack would be inlined forever.
  struct CallStack {
    std::string function;
    std::shared_ptr<const CallStack> outer;
  };
  std::vector<std::shared_ptr<const CallStack>> stacks;
  size_t name_bytes = 0, named = 0;  // the bytes of the names of nodes [0, named)
  for (size_t i = 0; i < graph.nodes.size(); ++i) {  // grows as nodes are lowered
    if (graph.nodes.size() > kMaxNodesAfterLowering) {
      return BadInput(fmt::format("{}: lowering and inlining functions made more than {} nodes", graph.path,
                                  kMaxNodesAfterLowering));
    }
    for (; named < graph.nodes.size(); ++named) name_bytes += graph.nodes[named].name.size();
    if (name_bytes > kMaxNameBytesAfterLowering) {
      return BadInput(fmt::format("{}: lowering and inlining functions made more than {} MiB of node names (each "
                                  "inlined node is named after its caller: calls nested too deep)",
                                  graph.path, kMaxNameBytesAfterLowering >> 20));
    }
    const Node& n = graph.nodes[i];
    if (n.removed) continue;
    if (StringAttrIsSet(graph, n, "_tpu_replicate") || StringAttrIsSet(graph, n, "_xla_compile_id")) continue;
    const std::string function = CalledFunction(graph, n);
    if (!function.empty() &&
        (context.do_function_inlining || BoolAttrIsTrue(graph, n, "_lower_as_multi_device_function"))) {
      std::shared_ptr<const CallStack> stack = i < stacks.size() ? stacks[i] : nullptr;
      for (const CallStack* s = stack.get(); s != nullptr; s = s->outer.get()) {
        if (s->function == function) {
          return NodeError(graph, n, fmt::format("function '{}' calls itself: inlining it would never end", function));
        }
      }
      const size_t before = graph.nodes.size();
      TFRUN_RETURN_IF_ERROR(RewriteFunctionCallNode(&graph, static_cast<int>(i), function, keep_fetchable));
      stacks.resize(graph.nodes.size());
      auto inner = std::make_shared<const CallStack>(CallStack{function, stack});
      for (size_t k = before; k < graph.nodes.size(); ++k) stacks[k] = inner;
      continue;
    }
    if (!BoolAttrIsTrue(graph, n, "_lower_using_switch_merge")) continue;
    if (n.op == "If" || n.op == "StatelessIf") {
      // The branch calls it makes inherit its stack.
      std::shared_ptr<const CallStack> stack = i < stacks.size() ? stacks[i] : nullptr;
      const size_t before = graph.nodes.size();
      TFRUN_RETURN_IF_ERROR(RewriteIfNode(&graph, static_cast<int>(i), keep_fetchable));
      stacks.resize(graph.nodes.size());
      for (size_t k = before; k < graph.nodes.size(); ++k) stacks[k] = stack;
    } else if (n.op == "Case" || n.op == "StatelessCase") {
      std::shared_ptr<const CallStack> stack = i < stacks.size() ? stacks[i] : nullptr;
      const size_t before = graph.nodes.size();
      TFRUN_RETURN_IF_ERROR(RewriteCaseNode(&graph, static_cast<int>(i), keep_fetchable));
      stacks.resize(graph.nodes.size());
      for (size_t k = before; k < graph.nodes.size(); ++k) stacks[k] = stack;
    } else if (n.op == "While" || n.op == "StatelessWhile") {
      std::shared_ptr<const CallStack> stack = i < stacks.size() ? stacks[i] : nullptr;
      const size_t before = graph.nodes.size();
      TFRUN_RETURN_IF_ERROR(RewriteWhileNode(&graph, static_cast<int>(i), keep_fetchable));
      stacks.resize(graph.nodes.size());
      for (size_t k = before; k < graph.nodes.size(); ++k) stacks[k] = stack;
    } else {
      return NodeError(graph, n, fmt::format("{} with _lower_using_switch_merge is not lowered yet", n.op));
    }
  }
  return Status::Ok();
}

}  // namespace tfrun
