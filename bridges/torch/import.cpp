// fusebox-import MODEL.pt OUTDIR [--method NAME]
//
// Turns a TorchScript archive (torch.jit.save) into what the `fusebox`
// command runs: OUTDIR/graph.ir (TorchScript IR text, no `self`), one .npy
// file per parameter, buffer and tensor constant under OUTDIR/weights/, and
// OUTDIR/manifest.txt tying the two together (format: bridges/torch/README.md).
// The module is put in eval mode and frozen with its parameters preserved
// (other attributes become constants, calls are inlined), dropout is
// removed, each parameter (a prim::GetAttr chain from `self`) becomes a
// graph input named after it, and then every tensor constant is lifted to
// a named graph input too: fusebox's IR text has no tensor literals,
// and weights as inputs let one imported graph run any set of weights. A
// constant list of tensors (nn.LSTM's flat weights) becomes one input per
// element, named after the parameter it is, and a prim::ListConstruct.
// `with torch.no_grad():` blocks become aten::detach of what leaves them
// (lower_no_grad).
//
// `fusebox import` runs this program; it is a separate executable so that the
// C command never links libtorch. Exit status: 0 done, 1 the model could not
// be imported (the message names the module and method), 2 usage error.
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/remove_dropout.h>
#include <torch/csrc/jit/serialization/import.h>

#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct ImportError {
  std::string msg;
};

// The first line of a c10::Error (the rest is a C++ backtrace).
// A model input other than a Tensor that a graph input of fusebox's IR can
// be (fusebox run takes it as a literal: --input n=5): int, float, bool,
// str, Optional of those or of Tensor, and int[] / float[].
bool plain_input_type(const c10::TypePtr &t) {
  if (auto o = t->cast<c10::OptionalType>()) {
    const c10::TypePtr &e = o->getElementType();
    return e->isSubtypeOf(*c10::TensorType::get()) || plain_input_type(e);
  }
  if (auto l = t->cast<c10::ListType>()) {
    c10::TypeKind k = l->getElementType()->kind();
    return k == c10::TypeKind::IntType || k == c10::TypeKind::FloatType;
  }
  c10::TypeKind k = t->kind();
  return k == c10::TypeKind::IntType || k == c10::TypeKind::FloatType || k == c10::TypeKind::BoolType ||
         k == c10::TypeKind::StringType;
}

std::string first_line(const char *what) {
  std::string s(what);
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

const char *npy_descr(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "<f4";
    case at::kDouble: return "<f8";
    case at::kHalf: return "<f2";
    case at::kLong: return "<i8";
    case at::kInt: return "<i4";
    case at::kShort: return "<i2";
    case at::kChar: return "|i1";
    case at::kByte: return "|u1";
    case at::kBool: return "|b1";
    default: return nullptr;
  }
}

// NumPy format 1.0: magic, header length, a dict padded with spaces to a
// multiple of 64 bytes, then the data in C order.
void write_npy(const std::string &path, const at::Tensor &t0, const std::string &what) {
  at::Tensor t = t0.detach().contiguous();
  if (t.scalar_type() == at::kBFloat16) t = t.to(at::kFloat);  // .npy has no bfloat16
  const char *descr = npy_descr(t.scalar_type());
  if (!descr) throw ImportError{what + ": tensor of dtype " + std::string(c10::toString(t.scalar_type())) + " has no .npy form"};
  if (!t.device().is_cpu()) throw ImportError{what + ": tensor is not on the CPU"};
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t d = 0; d < t.dim(); d++) h << t.size(d) << (t.dim() == 1 ? "," : d + 1 < t.dim() ? ", " : "");
  h << "), }";
  std::string header = h.str();
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) throw ImportError{"cannot write " + path + ": " + std::strerror(errno)};
  unsigned short hl = (unsigned short)header.size();
  f.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {(char)(hl & 0xff), (char)(hl >> 8)};
  f.write(len, 2);
  f.write(header.data(), (std::streamsize)header.size());
  f.write((const char *)t.data_ptr(), (std::streamsize)(t.numel() * t.element_size()));
  if (!f) throw ImportError{"cannot write " + path};
}

// A value name fusebox's parser and a file system both take: letters,
// digits, '_' and '.', not starting with a digit or a dot.
std::string clean_name(const std::string &s) {
  std::string o;
  for (char c : s) o.push_back(std::isalnum((unsigned char)c) || c == '_' || c == '.' ? c : '_');
  if (o.empty() || std::isdigit((unsigned char)o[0]) || o[0] == '.') o = "w_" + o;
  return o;
}

bool is_tensor_list(const c10::TypePtr &t) {
  return t->isSubtypeOf(*c10::ListType::ofTensors());
}

// Tensor constants and Tensor[] constants (nn.LSTM's _flat_weights, say).
void collect_constants(torch::jit::Block *b, std::vector<torch::jit::Node *> &out) {
  for (torch::jit::Node *n : b->nodes()) {
    if (n->kind() == c10::prim::Constant &&
        (n->output()->type()->isSubtypeOf(*c10::TensorType::get()) || is_tensor_list(n->output()->type())))
      out.push_back(n);
    for (torch::jit::Block *sb : n->blocks()) collect_constants(sb, out);
  }
}

// `with torch.no_grad():` blocks. TorchScript makes them a no_grad object
// (prim::CreateObject, its __init__'s prim::SetAttr) and prim::Enter /
// prim::Exit around the block's nodes; fusebox's IR has no objects. Each
// Tensor the block computes and code after it uses is passed through
// aten::detach right after the block (no gradient flows into it, as under
// no_grad), and the object and its Enter/Exit go. Values the block only uses
// inside itself need nothing: a gradient reaches them only through what
// leaves the block. Tensor lists or tuples leaving the block are an error
// (their elements would keep their gradients); other context managers are
// left alone (fusebox then names the node it cannot run).
bool is_no_grad(const torch::jit::Value *v) {
  auto ct = v->type()->cast<c10::ClassType>();
  return ct && ct->name() && ct->name()->qualifiedName() == "__torch__.torch.autograd.grad_mode.no_grad";
}

void lower_no_grad(torch::jit::Block *b, const std::string &where) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    torch::jit::Node *n = *it;
    ++it;
    for (torch::jit::Block *sb : n->blocks()) lower_no_grad(sb, where);
    if (n->kind() != c10::prim::Enter || !is_no_grad(n->input())) continue;
    torch::jit::Value *ctx = n->input();
    torch::jit::Node *exit = nullptr;
    for (torch::jit::Node *m = n->next(); m != b->return_node(); m = m->next())
      if (m->kind() == c10::prim::Exit && m->input() == ctx) {
        exit = m;
        break;
      }
    if (!exit) throw ImportError{where + ": a torch.no_grad() block without its prim::Exit"};
    for (torch::jit::Node *r = n->next(); r != exit; r = r->next())
      for (torch::jit::Value *o : r->outputs()) {
        bool used_after = false;
        for (const torch::jit::Use &u : o->uses()) used_after |= u.user->isAfter(exit);
        if (!used_after) continue;
        if (!o->type()->isSubtypeOf(*c10::TensorType::get()))
          throw ImportError{where + ": %" + o->debugName() + " (" + o->type()->repr_str() +
                            ") leaves a torch.no_grad() block; only Tensors can"};
        torch::jit::Node *d = b->owningGraph()->create(c10::aten::detach, {o});
        d->output()->setType(o->type());
        d->insertAfter(exit);
        o->replaceAllUsesAfterNodeWith(d, d->output());
      }
    if (it != b->nodes().end() && *it == exit) ++it;
    if (exit->output()->hasUses() || n->output()->hasUses())
      throw ImportError{where + ": the value of a torch.no_grad() block's prim::Enter or prim::Exit is used"};
    exit->destroy();
    n->destroy();
    // the object: its prim::SetAttr (__init__'s `prev`), then itself
    while (ctx->hasUses()) {
      torch::jit::Node *u = ctx->uses()[0].user;
      if (u->kind() != c10::prim::SetAttr)
        throw ImportError{where + ": a torch.no_grad() object used by " + std::string(u->kind().toQualString())};
      if (it != b->nodes().end() && *it == u) ++it;
      u->destroy();
    }
    if (it != b->nodes().end() && *it == ctx->node()) ++it;
    ctx->node()->destroy();
  }
}

// mkdir -p
void make_dir(const std::string &d) {
  for (size_t i = 1; i <= d.size(); i++) {
    if (i < d.size() && d[i] != '/') continue;
    std::string p = d.substr(0, i);
    if (mkdir(p.c_str(), 0777) && errno != EEXIST) throw ImportError{"cannot create " + p + ": " + std::strerror(errno)};
  }
}

// A Dict[str, T] the graph returns (a model's dict of outputs) becomes the
// tuple of its values in insertion order (fusebox's IR has no dicts); keys
// gets its keys. Tuples are looked into; a dict anywhere else stays (fusebox
// then names the node it cannot run).
torch::jit::Value *undict(torch::jit::Graph &g, torch::jit::Value *v, std::vector<std::string> &keys,
                          const std::string &where) {
  torch::jit::Node *n = v->node();
  std::vector<torch::jit::Value *> elems;
  bool changed = false;
  if (n->kind() == c10::prim::TupleConstruct) {
    for (torch::jit::Value *e : n->inputs()) {
      elems.push_back(undict(g, e, keys, where));
      changed |= elems.back() != e;
    }
  } else if (n->kind() == c10::prim::DictConstruct) {
    changed = true;
    for (size_t i = 0; i + 1 < n->inputs().size(); i += 2) {
      c10::optional<c10::IValue> k = torch::jit::toIValue(n->input(i));
      if (!k || !k->isString())
        throw ImportError{where + ": the returned dict has a key that is not a constant string"};
      keys.push_back(k->toStringRef());
      elems.push_back(undict(g, n->input(i + 1), keys, where));
    }
  }
  if (!changed) return v;
  torch::jit::Node *t = g.createTuple(elems);
  t->insertAfter(n);
  return t->output();
}

// The prim::GetAttr nodes of b and its blocks, in program order.
void collect_getattrs(torch::jit::Block *b, std::vector<torch::jit::Node *> &out) {
  for (torch::jit::Node *n : b->nodes()) {
    if (n->kind() == c10::prim::GetAttr) out.push_back(n);
    for (torch::jit::Block *sb : n->blocks()) collect_getattrs(sb, out);
  }
}

int import_model(const std::string &model, const std::string &outdir, const std::string &method) {
  struct stat sb;
  if (stat(model.c_str(), &sb) != 0) throw ImportError{"cannot open " + model + ": " + std::strerror(errno)};
  if (!S_ISREG(sb.st_mode)) throw ImportError{model + " is not a file (a TorchScript archive, torch.jit.save)"};
  torch::jit::Module m;
  try {
    m = torch::jit::load(model);
  } catch (const c10::Error &e) {
    throw ImportError{"cannot load " + model + " as a TorchScript archive (torch.jit.save): " + first_line(e.what())};
  }
  std::string where = "module " + m.type()->name()->qualifiedName() + ", method " + method;
  if (!m.find_method(method)) throw ImportError{where + ": the module has no such method"};
  std::shared_ptr<torch::jit::Graph> g;
  try {
    m.eval();
    // preserveParameters: parameters stay prim::GetAttr chains from `self`
    // (lifted below, one input per parameter) instead of constants that
    // freezing may fold into others (a chunk of one) or pool with an equal
    // one; either would send the parameter's gradient to a nameless input.
    // freezing keeps forward only, unless the method is named as preserved
    std::vector<std::string> keep;
    if (method != "forward") keep.push_back(method);
    torch::jit::Module f = torch::jit::freeze_module(m, keep, true, true);
    g = f.get_method(method).graph()->copy();
    torch::jit::Inline(*g);
    torch::jit::removeDropout(g);
    torch::jit::EliminateDeadCode(g);
  } catch (const c10::Error &e) {
    throw ImportError{where + ": freezing failed: " + first_line(e.what())};
  }
  if (g->inputs().empty() || !g->inputs()[0]->type()->cast<c10::ClassType>())
    throw ImportError{where + ": the graph has no `self` input"};
  std::vector<std::string> user_inputs;
  for (size_t i = 1; i < g->inputs().size(); i++) {
    torch::jit::Value *v = g->inputs()[i];
    if (v->type()->isSubtypeOf(*c10::TensorType::get())) {
      v->setType(c10::TensorType::get());
    } else if (!plain_input_type(v->type())) {
      throw ImportError{where + ": input %" + v->debugName() + " is " + v->type()->repr_str() +
                        "; the inputs must be Tensors, int, float, bool or str, optional ones of these, or "
                        "int[] or float[]"};
    }
    user_inputs.push_back(v->debugName());
  }

  make_dir(outdir);
  make_dir(outdir + "/weights");
  std::map<std::string, int> used;
  for (const std::string &n : user_inputs) used[n] = 1;
  std::ostringstream weights;
  int k = 0;
  // The module's parameter and buffer names by storage: the name of a
  // parameter reached by a prim::GetAttr chain, and of the elements of a
  // Tensor[] constant (which has one debug name for the whole list).
  std::map<const void *, std::string> qualified;
  for (const auto &p : m.named_parameters(true)) qualified.emplace(p.value.data_ptr(), p.name);
  for (const auto &p : m.named_buffers(true)) qualified.emplace(p.value.data_ptr(), p.name);
  auto lift = [&](const at::Tensor &t, std::string name, const std::string &what) {
    while (used.count(name)) name += "_";
    used[name] = 1;
    std::string file = "weights/" + name + ".npy";
    write_npy(outdir + "/" + file, t, what);
    torch::jit::Value *in = g->addInput();
    in->setType(c10::TensorType::get());
    in->setDebugName(name);
    weights << "weight " << name << " " << file << " " << c10::toString(t.scalar_type()) << " [";
    for (int64_t d = 0; d < t.dim(); d++) weights << (d ? ", " : "") << t.size(d);
    weights << "]\n";
    k++;
    return in;
  };

  // Parameters: each prim::GetAttr chain from `self` that ends at a tensor
  // reads one input, named self.<its name in named_parameters> (a tensor
  // shared by two attributes, tied weights, is one input: its gradient is
  // the sum over its uses, as PyTorch's).
  std::vector<torch::jit::Node *> getattrs;
  collect_getattrs(g->block(), getattrs);
  std::map<const torch::jit::Value *, c10::IValue> objs{{g->inputs()[0], m._ivalue()}};
  std::map<const torch::jit::Value *, std::string> paths{{g->inputs()[0], "self"}};
  std::map<const void *, torch::jit::Value *> lifted;
  for (torch::jit::Node *n : getattrs) {
    auto o = objs.find(n->input());
    if (o == objs.end() || !o->second.isObject()) continue;
    const std::string &name = n->s(c10::attr::name);
    c10::IValue a = o->second.toObject()->getAttr(name);
    std::string path = paths[n->input()] + "." + name;
    if (a.isObject()) {
      objs[n->output()] = a;
      paths[n->output()] = path;
    } else if (a.isTensor() && a.toTensor().defined()) {
      const at::Tensor &t = a.toTensor();
      torch::jit::Value *&in = lifted[t.unsafeGetTensorImpl()];
      if (!in) {
        auto q = qualified.find(t.data_ptr());
        in = lift(t, clean_name(q != qualified.end() ? "self." + q->second : path), where + ": parameter " + path);
      }
      n->output()->replaceAllUsesWith(in);
    } else if (!a.isTensor()) {
      // a parameter slot holding None (nn.ConvTranspose2d(bias=False)) or another plain value
      torch::jit::WithInsertPoint guard(n);
      c10::optional<torch::jit::Value *> c = torch::jit::tryInsertConstant(*g, a);
      if (c) n->output()->replaceAllUsesWith(*c);
    }
  }
  for (auto it = getattrs.rbegin(); it != getattrs.rend(); ++it)
    if (!(*it)->output()->hasUses()) (*it)->destroy();
  // `self` has no use left once every parameter is an input and every other attribute a constant.
  if (g->inputs()[0]->hasUses()) {
    torch::jit::Node *u = g->inputs()[0]->uses()[0].user;
    std::string what = u->kind() == c10::prim::GetAttr ? " of attribute '" + u->s(c10::attr::name) + "'" : "";
    throw ImportError{where + ": `self` is still used after freezing (by " + std::string(u->kind().toQualString()) +
                      what + "); modules with interface calls or mutated attributes cannot be imported"};
  }
  g->eraseInput(0);
  lower_no_grad(g->block(), where);
  // a returned dict: the keys of a single Dict[str, Tensor] output go to the manifest
  std::vector<std::string> out_keys;
  for (size_t i = 0; i < g->outputs().size(); i++) {
    torch::jit::Value *o = g->outputs()[i], *r = undict(*g, o, out_keys, where);
    if (r != o) g->return_node()->replaceInput(i, r);
  }
  bool simple_dict = g->outputs().size() == 1 && !out_keys.empty();
  if (simple_dict)
    for (torch::jit::Value *e : g->outputs()[0]->node()->inputs())
      simple_dict &= e->type()->isSubtypeOf(*c10::TensorType::get());
  torch::jit::EliminateDeadCode(g);

  std::vector<torch::jit::Node *> consts;
  collect_constants(g->block(), consts);
  for (torch::jit::Node *n : consts) {
    torch::jit::Value *v = n->output();
    std::string base = clean_name(v->hasDebugName() ? v->debugName() : "const" + std::to_string(k));
    std::string what = where + ": constant %" + v->debugName();
    if (is_tensor_list(v->type())) {
      // one input per element, gathered again by a prim::ListConstruct
      c10::List<at::Tensor> list = torch::jit::toIValue(v)->toTensorList();
      std::vector<torch::jit::Value *> elems;
      for (size_t i = 0; i < list.size(); i++) {
        at::Tensor t = list.get(i);
        auto q = t.defined() ? qualified.find(t.data_ptr()) : qualified.end();
        if (!t.defined()) throw ImportError{what + ": element " + std::to_string(i) + " is an undefined tensor"};
        std::string name = q != qualified.end() ? clean_name(q->second) : base + "_" + std::to_string(i);
        elems.push_back(lift(t, name, what + " element " + std::to_string(i)));
      }
      torch::jit::Node *lc = g->createList(c10::TensorType::get(), elems);
      lc->insertBefore(n);
      v->replaceAllUsesWith(lc->output());
    } else {
      v->replaceAllUsesWith(lift(torch::jit::toIValue(v)->toTensor(), base, what));
    }
    n->destroy();
  }
  torch::jit::ConstantPooling(g);
  g->lint();

  std::ofstream gf(outdir + "/graph.ir");
  gf << g->toString(false);
  if (!gf) throw ImportError{"cannot write " + outdir + "/graph.ir"};
  gf.close();
  std::ofstream mf(outdir + "/manifest.txt");
  mf << "fusebox-import 1\n";
  mf << "module " << m.type()->name()->qualifiedName() << "\n";
  mf << "method " << method << "\n";
  mf << "graph graph.ir\n";
  for (const std::string &n : user_inputs) mf << "input " << n << "\n";
  // a returned Dict[str, Tensor]: its keys in the order of the outputs out0, out1, ...
  if (simple_dict) {
    mf << "outputs";
    for (const std::string &k : out_keys) mf << " " << k;
    mf << "\n";
  }
  mf << weights.str();
  mf << "source " << model << "\n";
  if (!mf) throw ImportError{"cannot write " + outdir + "/manifest.txt"};
  std::printf("imported %s (%s) into %s: %zu input%s, %d weight%s\n", model.c_str(), where.c_str(), outdir.c_str(),
              user_inputs.size(), user_inputs.size() == 1 ? "" : "s", k, k == 1 ? "" : "s");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const char *usage = "usage: fusebox import MODEL.pt OUTDIR [--method NAME]";
  std::vector<std::string> pos;
  std::string method = "forward";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s\n\nLoads a TorchScript archive (torch.jit.save), puts it in eval mode, freezes and\n"
                  "inlines it, and writes OUTDIR/graph.ir with every parameter, buffer and tensor\n"
                  "constant lifted to a named graph input, the weights as OUTDIR/weights/NAME.npy,\n"
                  "and OUTDIR/manifest.txt. `fusebox run OUTDIR --input x=x.npy` then runs it.\n"
                  "  --method NAME   the method to import (default forward)\n",
                  usage);
      return 0;
    } else if (a == "--method") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fusebox import: --method needs a name\n%s\n", usage);
        return 2;
      }
      method = argv[++i];
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "fusebox import: unknown option '%s'\n%s\n", a.c_str(), usage);
      return 2;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2) {
    std::fprintf(stderr, "fusebox import: expected MODEL.pt and OUTDIR\n%s\n", usage);
    return 2;
  }
  try {
    return import_model(pos[0], pos[1], method);
  } catch (const ImportError &e) {
    std::fprintf(stderr, "fusebox import: %s\n", e.msg.c_str());
  } catch (const c10::Error &e) {
    std::fprintf(stderr, "fusebox import: %s: %s\n", pos[0].c_str(), first_line(e.what()).c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "fusebox import: %s: %s\n", pos[0].c_str(), e.what());
  }
  return 1;
}
