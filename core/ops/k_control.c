/* Kernels for the control rows of the op table (ops/list_control.h). */
#include "ops/optable.h"

fbx_status *fbx_k_interp(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return fbx_status_new(FBX_ERR_INTERNAL, "%s is run by the interpreter, not as a kernel",
                        ctx->op ? ctx->op->schema_text : "?");
}

/* prim::RaiseException(str msg, str? cls=None): the error the graph raises,
 * "builtins.ValueError: expected a 2-D input" (the class when it is known). */
fbx_status *fbx_k_raise(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *msg = args[0].kind == FBX_IV_STR ? fbx_iv_str_data(&args[0]) : "exception";
  if (args[1].kind == FBX_IV_STR)
    return fbx_status_new(FBX_ERR_RUNTIME, "the graph raised %s: %s", fbx_iv_str_data(&args[1]), msg);
  return fbx_status_new(FBX_ERR_RUNTIME, "the graph raised an exception: %s", msg);
}
