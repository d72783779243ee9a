/* Kernels for the indexing rows of ops/list_extra.h: gather, scatter,
 * scatter_add, index (advanced indexing), index_put(_), masked_select,
 * embedding, one_hot.
 *
 * Data is moved by element size (1, 2, 4 or 8 bytes), never through a
 * per-element dtype switch; index tensors are first turned into contiguous
 * int64 copies and checked once, so the inner loops only compute offsets.
 * Outputs are fresh contiguous tensors (index_put_ writes into self). */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kutil.h"
#include "tensor/half.h"

/* Copy one element of es bytes. The switch is on a loop-invariant value:
 * compilers hoist it (unswitching) and each case is one move. */
static inline void elem_copy(char *dst, const char *src, size_t es) {
  switch (es) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    default: memcpy(dst, src, 8); break;
  }
}

/* A contiguous int64 copy of an index tensor (integral dtypes only). */
static fbx_status *index_long(const fbx_kctx *ctx, fbx_tensor *idx, fbx_tensor **out, bool int64_only,
                              const char *what) {
  if (int64_only ? idx->dtype != FBX_DTYPE_INT64 : !fbx_dtype_is_integral(idx->dtype))
    return fbx_kernel_error(ctx, "Expected dtype int64 for %s, got %s", what, fbx_dtype_name(idx->dtype));
  return fbx_tensor_clone_as(out, idx, FBX_DTYPE_INT64);
}

/* ---- gather / scatter --------------------------------------------------------------------- */

/* The offset (in elements) of logical index lin of a tensor with `sizes`,
 * laid over `strides`, skipping dim `skip` (-1 none). */
static inline int64_t offset_of(int64_t lin, int ndim, const int64_t *sizes, const int64_t *strides, int skip,
                                int64_t *coord_skip) {
  int64_t off = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    int64_t c = sizes[d] ? lin % sizes[d] : 0;
    lin = sizes[d] ? lin / sizes[d] : 0;
    if (d == skip) *coord_skip = c;
    else off += c * strides[d];
  }
  return off;
}

typedef struct gather_job {
  const char *src;
  char *dst;
  const int64_t *idx;
  size_t es;
  int ndim, dim;
  const int64_t *isizes, *sstrides;
} gather_job;

static void gather_body(void *p, int64_t begin, int64_t end) {
  gather_job *j = p;
  for (int64_t i = begin; i < end; i++) {
    int64_t cd = 0, off = offset_of(i, j->ndim, j->isizes, j->sstrides, j->dim, &cd);
    (void)cd;
    off += j->idx[i] * j->sstrides[j->dim];
    elem_copy(j->dst + (size_t)i * j->es, j->src + (size_t)off * j->es, j->es);
  }
}

/* index must have self's number of dims (a 0-d tensor counts as 1-d) and be
 * no larger than self in every dim but `dim`, whose entries lie in
 * [0, self.size(dim)). Negative indices are errors (PyTorch does not wrap). */
static fbx_status *check_scatter_index(const fbx_kctx *ctx, const fbx_tensor *self, const fbx_tensor *idx,
                                       const int64_t *iv, int64_t dim, const fbx_tensor *src, const char *op) {
  int sn = self->ndim ? self->ndim : 1, in = idx->ndim ? idx->ndim : 1;
  if (idx->numel == 0) return NULL;
  if (sn != in) return fbx_kernel_error(ctx, "Index tensor must have the same number of dimensions as %s tensor", op);
  for (int d = 0; d < idx->ndim; d++) {
    int64_t ss = self->ndim ? self->sizes[d] : 1;
    if (d != dim && idx->sizes[d] > ss)
      return fbx_kernel_error(ctx, "Size does not match at dimension %d expected index [%" PRId64 "] to be smaller than self [%" PRId64 "] apart from dimension %d",
                              d, idx->sizes[d], ss, (int)dim);
    if (src && src->ndim == idx->ndim && idx->sizes[d] > src->sizes[d])
      return fbx_kernel_error(ctx, "Size does not match at dimension %d expected index [%" PRId64 "] to be smaller than src [%" PRId64 "]",
                              d, idx->sizes[d], src->sizes[d]);
  }
  int64_t lim = self->ndim ? self->sizes[dim] : 1;
  for (int64_t i = 0; i < idx->numel; i++)
    if (iv[i] < 0 || iv[i] >= lim)
      return fbx_kernel_error(ctx, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, iv[i],
                              (int)dim, lim);
  return NULL;
}

/* aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor */
fbx_status *fbx_k_gather(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *index, *sc = NULL, *ic = NULL, *out = NULL;
  int64_t dim;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &index));
  FBX_TRY(fbx_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[1]), self->ndim));
  fbx_status *st = index_long(ctx, index, &ic, true, "index in gather");
  if (!st) st = check_scatter_index(ctx, self, index, ic->data, dim, NULL, "input");
  if (!st) st = fbx_tensor_contiguous(&sc, self);
  if (!st) st = fbx_tensor_empty(&out, self->dtype, index->ndim, index->sizes);
  if (!st && out->numel) {
    int64_t one = 1, sstr[FBX_MAX_DIMS] = {1};
    int nd = index->ndim;
    const int64_t *isz = nd ? index->sizes : &one;
    if (nd) memcpy(sstr, sc->strides, sizeof(int64_t) * (size_t)nd);
    gather_job j = {sc->data, out->data, ic->data, fbx_dtype_size(self->dtype), nd ? nd : 1, (int)dim, isz, sstr};
    fbx_parallel_for(out->numel, 1 << 15, gather_body, &j);
  }
  fbx_tensor_release(sc);
  fbx_tensor_release(ic);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

#define SCATTER_ADD_(T)                                      \
  do {                                                       \
    T *o_ = (T *)out->data;                                  \
    const T *s_ = (const T *)srcc->data;                     \
    for (int64_t i = 0; i < n; i++) o_[doff[i]] += s_[soff[i]]; \
  } while (0)

/* aten::scatter.src / scatter.value / scatter_add: out = self.clone(), then
 * out[..., index[i], ...] = src[i] (or value, or += src[i]) along dim.
 * src is read at index's coordinates with its own strides, so it may be
 * larger than index. Duplicate indices: the last write wins (scatter). */
fbx_status *fbx_k_scatter(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *index, *src = NULL, *ic = NULL, *out = NULL, *srcc = NULL;
  int64_t dim, *doff = NULL, *soff = NULL;
  bool add = ctx->op->id == FBX_OP_scatter_add, value = ctx->op->id == FBX_OP_scatter_value;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &index));
  if (!value) FBX_TRY(fbx_arg_tensor(ctx, args, 3, &src));
  FBX_TRY(fbx_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[1]), self->ndim));
  if (src && src->dtype != self->dtype)
    return fbx_kernel_error(ctx, "Expected self.dtype to be equal to src.dtype (%s vs %s)", fbx_dtype_name(self->dtype),
                            fbx_dtype_name(src->dtype));
  if (src && index->numel && (src->ndim ? src->ndim : 1) != (index->ndim ? index->ndim : 1))
    return fbx_kernel_error(ctx, "Index tensor must have the same number of dimensions as src tensor");
  fbx_status *st = index_long(ctx, index, &ic, true, "index in scatter");
  if (!st) st = check_scatter_index(ctx, self, index, ic->data, dim, src, "self");
  if (!st) st = fbx_tensor_clone_as(&out, self, self->dtype);
  if (!st && value) {
    st = fbx_tensor_empty(&srcc, self->dtype, index->ndim, index->sizes);
    if (!st) {
      fbx_tensor *v = NULL;
      st = fbx_scalar_tensor(&v, &args[3], self->dtype);
      if (!st) st = fbx_tensor_copy_(srcc, v);
      fbx_tensor_release(v);
    }
  } else if (!st) {
    srcc = fbx_tensor_retain(src);
  }
  int64_t n = index->numel;
  if (!st && n) {
    doff = fbx_malloc(sizeof *doff * (size_t)n);
    soff = fbx_malloc(sizeof *soff * (size_t)n);
    if (!doff || !soff) st = fbx_status_nomem();
  }
  if (!st && n) {
    int nd = index->ndim ? index->ndim : 1;
    int64_t one = 1, z[1] = {1};
    const int64_t *isz = index->ndim ? index->sizes : &one;
    const int64_t *ostr = self->ndim ? out->strides : z, *sstr = srcc->ndim ? srcc->strides : z;
    const int64_t *iv = ic->data;
    for (int64_t i = 0; i < n; i++) {
      int64_t c = 0;
      doff[i] = offset_of(i, nd, isz, ostr, (int)dim, &c) + iv[i] * ostr[dim];
      soff[i] = offset_of(i, nd, isz, sstr, -1, &c);
    }
    size_t es = fbx_dtype_size(self->dtype);
    const char *s = (const char *)srcc->data;
    char *o = (char *)out->data;
    if (!add) {
      for (int64_t i = 0; i < n; i++) elem_copy(o + (size_t)doff[i] * es, s + (size_t)soff[i] * es, es);
    } else {
      switch (self->dtype) {
        case FBX_DTYPE_FLOAT32: SCATTER_ADD_(float); break;
        case FBX_DTYPE_FLOAT64: SCATTER_ADD_(double); break;
        case FBX_DTYPE_INT64: SCATTER_ADD_(int64_t); break;
        case FBX_DTYPE_INT32: SCATTER_ADD_(int32_t); break;
        case FBX_DTYPE_INT16: SCATTER_ADD_(int16_t); break;
        case FBX_DTYPE_INT8: SCATTER_ADD_(int8_t); break;
        case FBX_DTYPE_UINT8: SCATTER_ADD_(uint8_t); break;
        case FBX_DTYPE_FLOAT16: {
          uint16_t *oh = (uint16_t *)out->data;
          const uint16_t *sh = (const uint16_t *)srcc->data;
          for (int64_t i = 0; i < n; i++)
            oh[doff[i]] = fbx_float_to_half(fbx_half_to_float(oh[doff[i]]) + fbx_half_to_float(sh[soff[i]]));
          break;
        }
        case FBX_DTYPE_BFLOAT16: {
          uint16_t *oh = (uint16_t *)out->data;
          const uint16_t *sh = (const uint16_t *)srcc->data;
          for (int64_t i = 0; i < n; i++)
            oh[doff[i]] = fbx_float_to_bf16(fbx_bf16_to_float(oh[doff[i]]) + fbx_bf16_to_float(sh[soff[i]]));
          break;
        }
        default: {
          uint8_t *ob = (uint8_t *)out->data;
          const uint8_t *sb = (const uint8_t *)srcc->data;
          for (int64_t i = 0; i < n; i++) ob[doff[i]] = (uint8_t)(ob[doff[i]] | sb[soff[i]]);
          break;
        }
      }
    }
  }
  fbx_free(doff);
  fbx_free(soff);
  fbx_tensor_release(ic);
  fbx_tensor_release(srcc);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* ---- advanced indexing ------------------------------------------------------------------------- */

/* self[indices] decomposed: which dims are indexed, by which (broadcast,
 * contiguous int64, wrapped) index tensors, and the result's shape. */
typedef struct adv_index {
  int ndim;                       /* self's */
  int nidx;                       /* indexed dims */
  int dims[FBX_MAX_DIMS];         /* the indexed dims, ascending */
  fbx_tensor *idx[FBX_MAX_DIMS];  /* int64, contiguous, shape bshape */
  int bnd;                        /* broadcast index shape */
  int64_t bshape[FBX_MAX_DIMS];
  int64_t bnumel;
  bool adjacent;                  /* indexed dims consecutive: result keeps them in place */
  int rnd;                        /* result */
  int64_t rshape[FBX_MAX_DIMS];
  int64_t inner;                  /* product of self's sizes after the last indexed dim */
} adv_index;

static void adv_free(adv_index *a) {
  for (int i = 0; i < a->nidx; i++) fbx_tensor_release(a->idx[i]);
  a->nidx = 0;
}

/* Nonzero coordinates of a bool/uint8 mask covering self dims [first, first+mask.ndim). */
static fbx_status *mask_to_indices(const fbx_kctx *ctx, const fbx_tensor *self, int first, fbx_tensor *mask,
                                   adv_index *a) {
  if (first + mask->ndim > self->ndim)
    return fbx_kernel_error(ctx, "too many indices for tensor of dimension %d", self->ndim);
  for (int k = 0; k < mask->ndim; k++)
    if (mask->sizes[k] != self->sizes[first + k])
      return fbx_kernel_error(ctx, "The shape of the mask [%" PRId64 "] at index %d does not match the shape of the indexed tensor [%" PRId64 "] at index %d",
                              mask->sizes[k], k, self->sizes[first + k], first + k);
  fbx_tensor *m = NULL;
  FBX_TRY(fbx_tensor_clone_as(&m, mask, FBX_DTYPE_BOOL));
  const uint8_t *mv = m->data;
  int64_t nnz = 0;
  for (int64_t i = 0; i < m->numel; i++) nnz += mv[i] != 0;
  int base = a->nidx;
  fbx_status *st = NULL;
  for (int k = 0; k < mask->ndim && !st; k++) {
    st = fbx_tensor_empty(&a->idx[base + k], FBX_DTYPE_INT64, 1, &nnz);
    if (!st) {
      a->dims[base + k] = first + k;
      a->nidx++;
    }
  }
  if (!st) {
    int64_t j = 0;
    for (int64_t i = 0; i < m->numel; i++) {
      if (!mv[i]) continue;
      int64_t lin = i;
      for (int k = mask->ndim - 1; k >= 0; k--) {
        ((int64_t *)a->idx[base + k]->data)[j] = lin % mask->sizes[k];
        lin /= mask->sizes[k];
      }
      j++;
    }
  }
  fbx_tensor_release(m);
  return st;
}

/* Decompose indices (a Tensor?[] ivalue) against self. */
static fbx_status *adv_prepare(const fbx_kctx *ctx, const fbx_tensor *self, const fbx_ivalue *list, adv_index *a) {
  memset(a, 0, sizeof *a);
  a->ndim = self->ndim;
  if (list->kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "indices must be a list of optional tensors");
  int n = fbx_iv_list_len(list), d = 0;
  fbx_status *st = NULL;
  for (int i = 0; i < n && !st; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(list, i);
    if (e->kind == FBX_IV_NONE) {
      d++;
      continue;
    }
    if (e->kind != FBX_IV_TENSOR) {
      st = fbx_kernel_error(ctx, "indices[%d] must be a Tensor or None, got %s", i, fbx_iv_kind_name(e->kind));
      break;
    }
    fbx_tensor *t = e->u.t;
    if (t->dtype == FBX_DTYPE_BOOL || t->dtype == FBX_DTYPE_UINT8) {
      st = mask_to_indices(ctx, self, d, t, a);
      d += t->ndim;
      continue;
    }
    if (t->dtype != FBX_DTYPE_INT64) {
      st = fbx_kernel_error(ctx, "tensors used as indices must be long, byte or bool tensors");
      break;
    }
    if (d >= self->ndim) {
      st = fbx_kernel_error(ctx, "too many indices for tensor of dimension %d (got %d)", self->ndim, n);
      break;
    }
    a->dims[a->nidx] = d++;
    st = fbx_tensor_clone_as(&a->idx[a->nidx], t, FBX_DTYPE_INT64);
    if (!st) a->nidx++;
  }
  if (!st && a->nidx == 0) st = fbx_kernel_error(ctx, "at least one index must be a tensor");
  /* broadcast the index tensors, wrap negative entries and check bounds */
  for (int k = 0; k < a->nidx && !st; k++) st = fbx_broadcast_into(ctx, a->bshape, &a->bnd, a->idx[k]->ndim, a->idx[k]->sizes);
  for (int k = 0; k < a->nidx && !st; k++) {
    fbx_tensor *v = NULL, *c = NULL;
    st = fbx_expand_view(&v, a->idx[k], a->bnd, a->bshape);
    if (!st) st = fbx_tensor_clone_as(&c, v, FBX_DTYPE_INT64);
    fbx_tensor_release(v);
    if (st) break;
    fbx_tensor_release(a->idx[k]);
    a->idx[k] = c;
    int64_t size = self->sizes[a->dims[k]], *iv = c->data;
    for (int64_t i = 0; i < c->numel && !st; i++) {
      if (iv[i] < -size || iv[i] >= size)
        st = fbx_kernel_error(ctx, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, iv[i],
                              a->dims[k], size);
      else if (iv[i] < 0)
        iv[i] += size;
    }
  }
  if (st) {
    adv_free(a);
    return st;
  }
  a->bnumel = 1;
  for (int k = 0; k < a->bnd; k++) a->bnumel *= a->bshape[k];
  a->adjacent = a->dims[a->nidx - 1] - a->dims[0] == a->nidx - 1;
  bool indexed[FBX_MAX_DIMS] = {false};
  for (int k = 0; k < a->nidx; k++) indexed[a->dims[k]] = true;
  int r = 0;
  if (a->adjacent)
    for (int k = 0; k < a->dims[0]; k++) a->rshape[r++] = self->sizes[k];
  for (int k = 0; k < a->bnd; k++) a->rshape[r++] = a->bshape[k];
  for (int k = a->adjacent ? a->dims[0] : 0; k < self->ndim; k++)
    if (!indexed[k]) a->rshape[r++] = self->sizes[k];
  if (r > FBX_MAX_DIMS) {
    adv_free(a);
    return fbx_kernel_error(ctx, "the result would have more than %d dims", FBX_MAX_DIMS);
  }
  a->rnd = r;
  a->inner = 1;
  for (int k = a->dims[a->nidx - 1] + 1; k < self->ndim; k++) a->inner *= self->sizes[k];
  return NULL;
}

/* The offset in contiguous self (strides `st`) of result row `row` (result
 * index with the trailing `inner` block divided out). */
static int64_t adv_row_offset(const adv_index *a, const int64_t *sstr, const int64_t *ssizes, int64_t row) {
  /* result dims without the trailing block: in the adjacent layout
   * [before..., B..., between(none)...]; else [B..., non-indexed before the last indexed dim...] */
  bool indexed[FBX_MAX_DIMS] = {false};
  for (int k = 0; k < a->nidx; k++) indexed[a->dims[k]] = true;
  int last = a->dims[a->nidx - 1];
  int64_t off = 0, b = 0;
  /* walk the non-B, non-trailing result dims from the innermost outward */
  int nfree = 0, free_dims[FBX_MAX_DIMS];
  for (int k = 0; k < last; k++)
    if (!indexed[k]) free_dims[nfree++] = k;
  if (a->adjacent) {
    /* row = (before coords) * bnumel + b */
    b = row % a->bnumel;
    row /= a->bnumel;
    for (int f = nfree - 1; f >= 0; f--) {
      int k = free_dims[f];
      off += (row % ssizes[k]) * sstr[k];
      row /= ssizes[k];
    }
  } else {
    for (int f = nfree - 1; f >= 0; f--) {
      int k = free_dims[f];
      off += (row % ssizes[k]) * sstr[k];
      row /= ssizes[k];
    }
    b = row;
  }
  for (int k = 0; k < a->nidx; k++) off += ((const int64_t *)a->idx[k]->data)[b] * sstr[a->dims[k]];
  return off;
}

typedef struct index_job {
  const adv_index *a;
  const fbx_tensor *src; /* contiguous self */
  char *dst;
  size_t block;          /* inner * es bytes */
} index_job;

static void index_body(void *p, int64_t begin, int64_t end) {
  index_job *j = p;
  size_t es = fbx_dtype_size(j->src->dtype);
  for (int64_t row = begin; row < end; row++) {
    int64_t off = adv_row_offset(j->a, j->src->strides, j->src->sizes, row);
    memcpy(j->dst + (size_t)row * j->block, (const char *)j->src->data + (size_t)off * es, j->block);
  }
}

/* aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
 * PyTorch's advanced indexing: None entries keep a dim, bool masks select
 * their nonzero positions, index tensors broadcast together; the indexed
 * dims are replaced by the broadcast shape in place when they are adjacent,
 * else it goes first. */
fbx_status *fbx_k_index(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *sc = NULL, *out = NULL;
  adv_index a;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(adv_prepare(ctx, self, &args[1], &a));
  fbx_status *st = fbx_tensor_contiguous(&sc, self);
  if (!st) st = fbx_tensor_empty(&out, self->dtype, a.rnd, a.rshape);
  if (!st && out->numel) {
    index_job j = {&a, sc, out->data, (size_t)a.inner * fbx_dtype_size(self->dtype)};
    int64_t rows = out->numel / a.inner;
    fbx_parallel_for(rows, 1 + (1 << 16) / (a.inner ? a.inner : 1), index_body, &j);
  }
  fbx_tensor_release(sc);
  adv_free(&a);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

#define INDEX_ACC_(T)                                                    \
  do {                                                                   \
    T *o = (T *)((char *)w->data + (size_t)off * es);                    \
    const T *s = (const T *)((const char *)vc->data + (size_t)row * blk); \
    for (int64_t q = 0; q < a.inner; q++) o[q] += s[q];                  \
  } while (0)

/* aten::index_put(_)(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False)
 * values broadcast to the shape self[indices] has and are converted to
 * self's dtype; rows are written in order (a repeated index keeps the last
 * value unless accumulate). index_put_ writes into self and returns it. */
fbx_status *fbx_k_index_put(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *values, *w = NULL, *vv = NULL, *vc = NULL;
  adv_index a;
  bool acc = fbx_iv_to_int(&args[3]) != 0, inplace = ctx->op->id == FBX_OP_index_put_;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &values));
  FBX_TRY(adv_prepare(ctx, self, &args[1], &a));
  fbx_status *st = fbx_tensor_clone_as(&w, self, self->dtype);
  if (!st) {
    st = fbx_expand_view(&vv, values, a.rnd, a.rshape);
    if (st && fbx_status_code(st) != FBX_ERR_NOMEM) {
      fbx_status_free(st);
      st = fbx_kernel_error(ctx, "shape mismatch: values of %d dims cannot be broadcast to the indexing result of %d dims",
                            values->ndim, a.rnd);
    }
  }
  if (!st) st = fbx_tensor_clone_as(&vc, vv, self->dtype);
  if (!st) {
    size_t es = fbx_dtype_size(self->dtype), blk = (size_t)a.inner * es;
    int64_t rows = 1;
    for (int k = 0; k < a.rnd; k++) rows *= a.rshape[k];
    rows = a.inner ? rows / a.inner : 0;
    for (int64_t row = 0; row < rows; row++) {
      int64_t off = adv_row_offset(&a, w->strides, w->sizes, row);
      if (!acc) {
        memcpy((char *)w->data + (size_t)off * es, (const char *)vc->data + (size_t)row * blk, blk);
        continue;
      }
      switch (self->dtype) {
        case FBX_DTYPE_FLOAT32: INDEX_ACC_(float); break;
        case FBX_DTYPE_FLOAT64: INDEX_ACC_(double); break;
        case FBX_DTYPE_INT64: INDEX_ACC_(int64_t); break;
        case FBX_DTYPE_INT32: INDEX_ACC_(int32_t); break;
        default:
          for (int64_t q = 0; q < a.inner; q++)
            fbx_tensor_set_f64(w, off + q, fbx_tensor_get_f64(w, off + q) + fbx_tensor_get_f64(vc, row * a.inner + q));
          break;
      }
    }
  }
  if (!st && inplace) st = fbx_tensor_copy_(self, w);
  fbx_tensor_release(vv);
  fbx_tensor_release(vc);
  adv_free(&a);
  if (st) {
    fbx_tensor_release(w);
    return st;
  }
  if (inplace) {
    fbx_tensor_release(w);
    fbx_set_out_tensor(outs, 0, fbx_tensor_retain(self));
  } else {
    fbx_set_out_tensor(outs, 0, w);
  }
  return NULL;
}

/* aten::masked_select(Tensor self, Tensor mask) -> Tensor: the elements of
 * self (broadcast with mask) where mask is true, as a 1-D tensor. */
fbx_status *fbx_k_masked_select(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *mask, *sv = NULL, *mv = NULL, *sc = NULL, *mc = NULL, *out = NULL;
  int64_t shape[FBX_MAX_DIMS];
  int nd;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &mask));
  if (mask->dtype != FBX_DTYPE_BOOL && mask->dtype != FBX_DTYPE_UINT8)
    return fbx_kernel_error(ctx, "masked_select: expected BoolTensor for mask");
  FBX_TRY(fbx_broadcast_shapes(ctx, shape, &nd, self, mask));
  fbx_status *st = fbx_expand_view(&sv, self, nd, shape);
  if (!st) st = fbx_expand_view(&mv, mask, nd, shape);
  if (!st) st = fbx_tensor_clone_as(&sc, sv, self->dtype);
  if (!st) st = fbx_tensor_clone_as(&mc, mv, FBX_DTYPE_BOOL);
  if (!st) {
    const uint8_t *m = mc->data;
    int64_t cnt = 0;
    for (int64_t i = 0; i < mc->numel; i++) cnt += m[i] != 0;
    st = fbx_tensor_empty(&out, self->dtype, 1, &cnt);
    if (!st) {
      size_t es = fbx_dtype_size(self->dtype);
      char *o = out->data;
      for (int64_t i = 0; i < mc->numel; i++)
        if (m[i]) {
          elem_copy(o, (const char *)sc->data + (size_t)i * es, es);
          o += es;
        }
    }
  }
  fbx_tensor_release(sv);
  fbx_tensor_release(mv);
  fbx_tensor_release(sc);
  fbx_tensor_release(mc);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* aten::embedding(Tensor weight, Tensor indices, int padding_idx=-1, ...) -> Tensor
 * Rows of the 2-D weight picked by indices (int64 or int32); the result has
 * indices' shape plus weight's row length. padding_idx only matters for the
 * gradient. */
fbx_status *fbx_k_embedding(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *w, *idx, *wc = NULL, *ic = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &w));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &idx));
  if (w->ndim != 2) return fbx_kernel_error(ctx, "'weight' must be 2-D");
  if (idx->dtype != FBX_DTYPE_INT64 && idx->dtype != FBX_DTYPE_INT32)
    return fbx_kernel_error(ctx, "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got %s instead",
                            fbx_dtype_name(idx->dtype));
  if (idx->ndim + 1 > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "too many dims");
  fbx_status *st = fbx_tensor_clone_as(&ic, idx, FBX_DTYPE_INT64);
  if (!st) {
    const int64_t *iv = ic->data;
    for (int64_t i = 0; i < ic->numel && !st; i++)
      if (iv[i] < 0 || iv[i] >= w->sizes[0]) st = fbx_kernel_error(ctx, "index out of range in self");
  }
  if (!st) st = fbx_tensor_contiguous(&wc, w);
  if (!st) {
    int64_t shape[FBX_MAX_DIMS];
    memcpy(shape, idx->sizes, sizeof(int64_t) * (size_t)idx->ndim);
    shape[idx->ndim] = w->sizes[1];
    st = fbx_tensor_empty(&out, w->dtype, idx->ndim + 1, shape);
  }
  if (!st) {
    size_t row = (size_t)w->sizes[1] * fbx_dtype_size(w->dtype);
    const int64_t *iv = ic->data;
    for (int64_t i = 0; i < ic->numel; i++)
      memcpy((char *)out->data + (size_t)i * row, (const char *)wc->data + (size_t)iv[i] * row, row);
  }
  fbx_tensor_release(wc);
  fbx_tensor_release(ic);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* aten::one_hot(Tensor self, int num_classes=-1) -> Tensor (int64)
 * self must be int64; num_classes -1 means max(self) + 1. */
fbx_status *fbx_k_one_hot(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *ic = NULL, *out = NULL;
  int64_t nc = fbx_iv_to_int(&args[1]);
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  if (self->dtype != FBX_DTYPE_INT64) return fbx_kernel_error(ctx, "one_hot is only applicable to index tensor.");
  if (self->ndim + 1 > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "too many dims");
  FBX_TRY(fbx_tensor_contiguous(&ic, self));
  const int64_t *iv = ic->data;
  fbx_status *st = NULL;
  if (self->numel == 0 && nc == -1)
    st = fbx_kernel_error(ctx, "Can not infer total number of classes from empty tensor.");
  int64_t mx = -1;
  for (int64_t i = 0; i < ic->numel && !st; i++) {
    if (iv[i] < 0) st = fbx_kernel_error(ctx, "Class values must be non-negative.");
    if (iv[i] > mx) mx = iv[i];
  }
  if (!st && nc == -1) nc = mx + 1;
  else if (!st && mx >= nc) st = fbx_kernel_error(ctx, "Class values must be smaller than num_classes.");
  if (!st) {
    int64_t shape[FBX_MAX_DIMS];
    memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    shape[self->ndim] = nc;
    st = fbx_tensor_zeros(&out, FBX_DTYPE_INT64, self->ndim + 1, shape);
  }
  if (!st)
    for (int64_t i = 0; i < ic->numel; i++) ((int64_t *)out->data)[i * nc + iv[i]] = 1;
  fbx_tensor_release(ic);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}
