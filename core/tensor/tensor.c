/* Tensor objects: creation, views, refcounts, element access, summaries. */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status.h"
#include "tensor/copy.h"
#include <fusebox/tensor.h>

fbx_tensor *fbx_tensor_retain(fbx_tensor *t) {
  if (t) atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
  return t;
}

void fbx_tensor_release(fbx_tensor *t) {
  if (!t) return;
  if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
  fbx_storage_release(t->storage);
  fbx_free(t);
}

size_t fbx_tensor_elem_size(const fbx_tensor *t) { return fbx_dtype_size(t->dtype); }

void fbx_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
  uint64_t s = 1; /* unsigned: absurd sizes wrap instead of overflowing; callers validate */
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = (int64_t)s;
    s *= sizes[i] > 1 ? (uint64_t)sizes[i] : 1u;
  }
}

/* Checks dtype, ndim and sizes; *numel gets the element count. The byte size
 * of numel elements is guaranteed to fit in int64_t. */
static fbx_status *check_shape(fbx_dtype dtype, int ndim, const int64_t *sizes,
                               int64_t *numel) {
  if (!fbx_dtype_valid(dtype))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "invalid dtype %d", (int)dtype);
  if (ndim < 0 || ndim > FBX_MAX_DIMS)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "%d dimensions (the limit is %d)", ndim,
                          FBX_MAX_DIMS);
  int64_t n = 1, limit = INT64_MAX / (int64_t)fbx_dtype_size(dtype);
  int zero = 0;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] < 0)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "negative size %" PRId64 " in dim %d",
                            sizes[i], i);
    if (sizes[i] == 0) zero = 1;
    else if (n > limit / sizes[i])
      return fbx_status_new(FBX_ERR_INVALID_ARG, "tensor too large (dim %d of size %" PRId64 ")",
                            i, sizes[i]);
    else n *= sizes[i];
  }
  *numel = zero ? 0 : n;
  return NULL;
}

/* Index of the last element (relative to offset), or -1 for numel 0. Checks
 * the strides and that the byte extent fits. */
static fbx_status *check_extent(fbx_dtype dtype, int ndim, const int64_t *sizes,
                                const int64_t *strides, int64_t numel, int64_t *last) {
  int64_t limit = INT64_MAX / (int64_t)fbx_dtype_size(dtype), e = 0;
  for (int i = 0; i < ndim; i++) {
    if (strides[i] < 0)
      return fbx_status_new(FBX_ERR_INVALID_ARG,
                            "negative stride %" PRId64 " in dim %d (strides must be >= 0)",
                            strides[i], i);
    if (numel == 0 || sizes[i] <= 1) continue;
    if (strides[i] > (limit - e) / (sizes[i] - 1))
      return fbx_status_new(FBX_ERR_INVALID_ARG, "strides reach too far (dim %d)", i);
    e += strides[i] * (sizes[i] - 1);
  }
  *last = numel == 0 ? -1 : e;
  return NULL;
}

static fbx_status *new_tensor(fbx_tensor **out, fbx_storage *storage, fbx_dtype dtype,
                              int ndim, const int64_t *sizes, const int64_t *strides,
                              int64_t offset, int64_t numel) {
  fbx_tensor *t = fbx_calloc(1, sizeof *t);
  if (!t) return fbx_status_nomem();
  t->storage = fbx_storage_retain(storage);
  t->dtype = dtype;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) {
    t->sizes[i] = sizes[i];
    t->strides[i] = strides[i];
  }
  t->offset = offset;
  t->numel = numel;
  int64_t at = numel ? offset : 0; /* an empty view's data pointer stays at the storage's start */
  t->data = (char *)fbx_storage_data(storage) + at * (int64_t)fbx_dtype_size(dtype);
  atomic_init(&t->refcount, 1);
  *out = t;
  return NULL;
}

fbx_status *fbx_tensor_from_storage(fbx_tensor **out, fbx_storage *storage,
                                    fbx_dtype dtype, int ndim, const int64_t *sizes,
                                    const int64_t *strides, int64_t offset) {
  int64_t numel, last, cstrides[FBX_MAX_DIMS];
  FBX_TRY(check_shape(dtype, ndim, sizes, &numel));
  if (!strides) {
    fbx_contiguous_strides(ndim, sizes, cstrides);
    strides = cstrides;
  }
  FBX_TRY(check_extent(dtype, ndim, sizes, strides, numel, &last));
  int64_t es = (int64_t)fbx_dtype_size(dtype);
  int64_t cap = (int64_t)(fbx_storage_nbytes(storage) / (size_t)es);
  /* an empty view may start past the storage (narrow of a 0-row batch at a
   * later column, as PyTorch allows); nothing is ever read through it */
  if (offset < 0 || (numel > 0 && (offset > cap || last >= cap - offset)))
    return fbx_status_new(FBX_ERR_INVALID_ARG,
                          "view out of bounds: offset %" PRId64 " + extent %" PRId64
                          " elements, storage holds %" PRId64 " %s elements",
                          offset, last + 1, cap, fbx_dtype_name(dtype));
  return new_tensor(out, storage, dtype, ndim, sizes, strides, offset, numel);
}

fbx_status *fbx_tensor_view(fbx_tensor **out, fbx_tensor *base, int ndim,
                            const int64_t *sizes, const int64_t *strides, int64_t offset) {
  return fbx_tensor_from_storage(out, base->storage, base->dtype, ndim, sizes, strides,
                                 offset);
}

fbx_status *fbx_tensor_empty_strided(fbx_tensor **out, fbx_dtype dtype, int ndim,
                                     const int64_t *sizes, const int64_t *strides) {
  int64_t numel, last;
  FBX_TRY(check_shape(dtype, ndim, sizes, &numel));
  FBX_TRY(check_extent(dtype, ndim, sizes, strides, numel, &last));
  fbx_storage *s;
  FBX_TRY(fbx_storage_new(&s, (size_t)(last + 1) * fbx_dtype_size(dtype)));
  fbx_status *st = new_tensor(out, s, dtype, ndim, sizes, strides, 0, numel);
  fbx_storage_release(s);
  return st;
}

fbx_status *fbx_tensor_empty(fbx_tensor **out, fbx_dtype dtype, int ndim,
                             const int64_t *sizes) {
  int64_t strides[FBX_MAX_DIMS], numel;
  FBX_TRY(check_shape(dtype, ndim, sizes, &numel));
  fbx_contiguous_strides(ndim, sizes, strides);
  return fbx_tensor_empty_strided(out, dtype, ndim, sizes, strides);
}

fbx_status *fbx_tensor_zeros(fbx_tensor **out, fbx_dtype dtype, int ndim,
                             const int64_t *sizes) {
  fbx_tensor *t;
  FBX_TRY(fbx_tensor_empty(&t, dtype, ndim, sizes));
  memset(t->data, 0, (size_t)t->numel * fbx_dtype_size(dtype));
  *out = t;
  return NULL;
}

fbx_status *fbx_tensor_from_data(fbx_tensor **out, fbx_dtype dtype, int ndim,
                                 const int64_t *sizes, const void *data) {
  fbx_tensor *t;
  FBX_TRY(fbx_tensor_empty(&t, dtype, ndim, sizes));
  size_t nbytes = (size_t)t->numel * fbx_dtype_size(dtype);
  if (nbytes) memcpy(t->data, data, nbytes);
  if (dtype == FBX_DTYPE_BOOL) {
    uint8_t *b = t->data;
    for (int64_t i = 0; i < t->numel; i++) b[i] = b[i] != 0;
  }
  *out = t;
  return NULL;
}

int fbx_tensor_is_contiguous(const fbx_tensor *t) {
  if (t->numel == 0) return 1;
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->sizes[i] == 1) continue;
    if (t->strides[i] != expect) return 0;
    expect *= t->sizes[i];
  }
  return 1;
}

int fbx_tensor_same_shape(const fbx_tensor *a, const fbx_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->sizes[i] != b->sizes[i]) return 0;
  return 1;
}

/* Byte range [lo, hi) a tensor touches, relative to its storage base. */
static void byte_range(const fbx_tensor *t, int64_t *lo, int64_t *hi) {
  int64_t es = (int64_t)fbx_dtype_size(t->dtype), last = 0;
  for (int i = 0; i < t->ndim; i++) last += t->strides[i] * (t->sizes[i] - 1);
  *lo = t->offset * es;
  *hi = (t->offset + last) * es + es;
}

int fbx_tensor_may_overlap(const fbx_tensor *a, const fbx_tensor *b) {
  if (a->numel == 0 || b->numel == 0) return 0;
  if (a->storage != b->storage) return 0;
  int64_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

static int same_view(const fbx_tensor *a, const fbx_tensor *b) {
  if (a->data != b->data || a->dtype != b->dtype || !fbx_tensor_same_shape(a, b)) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->sizes[i] > 1 && a->strides[i] != b->strides[i]) return 0;
  return 1;
}

fbx_status *fbx_tensor_clone_as(fbx_tensor **out, const fbx_tensor *t, fbx_dtype dtype) {
  fbx_tensor *c;
  FBX_TRY(fbx_tensor_empty(&c, dtype, t->ndim, t->sizes));
  fbx_strided_copy(c->data, dtype, c->strides, t->data, t->dtype, t->strides, t->ndim,
                   t->sizes);
  *out = c;
  return NULL;
}

fbx_status *fbx_tensor_contiguous(fbx_tensor **out, fbx_tensor *t) {
  if (fbx_tensor_is_contiguous(t)) {
    *out = fbx_tensor_retain(t);
    return NULL;
  }
  return fbx_tensor_clone_as(out, t, t->dtype);
}

static void shape_str(char *buf, size_t n, int ndim, const int64_t *sizes) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%" PRId64, i ? ", " : "", sizes[i]);
}

fbx_status *fbx_tensor_copy_(fbx_tensor *dst, const fbx_tensor *src) {
  int64_t sstrides[FBX_MAX_DIMS];
  int lead = dst->ndim - src->ndim;
  int ok = lead >= 0;
  for (int i = 0; ok && i < dst->ndim; i++) {
    if (i < lead) {
      sstrides[i] = 0;
    } else if (src->sizes[i - lead] == dst->sizes[i]) {
      sstrides[i] = src->strides[i - lead];
    } else if (src->sizes[i - lead] == 1) {
      sstrides[i] = 0;
    } else {
      ok = 0;
    }
  }
  if (!ok) {
    char a[256], b[256];
    shape_str(a, sizeof a, src->ndim, src->sizes);
    shape_str(b, sizeof b, dst->ndim, dst->sizes);
    return fbx_status_new(FBX_ERR_INVALID_ARG,
                          "copy_: source shape [%s] does not broadcast to [%s]", a, b);
  }
  if (dst->numel == 0) return NULL;
  if (fbx_tensor_may_overlap(dst, src)) {
    if (same_view(dst, src)) return NULL;
    fbx_tensor *tmp;
    FBX_TRY(fbx_tensor_clone_as(&tmp, src, src->dtype));
    fbx_status *st = fbx_tensor_copy_(dst, tmp);
    fbx_tensor_release(tmp);
    return st;
  }
  fbx_strided_copy(dst->data, dst->dtype, dst->strides, src->data, src->dtype, sstrides,
                   dst->ndim, dst->sizes);
  return NULL;
}

static char *elem_ptr(const fbx_tensor *t, int64_t index) {
  assert(index >= 0 && index < t->numel);
  int64_t off = 0;
  for (int i = t->ndim - 1; i >= 0; i--) {
    off += (index % t->sizes[i]) * t->strides[i];
    index /= t->sizes[i];
  }
  return (char *)t->data + off * (int64_t)fbx_dtype_size(t->dtype);
}

double fbx_tensor_get_f64(const fbx_tensor *t, int64_t index) {
  return fbx_load_f64(elem_ptr(t, index), t->dtype);
}
int64_t fbx_tensor_get_i64(const fbx_tensor *t, int64_t index) {
  return fbx_load_i64(elem_ptr(t, index), t->dtype);
}
void fbx_tensor_set_f64(fbx_tensor *t, int64_t index, double v) {
  fbx_store_f64(elem_ptr(t, index), t->dtype, v);
}
void fbx_tensor_set_i64(fbx_tensor *t, int64_t index, int64_t v) {
  fbx_store_i64(elem_ptr(t, index), t->dtype, v);
}

static fbx_status *check_item(const fbx_tensor *t) {
  if (t->numel == 1) return NULL;
  return fbx_status_new(FBX_ERR_INVALID_ARG,
                        "a tensor with %" PRId64 " elements cannot be converted to a scalar",
                        t->numel);
}

fbx_status *fbx_tensor_item_f64(double *out, const fbx_tensor *t) {
  FBX_TRY(check_item(t));
  *out = fbx_load_f64(t->data, t->dtype);
  return NULL;
}

fbx_status *fbx_tensor_item_i64(int64_t *out, const fbx_tensor *t) {
  FBX_TRY(check_item(t));
  *out = fbx_load_i64(t->data, t->dtype);
  return NULL;
}

int fbx_tensor_summary(char *buf, size_t n, const fbx_tensor *t) {
  char tmp[1024], shape[512], strides[512];
  shape_str(shape, sizeof shape, t->ndim, t->sizes);
  int len = snprintf(tmp, sizeof tmp, "%s[%s]", fbx_dtype_name(t->dtype), shape);
  if (!fbx_tensor_is_contiguous(t)) {
    shape_str(strides, sizeof strides, t->ndim, t->strides);
    len += snprintf(tmp + len, sizeof tmp - (size_t)len, " strides=[%s]", strides);
  }
  if (t->numel == 0) {
    snprintf(tmp + len, sizeof tmp - (size_t)len, " empty");
    return snprintf(buf, n, "%s", tmp);
  }
  /* One pass in logical order; integers are exact through int64 for min/max. */
  int is_int = !fbx_dtype_is_floating(t->dtype);
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t imn = INT64_MAX, imx = INT64_MIN, nans = 0;
  int64_t idx[FBX_MAX_DIMS] = {0};
  int64_t es = (int64_t)fbx_dtype_size(t->dtype);
  const char *p = t->data;
  for (int64_t k = 0; k < t->numel; k++) {
    if (is_int) {
      int64_t v = fbx_load_i64(p, t->dtype);
      if (v < imn) imn = v;
      if (v > imx) imx = v;
      sum += (double)v;
    } else {
      double v = fbx_load_f64(p, t->dtype);
      if (isnan(v)) {
        nans++;
      } else {
        if (v < mn) mn = v;
        if (v > mx) mx = v;
        sum += v;
      }
    }
    for (int i = t->ndim - 1; i >= 0; i--) {
      if (++idx[i] < t->sizes[i]) {
        p += t->strides[i] * es;
        break;
      }
      idx[i] = 0;
      p -= t->strides[i] * (t->sizes[i] - 1) * es;
    }
  }
  size_t rest = sizeof tmp - (size_t)len;
  if (is_int) {
    snprintf(tmp + len, rest, " min=%" PRId64 " max=%" PRId64 " mean=%.6g", imn, imx,
             sum / (double)t->numel);
  } else if (nans == t->numel) {
    snprintf(tmp + len, rest, " nan=%" PRId64, nans);
  } else {
    int m = snprintf(tmp + len, rest, " min=%.6g max=%.6g mean=%.6g", mn, mx,
                     sum / (double)(t->numel - nans));
    if (nans) snprintf(tmp + len + m, rest - (size_t)m, " nan=%" PRId64, nans);
  }
  return snprintf(buf, n, "%s", tmp);
}
