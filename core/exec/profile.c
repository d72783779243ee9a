/* Profiles: the types a function's values had in its profiling runs.
 *
 * An observation is merged field by field: what every run agreed on is kept,
 * what differed is forgotten (dtype undefined, rank -1, a size -1, strides
 * unknown). Only tensors, ints, floats and bools are told apart; anything
 * else (lists, None, ...) is recorded as "other" and never specialized on.
 */
#include <string.h>

#include "base/alloc.h"
#include "exec/execimpl.h"

static fbx_obs_kind kind_of(const fbx_ivalue *v) {
  switch (v->kind) {
    case FBX_IV_TENSOR: return v->u.t ? FBX_OBS_TENSOR : FBX_OBS_OTHER;
    case FBX_IV_INT: return FBX_OBS_INT;
    case FBX_IV_FLOAT: return FBX_OBS_FLOAT;
    case FBX_IV_BOOL: return FBX_OBS_BOOL;
    default: return FBX_OBS_OTHER;
  }
}

static void from_value(fbx_obs *o, const fbx_ivalue *v) {
  memset(o, 0, sizeof *o);
  o->kind = kind_of(v);
  o->dtype = FBX_DTYPE_UNDEFINED;
  o->ndim = -1;
  if (o->kind != FBX_OBS_TENSOR) return;
  const fbx_tensor *t = v->u.t;
  o->dtype = t->dtype;
  o->ndim = t->ndim;
  o->strides_known = true;
  o->contiguous = fbx_tensor_is_contiguous(t) != 0;
  for (int d = 0; d < t->ndim; d++) {
    o->sizes[d] = t->sizes[d];
    o->strides[d] = t->strides[d];
  }
}

void fbx_obs_merge(fbx_obs *into, const fbx_obs *from) {
  if (from->kind == FBX_OBS_UNSEEN) return;
  if (into->kind == FBX_OBS_UNSEEN) {
    *into = *from;
    return;
  }
  if (into->kind != from->kind) {
    memset(into, 0, sizeof *into);
    into->kind = FBX_OBS_OTHER;
    into->dtype = FBX_DTYPE_UNDEFINED;
    into->ndim = -1;
    return;
  }
  if (into->kind != FBX_OBS_TENSOR) return;
  if (into->dtype != from->dtype) into->dtype = FBX_DTYPE_UNDEFINED;
  into->contiguous = into->contiguous && from->contiguous;
  if (into->ndim != from->ndim) {
    into->ndim = -1;
    into->strides_known = false;
    memset(into->sizes, 0, sizeof into->sizes);
    memset(into->strides, 0, sizeof into->strides);
    return;
  }
  for (int d = 0; d < into->ndim; d++) {
    if (into->sizes[d] != from->sizes[d]) into->sizes[d] = -1;
    if (into->strides[d] != from->strides[d]) into->strides_known = false;
  }
  if (!from->strides_known) into->strides_known = false;
  if (!into->strides_known) memset(into->strides, 0, sizeof into->strides);
}

void fbx_obs_record(fbx_obs *o, const fbx_ivalue *v) {
  fbx_obs one;
  from_value(&one, v);
  fbx_obs_merge(o, &one);
}

void fbx_obs_generalize(fbx_obs *o) {
  if (o->kind != FBX_OBS_TENSOR || o->ndim < 0) return;
  for (int d = 0; d < o->ndim; d++)
    if (o->sizes[d] != 1) o->sizes[d] = -1;
  o->strides_known = false;
  memset(o->strides, 0, sizeof o->strides);
}

fbx_type *fbx_obs_type(fbx_arena *a, const fbx_obs *o, const fbx_type *declared) {
  if (o->kind != FBX_OBS_TENSOR || !declared || declared->kind != FBX_TYPE_TENSOR) return NULL;
  if (o->dtype == FBX_DTYPE_UNDEFINED && o->ndim < 0) return NULL;
  int64_t sizes[FBX_MAX_DIMS];
  for (int d = 0; d < o->ndim; d++) sizes[d] = o->sizes[d] >= 0 ? o->sizes[d] : FBX_SIZE_UNKNOWN;
  return fbx_type_tensor(a, o->dtype, o->ndim, o->ndim > 0 ? sizes : NULL, o->strides_known ? o->strides : NULL, 0,
                         "cpu");
}

fbx_status *fbx_profile_init(fbx_profile *p, int n) {
  p->n = n;
  p->obs = fbx_calloc(n > 0 ? (size_t)n : 1, sizeof *p->obs);
  return p->obs ? NULL : fbx_status_nomem();
}

void fbx_profile_free(fbx_profile *p) {
  fbx_free(p->obs);
  p->obs = NULL;
  p->n = 0;
}

void fbx_profile_merge(fbx_profile *into, const fbx_profile *from) {
  int n = into->n < from->n ? into->n : from->n;
  for (int i = 0; i < n; i++) fbx_obs_merge(&into->obs[i], &from->obs[i]);
}

void fbx_profile_observe(void *ctx, const fbx_node *node, const fbx_ivalue *outs, int nouts) {
  fbx_profile *p = ctx;
  for (int i = 0; i < nouts; i++) {
    uint32_t id = node->outputs[i]->id;
    if (id < (uint32_t)p->n) fbx_obs_record(&p->obs[id], &outs[i]);
  }
}
