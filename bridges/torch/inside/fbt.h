/* libfusebox_torch: a fusebox fuser inside PyTorch's TorchScript executor.
 *
 *   torch.ops.load_library("build/bridges/torch/libfusebox_torch.so")
 *   torch.ops.fusebox.set_fuser("tensorexpr")     # or FUSEBOX_FUSER=tensorexpr
 *   m = torch.jit.script(model)                   # fusible regions become fusebox::FusionGroup
 *
 * Two pieces, one per translation unit:
 *   partition.cpp  the graph pass (a TorchScript custom post-fusion pass) that puts each region
 *                  of ops fusebox runs into a fusebox::FusionGroup node with a subgraph;
 *   group.cpp      the fusebox::FusionGroup operator (guard, fusebox executor per fuser,
 *                  DLPack both ways, PyTorch's own execution as the fallback) and the
 *                  torch.ops.fusebox.* functions.
 * What fuses, the guards and the limits: README.md next to this file.
 */
#ifndef FUSEBOX_TORCH_FBT_H
#define FUSEBOX_TORCH_FBT_H
#include <ATen/dlpack.h> /* the same DLPack 0.6 as <dlpack/dlpack.h>, one include guard */
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <string>
#include <vector>

namespace fbt {

/* The node kind of a fusion group ("fusebox::FusionGroup"). */
c10::Symbol fusion_group_kind();

/* The pass: fuse every block of g (nested blocks too). Does nothing while disabled. */
void fuse_graph(std::shared_ptr<torch::jit::Graph> &g);

/* Whether fusebox accepts this graph text (parse + an executor with fuser `none`) and, when
 * inputs are given, runs it on them: empty on success, else fusebox's message. The pass asks
 * it about the one-node graph of every candidate op (run on zeros of the profiled types: an
 * op missing from fusebox's op table is only found when it runs) and about each group. */
std::string fusebox_accepts(const std::string &ir_text, const std::vector<c10::IValue> *inputs = nullptr);

/* DLPack both ways without copies (group.cpp). to_dlpack: NULL for a dtype fusebox lacks;
 * the result holds a reference to t until its deleter runs. from_dlpack: false for a dtype
 * or device PyTorch cannot take; the tensor calls m's deleter when its storage goes. */
DLManagedTensor *to_dlpack(const at::Tensor &t);
bool from_dlpack(DLManagedTensor *m, at::Tensor *out);

/* Settings shared by the pass and the operator (group.cpp). */
bool pass_enabled();
int min_group_size(); /* non-constant nodes a group needs (default 2) */
bool log_enabled();   /* FUSEBOX_TORCH_LOG set (not 0): the pass says what it fuses and why not */

} // namespace fbt
#endif
