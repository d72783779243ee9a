/* Kernels for the indexing rows of ops/list_extra.h: gather, scatter,
 * scatter_add, index (advanced indexing), index_put(_), masked_select,
 * embedding, one_hot, embedding_bag (and its two backward rows of
 * ops/list_backward.h).
 *
 * Data is moved by element size (1, 2, 4 or 8 bytes), never through a
 * per-element dtype switch; index tensors are first turned into contiguous
 * int64 copies and checked once, so the inner loops only compute offsets.
 * Outputs are fresh contiguous tensors (index_put_ writes into self). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kcompose.h"
#include "ops/kutil.h"
#include "ops/reduce.h"
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

/* aten::index_add(self, dim, index, source, *, alpha=1): self.clone() with
 * alpha * source's slice i added at slice index[i] along dim (duplicates
 * accumulate): scatter_add with index expanded to source's shape, so the
 * index checks and the accumulation are scatter_add's. index is 1-D (or
 * 0-d), int64 or int32, with source.size(dim) entries; source has self's
 * sizes but along dim. */
fbx_status *fbx_k_index_add(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *index, *src;
  int64_t dim;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &index));
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &src));
  FBX_TRY(fbx_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[1]), self->ndim));
  if (index->ndim > 1) return fbx_kernel_error(ctx, "index_add_(): Index is supposed to be a vector");
  if (index->dtype != FBX_DTYPE_INT64 && index->dtype != FBX_DTYPE_INT32)
    return fbx_kernel_error(ctx, "index_add_(): Expected dtype int32/int64 for index");
  if (src->dtype != self->dtype)
    return fbx_kernel_error(ctx, "index_add_(): self (%s) and source (%s) must have the same scalar type",
                            fbx_dtype_torch_name(self->dtype), fbx_dtype_torch_name(src->dtype));
  int sd = src->ndim ? src->ndim : 1, xd = self->ndim ? self->ndim : 1;
  bool ok = sd == xd;
  for (int d = 0; ok && d < self->ndim; d++) ok = d == dim || src->sizes[d] == self->sizes[d];
  int64_t n = index->numel, len = src->ndim ? src->sizes[dim] : 1;
  if (!ok || n != len) {
    char a[256], b[256];
    fbx_red_shape_str(a, sizeof a, src->ndim, src->sizes);
    fbx_red_shape_str(b, sizeof b, self->ndim, self->sizes);
    return fbx_kernel_error(ctx, "index_add_(): source of shape %s does not fit self of shape %s along dim %" PRId64
                                 " with %" PRId64 " indices (source must be self's shape with %" PRId64
                                 " along dim %" PRId64 ")", a, b, dim, n, n, dim);
  }
  /* index viewed as [1, .., n, .., 1] and expanded to source's shape */
  int64_t vs[FBX_MAX_DIMS], vst[FBX_MAX_DIMS];
  for (int d = 0; d < src->ndim; d++) vs[d] = d == dim ? n : 1;
  fbx_tensor *il = NULL, *iv = NULL, *ie = NULL, *scaled = NULL, *out = NULL;
  fbx_status *st = fbx_tensor_clone_as(&il, index, FBX_DTYPE_INT64); /* scatter takes int64 */
  if (!st) index = il;
  for (int d = 0; d < src->ndim; d++) vst[d] = d == dim && index->ndim ? index->strides[0] : 0;
  if (!st && src->ndim) st = fbx_tensor_view(&iv, index, src->ndim, vs, vst, index->offset);
  if (!st) st = src->ndim ? fbx_expand_view(&ie, iv, src->ndim, src->sizes) : NULL;
  if (!st) st = fbx_row_tensor(ctx, &scaled, FBX_OP_mul_Scalar, (fbx_ivalue[]){fbx_iv_tensor(src), args[4]}, 2);
  if (!st) {
    fbx_ivalue a[4] = {fbx_iv_tensor(self), fbx_iv_int(dim), fbx_iv_tensor(ie ? ie : index), fbx_iv_tensor(scaled)};
    st = fbx_row_tensor(ctx, &out, FBX_OP_scatter_add, a, 4);
  }
  fbx_tensor_release(il);
  fbx_tensor_release(iv);
  fbx_tensor_release(ie);
  fbx_tensor_release(scaled);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

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

/* ---- embedding_bag ------------------------------------------------------------------------- */

/* What embedding_bag's forward and backward share: contiguous int64 copies
 * of indices and offsets, and the bag of every index (-1: after the last
 * bag, which include_last_offset leaves out). */
typedef struct bags {
  fbx_tensor *idx, *off;
  int64_t nidx, noff, nbags;
  int64_t *bag_of; /* [nidx] */
} bags;

static void bags_release(bags *b) {
  fbx_tensor_release(b->idx);
  fbx_tensor_release(b->off);
  fbx_free(b->bag_of);
}

/* Bag b holds indices [offsets[b], offsets[b + 1]) (the last one up to the
 * end of indices); nbags of them. */
static fbx_status *bags_make(const fbx_kctx *ctx, bags *b, fbx_tensor *indices, fbx_tensor *offsets, int64_t nbags,
                             int64_t nweights) {
  memset(b, 0, sizeof *b);
  fbx_tensor *ts[2] = {indices, offsets};
  for (int k = 0; k < 2; k++) {
    if (ts[k]->dtype != FBX_DTYPE_INT64 && ts[k]->dtype != FBX_DTYPE_INT32)
      return fbx_kernel_error(ctx, "Expected tensor for argument #%d '%s' to have one of the following scalar types: "
                                   "Long, Int; but got %s instead",
                              k + 2, k ? "offsets" : "indices", fbx_dtype_name(ts[k]->dtype));
    if (ts[k]->ndim != 1)
      return fbx_kernel_error(ctx, "%s has to be a 1D Tensor, got %d dims", k ? "offsets" : "input", ts[k]->ndim);
  }
  b->nidx = indices->sizes[0], b->noff = offsets->sizes[0], b->nbags = nbags;
  fbx_status *st = fbx_tensor_clone_as(&b->idx, indices, FBX_DTYPE_INT64);
  if (!st) st = fbx_tensor_clone_as(&b->off, offsets, FBX_DTYPE_INT64);
  if (!st && !(b->bag_of = fbx_malloc(sizeof(int64_t) * (size_t)(b->nidx ? b->nidx : 1)))) st = fbx_status_nomem();
  if (st) {
    bags_release(b);
    return st;
  }
  const int64_t *iv = b->idx->data, *ov = b->off->data;
  if (b->noff > 0 && ov[0] != 0)
    st = fbx_kernel_error(ctx, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               "position 0. However, got %" PRId64,
                          ov[0]);
  if (!st && b->noff > 0 && ov[b->noff - 1] > b->nidx)
    st = fbx_kernel_error(ctx, "offsets[-1] can not be greater than input's length %" PRId64
                               " but got offsets[-1] of %" PRId64,
                          b->nidx, ov[b->noff - 1]);
  for (int64_t k = 1; k < b->noff && !st; k++)
    if (ov[k] < ov[k - 1])
      st = fbx_kernel_error(ctx, "offsets must be non-decreasing, but offsets[%" PRId64 "] < offsets[%" PRId64 "]", k,
                            k - 1);
  for (int64_t i = 0; i < b->nidx && !st; i++)
    if (iv[i] < 0 || iv[i] >= nweights)
      st = fbx_kernel_error(ctx, "index %" PRId64 " is out of range for a weight of %" PRId64 " rows", iv[i], nweights);
  if (st) {
    bags_release(b);
    return st;
  }
  for (int64_t i = 0; i < b->nidx; i++) b->bag_of[i] = -1;
  for (int64_t k = 0; k < nbags; k++) {
    int64_t end = k + 1 < b->noff ? ov[k + 1] : b->nidx;
    for (int64_t i = ov[k]; i < end; i++) b->bag_of[i] = k;
  }
  return NULL;
}

/* The bag's range of indices. */
static inline void bag_range(const bags *b, int64_t k, int64_t *lo, int64_t *hi) {
  const int64_t *ov = b->off->data;
  *lo = ov[k], *hi = k + 1 < b->noff ? ov[k + 1] : b->nidx;
}

typedef struct ebag_job {
  const bags *b;
  const void *w; /* [V, D] contiguous */
  fbx_dtype wdt;
  const double *psw; /* [nidx] or NULL */
  int64_t D, pad, mode;
  double *acc;     /* [nbags, D] */
  int64_t *maxi;   /* [nbags, D] (max) */
  int64_t *count;  /* [nbags]: indices that are not padding */
} ebag_job;

static void ebag_body(void *p, int64_t begin, int64_t end) {
  const ebag_job *j = p;
  const int64_t *iv = j->b->idx->data;
  double row[FBX_RED_CHUNK];
  for (int64_t k = begin; k < end; k++) {
    int64_t lo, hi, n = 0;
    double *a = j->acc + k * j->D;
    int64_t *mi = j->maxi ? j->maxi + k * j->D : NULL;
    bag_range(j->b, k, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
      if (iv[i] == j->pad) continue;
      n++;
      for (int64_t c = 0; c < j->D; c += FBX_RED_CHUNK) {
        int64_t m = j->D - c < FBX_RED_CHUNK ? j->D - c : FBX_RED_CHUNK;
        fbx_red_load_f64(row, j->w, j->wdt, iv[i] * j->D + c, m);
        if (j->mode == 2) { /* the first row, then strictly greater values (a NaN later never wins) */
          for (int64_t q = 0; q < m; q++)
            if (n == 1 || row[q] > a[c + q]) a[c + q] = row[q], mi[c + q] = iv[i];
        } else if (j->psw) {
          for (int64_t q = 0; q < m; q++) a[c + q] += row[q] * j->psw[i];
        } else {
          for (int64_t q = 0; q < m; q++) a[c + q] += row[q];
        }
      }
    }
    if (j->mode == 1 && n > 0)
      for (int64_t q = 0; q < j->D; q++) a[q] /= (double)n;
    j->count[k] = n;
  }
}

/* padding_idx of embedding_bag.padding_idx (None: -1, no padding; a
 * negative one counts from the end), checked against V rows. */
static fbx_status *bag_padding_idx(const fbx_kctx *ctx, const fbx_ivalue *arg, int64_t V, int64_t *out) {
  *out = -1;
  if (arg->kind == FBX_IV_NONE) return NULL;
  int64_t p = fbx_iv_to_int(arg);
  if (p < -V || p >= V)
    return fbx_kernel_error(ctx, "padding_idx must be within the number of embeddings, -%" PRId64 " through %" PRId64
                                 ", but got %" PRId64,
                            V, V - 1, p);
  *out = p < 0 ? p + V : p;
  return NULL;
}

/* aten::embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode,
 * sparse, per_sample_weights?, include_last_offset[, padding_idx?]) ->
 * (output, offset2bag, bag_size, max_indices), the four tensors PyTorch
 * 1.13's CPU kernel returns for a weight that does not require grad:
 *   output [bags, D]: mode 0 sum (times per_sample_weights), 1 mean, 2 max
 *     (the first row, then strictly greater values; per column), over the
 *     bag's indices that are not padding_idx; 0 for an empty bag;
 *   offset2bag [indices]: the bag of each index, or empty where ATen skips
 *     it (mode sum, float32/float16 weight with unit column stride, no
 *     padding_idx, per_sample_weights None or unit stride);
 *   bag_size: mean/max: [bags] counts of non-padding indices; sum: zeros
 *     [offsets];
 *   max_indices: max: [bags, D] the rows chosen (0 for an empty bag); mean:
 *     bag_size again; sum: zeros [offsets].
 * Integer outputs are int32 when indices and offsets both are, else int64.
 * Bags: [offsets[b], offsets[b + 1]), the last to the end of indices, or
 * with include_last_offset the last offset closes the last bag. */
fbx_status *fbx_k_embedding_bag(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *w, *indices, *offsets, *wc = NULL, *pc = NULL, *acc = NULL, *maxi = NULL, *cnt = NULL;
  fbx_tensor *o[4] = {NULL};
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &w));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &indices));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &offsets));
  int64_t mode = fbx_iv_to_int(&args[4]);
  bool ilo = fbx_iv_to_int(&args[7]) != 0;
  const fbx_ivalue *psw = &args[6];
  if (w->ndim != 2) return fbx_kernel_error(ctx, "weight has to be a 2D Tensor, but got a %dD one", w->ndim);
  if (w->dtype != FBX_DTYPE_FLOAT32 && w->dtype != FBX_DTYPE_FLOAT64 && w->dtype != FBX_DTYPE_FLOAT16)
    return fbx_kernel_error(ctx, "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                                 "Half, Float, Double; but got %s instead",
                            fbx_dtype_name(w->dtype));
  if (mode < 0 || mode > 2) return fbx_kernel_error(ctx, "unknown mode %" PRId64 " (0 sum, 1 mean, 2 max)", mode);
  if (psw->kind == FBX_IV_TENSOR) {
    if (mode != 0) return fbx_kernel_error(ctx, "embedding_bag: per_sample_weights only supported with mode='sum'");
    if (psw->u.t->dtype != w->dtype)
      return fbx_kernel_error(ctx, "Expected per_sample_weights of weight's dtype %s, got %s", fbx_dtype_name(w->dtype),
                              fbx_dtype_name(psw->u.t->dtype));
    if (psw->u.t->numel != indices->numel)
      return fbx_kernel_error(ctx, "Expected per_sample_weights.numel() == indices.numel() (%" PRId64 " vs %" PRId64
                                   ")",
                              psw->u.t->numel, indices->numel);
  }
  int64_t V = w->sizes[0], D = w->sizes[1], pad = -1;
  if (ctx->op->id == FBX_OP_embedding_bag_padding_idx) FBX_TRY(bag_padding_idx(ctx, &args[8], V, &pad));
  int64_t noff = offsets->ndim == 1 ? offsets->sizes[0] : 0;
  if (ilo && noff < 1) return fbx_kernel_error(ctx, "include_last_offset: offsets must have at least one entry");
  int64_t nb = noff - (ilo ? 1 : 0);
  bags b;
  FBX_TRY(bags_make(ctx, &b, indices, offsets, nb, V));
  bool i32 = indices->dtype == FBX_DTYPE_INT32 && offsets->dtype == FBX_DTYPE_INT32;
  fbx_dtype ldt = i32 ? FBX_DTYPE_INT32 : FBX_DTYPE_INT64;
  int64_t osz[2] = {nb, D};
  fbx_status *st = fbx_tensor_contiguous(&wc, w);
  if (!st && psw->kind == FBX_IV_TENSOR) st = fbx_tensor_clone_as(&pc, psw->u.t, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_zeros(&acc, FBX_DTYPE_FLOAT64, 2, osz);
  if (!st) st = fbx_tensor_zeros(&maxi, FBX_DTYPE_INT64, 2, osz);
  if (!st) st = fbx_tensor_zeros(&cnt, FBX_DTYPE_INT64, 1, &nb);
  if (!st && nb > 0) {
    ebag_job j = {.b = &b, .w = wc->data, .wdt = wc->dtype, .psw = pc ? pc->data : NULL, .D = D, .pad = pad,
                  .mode = mode, .acc = acc->data, .maxi = mode == 2 ? maxi->data : NULL, .count = cnt->data};
    int64_t per = (b.nidx / nb + 1) * (D ? D : 1);
    fbx_parallel_for(nb, per >= 16384 ? 1 : 16384 / per + 1, ebag_body, &j);
  }
  if (!st) st = fbx_tensor_clone_as(&o[0], acc, w->dtype);
  if (!st) {
    const fbx_tensor *psrc = psw->kind == FBX_IV_TENSOR ? psw->u.t : NULL;
    bool fast_sum = mode == 0 && w->dtype != FBX_DTYPE_FLOAT64 && w->strides[1] == 1 && pad < 0 &&
                    (!psrc || psrc->strides[0] == 1);
    int64_t n2 = fast_sum ? 0 : b.nidx;
    st = fbx_tensor_empty(&o[1], ldt, 1, &n2);
    for (int64_t i = 0; !st && i < n2; i++) fbx_tensor_set_i64(o[1], i, b.bag_of[i]);
  }
  if (!st && mode == 0) {
    st = fbx_tensor_zeros(&o[2], ldt, 1, &noff);
    if (!st) st = fbx_tensor_zeros(&o[3], ldt, 1, &noff);
  } else if (!st) {
    st = fbx_tensor_clone_as(&o[2], cnt, ldt);
    if (!st) st = fbx_tensor_clone_as(&o[3], mode == 2 ? maxi : cnt, ldt);
  }
  bags_release(&b);
  fbx_tensor *tmp[] = {wc, pc, acc, maxi, cnt};
  for (int k = 0; k < 5; k++) fbx_tensor_release(tmp[k]);
  if (st) {
    for (int k = 0; k < 4; k++) fbx_tensor_release(o[k]);
    return st;
  }
  for (int k = 0; k < 4; k++) fbx_set_out_tensor(outs, k, o[k]);
  return NULL;
}

/* scale_grad_by_freq's divisor of each index value, as PyTorch 1.13's CPU
 * kernel takes it: the k-th distinct value (ascending) is divided by the
 * count of the value at position k of the sorted indices (ATen indexes the
 * counts with the group number where it means the group's value). That is
 * the value's own count while no smaller value repeats; a model that relies
 * on it gets the numbers PyTorch gave it. */
static fbx_status *bag_freq_divisors(const bags *b, int64_t V, int64_t **out) {
  const int64_t *iv = b->idx->data;
  int64_t *cnt = fbx_calloc((size_t)(V ? V : 1), sizeof *cnt), *div = fbx_calloc((size_t)(V ? V : 1), sizeof *div);
  int64_t *sorted = fbx_malloc(sizeof *sorted * (size_t)(b->nidx ? b->nidx : 1));
  if (!cnt || !sorted || !div) {
    fbx_free(cnt), fbx_free(sorted), fbx_free(div);
    return fbx_status_nomem();
  }
  for (int64_t i = 0; i < b->nidx; i++) cnt[iv[i]]++;
  int64_t pos = 0, group = 0;
  for (int64_t v = 0; v < V; v++)
    for (int64_t k = 0; k < cnt[v]; k++) sorted[pos++] = v;
  for (int64_t v = 0; v < V; v++)
    if (cnt[v]) div[v] = cnt[sorted[group++]];
  fbx_free(cnt);
  fbx_free(sorted);
  *out = div;
  return NULL;
}

/* aten::_embedding_bag_backward(grad, indices, offsets, offset2bag,
 *   bag_size, maximum_indices, num_weights, scale_grad_by_freq, mode, sparse,
 *   per_sample_weights?, padding_idx=-1) -> the weight's gradient [num_weights, D]:
 *   sum/mean: each non-padding index's row gets its bag's gradient (times its
 *   per-sample weight; mean: over bag_size; scale_grad_by_freq: over the
 *   divisor of bag_freq_divisors); max: each column's chosen row of a non-empty
 *   bag gets that gradient entry. The bags are taken from offsets (offset2bag
 *   may be empty, as embedding_bag returns it); grad's rows say how many.
 *   sparse gradients are returned dense.
 * aten::_embedding_bag_per_sample_weights_backward(grad, weight, indices,
 *   offsets, offset2bag, mode, padding_idx=-1) -> [indices]: the dot product
 *   of each index's bag gradient with its weight row (0 for padding). */
fbx_status *fbx_k_embedding_bag_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  bool psw_grad = ctx->op->id == FBX_OP__embedding_bag_per_sample_weights_backward;
  fbx_tensor *grad, *indices, *offsets, *weight = NULL, *gc = NULL, *wc = NULL, *aux = NULL, *res = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  if (psw_grad) FBX_TRY(fbx_arg_tensor(ctx, args, 1, &weight));
  FBX_TRY(fbx_arg_tensor(ctx, args, psw_grad ? 2 : 1, &indices));
  FBX_TRY(fbx_arg_tensor(ctx, args, psw_grad ? 3 : 2, &offsets));
  int64_t mode = fbx_iv_to_int(&args[psw_grad ? 5 : 8]), pad = fbx_iv_to_int(&args[psw_grad ? 6 : 11]);
  int64_t V = psw_grad ? weight->sizes[0] : fbx_iv_to_int(&args[6]);
  if (grad->ndim != 2) return fbx_kernel_error(ctx, "grad must be 2-D, got %d dims", grad->ndim);
  if (psw_grad && mode != 0)
    return fbx_kernel_error(ctx, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  if (psw_grad && (weight->ndim != 2 || weight->sizes[1] != grad->sizes[1]))
    return fbx_kernel_error(ctx, "weight must be 2-D with grad's row length");
  if (mode < 0 || mode > 2) return fbx_kernel_error(ctx, "unknown mode %" PRId64, mode);
  if (V < 0) return fbx_kernel_error(ctx, "num_weights must be non-negative");
  int64_t nb = grad->sizes[0], D = grad->sizes[1];
  bags b;
  FBX_TRY(bags_make(ctx, &b, indices, offsets, nb < offsets->sizes[0] ? nb : offsets->sizes[0], V));
  fbx_status *st = fbx_tensor_clone_as(&gc, grad, FBX_DTYPE_FLOAT64);
  const double *g = gc ? gc->data : NULL;
  const int64_t *iv = b.idx->data;
  if (!st && psw_grad) {
    st = fbx_tensor_clone_as(&wc, weight, FBX_DTYPE_FLOAT64);
    if (!st) st = fbx_tensor_zeros(&res, FBX_DTYPE_FLOAT64, 1, &b.nidx);
    for (int64_t i = 0; !st && i < b.nidx; i++) {
      int64_t k = b.bag_of[i];
      if (k < 0 || iv[i] == pad) continue;
      double dot = 0;
      for (int64_t q = 0; q < D; q++) dot += g[k * D + q] * ((const double *)wc->data)[iv[i] * D + q];
      ((double *)res->data)[i] = dot;
    }
  } else if (!st) {
    int64_t ws[2] = {V, D};
    st = fbx_tensor_zeros(&res, FBX_DTYPE_FLOAT64, 2, ws);
    double *r = res ? res->data : NULL;
    if (!st && mode == 2) {
      /* maximum_indices [bags, D] and bag_size [bags] */
      fbx_tensor *bs = NULL;
      fbx_tensor *mt = args[5].kind == FBX_IV_TENSOR ? args[5].u.t : NULL;
      fbx_tensor *bt = args[4].kind == FBX_IV_TENSOR ? args[4].u.t : NULL;
      if (!mt || !bt || mt->numel != nb * D || bt->numel < nb)
        st = fbx_kernel_error(ctx, "mode max needs maximum_indices [%" PRId64 ", %" PRId64 "] and bag_size [%" PRId64
                                   "]", nb, D, nb);
      if (!st) st = fbx_tensor_clone_as(&aux, mt, FBX_DTYPE_INT64);
      if (!st) st = fbx_tensor_clone_as(&bs, bt, FBX_DTYPE_INT64);
      for (int64_t k = 0; !st && k < nb; k++) {
        if (((const int64_t *)bs->data)[k] <= 0) continue;
        for (int64_t q = 0; q < D; q++) {
          int64_t row = ((const int64_t *)aux->data)[k * D + q];
          if (row < 0 || row >= V) {
            st = fbx_kernel_error(ctx, "maximum_indices entry %" PRId64 " out of range", row);
            break;
          }
          r[row * D + q] += g[k * D + q];
        }
      }
      fbx_tensor_release(bs);
    } else if (!st) {
      const fbx_ivalue *psw = &args[10];
      fbx_tensor *pc = NULL;
      int64_t *freq = NULL;
      if (psw->kind == FBX_IV_TENSOR) {
        if (psw->u.t->numel != b.nidx) st = fbx_kernel_error(ctx, "per_sample_weights must have one entry per index");
        if (!st) st = fbx_tensor_clone_as(&pc, psw->u.t, FBX_DTYPE_FLOAT64);
      }
      if (!st && mode == 1) {
        fbx_tensor *bt = args[4].kind == FBX_IV_TENSOR ? args[4].u.t : NULL;
        if (!bt || bt->numel < nb) st = fbx_kernel_error(ctx, "mode mean needs bag_size [%" PRId64 "]", nb);
        if (!st) st = fbx_tensor_clone_as(&aux, bt, FBX_DTYPE_INT64);
      }
      if (!st && fbx_iv_to_int(&args[7])) st = bag_freq_divisors(&b, V, &freq);
      for (int64_t i = 0; !st && i < b.nidx; i++) {
        int64_t k = b.bag_of[i];
        if (k < 0 || iv[i] == pad) continue;
        double s = pc ? ((const double *)pc->data)[i] : 1;
        if (freq) s /= (double)freq[iv[i]];
        if (aux) s /= (double)((const int64_t *)aux->data)[k];
        for (int64_t q = 0; q < D; q++) r[iv[i] * D + q] += g[k * D + q] * s;
      }
      fbx_tensor_release(pc);
      fbx_free(freq);
    }
  }
  if (!st) st = fbx_tensor_clone_as(&out, res, grad->dtype);
  bags_release(&b);
  fbx_tensor *tmp[] = {gc, wc, aux, res};
  for (int k = 0; k < 4; k++) fbx_tensor_release(tmp[k]);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* ---- shape-family indexing rows (ops/list_shape.h) ------------------------------------------ */

/* aten::count_nonzero.dim_IntList(Tensor self, int[] dim) and
 * aten::count_nonzero(Tensor self, int? dim=None) -> Tensor: (self != 0)
 * summed over the dims (all of them for None or []), int64; NaN counts. */
fbx_status *fbx_k_count_nonzero(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *m = NULL, *out = NULL;
  int64_t dims[FBX_MAX_DIMS];
  int nd = 0;
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind == FBX_IV_LIST) {
    nd = fbx_arg_int_list(ctx->op, 1, &args[1], dims, FBX_MAX_DIMS, &st);
    if (nd < 0) return st;
  } else if (args[1].kind != FBX_IV_NONE) {
    dims[nd++] = fbx_iv_to_int(&args[1]);
  }
  bool seen[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < nd; i++) {
    int64_t d;
    FBX_TRY(fbx_wrap_dim(ctx, &d, dims[i], x->ndim));
    if (x->ndim && seen[d]) return fbx_kernel_error(ctx, "dim %" PRId64 " appears multiple times in the list of dims", d);
    if (x->ndim) seen[d] = true;
  }
  fbx_ivalue l = fbx_iv_none();
  st = ROW(&m, ne_Scalar, TV(x), IV(0));
  if (!st) st = fbx_int_list_iv(&l, nd, dims);
  if (!st) st = ROW(&out, sum_dim_IntList, TV(m), l, BV(false), NV);
  fbx_iv_release(&l);
  fbx_tensor_release(m);
  return finish(fbx_row_own_error(ctx, st), outs, &out);
}

/* aten::argwhere(Tensor self) -> Tensor: nonzero's [N, ndim] indices, laid
 * out column-major (strides [1, N]) as PyTorch's CPU nonzero writes them. */
fbx_status *fbx_k_argwhere(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *nz = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_status *st = ROW(&nz, nonzero, TV(x));
  if (!st) {
    int64_t strides[2] = {1, nz->sizes[0]};
    st = fbx_tensor_empty_strided(&out, FBX_DTYPE_INT64, 2, nz->sizes, strides);
  }
  if (!st) st = fbx_tensor_copy_(out, nz);
  fbx_tensor_release(nz);
  return finish(st, outs, &out);
}

/* aten::take(Tensor self, Tensor index) -> Tensor: self's elements in
 * row-major order picked by an int64 index (negative counts from the end);
 * the result has index's shape. */
fbx_status *fbx_k_take(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *index, *src = NULL, *ix = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &index));
  if (index->dtype != FBX_DTYPE_INT64)
    return fbx_kernel_error(ctx, "take(): Expected a long tensor for index, but got %s", fbx_dtype_torch_name(index->dtype));
  if (x->numel == 0 && index->numel != 0)
    return fbx_kernel_error(ctx, "take(): tried to take from an empty tensor");
  fbx_status *st = fbx_tensor_clone_as(&ix, index, FBX_DTYPE_INT64);
  int64_t n = x->numel;
  for (int64_t i = 0; !st && i < ix->numel; i++) {
    int64_t k = ((int64_t *)ix->data)[i];
    if (k < -n || k >= n)
      st = fbx_kernel_error(ctx, "out of range: tried to access index %" PRId64 " on a tensor of %" PRId64 " elements.", k, n);
    else if (k < 0) ((int64_t *)ix->data)[i] = k + n;
  }
  if (!st) st = fbx_tensor_contiguous(&src, x);
  if (!st) st = fbx_tensor_empty(&out, x->dtype, index->ndim, index->sizes);
  if (!st) {
    size_t es = fbx_dtype_size(x->dtype);
    const int64_t *k = ix->data;
    for (int64_t i = 0; i < ix->numel; i++)
      elem_copy((char *)out->data + (size_t)i * es, (const char *)src->data + (size_t)k[i] * es, es);
  }
  fbx_tensor_release(src);
  fbx_tensor_release(ix);
  return finish(st, outs, &out);
}

/* aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor:
 * with a dim, self and indices (same rank, int64) broadcast against each
 * other in every dim but that one, then gather; without, self.view(-1)
 * gathered by indices.view(-1) (PyTorch's own views, so a self that cannot
 * be viewed flat is refused as PyTorch refuses it). */
fbx_status *fbx_k_take_along_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *idx, *xv = NULL, *iv = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &idx));
  fbx_status *st = NULL;
  if (args[2].kind == FBX_IV_NONE) {
    int64_t m1 = -1;
    fbx_ivalue l = fbx_iv_none();
    st = fbx_int_list_iv(&l, 1, &m1);
    if (!st) st = ROW(&xv, view, TV(x), l);
    if (!st) st = ROW(&iv, view, TV(idx), l);
    fbx_iv_release(&l);
    if (!st) st = ROW(&out, gather, TV(xv), IV(0), TV(iv), BV(false));
  } else {
    if (x->ndim != idx->ndim)
      return fbx_kernel_error(ctx, "torch.take_along_dim(): input and indices should have the same number of dimensions, "
                              "but got %d dimensions for input, and %d dimensions for indices", x->ndim, idx->ndim);
    if (idx->dtype != FBX_DTYPE_INT64)
      return fbx_kernel_error(ctx, "torch.take_along_dim(): dtype of indices should be Long but got %s",
                              fbx_dtype_torch_name(idx->dtype));
    int64_t d;
    FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), x->ndim));
    int64_t s1[FBX_MAX_DIMS], i1[FBX_MAX_DIMS];
    int n1 = x->ndim, n2 = x->ndim;
    memcpy(s1, x->sizes, sizeof s1);
    memcpy(i1, idx->sizes, sizeof i1);
    if (x->ndim) {
      s1[d] = idx->sizes[d];
      i1[d] = x->sizes[d];
    }
    st = fbx_broadcast_into(ctx, s1, &n1, idx->ndim, idx->sizes); /* indices' target */
    if (!st) st = fbx_broadcast_into(ctx, i1, &n2, x->ndim, x->sizes); /* self's target */
    if (!st) st = fbx_expand_view(&iv, idx, n1, s1);
    if (!st) st = fbx_expand_view(&xv, x, n2, i1);
    if (!st) st = ROW(&out, gather, TV(xv), IV(d), TV(iv), BV(false));
  }
  fbx_tensor_release(xv);
  fbx_tensor_release(iv);
  return finish(fbx_row_own_error(ctx, st), outs, &out);
}

/* aten::index_fill.int_Scalar / .int_Tensor(Tensor self, int dim, Tensor
 * index, Scalar or 0-d Tensor value) -> Tensor: a copy of self (its layout
 * kept, as clone) with the slices at `index` (int64, 0-d or 1-d, negative
 * counts from the end) along dim set to value. */
fbx_status *fbx_k_index_fill(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *index, *out = NULL, *val = NULL;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &index));
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), x->ndim));
  if (index->ndim > 1) return fbx_kernel_error(ctx, "Index has to be a vector/scalar");
  if (index->dtype != FBX_DTYPE_INT64) return fbx_kernel_error(ctx, "index_fill_(): Expected dtype int64 for index.");
  fbx_status *st = NULL;
  if (args[3].kind == FBX_IV_TENSOR) {
    fbx_tensor *v = args[3].u.t;
    if (v->ndim != 0)
      return fbx_kernel_error(ctx, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                              "dimension(s).", v->ndim);
    st = fbx_tensor_clone_as(&val, v, x->dtype);
  } else {
    st = fbx_scalar_tensor(&val, &args[3], x->dtype);
  }
  int64_t n = x->ndim ? x->sizes[d] : 1;
  for (int64_t i = 0; !st && i < index->numel; i++) {
    int64_t k = fbx_tensor_get_i64(index, i);
    if (k < -n || k >= n) st = fbx_kernel_error(ctx, "index %" PRId64 " is out of bounds for dimension %d with size %" PRId64, k, (int)d, n);
  }
  if (!st) st = ROW(&out, clone, TV(x), NV);
  for (int64_t i = 0; !st && i < index->numel; i++) {
    int64_t k = fbx_tensor_get_i64(index, i);
    if (k < 0) k += n;
    fbx_tensor *v = NULL;
    if (x->ndim == 0) {
      v = fbx_tensor_retain(out);
    } else {
      int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
      int m = 0;
      for (int j = 0; j < x->ndim; j++)
        if (j != d) sizes[m] = out->sizes[j], strides[m++] = out->strides[j];
      st = fbx_tensor_view(&v, out, m, sizes, strides, out->offset + k * out->strides[d]);
    }
    if (!st) st = fbx_tensor_copy_(v, val);
    fbx_tensor_release(v);
  }
  fbx_tensor_release(val);
  return finish(st, outs, &out);
}

/* aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor:
 * self and mask (bool or uint8) broadcast together; a contiguous copy of
 * self where the true positions, in row-major order, take source's
 * elements in row-major order (same dtype as self, at least as many). */
fbx_status *fbx_k_masked_scatter(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *mask, *src, *sv = NULL, *mv = NULL, *mc = NULL, *sc = NULL, *out = NULL;
  int64_t shape[FBX_MAX_DIMS];
  int nd;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &mask));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &src));
  if (mask->dtype != FBX_DTYPE_BOOL && mask->dtype != FBX_DTYPE_UINT8)
    return fbx_kernel_error(ctx, "masked_scatter: expected BoolTensor or ByteTensor for mask");
  if (src->dtype != self->dtype)
    return fbx_kernel_error(ctx, "masked_scatter: expected self and source to have same dtypes but got %s and %s",
                            fbx_dtype_torch_name(self->dtype), fbx_dtype_torch_name(src->dtype));
  FBX_TRY(fbx_broadcast_shapes(ctx, shape, &nd, self, mask));
  fbx_status *st = fbx_expand_view(&sv, self, nd, shape);
  if (!st) st = fbx_expand_view(&mv, mask, nd, shape);
  for (int64_t i = 0; !st && mask->dtype == FBX_DTYPE_UINT8 && i < mask->numel; i++)
    if (fbx_tensor_get_i64(mask, i) > 1) st = fbx_kernel_error(ctx, "Mask tensor can take 0 and 1 values only");
  if (!st) st = fbx_tensor_clone_as(&mc, mv, FBX_DTYPE_BOOL);
  if (!st) st = fbx_tensor_clone_as(&out, sv, self->dtype);
  if (!st) {
    const uint8_t *m = mc->data;
    int64_t cnt = 0;
    for (int64_t i = 0; i < mc->numel; i++) cnt += m[i] != 0;
    if (cnt > src->numel) st = fbx_kernel_error(ctx, "Number of elements of source < number of ones in mask");
    if (!st && cnt) st = fbx_tensor_contiguous(&sc, src);
    if (!st && cnt) {
      size_t es = fbx_dtype_size(self->dtype);
      const char *s = sc->data;
      for (int64_t i = 0; i < mc->numel; i++)
        if (m[i]) {
          elem_copy((char *)out->data + (size_t)i * es, s, es);
          s += es;
        }
    }
  }
  fbx_tensor_release(sv);
  fbx_tensor_release(mv);
  fbx_tensor_release(mc);
  fbx_tensor_release(sc);
  return finish(st, outs, &out);
}

/* fusebox::take_along_dim_backward(Tensor grad, Tensor self, Tensor indices, int? dim) -> Tensor
 * take_along_dim's gradient for self: grad added (scatter_add) into zeros
 * of self broadcast against indices (every dim but dim, which keeps self's
 * size), then summed back to self's sizes; without a dim, into the
 * flattened self. */
fbx_status *fbx_k_take_along_dim_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *idx, *iv = NULL, *gv = NULL, *z = NULL, *acc = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &idx));
  fbx_ivalue l = fbx_iv_none(), ls = fbx_iv_none();
  fbx_status *st = NULL;
  if (args[3].kind == FBX_IV_NONE) {
    int64_t m1 = -1, n = x->numel;
    st = fbx_int_list_iv(&l, 1, &m1);
    if (!st) st = ROW(&iv, reshape, TV(idx), l);
    if (!st) st = ROW(&gv, reshape, TV(g), l);
    if (!st) st = fbx_tensor_zeros(&z, g->dtype, 1, &n);
    if (!st) st = ROW(&acc, scatter_add, TV(z), IV(0), TV(iv), TV(gv));
  } else {
    int64_t d, sizes[FBX_MAX_DIMS];
    st = fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[3]), x->ndim);
    if (!st && g->ndim != x->ndim) st = fbx_kernel_error(ctx, "grad and self differ in rank");
    if (!st) {
      memcpy(sizes, g->sizes, sizeof sizes);
      if (x->ndim) sizes[d] = x->sizes[d];
      st = fbx_expand_view(&iv, idx, g->ndim, g->sizes);
    }
    if (!st) st = fbx_tensor_zeros(&z, g->dtype, g->ndim, sizes);
    if (!st) st = ROW(&acc, scatter_add, TV(z), IV(d), TV(iv), TV(g));
  }
  if (!st) st = fbx_int_list_iv(&ls, x->ndim, x->sizes);
  if (!st && args[3].kind == FBX_IV_NONE) st = ROW(&out, reshape, TV(acc), ls);
  else if (!st) st = ROW(&out, sum_to_size, TV(acc), ls);
  fbx_iv_release(&l);
  fbx_iv_release(&ls);
  fbx_tensor_release(iv);
  fbx_tensor_release(gv);
  fbx_tensor_release(z);
  fbx_tensor_release(acc);
  return finish(fbx_row_own_error(ctx, st), outs, &out);
}
