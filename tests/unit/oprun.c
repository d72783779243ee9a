/* One op through the op table; see oprun.h. */
#include "oprun.h"

#include <check.h>
#include <string.h>

#include "ir/symbol.h"

fbx_status *oprun(const char *kind, fbx_ivalue *args, int nargs, fbx_ivalue *outs, const fbx_op **op_out,
                  uint64_t *rng) {
  fbx_sym sym;
  ck_assert_int_eq(fbx_sym_intern(&sym, kind, strlen(kind)), 0);
  const fbx_op *op;
  FBX_TRY(fbx_op_resolve(&op, sym, args, nargs));
  if (op_out) *op_out = op;
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  FBX_TRY(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx ctx = {.op = op, .rng_state = rng};
  for (int i = 0; i < op->schema.nrets; i++) outs[i] = fbx_iv_none();
  return op->kernel(&ctx, norm, outs);
}
