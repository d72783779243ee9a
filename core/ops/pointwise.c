/* The pointwise engine (see pointwise.h). */
#include "ops/pointwise.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "base/parallel.h"
#include "ops/kutil.h"
#include "tensor/copy.h"

#define MAX_OPS (FBX_PW_MAX_IN + 1)

typedef struct walk {
  int nops, ndim;
  char *base[MAX_OPS];
  int64_t sizes[FBX_MAX_DIMS];
  int64_t strides[MAX_OPS][FBX_MAX_DIMS];
  fbx_pw_loop_fn loop;
  const void *params;
} walk;

static int64_t grain(void) {
  static atomic_llong cached = -1;
  long long g = atomic_load(&cached);
  if (g < 0) {
    int64_t v = FBX_PW_GRAIN;
    fbx_status *st = fbx_env_int("FUSEBOX_PW_GRAIN", 0, FBX_ENV_MAX_GRAIN, FBX_PW_GRAIN, &v);
    if (st) fbx_env_warn(st), v = FBX_PW_GRAIN; /* the CLI and fbx_executor_create refuse it first */
    g = v;
    atomic_store(&cached, g);
  }
  return g;
}

/* Run the loop over linear indices [begin, end) of the walk's shape. */
static void walk_range(void *vw, int64_t begin, int64_t end) {
  const walk *w = vw;
  int nd = w->ndim, last = nd - 1, nops = w->nops;
  int64_t idx[FBX_MAX_DIMS];
  int64_t r = begin;
  for (int d = last; d >= 0; d--) {
    idx[d] = r % w->sizes[d];
    r /= w->sizes[d];
  }
  char *ptr[MAX_OPS];
  int64_t inner[MAX_OPS];
  for (int k = 0; k < nops; k++) {
    intptr_t off = 0;
    for (int d = 0; d < nd; d++) off += (intptr_t)(idx[d] * w->strides[k][d]);
    ptr[k] = w->base[k] + off;
    inner[k] = w->strides[k][last];
  }
  int64_t pos = begin;
  for (;;) {
    int64_t n = w->sizes[last] - idx[last];
    if (n > end - pos) n = end - pos;
    w->loop(ptr, inner, n, w->params);
    pos += n;
    if (pos >= end) break;
    idx[last] += n;
    for (int k = 0; k < nops; k++) ptr[k] += n * inner[k];
    for (int d = last; d > 0 && idx[d] == w->sizes[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
      for (int k = 0; k < nops; k++) ptr[k] += w->strides[k][d - 1] - w->sizes[d] * w->strides[k][d];
    }
  }
}

void fbx_pw_walk(int nops, char *const *base, const int64_t (*strides)[FBX_MAX_DIMS], int ndim,
                 const int64_t *sizes, fbx_pw_loop_fn loop, const void *params, bool parallel) {
  walk w;
  w.nops = nops;
  w.loop = loop;
  w.params = params;
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) numel *= sizes[d];
  if (numel == 0) return;
  for (int k = 0; k < nops; k++) w.base[k] = base[k];
  /* drop size-1 dims, then merge dims that are contiguous for every operand */
  int nd = 0;
  for (int d = 0; d < ndim; d++) {
    if (sizes[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int k = 0; k < nops && merge; k++) merge = w.strides[k][nd - 1] == strides[k][d] * sizes[d];
      if (merge) {
        w.sizes[nd - 1] *= sizes[d];
        for (int k = 0; k < nops; k++) w.strides[k][nd - 1] = strides[k][d];
        continue;
      }
    }
    w.sizes[nd] = sizes[d];
    for (int k = 0; k < nops; k++) w.strides[k][nd] = strides[k][d];
    nd++;
  }
  if (nd == 0) {
    w.sizes[0] = 1;
    for (int k = 0; k < nops; k++) w.strides[k][0] = 0;
    nd = 1;
  }
  w.ndim = nd;
  int64_t g = grain();
  if (parallel && g > 0 && numel > g) fbx_parallel_for(numel, g, walk_range, &w);
  else walk_range(&w, 0, numel);
}

/* Byte strides of t broadcast to (ndim, sizes): 0 in broadcast dims. */
static void bcast_strides(const fbx_tensor *t, int ndim, const int64_t *sizes, int64_t *out) {
  int64_t es = (int64_t)fbx_dtype_size(t->dtype);
  for (int d = 0; d < ndim; d++) {
    int dt = d - (ndim - t->ndim);
    out[d] = (dt < 0 || (t->sizes[dt] == 1 && sizes[d] != 1)) ? 0 : t->strides[dt] * es;
  }
}

/* Inputs converted to dtype (new references in conv[]). */
static fbx_status *convert_inputs(fbx_tensor **conv, fbx_dtype dtype, int nin, fbx_tensor *const *ins) {
  for (int i = 0; i < nin; i++) {
    if (ins[i]->dtype == dtype) {
      conv[i] = fbx_tensor_retain(ins[i]);
      continue;
    }
    fbx_status *st = fbx_tensor_clone_as(&conv[i], ins[i], dtype);
    if (st) {
      for (int j = 0; j < i; j++) fbx_tensor_release(conv[j]);
      return st;
    }
  }
  return NULL;
}

static void run(fbx_tensor *out, int nin, fbx_tensor *const *conv, fbx_pw_loop_fn loop,
                const void *params) {
  char *base[MAX_OPS];
  int64_t strides[MAX_OPS][FBX_MAX_DIMS];
  base[0] = out->data;
  bcast_strides(out, out->ndim, out->sizes, strides[0]);
  for (int i = 0; i < nin; i++) {
    base[i + 1] = conv[i]->data;
    bcast_strides(conv[i], out->ndim, out->sizes, strides[i + 1]);
  }
  fbx_pw_walk(nin + 1, base, (const int64_t(*)[FBX_MAX_DIMS])strides, out->ndim, out->sizes, loop,
              params, true);
}

static fbx_status *bshape(const fbx_kctx *ctx, int64_t *shape, int *nd, int nin, fbx_tensor *const *ins) {
  *nd = 0;
  for (int i = 0; i < nin; i++) FBX_TRY(fbx_broadcast_into(ctx, shape, nd, ins[i]->ndim, ins[i]->sizes));
  return NULL;
}

fbx_status *fbx_pw_map(const fbx_kctx *ctx, fbx_tensor **out, fbx_dtype out_dtype, fbx_dtype in_dtype,
                       int nin, fbx_tensor *const *ins, fbx_pw_loop_fn loop, const void *params) {
  int64_t shape[FBX_MAX_DIMS] = {0};
  int nd;
  FBX_TRY(bshape(ctx, shape, &nd, nin, ins));
  fbx_tensor *conv[FBX_PW_MAX_IN] = {0}, *o = NULL;
  FBX_TRY(convert_inputs(conv, in_dtype, nin, ins));
  fbx_status *st = fbx_tensor_empty(&o, out_dtype, nd, shape);
  if (!st) run(o, nin, conv, loop, params);
  for (int i = 0; i < nin; i++) fbx_tensor_release(conv[i]);
  if (!st) *out = o;
  return st;
}

fbx_status *fbx_pw_map_into(const fbx_kctx *ctx, fbx_tensor *out, fbx_dtype in_dtype, int nin,
                            fbx_tensor *const *ins, fbx_pw_loop_fn loop, const void *params) {
  int64_t shape[FBX_MAX_DIMS] = {0};
  int nd;
  FBX_TRY(bshape(ctx, shape, &nd, nin, ins));
  if (nd != out->ndim || memcmp(shape, out->sizes, sizeof(int64_t) * (size_t)nd))
    return fbx_kernel_error(ctx, "output shape does not match the broadcast shape of the inputs");
  fbx_tensor *conv[FBX_PW_MAX_IN] = {0};
  FBX_TRY(convert_inputs(conv, in_dtype, nin, ins));
  run(out, nin, conv, loop, params);
  for (int i = 0; i < nin; i++) fbx_tensor_release(conv[i]);
  return NULL;
}

/* ---- zero scan -------------------------------------------------------------- */

#define ZERO_LOOP(sfx, TS)                                                              \
  static void zero_##sfx(char *const *p, const int64_t *s, int64_t n, const void *pv) { \
    int *found = (int *)(uintptr_t)pv;                                                  \
    int any = 0;                                                                        \
    for (int64_t i = 0; i < n; i++) any |= *(const TS *)(p[0] + i * s[0]) == 0;         \
    if (any) *found = 1;                                                                \
  }
ZERO_LOOP(u8, uint8_t)
ZERO_LOOP(i16, int16_t)
ZERO_LOOP(i32, int32_t)
ZERO_LOOP(i64, int64_t)
ZERO_LOOP(f32, float)
ZERO_LOOP(f64, double)

static void zero_h(char *const *p, const int64_t *s, int64_t n, const void *pv) {
  int *found = (int *)(uintptr_t)pv;
  for (int64_t i = 0; i < n; i++)
    if ((*(const uint16_t *)(p[0] + i * s[0]) & 0x7fffu) == 0) *found = 1;
}

bool fbx_pw_any_zero(const fbx_tensor *t) {
  fbx_pw_loop_fn f;
  switch (t->dtype) {
    case FBX_DTYPE_UINT8:
    case FBX_DTYPE_INT8:
    case FBX_DTYPE_BOOL: f = zero_u8; break;
    case FBX_DTYPE_INT16: f = zero_i16; break;
    case FBX_DTYPE_INT32: f = zero_i32; break;
    case FBX_DTYPE_INT64: f = zero_i64; break;
    case FBX_DTYPE_FLOAT32: f = zero_f32; break;
    case FBX_DTYPE_FLOAT64: f = zero_f64; break;
    default: f = zero_h; break;
  }
  int found = 0;
  char *base[1] = {t->data};
  int64_t strides[1][FBX_MAX_DIMS];
  bcast_strides(t, t->ndim, t->sizes, strides[0]);
  fbx_pw_walk(1, base, (const int64_t(*)[FBX_MAX_DIMS])strides, t->ndim, t->sizes, f, &found, false);
  return found != 0;
}

/* ---- kernel helpers -------------------------------------------------------------- */

fbx_status *fbx_pw_unsupported(const fbx_kctx *ctx, fbx_dtype d) {
  const char *n = fbx_dtype_torch_name(d);
  return fbx_kernel_error(ctx, "not implemented for '%s'", n ? n : "?");
}

fbx_status *fbx_pw_operand(const fbx_kctx *ctx, fbx_tensor **out, const fbx_ivalue *v, fbx_dtype d) {
  if (v->kind == FBX_IV_TENSOR) {
    *out = fbx_tensor_retain(v->u.t);
    return NULL;
  }
  if (!fbx_iv_is_scalar(v))
    return fbx_kernel_error(ctx, "expected a Tensor or a number, got %s", fbx_iv_kind_name(v->kind));
  return fbx_scalar_tensor(out, v, d);
}

fbx_status *fbx_pw_apply(const fbx_kctx *ctx, fbx_ivalue *outs, const fbx_pw_loop_fn *tab, fbx_dtype compute,
                         fbx_dtype out_dtype, int nin, const fbx_ivalue *const *vals, const fbx_pw_params *P) {
  if (compute < 0 || compute >= FBX_DTYPE_MAX_CODE || !tab[compute]) return fbx_pw_unsupported(ctx, compute);
  fbx_tensor *ins[FBX_PW_MAX_IN] = {NULL}, *o = NULL;
  fbx_status *st = NULL;
  for (int i = 0; i < nin && !st; i++) st = fbx_pw_operand(ctx, &ins[i], vals[i], compute);
  if (!st) st = fbx_pw_map(ctx, &o, out_dtype, compute, nin, ins, tab[compute], P);
  for (int i = 0; i < nin; i++) fbx_tensor_release(ins[i]);
  if (st) return st;
  outs[0] = fbx_iv_tensor(o);
  return NULL;
}

void fbx_pw_scalar_as(const fbx_ivalue *v, fbx_dtype d, double *f, int64_t *i) {
  double x = fbx_iv_to_double(v);
  int64_t n = v->kind == FBX_IV_FLOAT ? fbx_f64_to_i64(v->u.f) : fbx_iv_to_int(v);
  switch (d) {
    case FBX_DTYPE_FLOAT32: x = (float)x; break;
    case FBX_DTYPE_FLOAT16: x = fbx_half_to_float(fbx_float_to_half((float)x)); break;
    case FBX_DTYPE_BFLOAT16: x = fbx_bf16_to_float(fbx_float_to_bf16((float)x)); break;
    case FBX_DTYPE_UINT8: n = (uint8_t)n; x = (double)n; break;
    case FBX_DTYPE_INT8: n = (int8_t)n; x = (double)n; break;
    case FBX_DTYPE_INT16: n = (int16_t)n; x = (double)n; break;
    case FBX_DTYPE_INT32: n = (int32_t)n; x = (double)n; break;
    case FBX_DTYPE_INT64: x = (double)n; break;
    case FBX_DTYPE_BOOL: n = x != 0; x = (double)n; break;
    default: break;
  }
  if (f) *f = x;
  if (i) *i = n;
}

/* c10::overflows<To, From>: integral values may wrap into an unsigned type
 * from below (-3 -> uint8 253); floating values must lie in [lowest, max]
 * (infinity and NaN pass for floating types only). */
fbx_status *fbx_pw_scalar_checked(const fbx_kctx *ctx, const fbx_ivalue *v, fbx_dtype d, double *f, int64_t *i) {
  double lo = 0, hi = 0;
  const char *name = NULL;
  switch (d) {
    case FBX_DTYPE_UINT8: lo = 0, hi = 255, name = "uint8_t"; break;
    case FBX_DTYPE_INT8: lo = -128, hi = 127, name = "int8_t"; break;
    case FBX_DTYPE_INT16: lo = -32768, hi = 32767, name = "int16_t"; break;
    case FBX_DTYPE_INT32: lo = -2147483648.0, hi = 2147483647.0, name = "int"; break;
    case FBX_DTYPE_INT64: lo = -9223372036854775808.0, hi = 9223372036854775807.0, name = "int64_t"; break;
    case FBX_DTYPE_FLOAT16: lo = -65504, hi = 65504, name = "c10::Half"; break;
    case FBX_DTYPE_BFLOAT16: lo = -3.3895313892515355e38, hi = 3.3895313892515355e38, name = "c10::BFloat16"; break;
    case FBX_DTYPE_FLOAT32: lo = -3.4028234663852886e38, hi = 3.4028234663852886e38, name = "float"; break;
    default: break;
  }
  bool bad = false;
  if (name && v->kind == FBX_IV_FLOAT) {
    double x = v->u.f;
    if (fbx_dtype_is_floating(d)) bad = isfinite(x) && (x < lo || x > hi);
    else bad = !(x >= lo && x <= hi);
  } else if (name && v->kind == FBX_IV_INT && d != FBX_DTYPE_INT64) {
    int64_t x = v->u.i;
    if (d == FBX_DTYPE_UINT8) bad = x > 255 || (x < 0 && x < -255);
    else bad = (double)x < lo || (double)x > hi;
  }
  if (bad) return fbx_kernel_error(ctx, "value cannot be converted to type %s without overflow", name);
  fbx_pw_scalar_as(v, d, f, i);
  return NULL;
}
