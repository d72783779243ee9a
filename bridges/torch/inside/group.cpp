/* The fusebox::FusionGroup operator and torch.ops.fusebox.*.
 *
 * A group node carries its subgraph with the profiled types of its inputs. Each run:
 *   1. guard: every tensor input must match its profiled type (dtype, device, sizes,
 *      strides, requires_grad under the current grad mode: TensorType::matchTensor, what
 *      PyTorch's own TypeCheck nodes use); otherwise PyTorch runs the subgraph itself;
 *   2. the group's executor for the current fuser (made on the first run with that fuser:
 *      the subgraph printed as TorchScript IR, fbx_graph_parse, fbx_executor_create) runs on
 *      PyTorch's tensors through DLPack, without copies in either direction;
 *   3. if fusebox fails (it refused the subgraph, or a run returned an error, or an output
 *      does not have the profiled dtype and sizes), the failure is reported once and PyTorch
 *      runs the subgraph: no result is lost.
 */
#include "fbt.h"

#include <ATen/ATen.h>
#include <fusebox/fusebox.h>
#include <torch/csrc/jit/passes/pass_manager.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/library.h>

#include <atomic>
#include <climits>
#include <dlfcn.h>
#include <sys/stat.h>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Stack;

namespace fbt {
namespace {

/* DLPack 0.6 has no bool code; fusebox uses 6 (kDLBool in later DLPack), as
 * FBX_DLPACK_BOOL_CODE in <fusebox/tensor.h> (a C-only header) says. */
constexpr uint8_t kBoolCode = 6;

std::atomic<bool> g_enabled{true};
std::mutex g_fuser_mu;
std::string g_fuser; /* empty: FUSEBOX_FUSER, else "none" */

std::string current_fuser() {
  std::lock_guard<std::mutex> lock(g_fuser_mu);
  if (!g_fuser.empty()) return g_fuser;
  const char *e = getenv("FUSEBOX_FUSER");
  return e && *e ? e : "none";
}

struct Counters {
  std::atomic<int64_t> fusebox_runs{0}, guard_fallbacks{0}, error_fallbacks{0}, executors{0}, refused{0};
} g_count;

/* ---- DLPack both ways, no copies ----------------------------------------------------- */

bool to_dl_dtype(c10::ScalarType s, DLDataType *d) {
  d->lanes = 1;
  switch (s) {
  case c10::kFloat: *d = DLDataType{static_cast<uint8_t>(kDLFloat), 32, 1}; return true;
  case c10::kDouble: *d = DLDataType{static_cast<uint8_t>(kDLFloat), 64, 1}; return true;
  case c10::kHalf: *d = DLDataType{static_cast<uint8_t>(kDLFloat), 16, 1}; return true;
  case c10::kBFloat16: *d = DLDataType{static_cast<uint8_t>(kDLBfloat), 16, 1}; return true;
  case c10::kBool: *d = DLDataType{kBoolCode, 8, 1}; return true;
  case c10::kByte: *d = DLDataType{static_cast<uint8_t>(kDLUInt), 8, 1}; return true;
  case c10::kChar: *d = DLDataType{static_cast<uint8_t>(kDLInt), 8, 1}; return true;
  case c10::kShort: *d = DLDataType{static_cast<uint8_t>(kDLInt), 16, 1}; return true;
  case c10::kInt: *d = DLDataType{static_cast<uint8_t>(kDLInt), 32, 1}; return true;
  case c10::kLong: *d = DLDataType{static_cast<uint8_t>(kDLInt), 64, 1}; return true;
  default: return false;
  }
}

bool from_dl_dtype(DLDataType d, c10::ScalarType *s) {
  if (d.lanes != 1) return false;
  if (d.code == kDLFloat) *s = d.bits == 32 ? c10::kFloat : d.bits == 64 ? c10::kDouble : d.bits == 16 ? c10::kHalf : c10::ScalarType::Undefined;
  else if (d.code == kDLBfloat && d.bits == 16) *s = c10::kBFloat16;
  else if (d.code == kBoolCode && d.bits == 8) *s = c10::kBool;
  else if (d.code == kDLUInt && d.bits == 8) *s = c10::kByte;
  else if (d.code == kDLInt)
    *s = d.bits == 8 ? c10::kChar : d.bits == 16 ? c10::kShort : d.bits == 32 ? c10::kInt : d.bits == 64 ? c10::kLong : c10::ScalarType::Undefined;
  else return false;
  return *s != c10::ScalarType::Undefined;
}

struct Borrowed {
  at::Tensor t;
  std::vector<int64_t> sizes, strides;
  DLManagedTensor m{};
};

} // namespace

DLManagedTensor *to_dlpack(const at::Tensor &t) {
  auto *b = new Borrowed;
  b->t = t;
  b->sizes = t.sizes().vec();
  b->strides = t.strides().vec();
  DLTensor &d = b->m.dl_tensor;
  if (!to_dl_dtype(t.scalar_type(), &d.dtype)) {
    delete b;
    return nullptr;
  }
  d.data = t.numel() ? t.data_ptr() : nullptr;
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int>(t.dim());
  d.shape = b->sizes.data();
  d.strides = b->strides.data();
  d.byte_offset = 0;
  b->m.manager_ctx = b;
  b->m.deleter = [](DLManagedTensor *m) { delete static_cast<Borrowed *>(m->manager_ctx); };
  return &b->m;
}

bool from_dlpack(DLManagedTensor *m, at::Tensor *out) {
  const DLTensor &d = m->dl_tensor;
  c10::ScalarType s;
  if (d.device.device_type != kDLCPU || !from_dl_dtype(d.dtype, &s)) return false;
  std::vector<int64_t> sizes(d.shape, d.shape + d.ndim), strides(d.ndim);
  if (d.strides) {
    strides.assign(d.strides, d.strides + d.ndim);
  } else {
    int64_t st = 1;
    for (int i = d.ndim - 1; i >= 0; i--) strides[i] = st, st *= sizes[i];
  }
  void *data = static_cast<char *>(d.data) + d.byte_offset;
  *out = at::from_blob(data, sizes, strides, [m](void *) { m->deleter(m); },
                       at::TensorOptions().dtype(s).device(at::kCPU));
  return true;
}

namespace {

/* ---- one fusion group ---------------------------------------------------------------- */

struct Group {
  std::shared_ptr<Graph> sub;
  std::string text;
  std::vector<c10::TensorTypePtr> in_types, out_types; /* null: not a tensor */
  size_t nin = 0, nout = 0;
  std::mutex mu;
  std::map<std::string, fbx_executor *> execs; /* per fuser; null: fusebox refused it */
  std::unique_ptr<torch::jit::Code> fallback;

  ~Group() {
    for (auto &e : execs) fbx_executor_destroy(e.second);
  }

  fbx_executor *executor_for(const std::string &fuser) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = execs.find(fuser);
    if (it != execs.end()) return it->second;
    fbx_graph *g = nullptr;
    fbx_executor *ex = nullptr;
    fbx_status *st = fbx_graph_parse(&g, text.data(), text.size(), "fusebox::FusionGroup");
    if (!st) {
      fbx_executor_opts opts{};
      opts.struct_size = sizeof opts;
      opts.fuser = fuser.c_str();
      st = fbx_executor_create(&ex, g, &opts);
    }
    fbx_graph_destroy(g);
    if (st) {
      TORCH_WARN("fusebox::FusionGroup: fusebox (fuser ", fuser, ") refused a group; PyTorch runs it: ",
                 fbx_status_message(st));
      fbx_status_free(st);
      g_count.refused++;
    } else {
      g_count.executors++;
    }
    execs[fuser] = ex;
    return ex;
  }

  void disable(const std::string &fuser, const std::string &why) {
    std::lock_guard<std::mutex> lock(mu);
    TORCH_WARN("fusebox::FusionGroup: fusebox (fuser ", fuser, ") failed on a group; PyTorch runs it from now on: ",
               why);
    auto it = execs.find(fuser);
    if (it != execs.end() && it->second) {
      fbx_executor_destroy(it->second);
      it->second = nullptr;
    }
  }

  bool guard(const std::vector<c10::IValue> &args) const {
    for (size_t i = 0; i < nin; i++) {
      if (!in_types[i]) continue;
      if (!args[i].isTensor() || !in_types[i]->matchTensor(args[i].toTensor())) return false;
    }
    return true;
  }

  /* Runs fusebox; false with *why on failure (nothing pushed). */
  bool run_fusebox(fbx_executor *ex, const std::vector<c10::IValue> &args, std::vector<at::Tensor> *outs,
                   std::string *why) const {
    std::vector<DLManagedTensor *> in(nin, nullptr), out(nout, nullptr);
    bool ok = true;
    for (size_t i = 0; i < nin && ok; i++) {
      const c10::IValue &v = args[i];
      at::Tensor t;
      if (v.isTensor()) t = v.toTensor();
      else if (v.isDouble()) t = at::scalar_tensor(v.toDouble(), at::kDouble);
      else if (v.isInt()) t = at::scalar_tensor(v.toInt(), at::kLong);
      else if (v.isBool()) t = at::scalar_tensor(v.toBool(), at::kBool);
      else if (v.isNone()) continue;
      else { *why = "input " + std::to_string(i) + " is a " + v.tagKind(); ok = false; break; }
      in[i] = to_dlpack(t);
      if (!in[i]) { *why = "input " + std::to_string(i) + " has a dtype DLPack cannot carry"; ok = false; }
    }
    fbx_status *st = nullptr;
    if (ok) st = fbx_executor_run(ex, in.data(), static_cast<int>(nin), out.data(), static_cast<int>(nout));
    for (DLManagedTensor *m : in)
      if (m) m->deleter(m);
    if (st) {
      *why = fbx_status_message(st);
      fbx_status_free(st);
      ok = false;
    }
    for (size_t i = 0; i < nout; i++) {
      if (!out[i]) continue;
      at::Tensor t;
      if (!ok || !from_dlpack(out[i], &t)) {
        if (ok) *why = "output " + std::to_string(i) + " came back with an unknown dtype or device";
        out[i]->deleter(out[i]);
        ok = false;
        continue;
      }
      const auto &want = out_types[i];
      if (want && (t.scalar_type() != *want->scalarType() || t.sizes() != *want->sizes().concrete_sizes())) {
        std::ostringstream o;
        o << "output " << i << " is " << t.scalar_type() << t.sizes() << ", PyTorch's profile says " << *want;
        *why = o.str();
        ok = false;
      }
      outs->push_back(std::move(t));
    }
    if (!ok) outs->clear();
    return ok;
  }

  void run_pytorch(Stack &stack) {
    torch::jit::Code *code;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!fallback) fallback = std::make_unique<torch::jit::Code>(sub->copy(), "fusebox_fallback");
      code = fallback.get();
    }
    torch::jit::InterpreterState(*code).run(stack);
  }

  void run(Stack &stack) {
    std::vector<c10::IValue> args(stack.end() - static_cast<std::ptrdiff_t>(nin), stack.end());
    if (!guard(args)) {
      g_count.guard_fallbacks++;
      run_pytorch(stack);
      return;
    }
    std::string fuser = current_fuser();
    if (fbx_executor *ex = executor_for(fuser)) {
      std::vector<at::Tensor> outs;
      std::string why;
      if (run_fusebox(ex, args, &outs, &why)) {
        torch::jit::drop(stack, nin);
        for (auto &t : outs) stack.emplace_back(std::move(t));
        g_count.fusebox_runs++;
        return;
      }
      disable(fuser, why);
    }
    g_count.error_fallbacks++;
    run_pytorch(stack);
  }
};

std::mutex g_groups_mu;
std::vector<std::weak_ptr<Group>> g_groups;

torch::jit::Operation make_group_op(const Node *node) {
  auto g = std::make_shared<Group>();
  g->sub = node->g(c10::attr::Subgraph);
  g->text = g->sub->toString(false);
  g->nin = g->sub->inputs().size();
  g->nout = g->sub->outputs().size();
  for (const auto *v : g->sub->inputs()) g->in_types.push_back(v->type()->cast<c10::TensorType>());
  for (const auto *v : g->sub->outputs()) g->out_types.push_back(v->type()->cast<c10::TensorType>());
  {
    std::lock_guard<std::mutex> lock(g_groups_mu);
    g_groups.push_back(g);
  }
  return [g](Stack &stack) { g->run(stack); };
}

/* ---- torch.ops.fusebox.* ------------------------------------------------------------- */

void set_fuser(std::string name) {
  /* Load it now so that a bad name fails here, with fusebox's reason. */
  static const char probe[] = "graph(%x : Tensor):\n  return (%x)\n";
  fbx_graph *g = nullptr;
  fbx_executor *ex = nullptr;
  fbx_status *st = fbx_graph_parse(&g, probe, sizeof probe - 1, "set_fuser");
  if (!st) {
    fbx_executor_opts opts{};
    opts.struct_size = sizeof opts;
    opts.fuser = name.c_str();
    st = fbx_executor_create(&ex, g, &opts);
  }
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  std::string msg = st ? fbx_status_message(st) : "";
  fbx_status_free(st);
  TORCH_CHECK(msg.empty(), "torch.ops.fusebox.set_fuser(\"", name, "\"): ", msg);
  std::lock_guard<std::mutex> lock(g_fuser_mu);
  g_fuser = name;
}

std::string get_fuser() { return current_fuser(); }

void set_enabled(bool on) { g_enabled = on; }

c10::Dict<std::string, int64_t> stats() {
  c10::Dict<std::string, int64_t> d;
  fbx_executor_stats sum{};
  int64_t live = 0;
  {
    std::lock_guard<std::mutex> lock(g_groups_mu);
    std::vector<std::weak_ptr<Group>> keep;
    for (auto &w : g_groups) {
      auto g = w.lock();
      if (!g) continue;
      keep.push_back(w);
      live++;
      std::lock_guard<std::mutex> glock(g->mu);
      for (auto &e : g->execs) {
        if (!e.second) continue;
        fbx_executor_stats s{};
        s.struct_size = sizeof s;
        fbx_executor_stats_get(e.second, &s);
        sum.kernel_runs += s.kernel_runs;
        sum.kernel_launches += s.kernel_launches;
        sum.interpreted_ops += s.interpreted_ops;
      }
    }
    g_groups.swap(keep);
  }
  d.insert("groups", live);
  d.insert("executors", g_count.executors.load());
  d.insert("refused", g_count.refused.load());
  d.insert("fusebox_runs", g_count.fusebox_runs.load());
  d.insert("guard_fallbacks", g_count.guard_fallbacks.load());
  d.insert("error_fallbacks", g_count.error_fallbacks.load());
  d.insert("kernel_runs", sum.kernel_runs);
  d.insert("kernel_launches", sum.kernel_launches);
  d.insert("interpreted_ops", sum.interpreted_ops);
  return d;
}

void reset_stats() {
  g_count.fusebox_runs = 0;
  g_count.guard_fallbacks = 0;
  g_count.error_fallbacks = 0;
  g_count.executors = 0;
  g_count.refused = 0;
}

/* fusebox finds its built-in plugins next to the executable, and here the executable is
 * python: point FUSEBOX_PLUGIN_PATH (appended to, never replaced) at the plugins next to this
 * library: <build>/plugins from <build>/bridges/torch/, or <libdir>/fusebox/plugins when
 * installed in <libdir>. */
void add_plugin_dir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&add_plugin_dir), &info) || !info.dli_fname) return;
  char real[PATH_MAX];
  if (!realpath(info.dli_fname, real)) return;
  std::string dir(real);
  dir.erase(dir.rfind('/'));
  for (const char *rel : {"/../../plugins", "/fusebox/plugins"}) {
    std::string cand = dir + rel;
    struct stat st;
    if (stat(cand.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(cand.c_str(), real)) continue;
    const char *old = getenv("FUSEBOX_PLUGIN_PATH");
    std::string v = old && *old ? std::string(old) + ":" + real : std::string(real);
    setenv("FUSEBOX_PLUGIN_PATH", v.c_str(), 1);
    return;
  }
}
const bool g_plugin_dir_added = (add_plugin_dir(), true);

torch::jit::RegisterOperators g_ops({torch::jit::Operator(fusion_group_kind(), make_group_op,
                                                          c10::AliasAnalysisKind::PURE_FUNCTION)});
torch::jit::RegisterPass g_pass(fuse_graph);

} // namespace

bool pass_enabled() { return g_enabled; }
int min_group_size() { return 2; }
bool log_enabled() {
  static const bool on = [] {
    const char *e = getenv("FUSEBOX_TORCH_LOG"); /* FUSEBOX_LOG is fusebox's, with its own items */
    return e && *e && strcmp(e, "0") != 0;
  }();
  return on;
}

} // namespace fbt

TORCH_LIBRARY(fusebox, m) {
  m.def("set_fuser(str name) -> ()", &fbt::set_fuser);
  m.def("get_fuser() -> str", &fbt::get_fuser);
  m.def("set_enabled(bool on) -> ()", &fbt::set_enabled);
  m.def("stats() -> Dict(str, int)", &fbt::stats);
  m.def("reset_stats() -> ()", &fbt::reset_stats);
}
