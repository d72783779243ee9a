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
#include <ATen/ATen.h>
#include <torch/csrc/jit/passes/graph_fuser.h>
#include <torch/csrc/jit/passes/utils/subgraph_utils.h>

#include <cstdio>
#include <algorithm>
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

std::string fusebox_accepts(const std::string &text, const std::vector<c10::IValue> *inputs) {
  fbx_graph *g = nullptr;
  fbx_executor *ex = nullptr;
  fbx_status *st = fbx_graph_parse(&g, text.data(), text.size(), "fusebox_torch");
  if (!st) {
    fbx_executor_opts opts{};
    opts.struct_size = sizeof opts;
    opts.fuser = "none";
    st = fbx_executor_create(&ex, g, &opts);
  }
  if (!st && inputs) {
    std::vector<DLManagedTensor *> in, out(static_cast<size_t>(fbx_executor_num_outputs(ex)), nullptr);
    for (const c10::IValue &v : *inputs) in.push_back(v.isTensor() ? to_dlpack(v.toTensor()) : nullptr);
    st = fbx_executor_run(ex, in.data(), static_cast<int>(in.size()), out.data(), static_cast<int>(out.size()));
    for (DLManagedTensor *m : in)
      if (m) m->deleter(m);
    for (DLManagedTensor *m : out)
      if (m) m->deleter(m);
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

/* The answer cache's key for n: its schema and how each input comes (constant, or its dtype). */
std::string support_key(Node *n) {
  std::ostringstream k;
  k << n->schema();
  for (Value *in : n->inputs()) {
    auto tt = in->type()->cast<c10::TensorType>();
    if (in->node()->kind() == c10::prim::Constant) k << "|C";
    else k << "|" << (tt ? c10::toString(*tt->scalarType()) : in->type()->str());
  }
  return k.str();
}

/* The one-node graph of n as text (tensor inputs typed as profiled, constants cloned), and
 * zeros of its inputs' profiled types. */
std::string one_node_graph(Node *n, std::vector<c10::IValue> *zeros) {
  auto g = std::make_shared<Graph>();
  std::unordered_map<Value *, Value *> env;
  for (Value *in : n->inputs()) {
    if (env.count(in)) continue;
    if (in->node()->kind() == c10::prim::Constant) {
      Node *c = g->createClone(in->node(), [](Value *v) { return v; });
      g->insertNode(c);
      env[in] = c->output();
      continue;
    }
    Value *gi = g->addInput();
    gi->setType(in->type());
    env[in] = gi;
    if (auto tt = in->type()->cast<c10::TensorType>())
      zeros->push_back(at::zeros(*tt->sizes().concrete_sizes(), at::TensorOptions().dtype(*tt->scalarType())));
    else
      zeros->push_back(at::scalar_tensor(0.0, at::kDouble)); /* a float: fusebox takes a 0-d tensor */
  }
  Node *c = g->createClone(n, [&](Value *v) { return env.at(v); });
  g->insertNode(c);
  for (Value *o : c->outputs()) g->registerOutput(o);
  return g->toString(false);
}

bool fusebox_runs_node(Node *n) {
  static std::mutex mu;
  static std::unordered_map<std::string, bool> cache;
  const std::string key = support_key(n);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::vector<c10::IValue> zeros;
  std::string err = fusebox_accepts(one_node_graph(n, &zeros), &zeros);
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
  if (n->outputs().size() != 1) return false; /* GraphFuser merges single-output producers only */
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

/* GraphFuser writes some fused forms with prims of PyTorch's legacy fuser: a concat it
 * absorbed as prim::FusedConcat, chunks as prim::ConstantChunk / prim::BroadcastingChunk.
 * Inside a fusebox group they are written back as the aten ops they stand for, which both
 * fusebox and PyTorch's interpreter (the fallback) run. */
void lower_fuser_prims(Graph &g) {
  auto chunk = [&](Value *x, int64_t chunks, int64_t dim, at::ArrayRef<Value *> outs) {
    Node *c = g.insertNode(g.create(c10::aten::chunk, {x, g.insertConstant(chunks), g.insertConstant(dim)}));
    c->output()->setType(c10::ListType::ofTensors());
    Node *u = g.insertNode(g.createListUnpack(c->output(), outs.size()));
    for (size_t i = 0; i < outs.size(); i++) {
      u->output(i)->setType(outs[i]->type());
      outs[i]->replaceAllUsesWith(u->output(i));
    }
  };
  for (auto it = g.nodes().begin(); it != g.nodes().end();) {
    Node *n = *it++;
    torch::jit::WithInsertPoint at(n);
    if (n->kind() == c10::prim::FusedConcat) {
      Value *list = g.insertNode(g.createList(c10::TensorType::get(), n->inputs()))->output();
      Node *cat = g.insertNode(g.create(c10::aten::cat, {list, g.insertConstant(n->i(c10::attr::dim))}));
      cat->output()->setType(n->output()->type());
      n->output()->replaceAllUsesWith(cat->output());
    } else if (n->kind() == c10::prim::ConstantChunk) {
      chunk(n->input(0), n->i(c10::attr::chunks), n->i(c10::attr::dim), n->outputs());
    } else if (n->kind() == c10::prim::BroadcastingChunk) {
      const int64_t chunks = n->i(c10::attr::chunks);
      Value *list = g.insertNode(g.createList(c10::TensorType::get(), n->inputs()))->output();
      Node *b = g.insertNode(g.create(c10::aten::broadcast_tensors, {list}));
      b->output()->setType(c10::ListType::ofTensors());
      Node *u = g.insertNode(g.createListUnpack(b->output(), n->inputs().size()));
      for (size_t i = 0; i < n->inputs().size(); i++)
        chunk(u->output(i), chunks, n->i(c10::attr::dim), n->outputs().slice(i * chunks, chunks));
    } else {
      continue;
    }
    n->destroy();
  }
}

/* Nodes a group may hold: aten ops and the prims both fusebox and PyTorch run. */
bool plain_group(const Graph &g) {
  for (const Node *n : g.nodes()) {
    const c10::Symbol k = n->kind();
    if (!k.is_aten() && k != c10::prim::Constant && k != c10::prim::ListConstruct && k != c10::prim::ListUnpack)
      return false;
  }
  return true;
}

int real_nodes(const Graph &g) {
  int n = 0;
  for (const Node *node : g.nodes())
    if (node->kind() != c10::prim::Constant) n++;
  return n;
}

/* GraphFuser moves a chunk of a sum of broadcast operands in front of the sum (one
 * aten::broadcast_tensors, then a prim::ConstantChunk per operand) and gives the new values
 * the type of the chunk it replaced, which is wrong for the operands that were broadcast (a
 * bias chunk is 1-d, with stride 0 after the broadcast). Those types become the group's
 * guard, so they are computed again here from the profiled types of the operands. */
void retype_moved_chunks(torch::jit::Block *b) {
  for (Node *n : b->nodes()) {
    for (torch::jit::Block *sub : n->blocks()) retype_moved_chunks(sub);
    if (n->kind() == c10::prim::ListUnpack && n->input()->node()->kind() == c10::aten::broadcast_tensors &&
        n->input()->node()->input()->node()->kind() == c10::prim::ListConstruct) {
      Node *list = n->input()->node()->input()->node();
      std::vector<c10::TensorTypePtr> ts;
      size_t ndim = 0;
      for (Value *v : list->inputs()) {
        auto t = v->type()->cast<c10::TensorType>();
        if (!t || !t->isComplete()) break;
        ts.push_back(t);
        ndim = std::max(ndim, t->sizes().concrete_sizes()->size());
      }
      if (ts.size() != list->inputs().size() || ts.size() != n->outputs().size()) continue;
      std::vector<int64_t> shape(ndim, 1);
      for (auto &t : ts) {
        auto sz = *t->sizes().concrete_sizes();
        for (size_t j = 0; j < sz.size(); j++)
          if (sz[j] != 1) shape[ndim - sz.size() + j] = sz[j];
      }
      for (size_t i = 0; i < ts.size(); i++) {
        auto sz = *ts[i]->sizes().concrete_sizes();
        auto st = *ts[i]->strides().concrete_sizes();
        std::vector<int64_t> strides(ndim, 0);
        for (size_t d = 0; d < ndim; d++) {
          if (d < ndim - sz.size()) continue;
          size_t j = d - (ndim - sz.size());
          strides[d] = sz[j] == 1 && shape[d] != 1 ? 0 : st[j];
        }
        n->output(i)->setType(ts[i]->withSizesStrides(shape, strides));
      }
    } else if (n->kind() == c10::prim::ConstantChunk) {
      auto t = n->input()->type()->cast<c10::TensorType>();
      if (!t || !t->isComplete()) continue;
      auto sizes = *t->sizes().concrete_sizes();
      auto strides = *t->strides().concrete_sizes();
      int64_t dim = n->i(c10::attr::dim), chunks = n->i(c10::attr::chunks);
      if (dim < 0) dim += static_cast<int64_t>(sizes.size());
      if (dim < 0 || dim >= static_cast<int64_t>(sizes.size()) || chunks <= 0) continue;
      const int64_t len = sizes[dim], each = (len + chunks - 1) / chunks;
      for (size_t i = 0; i < n->outputs().size(); i++) {
        sizes[dim] = std::max<int64_t>(0, std::min(each, len - static_cast<int64_t>(i) * each));
        n->output(i)->setType(t->withSizesStrides(sizes, strides));
      }
    } else if (n->kind() == fusion_group_kind()) {
      Graph &sub = *n->g(c10::attr::Subgraph);
      for (size_t i = 0; i < n->inputs().size(); i++) {
        auto t = n->input(i)->type()->cast<c10::TensorType>();
        if (t && t->isComplete()) sub.inputs()[i]->setType(t);
      }
    }
  }
}

/* Keep the groups fusebox takes and that are worth a call; inline the others back. */
void check_groups(torch::jit::Block *b) {
  std::vector<Node *> groups;
  for (Node *n : b->nodes()) {
    for (torch::jit::Block *sub : n->blocks()) check_groups(sub);
    if (n->kind() == fusion_group_kind()) groups.push_back(n);
  }
  for (Node *n : groups) {
    Graph &sub = *n->g(c10::attr::Subgraph);
    lower_fuser_prims(sub);
    std::string why;
    if (!plain_group(sub)) {
      /* not inlined: the outer graph could not run what is inside either */
      if (log_enabled()) fprintf(stderr, "[fusebox_torch] group kept for PyTorch: holds a prim fusebox lacks\n");
      continue;
    }
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
  retype_moved_chunks(g->block());
  check_groups(g->block());
}

} // namespace fbt
