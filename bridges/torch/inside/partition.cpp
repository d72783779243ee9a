/* The graph pass: puts each region of ops that fusebox runs into a fusebox::FusionGroup.
 *
 * Registered (group.cpp) as a TorchScript custom post-fusion pass. PyTorch 1.13's profiling
 * executor runs those passes in runNoGradOptimizations, on graphs whose values carry the
 * profiled tensor types (after RemoveProfileNodesAndSpecializeTypes, before
 * RemoveTensorTypeSpecializations): the whole graph when no gradient is needed, and, in
 * training, the forward graph of every prim::DifferentiableGraph (its own executor runs it
 * with detached inputs, like an autograd.Function's forward). So a fusion group never sits
 * where autograd has to see through it; see README.md, "Training".
 *
 * The regions are grown by PyTorch's own GraphFuser (CustomFuseGraph: producer into
 * consumer, alias-safe moves, nested blocks) with a predicate that asks fusebox's op table:
 * a node qualifies when its graph of one node (tensor inputs typed as profiled, constant
 * inputs cloned) is accepted by fbx_graph_parse + fbx_executor_create. Each finished group's
 * subgraph is then checked the same way as a whole, and groups that are too small or that
 * fusebox refuses are inlined back.
 */
#include "fbt.h"

#include <fusebox/fusebox.h>
#include <torch/csrc/jit/passes/graph_fuser.h>
#include <torch/csrc/jit/passes/utils/subgraph_utils.h>

#include <cstdio>
#include <mutex>
#include <sstream>
#include <unordered_map>

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

namespace fbt {

c10::Symbol fusion_group_kind() {
  static const c10::Symbol kind = c10::Symbol::fromQualString("fusebox::FusionGroup");
  return kind;
}

std::string fusebox_accepts(const std::string &text) {
  fbx_graph *g = nullptr;
  fbx_executor *ex = nullptr;
  fbx_status *st = fbx_graph_parse(&g, text.data(), text.size(), "fusebox_torch");
  if (!st) {
    fbx_executor_opts opts{};
    opts.struct_size = sizeof opts;
    opts.fuser = "none";
    st = fbx_executor_create(&ex, g, &opts);
  }
  std::string msg = st ? fbx_status_message(st) : "";
  fbx_status_free(st);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  return msg;
}

namespace {

bool dtype_ok(c10::ScalarType s) {
  switch (s) {
  case c10::kFloat: case c10::kDouble: case c10::kHalf: case c10::kBFloat16: case c10::kBool:
  case c10::kByte: case c10::kChar: case c10::kShort: case c10::kInt: case c10::kLong:
    return true;
  default:
    return false;
  }
}

/* A tensor value with its profiled type complete (dtype, sizes, strides), on the CPU, not
 * requiring grad: what the group's guard checks and fusebox specializes on. */
bool profiled_tensor(const Value *v) {
  auto tt = v->type()->cast<c10::TensorType>();
  if (!tt || !tt->isComplete() || !tt->device()->is_cpu() || !dtype_ok(*tt->scalarType())) return false;
  return tt->requiresGrad().has_value() && !*tt->requiresGrad();
}

bool is_tensor_value(const Value *v) { return v->type()->cast<c10::TensorType>() != nullptr; }

/* The one-node graph of n, as text, and a key for the answer's cache. */
std::string one_node_graph(Node *n, std::string *key) {
  auto g = std::make_shared<Graph>();
  std::unordered_map<Value *, Value *> env;
  std::ostringstream k;
  k << n->schema();
  for (Value *in : n->inputs()) {
    if (env.count(in)) continue;
    if (in->node()->kind() == c10::prim::Constant) {
      Node *c = g->createClone(in->node(), [](Value *v) { return v; });
      g->insertNode(c);
      env[in] = c->output();
      k << "|C";
    } else {
      Value *gi = g->addInput();
      gi->setType(in->type());
      env[in] = gi;
      auto tt = in->type()->cast<c10::TensorType>();
      k << "|" << (tt ? c10::toString(*tt->scalarType()) : in->type()->str());
    }
  }
  Node *c = g->createClone(n, [&](Value *v) { return env.at(v); });
  g->insertNode(c);
  for (Value *o : c->outputs()) g->registerOutput(o);
  *key = k.str();
  return g->toString(false);
}

bool fusebox_runs_node(Node *n) {
  static std::mutex mu;
  static std::unordered_map<std::string, bool> cache;
  std::string key;
  std::string text = one_node_graph(n, &key);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::string err = fusebox_accepts(text);
  if (log_enabled() && !err.empty())
    fprintf(stderr, "[fusebox_torch] not fused: %s (%s)\n", n->kind().toQualString(), err.c_str());
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = err.empty();
  return err.empty();
}

/* The predicate CustomFuseGraph asks of every candidate node. */
bool fusible(Node *n) {
  if (n->kind() == fusion_group_kind()) return true;
  if (!n->kind().is_aten() || !n->blocks().empty() || n->isNondeterministic()) return false;
  const c10::FunctionSchema *schema = n->maybeSchema();
  if (!schema || schema->is_mutable() || schema->is_vararg()) return false;
  /* Views and anything whose result may alias an input stay PyTorch's: a group's outputs
   * are fresh tensors. */
  for (const auto &r : schema->returns())
    if (r.alias_info()) return false;
  for (const Value *o : n->outputs())
    if (!profiled_tensor(o)) return false;
  for (const Value *in : n->inputs()) {
    if (is_tensor_value(in)) {
      if (!profiled_tensor(in)) return false;
    } else if (in->node()->kind() != c10::prim::Constant && !in->type()->isSubtypeOf(*c10::FloatType::get())) {
      return false; /* GraphFuser passes only tensors and floats into a group */
    }
  }
  return fusebox_runs_node(n);
}

int real_nodes(const Graph &g) {
  int n = 0;
  for (const Node *node : g.nodes())
    if (node->kind() != c10::prim::Constant) n++;
  return n;
}

/* Keep the groups fusebox takes and that are worth a call; inline the others back. */
void check_groups(torch::jit::Block *b) {
  std::vector<Node *> groups;
  for (Node *n : b->nodes()) {
    for (torch::jit::Block *sub : n->blocks()) check_groups(sub);
    if (n->kind() == fusion_group_kind()) groups.push_back(n);
  }
  for (Node *n : groups) {
    const Graph &sub = *n->g(c10::attr::Subgraph);
    std::string why;
    if (real_nodes(sub) < min_group_size()) {
      why = "fewer than " + std::to_string(min_group_size()) + " ops";
    } else {
      for (const Value *v : sub.inputs())
        if (is_tensor_value(v) && !profiled_tensor(v)) why = "an input without a profiled type";
      if (why.empty()) why = fusebox_accepts(sub.toString(false));
    }
    if (!why.empty()) {
      if (log_enabled()) fprintf(stderr, "[fusebox_torch] group of %d ops inlined: %s\n", real_nodes(sub), why.c_str());
      torch::jit::SubgraphUtils::unmergeSubgraph(n);
    } else if (log_enabled()) {
      fprintf(stderr, "[fusebox_torch] fusion group:\n%s", sub.toString(false).c_str());
    }
  }
}

} // namespace

void fuse_graph(std::shared_ptr<Graph> &g) {
  if (!pass_enabled()) return;
  torch::jit::CustomFuseGraph(g, fusible, fusion_group_kind());
  check_groups(g->block());
}

} // namespace fbt
