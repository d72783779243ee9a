// libfusebox_torch_peer.so: see peer.h. One small translation unit; libtorch
// headers compile slowly.
#include <ATen/DLConvertor.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cstdio>
#include <memory>
#include <string>

#include "peer.h"

#define FBXTP_EXPORT extern "C" __attribute__((visibility("default")))

struct fbxtp_graph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::unique_ptr<torch::jit::GraphExecutor> exec;
};

namespace {

constexpr uint8_t kDLBoolCode = 6;  // DLPack >= 0.8; torch 1.13 ships 0.6

// One line: newlines become " | ", and a c10::Error's C++ backtrace (after
// "Exception raised from") is dropped.
void set_err(char *err, size_t errlen, const std::string &msg) {
  if (!err || !errlen) return;
  std::string m = msg.substr(0, msg.find("Exception raised from")), o;
  for (char c : m) {
    if (c != '\n') o.push_back(c);
    else if (!o.empty() && o.compare(o.size() - 3 > o.size() ? 0 : o.size() - 3, 3, " | ") != 0) o += " | ";
  }
  while (o.size() >= 3 && o.compare(o.size() - 3, 3, " | ") == 0) o.resize(o.size() - 3);
  std::snprintf(err, errlen, "%s", o.c_str());
}

at::Tensor from_dl(DLManagedTensor *m) {
  bool is_bool = m->dl_tensor.dtype.code == kDLBoolCode && m->dl_tensor.dtype.bits == 8;
  if (is_bool) m->dl_tensor.dtype.code = kDLUInt;
  at::Tensor t = at::fromDLPack(m);
  return is_bool ? t.to(at::kBool) : t;
}

void flatten(const c10::IValue &v, fbxtp_value *out, int cap, int *n) {
  if (v.isTuple()) {
    for (const c10::IValue &e : v.toTupleRef().elements()) flatten(e, out, cap, n);
    return;
  }
  if (v.isList()) {
    for (const c10::IValue &e : v.toListRef()) flatten(e, out, cap, n);
    return;
  }
  if (*n >= cap) {
    (*n)++;
    return;
  }
  fbxtp_value &o = out[(*n)++];
  o = fbxtp_value{FBXTP_NONE, nullptr, 0, 0.0};
  if (v.isTensor()) {
    at::Tensor t = v.toTensor();
    bool is_bool = t.scalar_type() == at::kBool;
    o.tensor = at::toDLPack(t);
    if (is_bool) o.tensor->dl_tensor.dtype.code = kDLBoolCode;
    o.kind = FBXTP_TENSOR;
  } else if (v.isInt()) {
    o.kind = FBXTP_INT;
    o.i = v.toInt();
  } else if (v.isDouble()) {
    o.kind = FBXTP_FLOAT;
    o.f = v.toDouble();
  } else if (v.isBool()) {
    o.kind = FBXTP_BOOL;
    o.i = v.toBool();
  } else if (!v.isNone()) {
    throw std::runtime_error("an output of type " + v.tagKind() + " has no fusebox form");
  }
}

}  // namespace

FBXTP_EXPORT int fbxtp_abi_version(void) { return FBXTP_ABI_VERSION; }

FBXTP_EXPORT fbxtp_graph *fbxtp_create(const char *ir_text, char *err, size_t errlen) {
  try {
    auto p = std::make_unique<fbxtp_graph>();
    p->graph = std::make_shared<torch::jit::Graph>();
    torch::jit::parseIR(ir_text, p->graph.get());
    p->exec = std::make_unique<torch::jit::GraphExecutor>(p->graph, "fusebox_peer");
    return p.release();
  } catch (const std::exception &e) {
    set_err(err, errlen, std::string("PyTorch cannot parse the graph: ") + e.what());
    return nullptr;
  }
}

FBXTP_EXPORT int fbxtp_run(fbxtp_graph *g, const fbxtp_value *in, int nin, fbxtp_value *out, int cap, int *nout,
                           char *err, size_t errlen) {
  *nout = 0;
  torch::jit::Stack stack;
  int i = 0, n = 0;
  try {
    if ((size_t)nin != g->graph->inputs().size())
      throw std::runtime_error("the graph has " + std::to_string(g->graph->inputs().size()) + " inputs, " +
                               std::to_string(nin) + " given");
    for (; i < nin; i++) {
      switch (in[i].kind) {
        case FBXTP_TENSOR: stack.emplace_back(from_dl(in[i].tensor)); break;
        case FBXTP_INT: stack.emplace_back((int64_t)in[i].i); break;
        case FBXTP_FLOAT: stack.emplace_back(in[i].f); break;
        case FBXTP_BOOL: stack.emplace_back(in[i].i != 0); break;
        default: stack.emplace_back(c10::IValue()); break;
      }
    }
    g->exec->run(stack);
    for (const c10::IValue &v : stack) flatten(v, out, cap, &n);
    if (n > cap) throw std::runtime_error(std::to_string(n) + " outputs, room for " + std::to_string(cap));
    *nout = n;
    return 0;
  } catch (const std::exception &e) {
    // Outputs already exported, and inputs not yet handed to PyTorch, are ours to free.
    for (int k = 0; k < n && k < cap; k++)
      if (out[k].kind == FBXTP_TENSOR && out[k].tensor->deleter) out[k].tensor->deleter(out[k].tensor);
    for (; i < nin; i++)
      if (in[i].kind == FBXTP_TENSOR && in[i].tensor && in[i].tensor->deleter) in[i].tensor->deleter(in[i].tensor);
    set_err(err, errlen, std::string("PyTorch's run failed: ") + e.what());
    return -1;
  }
}

FBXTP_EXPORT void fbxtp_destroy(fbxtp_graph *g) { delete g; }
