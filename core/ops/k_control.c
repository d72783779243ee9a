/* Kernels for the control rows of the op table (ops/list_control.h). */
#include "ops/optable.h"

fbx_status *fbx_k_interp(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return fbx_status_new(FBX_ERR_INTERNAL, "%s is run by the interpreter, not as a kernel",
                        ctx->op ? ctx->op->schema_text : "?");
}

/* prim::RaiseException(str msg, str? cls) */
fbx_status *fbx_k_raise(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *msg = args[0].kind == FBX_IV_STR ? fbx_iv_str_data(&args[0]) : "exception";
  return fbx_status_new(FBX_ERR_RUNTIME, "the graph raised an exception: %s", msg);
}
