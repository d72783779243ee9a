// libfusebox_torch_peer.so: see peer.h. One small translation unit; libtorch
// headers compile slowly.
#include <ATen/DLConvertor.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cstdio>
#include <cstring>
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

// PyTorch prints a node without outputs as its indentation, then ` = `
// (an empty output list joined to the rest), then the node:
// `   = prim::If(%c)` inside a block indented by two; fusebox prints it the
// same way. PyTorch's IR parser reads such a statement only without the
// `= ` and at its block's indentation: the line loses ` = `.
std::string parseable_text(const char *ir_text) {
  std::string out;
  const char *p = ir_text;
  while (*p) {
    const char *e = std::strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) + 1 : std::strlen(p);
    size_t ws = 0;
    while (ws < n && (p[ws] == ' ' || p[ws] == '\t')) ws++;
    if (ws >= 1 && ws + 1 < n && p[ws] == '=' && p[ws + 1] == ' ') {
      out.append(p, ws - 1);
      out.append(p + ws + 2, n - ws - 2);
    } else {
      out.append(p, n);
    }
    p += n;
  }
  return out;
}

}  // namespace

FBXTP_EXPORT int fbxtp_abi_version(void) { return FBXTP_ABI_VERSION; }

FBXTP_EXPORT fbxtp_graph *fbxtp_create(const char *ir_text, char *err, size_t errlen) {
  try {
    auto p = std::make_unique<fbxtp_graph>();
    p->graph = std::make_shared<torch::jit::Graph>();
    torch::jit::parseIR(parseable_text(ir_text), p->graph.get());
    p->exec = std::make_unique<torch::jit::GraphExecutor>(p->graph, "fusebox_peer");
    return p.release();
  } catch (const std::exception &e) {
    set_err(err, errlen, std::string("PyTorch cannot parse the graph: ") + e.what());
    return nullptr;
  }
}

namespace {

void free_values(const fbxtp_value *v, int from, int to) {
  for (int k = from; k < to; k++)
    if (v[k].kind == FBXTP_TENSOR && v[k].tensor && v[k].tensor->deleter) v[k].tensor->deleter(v[k].tensor);
}

c10::IValue to_ivalue(const fbxtp_value &v) {
  switch (v.kind) {
    case FBXTP_TENSOR: return from_dl(v.tensor);
    case FBXTP_INT: return (int64_t)v.i;
    case FBXTP_FLOAT: return v.f;
    case FBXTP_BOOL: return v.i != 0;
    default: return c10::IValue();
  }
}

void flat_tensors(const c10::IValue &v, std::vector<c10::IValue> &out) {
  if (v.isTuple()) {
    for (const c10::IValue &e : v.toTupleRef().elements()) flat_tensors(e, out);
  } else if (v.isList()) {
    for (const c10::IValue &e : v.toListRef()) flat_tensors(e, out);
  } else {
    out.push_back(v);
  }
}

// Run (and with gin, backward); the body of fbxtp_run and fbxtp_run_grad.
int run(fbxtp_graph *g, const fbxtp_value *in, int nin, const fbxtp_value *gout, int ngout, fbxtp_value *out,
        int cap, int *nout, fbxtp_value *gin, char *err, size_t errlen) {
  *nout = 0;
  torch::jit::Stack stack;
  int i = 0, n = 0, gi = 0;
  std::vector<c10::IValue> gvals;
  try {
    for (; gout && gi < ngout; gi++) gvals.push_back(to_ivalue(gout[gi]));
    if ((size_t)nin != g->graph->inputs().size())
      throw std::runtime_error("the graph has " + std::to_string(g->graph->inputs().size()) + " inputs, " +
                               std::to_string(nin) + " given");
    std::vector<at::Tensor> leaves;
    std::vector<int> leaf_of;
    for (; i < nin; i++) {
      c10::IValue v = to_ivalue(in[i]);
      if (gin && v.isTensor() && v.toTensor().is_floating_point()) {
        at::Tensor t = v.toTensor().detach().requires_grad_(true);
        leaves.push_back(t);
        leaf_of.push_back(i);
        v = t;
      }
      stack.emplace_back(std::move(v));
    }
    g->exec->run(stack);
    if (gin) {
      for (int k = 0; k < nin; k++) gin[k] = fbxtp_value{FBXTP_NONE, nullptr, 0, 0.0};
      std::vector<c10::IValue> flat;
      for (const c10::IValue &v : stack) flat_tensors(v, flat);
      if ((int)flat.size() != ngout)
        throw std::runtime_error(std::to_string(flat.size()) + " outputs, " + std::to_string(ngout) +
                                 " output gradients");
      std::vector<at::Tensor> outs, grads;
      for (size_t k = 0; k < flat.size(); k++)
        if (flat[k].isTensor() && flat[k].toTensor().requires_grad() && gvals[k].isTensor()) {
          outs.push_back(flat[k].toTensor());
          grads.push_back(gvals[k].toTensor());
        }
      if (!outs.empty() && !leaves.empty()) {
        std::vector<at::Tensor> r = torch::autograd::grad(outs, leaves, grads, false, false, true);
        for (size_t k = 0; k < r.size(); k++)
          if (r[k].defined()) {
            gin[leaf_of[k]].kind = FBXTP_TENSOR;
            gin[leaf_of[k]].tensor = at::toDLPack(r[k]);
          }
      }
      for (c10::IValue &v : stack)
        if (v.isTensor()) v = v.toTensor().detach();
    }
    for (const c10::IValue &v : stack) flatten(v, out, cap, &n);
    if (n > cap) throw std::runtime_error(std::to_string(n) + " outputs, room for " + std::to_string(cap));
    *nout = n;
    return 0;
  } catch (const std::exception &e) {
    // Outputs and gradients already exported, and values not yet handed to PyTorch, are ours to free.
    free_values(out, 0, n < cap ? n : cap);
    if (gin) free_values(gin, 0, nin);
    if (gin)
      for (int k = 0; k < nin; k++) gin[k].kind = FBXTP_NONE;
    free_values(in, i, nin);
    if (gout) free_values(gout, gi, ngout);
    set_err(err, errlen, std::string("PyTorch's run failed: ") + e.what());
    return -1;
  }
}

}  // namespace

FBXTP_EXPORT int fbxtp_run(fbxtp_graph *g, const fbxtp_value *in, int nin, fbxtp_value *out, int cap, int *nout,
                           char *err, size_t errlen) {
  return run(g, in, nin, nullptr, 0, out, cap, nout, nullptr, err, errlen);
}

FBXTP_EXPORT int fbxtp_run_grad(fbxtp_graph *g, const fbxtp_value *in, int nin, const fbxtp_value *gout, int ngout,
                                fbxtp_value *out, int cap, int *nout, fbxtp_value *gin, char *err, size_t errlen) {
  return run(g, in, nin, gout, ngout, out, cap, nout, gin, err, errlen);
}

FBXTP_EXPORT void fbxtp_destroy(fbxtp_graph *g) { delete g; }
