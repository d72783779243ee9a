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
#include <torch/csrc/jit/ir/ir.h>

#include <memory>
#include <string>

namespace fbt {

/* The node kind of a fusion group ("fusebox::FusionGroup"). */
c10::Symbol fusion_group_kind();

/* The pass: fuse every block of g (nested blocks too). Does nothing while disabled. */
void fuse_graph(std::shared_ptr<torch::jit::Graph> &g);

/* Whether fusebox accepts this graph text (parse + an executor with fuser `none`):
 * empty on success, else fusebox's message. Used by the pass on one-node and group graphs. */
std::string fusebox_accepts(const std::string &ir_text);

/* Settings shared by the pass and the operator (group.cpp). */
bool pass_enabled();
int min_group_size(); /* non-constant nodes a group needs (default 2) */
bool log_enabled();   /* FUSEBOX_TORCH_LOG set (not 0): the pass says what it fuses and why not */

} // namespace fbt
#endif
