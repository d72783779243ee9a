/* Helpers for kernels that are compositions of other rows (k_misc.c,
 * k_loss.c): a composite runs the rows' own kernels, so dtype promotion,
 * broadcasting and NaN rules stay the ones those rows define (as in ATen,
 * whose CPU versions of these ops are compositions too).
 *
 *   fbx_tensor *d = NULL, *out = NULL;
 *   fbx_status *st = ROW(&d, sub_Tensor, TV(x), TV(y));      // d = x - y
 *   if (!st) st = ROW(&out, mul_Scalar, TV(d), FV(0.5));
 *   fbx_tensor_release(d);
 *   return finish(st, outs, &out);
 *
 * Only kernel files include this header: the macros expect a `ctx`. */
#ifndef FBX_OPS_KCOMPOSE_H
#define FBX_OPS_KCOMPOSE_H
#include "ops/kutil.h"

/* fbx_row_run and fbx_row_tensor (run another row's kernel) are in kutil.h. */
/* A loss's elementwise values l reduced: 0 none (l itself, retained), 1 mean, 2 sum. */
fbx_status *fbx_loss_reduce(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *l, int64_t reduction);

#define NARGS_(...) ((int)(sizeof((fbx_ivalue[]){__VA_ARGS__}) / sizeof(fbx_ivalue)))
/* ROW(&out, id, args...): out = row FBX_OP_id(args...) */
#define ROW(out, id, ...) fbx_row_tensor(ctx, out, FBX_OP_##id, (fbx_ivalue[]){__VA_ARGS__}, NARGS_(__VA_ARGS__))
#define TV(t) fbx_iv_tensor(t) /* borrowed: never released through the ivalue */
#define IV(i) fbx_iv_int(i)
#define FV(f) fbx_iv_float(f)
#define BV(b) fbx_iv_bool(b)
#define NV fbx_iv_none()

static inline void release_all(fbx_tensor **ts, int n) {
  for (int i = 0; i < n; i++) fbx_tensor_release(ts[i]);
}

/* Set outs[0] to *out, or release it on error. (Takes a pointer: *out is
 * read after st, which may be the call that fills it, was evaluated.) */
static inline fbx_status *finish(fbx_status *st, fbx_ivalue *outs, fbx_tensor **out) {
  if (st) {
    fbx_tensor_release(*out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, *out);
  return NULL;
}

/* finish() for a row with two results; b may be NULL (a one-result overload). */
static inline fbx_status *finish2(fbx_status *st, fbx_ivalue *outs, fbx_tensor **a, fbx_tensor **b) {
  if (st) {
    fbx_tensor_release(*a);
    fbx_tensor_release(*b);
    return st;
  }
  fbx_set_out_tensor(outs, 0, *a);
  if (*b) fbx_set_out_tensor(outs, 1, *b);
  return NULL;
}

#endif
