/* Type guards: does a group's input still look like what was profiled?
 *
 * A guard is one fbx_obs per group input. Unknown parts (an undefined dtype,
 * rank -1, a size -1, strides not known) accept anything; strides are
 * compared exactly when known, otherwise contiguity is required when every
 * profiled tensor was contiguous (fused kernels index contiguous inputs).
 */
#include <string.h>

#include "exec/execimpl.h"

static const char *obs_kind_name(fbx_obs_kind k) {
  switch (k) {
    case FBX_OBS_TENSOR: return "Tensor";
    case FBX_OBS_INT: return "int";
    case FBX_OBS_FLOAT: return "float";
    case FBX_OBS_BOOL: return "bool";
    default: return "any";
  }
}

static void print_dims(fbx_strbuf *b, const int64_t *v, int n) {
  fbx_strbuf_putc(b, '[');
  for (int d = 0; d < n; d++) {
    if (d) fbx_strbuf_puts(b, ", ");
    if (v[d] < 0) fbx_strbuf_putc(b, '*');
    else fbx_strbuf_printf(b, "%lld", (long long)v[d]);
  }
  fbx_strbuf_putc(b, ']');
}

void fbx_guard_print(fbx_strbuf *b, const fbx_obs *o) {
  if (o->kind != FBX_OBS_TENSOR) {
    fbx_strbuf_puts(b, obs_kind_name(o->kind));
    return;
  }
  fbx_strbuf_puts(b, o->dtype == FBX_DTYPE_UNDEFINED ? "Tensor" : fbx_dtype_name(o->dtype));
  if (o->ndim < 0) return;
  print_dims(b, o->sizes, o->ndim);
  if (o->strides_known) {
    fbx_strbuf_puts(b, " strides=");
    print_dims(b, o->strides, o->ndim);
  } else if (o->contiguous) {
    fbx_strbuf_puts(b, " contiguous");
  }
}

static fbx_obs_kind value_kind(const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_TENSOR: return FBX_OBS_TENSOR;
    case FBX_IV_INT: return FBX_OBS_INT;
    case FBX_IV_FLOAT: return FBX_OBS_FLOAT;
    case FBX_IV_BOOL: return FBX_OBS_BOOL;
    default: return FBX_OBS_OTHER;
  }
}

static bool check_one(const fbx_obs *g, const fbx_ivalue *v, int i, fbx_strbuf *why) {
  if (g->kind == FBX_OBS_UNSEEN || g->kind == FBX_OBS_OTHER) return true;
  fbx_obs_kind k = value_kind(v);
  if (k != g->kind) {
    if (why) fbx_strbuf_printf(why, "input %d: %s vs guard %s", i, fbx_iv_kind_name(v->kind), obs_kind_name(g->kind));
    return false;
  }
  if (k != FBX_OBS_TENSOR) return true;
  const fbx_tensor *t = v->u.t;
  if (g->dtype != FBX_DTYPE_UNDEFINED && t->dtype != g->dtype) {
    if (why) fbx_strbuf_printf(why, "input %d: dtype %s vs guard %s", i, fbx_dtype_name(t->dtype), fbx_dtype_name(g->dtype));
    return false;
  }
  if (g->ndim < 0) return true;
  if (t->ndim != g->ndim) {
    if (why) {
      fbx_strbuf_printf(why, "input %d: sizes ", i);
      print_dims(why, t->sizes, t->ndim);
      fbx_strbuf_puts(why, " vs guard ");
      print_dims(why, g->sizes, g->ndim);
      fbx_strbuf_printf(why, " (rank %d vs %d)", t->ndim, g->ndim);
    }
    return false;
  }
  for (int d = 0; d < t->ndim; d++)
    if (g->sizes[d] >= 0 && t->sizes[d] != g->sizes[d]) {
      if (why) {
        fbx_strbuf_printf(why, "input %d: sizes ", i);
        print_dims(why, t->sizes, t->ndim);
        fbx_strbuf_puts(why, " vs guard ");
        print_dims(why, g->sizes, g->ndim);
      }
      return false;
    }
  if (g->strides_known) {
    for (int d = 0; d < t->ndim; d++)
      if (t->strides[d] != g->strides[d]) {
        if (why) {
          fbx_strbuf_printf(why, "input %d: strides ", i);
          print_dims(why, t->strides, t->ndim);
          fbx_strbuf_puts(why, " vs guard ");
          print_dims(why, g->strides, g->ndim);
        }
        return false;
      }
  } else if (g->contiguous && !fbx_tensor_is_contiguous(t)) {
    if (why) {
      fbx_strbuf_printf(why, "input %d: strides ", i);
      print_dims(why, t->strides, t->ndim);
      fbx_strbuf_puts(why, " vs guard contiguous");
    }
    return false;
  }
  return true;
}

bool fbx_guard_check(const fbx_obs *guard, int n, const fbx_ivalue *inputs, fbx_strbuf *why) {
  for (int i = 0; i < n; i++)
    if (!check_one(&guard[i], &inputs[i], i, why)) return false;
  return true;
}
