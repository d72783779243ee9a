/* Constant folding through the reference interpreter: the tensor folder that
 * the constprop pass calls (see fbx_pass_set_tensor_folder in
 * passes/passes.h) for pure nodes whose inputs are all constants.
 *
 *   fbx_fold_register();                    // once; idempotent and thread-safe
 *   FBX_TRY(fbx_pass_pipeline(g, "default"));
 *
 * A node is folded when every output is an int, float or bool, or a tensor of
 * at most FBX_FOLD_MAX_NUMEL elements (bigger ones would bloat the graph).
 * The node runs on the interpreter exactly as it would at run time; if it
 * fails (a shape error, say), it is left alone so that the error happens when
 * the graph runs, with its source location.
 */
#ifndef FBX_EXEC_FOLD_H
#define FBX_EXEC_FOLD_H
#include <stdbool.h>

#include "base/status.h"
#include "ir/graph.h"

#define FBX_FOLD_MAX_NUMEL 64

void fbx_fold_register(void);
/* The folder itself (what constprop calls). */
fbx_status *fbx_fold_node(fbx_node *n, bool *folded);

#endif
