/* Kernels for the view rows of ops/list_shape.h: every output shares its
 * input's storage (FBX_OPF_ALIAS), made with fbx_tensor_view (as_strided).
 * Sizes, strides and storage offsets follow PyTorch's own geometry code
 * (computeStride for view/reshape, inferExpandGeometry for expand,
 * inferSqueezeGeometry, the slice/select/narrow arithmetic), so that
 * .stride() and .storage_offset() of every result equal PyTorch's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kutil.h"

/* ---- small helpers ---------------------------------------------------------------------- */

/* "[2, 3]" into buf. */
static const char *shape_str(char *buf, size_t n, int ndim, const int64_t *sizes) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%" PRId64, i ? ", " : "", sizes[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
  return buf;
}

static fbx_status *out_view(fbx_ivalue *outs, fbx_tensor *base, int ndim, const int64_t *sizes,
                            const int64_t *strides, int64_t offset) {
  fbx_tensor *v = NULL;
  FBX_TRY(fbx_tensor_view(&v, base, ndim, sizes, strides, offset));
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

static fbx_status *int_list(fbx_kctx *ctx, fbx_ivalue *args, int i, int64_t *out, int *n) {
  fbx_status *st = NULL;
  int k = fbx_arg_int_list(ctx->op, i, &args[i], out, FBX_MAX_DIMS, &st);
  if (k < 0) return st;
  *n = k;
  return NULL;
}

/* PyTorch's infer_size: resolve one -1 against numel. */
static fbx_status *infer_size(fbx_kctx *ctx, int64_t *shape, int n, int64_t numel) {
  char buf[256];
  int infer = -1;
  int64_t prod = 1;
  bool overflow = false, zero = false;
  for (int i = 0; i < n; i++) {
    if (shape[i] == -1) {
      if (infer >= 0) return fbx_kernel_error(ctx, "only one dimension can be inferred");
      infer = i;
    } else if (shape[i] < 0) {
      return fbx_kernel_error(ctx, "invalid shape dimension %" PRId64 " in shape %s", shape[i],
                              shape_str(buf, sizeof buf, n, shape));
    } else {
      zero |= shape[i] == 0;
      overflow |= __builtin_mul_overflow(prod, shape[i], &prod); /* checked: the sizes come from the graph */
    }
  }
  if (zero) prod = 0;
  else if (overflow)
    return fbx_kernel_error(ctx, "shape '%s' is invalid for input of size %" PRId64 " (its product overflows int64)",
                            shape_str(buf, sizeof buf, n, shape), numel);
  if (numel == prod || (infer >= 0 && prod > 0 && numel % prod == 0)) {
    if (infer >= 0) {
      if (prod == 0)
        return fbx_kernel_error(ctx,
                                "cannot reshape tensor of 0 elements into shape %s because the "
                                "unspecified dimension size -1 can be any value and is ambiguous",
                                shape_str(buf, sizeof buf, n, shape));
      shape[infer] = numel / prod;
    }
    return NULL;
  }
  return fbx_kernel_error(ctx, "shape '%s' is invalid for input of size %" PRId64,
                          shape_str(buf, sizeof buf, n, shape), numel);
}

/* ATen's computeStride: strides for viewing (oldsizes, oldstrides) as
 * newsizes without a copy; false when impossible. */
static bool compute_stride(const fbx_tensor *t, int nn, const int64_t *newsizes, int64_t *newstrides) {
  int no = t->ndim;
  if (no == 0) {
    for (int i = 0; i < nn; i++) newstrides[i] = 1;
    return true;
  }
  if (t->numel == 0) {
    bool same = no == nn;
    for (int i = 0; same && i < nn; i++) same = t->sizes[i] == newsizes[i];
    if (same) {
      memcpy(newstrides, t->strides, sizeof(int64_t) * (size_t)nn);
      return true;
    }
    for (int d = nn - 1; d >= 0; d--)
      newstrides[d] = d == nn - 1 ? 1 : (newsizes[d + 1] > 1 ? newsizes[d + 1] : 1) * newstrides[d + 1];
    return true;
  }
  int view_d = nn - 1;
  int64_t chunk_base_stride = t->strides[no - 1], tensor_numel = 1, view_numel = 1;
  for (int td = no - 1; td >= 0; td--) {
    tensor_numel *= t->sizes[td];
    if (td == 0 || (t->sizes[td - 1] != 1 && t->strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newsizes[view_d] == 1)) {
        newstrides[view_d] = view_numel * chunk_base_stride;
        view_numel *= newsizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = t->strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

static fbx_status *view_to(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *t, int n, int64_t *shape,
                           bool copy_ok) {
  int64_t strides[FBX_MAX_DIMS];
  FBX_TRY(infer_size(ctx, shape, n, t->numel));
  if (compute_stride(t, n, shape, strides)) return out_view(outs, t, n, shape, strides, t->offset);
  if (!copy_ok) {
    char a[256], b[256], c[256];
    return fbx_kernel_error(ctx,
                            "view size is not compatible with input tensor's size and stride "
                            "(at least one dimension spans across two contiguous subspaces): "
                            "input sizes %s strides %s, requested %s. Use .reshape(...) instead.",
                            shape_str(a, sizeof a, t->ndim, t->sizes),
                            shape_str(b, sizeof b, t->ndim, t->strides), shape_str(c, sizeof c, n, shape));
  }
  /* reshape: clone(contiguous_format), then view */
  fbx_tensor *c = NULL, *v = NULL;
  FBX_TRY(fbx_tensor_clone_as(&c, t, t->dtype));
  fbx_status *st = fbx_tensor_view(&v, c, n, shape, NULL, 0);
  fbx_tensor_release(c);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

/* ---- view / reshape / flatten ------------------------------------------------------------- */

/* aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a) */
fbx_status *fbx_k_view(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t shape[FBX_MAX_DIMS];
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(int_list(ctx, args, 1, shape, &n));
  return view_to(ctx, outs, t, n, shape, false);
}

/* aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a) */
fbx_status *fbx_k_reshape(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t shape[FBX_MAX_DIMS];
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(int_list(ctx, args, 1, shape, &n));
  return view_to(ctx, outs, t, n, shape, true);
}

/* aten::view_as / aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a) */
fbx_status *fbx_k_view_as(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *o;
  int64_t shape[FBX_MAX_DIMS];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &o));
  memcpy(shape, o->sizes, sizeof shape);
  bool copy_ok = ctx->op && ctx->op->id == FBX_OP_reshape_as;
  return view_to(ctx, outs, t, o->ndim, shape, copy_ok);
}

/* aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a): reinterpret the bytes. */
fbx_status *fbx_k_view_dtype(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *v = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  int64_t code = fbx_iv_to_int(&args[1]);
  if (!fbx_dtype_valid((int)code)) return fbx_kernel_error(ctx, "unknown dtype code %" PRId64, code);
  fbx_dtype d = (fbx_dtype)code;
  int64_t os = (int64_t)fbx_dtype_size(t->dtype), ns = (int64_t)fbx_dtype_size(d);
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS], off = t->offset;
  int nd = t->ndim;
  memcpy(sizes, t->sizes, sizeof sizes);
  memcpy(strides, t->strides, sizeof strides);
  if (os != ns) {
    if (nd == 0)
      return fbx_kernel_error(ctx, "self.dim() cannot be 0 to view %s as %s (different element sizes)",
                              fbx_dtype_torch_name(t->dtype), fbx_dtype_torch_name(d));
    if (strides[nd - 1] != 1)
      return fbx_kernel_error(ctx, "self.stride(-1) must be 1 to view %s as %s (different element sizes), "
                              "but got %" PRId64, fbx_dtype_torch_name(t->dtype),
                              fbx_dtype_torch_name(d), strides[nd - 1]);
    if (os > ns) {
      int64_t r = os / ns;
      for (int i = 0; i < nd - 1; i++) strides[i] *= r;
      sizes[nd - 1] *= r;
      off *= r;
    } else {
      int64_t r = ns / os;
      if (sizes[nd - 1] % r)
        return fbx_kernel_error(ctx, "self.size(-1) must be divisible by %" PRId64 " to view %s as %s "
                                "(different element sizes), but got %" PRId64, r,
                                fbx_dtype_torch_name(t->dtype), fbx_dtype_torch_name(d), sizes[nd - 1]);
      if (off % r)
        return fbx_kernel_error(ctx, "self.storage_offset() must be divisible by %" PRId64 " to view %s as "
                                "%s (different element sizes), but got %" PRId64, r,
                                fbx_dtype_torch_name(t->dtype), fbx_dtype_torch_name(d), off);
      for (int i = 0; i < nd - 1; i++) {
        if (strides[i] % r)
          return fbx_kernel_error(ctx, "self.stride(%d) must be divisible by %" PRId64 " to view %s as %s "
                                  "(different element sizes), but got %" PRId64, i, r,
                                  fbx_dtype_torch_name(t->dtype), fbx_dtype_torch_name(d), strides[i]);
        strides[i] /= r;
      }
      sizes[nd - 1] /= r;
      off /= r;
    }
  }
  FBX_TRY(fbx_tensor_from_storage(&v, t->storage, d, nd, sizes, strides, off));
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

/* aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a) */
fbx_status *fbx_k_flatten(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t s, e;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_wrap_dim(ctx, &s, fbx_iv_to_int(&args[1]), t->ndim));
  FBX_TRY(fbx_wrap_dim(ctx, &e, fbx_iv_to_int(&args[2]), t->ndim));
  if (s > e) return fbx_kernel_error(ctx, "flatten() has invalid args: start_dim cannot come after end_dim");
  int64_t shape[FBX_MAX_DIMS];
  if (t->ndim == 0) {
    shape[0] = 1;
    return view_to(ctx, outs, t, 1, shape, true);
  }
  if (s == e) return out_view(outs, t, t->ndim, t->sizes, t->strides, t->offset);
  int n = 0;
  int64_t prod = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (i < s || i > e) {
      shape[n++] = t->sizes[i];
    } else {
      prod *= t->sizes[i];
      if (i == e) shape[n++] = prod;
    }
  }
  return view_to(ctx, outs, t, n, shape, true);
}

/* ---- squeeze / unsqueeze / transpose / permute / t ---------------------------------------- */

/* aten::squeeze(Tensor(a) self) -> Tensor(a) */
fbx_status *fbx_k_squeeze(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (t->sizes[i] != 1) {
      sizes[n] = t->sizes[i];
      strides[n++] = t->strides[i];
    }
  return out_view(outs, t, n, sizes, strides, t->offset);
}

/* aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a) */
fbx_status *fbx_k_squeeze_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != d || t->sizes[i] != 1) {
      sizes[n] = t->sizes[i];
      strides[n++] = t->strides[i];
    }
  return out_view(outs, t, n, sizes, strides, t->offset);
}

/* aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a) */
fbx_status *fbx_k_unsqueeze(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim >= FBX_MAX_DIMS) return fbx_kernel_error(ctx, "at most %d dims are supported", FBX_MAX_DIMS);
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim + 1));
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  for (int i = 0, j = 0; i <= t->ndim; i++) {
    if (i == d) {
      sizes[i] = 1;
      strides[i] = d >= t->ndim ? 1 : t->sizes[d] * t->strides[d];
    } else {
      sizes[i] = t->sizes[j];
      strides[i] = t->strides[j++];
    }
  }
  return out_view(outs, t, t->ndim + 1, sizes, strides, t->offset);
}

/* aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a) */
fbx_status *fbx_k_transpose(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t a, b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_wrap_dim(ctx, &a, fbx_iv_to_int(&args[1]), t->ndim));
  FBX_TRY(fbx_wrap_dim(ctx, &b, fbx_iv_to_int(&args[2]), t->ndim));
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  memcpy(sizes, t->sizes, sizeof sizes);
  memcpy(strides, t->strides, sizeof strides);
  if (t->ndim > 0) {
    sizes[a] = t->sizes[b];
    sizes[b] = t->sizes[a];
    strides[a] = t->strides[b];
    strides[b] = t->strides[a];
  }
  return out_view(outs, t, t->ndim, sizes, strides, t->offset);
}

/* aten::t(Tensor(a) self) -> Tensor(a) */
fbx_status *fbx_k_t(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim > 2)
    return fbx_kernel_error(ctx, "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
  int64_t sizes[2] = {0, 0}, strides[2] = {0, 0};
  for (int i = 0; i < t->ndim; i++) {
    sizes[i] = t->sizes[t->ndim - 1 - i];
    strides[i] = t->strides[t->ndim - 1 - i];
  }
  return out_view(outs, t, t->ndim, sizes, strides, t->offset);
}

/* aten::permute(Tensor(a) self, int[] dims) -> Tensor(a) */
fbx_status *fbx_k_permute(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t dims[FBX_MAX_DIMS], sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = 0;
  char buf[256];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(int_list(ctx, args, 1, dims, &n));
  if (n != t->ndim)
    return fbx_kernel_error(ctx, "number of dims don't match in permute: the tensor has %d dims, dims %s has %d",
                            t->ndim, shape_str(buf, sizeof buf, n, dims), n);
  bool seen[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < n; i++) {
    int64_t d;
    FBX_TRY(fbx_wrap_dim(ctx, &d, dims[i], t->ndim));
    if (seen[d]) return fbx_kernel_error(ctx, "repeated dim in permute: dims %s", shape_str(buf, sizeof buf, n, dims));
    seen[d] = true;
    sizes[i] = t->sizes[d];
    strides[i] = t->strides[d];
  }
  return out_view(outs, t, n, sizes, strides, t->offset);
}

/* ---- expand ---------------------------------------------------------------------------- */

/* ATen's inferExpandGeometry. */
static fbx_status *expand_to(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *t, int n, const int64_t *target) {
  char a[256], b[256];
  if (n < t->ndim)
    return fbx_kernel_error(ctx, "the number of sizes provided (%d) must be greater or equal to the "
                            "number of dimensions in the tensor (%d)", n, t->ndim);
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  for (int i = n - 1; i >= 0; i--) {
    int dim = t->ndim - 1 - (n - 1 - i);
    int64_t size = dim >= 0 ? t->sizes[dim] : 1;
    int64_t stride = dim >= 0 ? t->strides[dim] : (i + 1 < n ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t ts = target[i];
    if (ts == -1) {
      if (dim < 0)
        return fbx_kernel_error(ctx, "The expanded size of the tensor (-1) isn't allowed in a leading, "
                                "non-existing dimension %d", i);
      ts = size;
    }
    if (ts < 0) return fbx_kernel_error(ctx, "invalid size %" PRId64 " at dimension %d", ts, i);
    if (size != ts) {
      if (size != 1)
        return fbx_kernel_error(ctx, "The expanded size of the tensor (%" PRId64 ") must match the existing "
                                "size (%" PRId64 ") at non-singleton dimension %d.  Target sizes: %s.  "
                                "Tensor sizes: %s", ts, size, i, shape_str(a, sizeof a, n, target),
                                shape_str(b, sizeof b, t->ndim, t->sizes));
      size = ts;
      stride = 0;
    }
    sizes[i] = size;
    strides[i] = stride;
  }
  return out_view(outs, t, n, sizes, strides, t->offset);
}

/* aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a) */
fbx_status *fbx_k_expand(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t shape[FBX_MAX_DIMS];
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(int_list(ctx, args, 1, shape, &n));
  return expand_to(ctx, outs, t, n, shape);
}

/* aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a) */
fbx_status *fbx_k_expand_as(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *o;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &o));
  return expand_to(ctx, outs, t, o->ndim, o->sizes);
}

/* ---- contiguous / detach ---------------------------------------------------------------- */

/* c10::MemoryFormat */
enum { MF_CONTIGUOUS = 0, MF_PRESERVE = 1, MF_CHANNELS_LAST = 2, MF_CHANNELS_LAST_3D = 3 };

static bool channels_last_contiguous(const fbx_tensor *t) {
  static const int order4[] = {1, 3, 2, 0}, order5[] = {1, 4, 3, 2, 0};
  const int *order = t->ndim == 4 ? order4 : order5;
  int64_t expect = 1;
  for (int k = 0; k < t->ndim; k++) {
    int d = order[k];
    if (t->sizes[d] != 1) {
      if (t->strides[d] != expect) return false;
      expect *= t->sizes[d];
    }
  }
  return true;
}

static void channels_last_strides(int ndim, const int64_t *s, int64_t *st) {
  static const int order4[] = {1, 3, 2, 0}, order5[] = {1, 4, 3, 2, 0};
  const int *order = ndim == 4 ? order4 : order5;
  uint64_t acc = 1; /* of an existing tensor's sizes: fits; unsigned all the same */
  for (int k = 0; k < ndim; k++) {
    st[order[k]] = (int64_t)acc;
    acc *= s[order[k]] > 1 ? (uint64_t)s[order[k]] : 1u;
  }
}

/* aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a) */
fbx_status *fbx_k_contiguous(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *c = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  int64_t mf = args[1].kind == FBX_IV_NONE ? MF_CONTIGUOUS : fbx_iv_to_int(&args[1]);
  if (mf == MF_CONTIGUOUS) {
    FBX_TRY(fbx_tensor_contiguous(&c, t));
    fbx_set_out_tensor(outs, 0, c);
    return NULL;
  }
  if (mf == MF_PRESERVE) return fbx_kernel_error(ctx, "preserve memory format is unsupported by the contiguous operator");
  if (mf != MF_CHANNELS_LAST && mf != MF_CHANNELS_LAST_3D)
    return fbx_kernel_error(ctx, "unknown memory format %" PRId64, mf);
  int want = mf == MF_CHANNELS_LAST ? 4 : 5;
  if (t->ndim != want)
    return fbx_kernel_error(ctx, "required rank %d tensor to use %s format", want,
                            want == 4 ? "channels_last" : "channels_last_3d");
  if (channels_last_contiguous(t)) {
    fbx_set_out_tensor(outs, 0, fbx_tensor_retain(t));
    return NULL;
  }
  int64_t strides[FBX_MAX_DIMS];
  channels_last_strides(t->ndim, t->sizes, strides);
  FBX_TRY(fbx_tensor_empty_strided(&c, t->dtype, t->ndim, t->sizes, strides));
  fbx_status *st = fbx_tensor_copy_(c, t);
  if (st) {
    fbx_tensor_release(c);
    return st;
  }
  fbx_set_out_tensor(outs, 0, c);
  return NULL;
}

/* aten::detach(Tensor(a) self) -> Tensor(a): a new tensor over the same storage. */
fbx_status *fbx_k_detach(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  return out_view(outs, t, t->ndim, t->sizes, t->strides, t->offset);
}

/* ---- slice / select / narrow ---------------------------------------------------------- */

/* aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) */
fbx_status *fbx_k_slice(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "slice() cannot be applied to a 0-dim tensor.");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  int64_t start = args[2].kind == FBX_IV_NONE ? 0 : fbx_iv_to_int(&args[2]);
  int64_t end = args[3].kind == FBX_IV_NONE ? INT64_MAX : fbx_iv_to_int(&args[3]);
  int64_t step = fbx_iv_to_int(&args[4]);
  if (step <= 0) return fbx_kernel_error(ctx, "slice step must be positive, got %" PRId64, step);
  int64_t n = t->sizes[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (start < 0) start = 0;
  else if (start >= n) start = n;
  if (end < start) end = start;
  else if (end >= n) end = n;
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  memcpy(sizes, t->sizes, sizeof sizes);
  memcpy(strides, t->strides, sizeof strides);
  int64_t len = end - start;
  sizes[d] = len / step + (len % step != 0);
  /* A product that overflows means step > n: one element at most, so its
   * stride does not matter (issue #12: no signed overflow). */
  if (__builtin_mul_overflow(t->strides[d], step, &strides[d])) strides[d] = t->strides[d];
  return out_view(outs, t, t->ndim, sizes, strides, t->offset + start * t->strides[d]);
}

/* Select index i (already checked) along d: a view with one dim fewer. */
static fbx_status *select_view(fbx_tensor **out, fbx_tensor *t, int64_t d, int64_t i) {
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = 0;
  for (int k = 0; k < t->ndim; k++)
    if (k != d) {
      sizes[n] = t->sizes[k];
      strides[n++] = t->strides[k];
    }
  return fbx_tensor_view(out, t, n, sizes, strides, t->offset + i * t->strides[d]);
}

/* aten::select.int(Tensor(a) self, int dim, int index) -> Tensor(a) */
fbx_status *fbx_k_select(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *v = NULL;
  int64_t d;
  char buf[256];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "select() cannot be applied to a 0-dim tensor.");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  int64_t i = fbx_iv_to_int(&args[2]), n = t->sizes[d];
  if (i < -n || i >= n)
    return fbx_kernel_error(ctx, "select(): index %" PRId64 " out of range for tensor of size %s at dimension %d",
                            i, shape_str(buf, sizeof buf, t->ndim, t->sizes), (int)d);
  if (i < 0) i += n;
  FBX_TRY(select_view(&v, t, d, i));
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

/* aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a) */
fbx_status *fbx_k_narrow(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "narrow() cannot be applied to a 0-dim tensor.");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  int64_t start = fbx_iv_to_int(&args[2]), len = fbx_iv_to_int(&args[3]), n = t->sizes[d];
  if (start != n) {
    int64_t m = n > 0 ? n : 1;
    if (start < -m || start >= m)
      return fbx_kernel_error(ctx, "start %" PRId64 " out of range for dimension %d of size %" PRId64
                              " (expected %" PRId64 "..%" PRId64 ")", start, (int)d, n, -m, m - 1);
    if (start < 0) start += m;
  }
  if (len < 0 || start > n - len)
    return fbx_kernel_error(ctx, "start (%" PRId64 ") + length (%" PRId64 ") exceeds dimension size (%" PRId64 ").",
                            start, len, n);
  int64_t sizes[FBX_MAX_DIMS];
  memcpy(sizes, t->sizes, sizeof sizes);
  sizes[d] = len;
  return out_view(outs, t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
}

/* ---- split / chunk / unbind: lists of views ---------------------------------------------- */

/* outs[0] = list of narrow(t, d, start_k, len_k). */
static fbx_status *views_list(fbx_ivalue *outs, fbx_tensor *t, int64_t d, int64_t count, const int64_t *lens,
                              int64_t uniform) {
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, count > 0 && count < 1024 ? (int)count : 4));
  int64_t sizes[FBX_MAX_DIMS], start = 0;
  memcpy(sizes, t->sizes, sizeof sizes);
  for (int64_t k = 0; k < count; k++) {
    int64_t len = lens ? lens[k] : (k < count - 1 ? uniform : t->sizes[d] - uniform * (count - 1));
    sizes[d] = len;
    fbx_tensor *v = NULL;
    fbx_status *st = fbx_tensor_view(&v, t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
    if (!st) st = fbx_iv_list_push(&l, fbx_iv_tensor(v));
    if (st) {
      fbx_iv_release(&l);
      return st;
    }
    start += len;
  }
  outs[0] = l;
  return NULL;
}

static fbx_status *split_uniform(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *t, int64_t d, int64_t split) {
  if (split < 0)
    return fbx_kernel_error(ctx, "split expects split_size be non-negative, but got split_size=%" PRId64, split);
  int64_t n = t->sizes[d];
  if (split == 0 && n != 0)
    return fbx_kernel_error(ctx, "split_size can only be 0 if dimension size is 0, but got dimension size of %" PRId64, n);
  int64_t count = 1;
  if (split != 0) {
    count = (n + split - 1) / split;
    if (count < 1) count = 1;
  }
  return views_list(outs, t, d, count, NULL, split);
}

/* aten::split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[] */
fbx_status *fbx_k_split(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "split expects at least a 1-dimensional tensor");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), t->ndim));
  return split_uniform(ctx, outs, t, d, fbx_iv_to_int(&args[1]));
}

/* aten::split_with_sizes / split.sizes / split(Tensor(a -> *) self, int[] split_sizes, int dim=0) */
fbx_status *fbx_k_split_sizes(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  char buf[256];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "split expects at least a 1-dimensional tensor");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), t->ndim));
  if (args[1].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "split_sizes must be a list of ints");
  int n = fbx_iv_list_len(&args[1]);
  int64_t small[64], *lens = small, sum = 0;
  fbx_status *st = NULL;
  if (n > 64) {
    lens = fbx_malloc(sizeof *lens * (size_t)n);
    if (!lens) return fbx_status_nomem();
  }
  for (int i = 0; i < n; i++) {
    lens[i] = fbx_iv_to_int(fbx_iv_list_at(&args[1], i));
    sum += lens[i];
  }
  for (int i = 0; i < n && !st; i++)
    if (lens[i] < 0)
      st = fbx_kernel_error(ctx, "split_with_sizes expects split_sizes have only non-negative entries, "
                            "but got split_sizes=%s", shape_str(buf, sizeof buf, n, lens));
  if (!st && sum != t->sizes[d])
    st = fbx_kernel_error(ctx, "split_with_sizes expects split_sizes to sum exactly to %" PRId64
                          " (input tensor's size at dimension %d), but got split_sizes=%s",
                          t->sizes[d], (int)d, shape_str(buf, sizeof buf, n, lens));
  if (!st) st = views_list(outs, t, d, n, lens, 0);
  if (lens != small) fbx_free(lens);
  return st;
}

/* aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[] */
fbx_status *fbx_k_chunk(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d, chunks = fbx_iv_to_int(&args[1]);
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) return fbx_kernel_error(ctx, "chunk expects `chunks` to be greater than 0, got: %" PRId64, chunks);
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), t->ndim));
  int64_t n = t->sizes[d], split = (n + chunks - 1) / chunks;
  if (split == 0 && n == 0) return views_list(outs, t, d, chunks, NULL, 0); /* chunks empty pieces */
  return split_uniform(ctx, outs, t, d, split);
}

/* aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[] */
fbx_status *fbx_k_unbind(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "Dimension specified as 0 but tensor has no dimensions");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  fbx_ivalue l;
  int64_t n = t->sizes[d];
  FBX_TRY(fbx_iv_list_new(&l, n > 0 && n < 1024 ? (int)n : 4));
  for (int64_t i = 0; i < n; i++) {
    fbx_tensor *v = NULL;
    fbx_status *st = select_view(&v, t, d, i);
    if (!st) st = fbx_iv_list_push(&l, fbx_iv_tensor(v));
    if (st) {
      fbx_iv_release(&l);
      return st;
    }
  }
  outs[0] = l;
  return NULL;
}

/* ---- movedim / swapaxes / unflatten / diagonal ------------------------------------------------ */

/* aten::movedim.int / .intlist and aten::moveaxis (the same): source dims
 * go to destination positions, the other dims keep their order in the
 * positions left (PyTorch's movedim). */
fbx_status *fbx_k_movedim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t src[FBX_MAX_DIMS], dst[FBX_MAX_DIMS];
  int ns = 1, nd = 1;
  char a[256], b[256];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (args[1].kind == FBX_IV_INT) {
    src[0] = fbx_iv_to_int(&args[1]);
    dst[0] = fbx_iv_to_int(&args[2]);
  } else {
    FBX_TRY(int_list(ctx, args, 1, src, &ns));
    FBX_TRY(int_list(ctx, args, 2, dst, &nd));
  }
  if (ns != nd)
    return fbx_kernel_error(ctx, "movedim: Invalid source or destination dims: source (%s dims) should contain the "
                                 "same number of dims as destination (%s dims)",
                            shape_str(a, sizeof a, ns, src), shape_str(b, sizeof b, nd, dst));
  int n = t->ndim, order[FBX_MAX_DIMS];
  bool src_used[FBX_MAX_DIMS] = {false}, dst_used[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < ns; i++) {
    int64_t s, d;
    FBX_TRY(fbx_wrap_dim(ctx, &s, src[i], n));
    FBX_TRY(fbx_wrap_dim(ctx, &d, dst[i], n));
    if (n == 0) return out_view(outs, t, 0, t->sizes, t->strides, t->offset);
    if (src_used[s])
      return fbx_kernel_error(ctx, "movedim: repeated dim in `source` (%s)", shape_str(a, sizeof a, ns, src));
    if (dst_used[d])
      return fbx_kernel_error(ctx, "movedim: repeated dim in `destination` (%s)", shape_str(a, sizeof a, nd, dst));
    src_used[s] = dst_used[d] = true;
    order[d] = (int)s;
  }
  for (int d = 0, s = 0; d < n; d++) {
    if (dst_used[d]) continue;
    while (src_used[s]) s++;
    order[d] = s++;
  }
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  for (int d = 0; d < n; d++) sizes[d] = t->sizes[order[d]], strides[d] = t->strides[order[d]];
  return out_view(outs, t, n, sizes, strides, t->offset);
}

/* aten::unflatten.int(Tensor(a) self, int dim, int[] sizes): dim split into
 * sizes (one -1 inferred from its size), then a view (an error where the
 * strides allow none, as PyTorch's). */
fbx_status *fbx_k_unflatten(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t dim, parts[FBX_MAX_DIMS], shape[FBX_MAX_DIMS];
  int np = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0) return fbx_kernel_error(ctx, "Dimension specified as 0 but tensor has no dimensions");
  FBX_TRY(fbx_wrap_dim(ctx, &dim, fbx_iv_to_int(&args[1]), t->ndim));
  FBX_TRY(int_list(ctx, args, 2, parts, &np));
  if (np == 0) return fbx_kernel_error(ctx, "unflatten: sizes must be non-empty");
  FBX_TRY(infer_size(ctx, parts, np, t->sizes[dim]));
  if (t->ndim - 1 + np > FBX_MAX_DIMS)
    return fbx_kernel_error(ctx, "unflatten: %d dims is more than the %d a tensor may have", t->ndim - 1 + np,
                            FBX_MAX_DIMS);
  int n = 0;
  for (int d = 0; d < t->ndim; d++) {
    if (d == dim)
      for (int k = 0; k < np; k++) shape[n++] = parts[k];
    else
      shape[n++] = t->sizes[d];
  }
  return view_to(ctx, outs, t, n, shape, false);
}

/* aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1): dims
 * dim1 and dim2 dropped, the diagonal appended as the last dim (stride
 * stride(dim1) + stride(dim2)), PyTorch's storage offset rule. */
fbx_status *fbx_k_diagonal(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d1, d2, off = fbx_iv_to_int(&args[1]);
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(fbx_wrap_dim(ctx, &d1, fbx_iv_to_int(&args[2]), t->ndim));
  FBX_TRY(fbx_wrap_dim(ctx, &d2, fbx_iv_to_int(&args[3]), t->ndim));
  if (d1 == d2)
    return fbx_kernel_error(ctx, "diagonal dimensions cannot be identical %" PRId64 ", %" PRId64,
                            fbx_iv_to_int(&args[2]), fbx_iv_to_int(&args[3]));
  if (t->ndim < 2) return fbx_kernel_error(ctx, "diagonal needs a tensor of 2 or more dims, not %d", t->ndim);
  int64_t n = off >= 0 ? (t->sizes[d1] < t->sizes[d2] - off ? t->sizes[d1] : t->sizes[d2] - off)
                       : (t->sizes[d1] + off < t->sizes[d2] ? t->sizes[d1] + off : t->sizes[d2]);
  if (n < 0) n = 0;
  int64_t start = t->offset;
  if (n > 0) start += off >= 0 ? off * t->strides[d2] : -off * t->strides[d1];
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < t->ndim; d++)
    if (d != d1 && d != d2) sizes[k] = t->sizes[d], strides[k++] = t->strides[d];
  sizes[k] = n, strides[k++] = t->strides[d1] + t->strides[d2];
  return out_view(outs, t, k, sizes, strides, start);
}

/* ---- meshgrid ----------------------------------------------------------------------------- */

/* aten::meshgrid(Tensor[] tensors) -> Tensor[] ("ij") and
 * aten::meshgrid.indexing(Tensor[] tensors, *, str indexing): N 0-d or 1-d
 * tensors of one dtype; grid i is tensor i viewed along dim i and expanded
 * to [n_0, ..., n_{N-1}] (a view, as PyTorch's: view then expand); "xy"
 * swaps the first two tensors before and the first two grids after. */
fbx_status *fbx_k_meshgrid(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors");
  int n = fbx_iv_list_len(&args[0]);
  if (n == 0) return fbx_kernel_error(ctx, "meshgrid expects a non-empty TensorList");
  if (n > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "meshgrid of %d tensors: at most %d dims", n, FBX_MAX_DIMS);
  fbx_tensor *ts[FBX_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(&args[0], i);
    if (e->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "expected a Tensor at list position %d", i);
    ts[i] = e->u.t;
    if (i && ts[i]->dtype != ts[0]->dtype) return fbx_kernel_error(ctx, "meshgrid expects all tensors to have the same dtype");
  }
  bool swap = false;
  if (ctx->op->id == FBX_OP_meshgrid_indexing) {
    const char *ix = fbx_iv_str_data(&args[1]);
    if (ix && !strcmp(ix, "xy")) swap = n >= 2;
    else if (!ix || strcmp(ix, "ij"))
      return fbx_kernel_error(ctx, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s",
                              ix ? ix : "?");
  }
  if (swap) {
    fbx_tensor *t0 = ts[0];
    ts[0] = ts[1], ts[1] = t0;
  }
  int64_t shape[FBX_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim > 1)
      return fbx_kernel_error(ctx, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a %dD tensor",
                              ts[i]->ndim);
    shape[i] = ts[i]->numel;
  }
  fbx_tensor *grids[FBX_MAX_DIMS] = {NULL};
  fbx_status *st = NULL;
  for (int i = 0; i < n && !st; i++) {
    int64_t vshape[FBX_MAX_DIMS], vstrides[FBX_MAX_DIMS];
    for (int k = 0; k < n; k++) vshape[k] = k == i ? ts[i]->numel : 1;
    fbx_tensor *v = NULL;
    if (!compute_stride(ts[i], n, vshape, vstrides)) /* never: one dim of n values */
      st = fbx_kernel_error(ctx, "meshgrid: cannot view tensor %d", i);
    if (!st) st = fbx_tensor_view(&v, ts[i], n, vshape, vstrides, ts[i]->offset);
    if (!st) st = fbx_expand_view(&grids[i], v, n, shape);
    fbx_tensor_release(v);
  }
  if (swap && !st) {
    fbx_tensor *g0 = grids[0];
    grids[0] = grids[1], grids[1] = g0;
  }
  fbx_ivalue l;
  if (!st) st = fbx_iv_list_new(&l, n);
  for (int i = 0; i < n && !st; i++) {
    st = fbx_iv_list_push(&l, fbx_iv_tensor(grids[i]));
    if (!st) grids[i] = NULL;
    else fbx_iv_release(&l);
  }
  for (int i = 0; i < n; i++) fbx_tensor_release(grids[i]);
  if (st) return st;
  outs[0] = l;
  return NULL;
}

/* ---- unfold / broadcast_to / atleast_Nd ------------------------------------------------- */

/* aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a):
 * a view, as in PyTorch: dim d becomes the (size - len) / step + 1 windows
 * (stride step * stride(d)) and a last dim of `size` (stride(d)) is added;
 * a 0-d tensor counts as one element of stride 1. */
fbx_status *fbx_k_unfold(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim + 1 > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "at most %d dims are supported", FBX_MAX_DIMS);
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), t->ndim));
  int64_t size = fbx_iv_to_int(&args[2]), step = fbx_iv_to_int(&args[3]);
  int64_t max_size = t->ndim ? t->sizes[d] : 1;
  if (size > max_size)
    return fbx_kernel_error(ctx, "maximum size for tensor at dimension %d is %" PRId64 " but size is %" PRId64,
                            (int)d, max_size, size);
  if (size < 0) return fbx_kernel_error(ctx, "size is %" PRId64 " but must be >= 0", size);
  if (step <= 0) return fbx_kernel_error(ctx, "step is %" PRId64 " but must be > 0", step);
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int nd = t->ndim;
  memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)nd);
  memcpy(strides, t->strides, sizeof(int64_t) * (size_t)nd);
  sizes[nd] = size;
  strides[nd] = nd ? t->strides[d] : 1;
  if (nd) {
    sizes[d] = (t->sizes[d] - size) / step + 1;
    if (__builtin_mul_overflow(step, t->strides[d], &strides[d])) strides[d] = t->strides[d];
  }
  return out_view(outs, t, nd + 1, sizes, strides, t->offset);
}

/* aten::broadcast_to(Tensor(a) self, int[] size) -> Tensor(a): expand. */
fbx_status *fbx_k_broadcast_to(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t shape[FBX_MAX_DIMS];
  int n = 0;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(int_list(ctx, args, 1, shape, &n));
  return expand_to(ctx, outs, t, n, shape);
}

/* t with at least `want` dims, as PyTorch's atleast_{1,2,3}d: t itself when
 * it has them; a 0-d tensor reshaped to [1]*want; a 1-d [n] as [1, n]
 * (2-d) or [1, n, 1] (3-d); a 2-d [m, n] as [m, n, 1]. Views. */
static fbx_status *atleast(fbx_tensor **out, fbx_tensor *t, int want) {
  if (t->ndim >= want) {
    *out = fbx_tensor_retain(t);
    return NULL;
  }
  int64_t sizes[3], strides[3];
  if (t->ndim == 0) {
    for (int i = 0; i < want; i++) sizes[i] = 1, strides[i] = 1;
  } else if (t->ndim == 1) {
    sizes[0] = 1, sizes[1] = t->sizes[0];
    strides[1] = t->strides[0];
    strides[0] = t->sizes[0] * t->strides[0];
    sizes[2] = 1, strides[2] = 1;
  } else { /* 2-d to 3-d */
    sizes[0] = t->sizes[0], sizes[1] = t->sizes[1], sizes[2] = 1;
    strides[0] = t->strides[0], strides[1] = t->strides[1], strides[2] = 1;
  }
  return fbx_tensor_view(out, t, want, sizes, strides, t->offset);
}

static int atleast_want(const fbx_kctx *ctx) {
  switch (ctx->op->id) {
    case FBX_OP_atleast_1d: case FBX_OP_atleast_1d_Sequence: return 1;
    case FBX_OP_atleast_2d: case FBX_OP_atleast_2d_Sequence: return 2;
    default: return 3;
  }
}

/* aten::atleast_{1,2,3}d(Tensor self) -> Tensor */
fbx_status *fbx_k_atleast(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t, *v = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  FBX_TRY(atleast(&v, t, atleast_want(ctx)));
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}

/* aten::atleast_{1,2,3}d.Sequence(Tensor[] tensors) -> Tensor[] */
fbx_status *fbx_k_atleast_seq(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors");
  int n = fbx_iv_list_len(&args[0]), want = atleast_want(ctx);
  for (int i = 0; i < n; i++)
    if (fbx_iv_list_at(&args[0], i)->kind != FBX_IV_TENSOR)
      return fbx_kernel_error(ctx, "expected a Tensor at list position %d", i);
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) {
    fbx_tensor *v = NULL;
    fbx_status *st = atleast(&v, fbx_iv_list_at(&args[0], i)->u.t, want);
    if (!st) st = fbx_iv_list_push(&l, fbx_iv_tensor(v));
    if (st) {
      fbx_iv_release(&l);
      return st;
    }
  }
  outs[0] = l;
  return NULL;
}

/* ---- tensor_split / hsplit / vsplit / dsplit ---------------------------------------------- */

/* outs[0] = [t[b_0:b_1], t[b_1:b_2], ...] along d, each cut with slice's
 * clamping (so indices may be negative, unordered or past the end), where
 * b_0 = 0, b_k = bounds[k-1] and the last piece ends at the size. */
static fbx_status *split_at(fbx_ivalue *outs, fbx_tensor *t, int64_t d, int n, const int64_t *bounds) {
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, n + 1));
  int64_t sz = t->sizes[d], sizes[FBX_MAX_DIMS];
  memcpy(sizes, t->sizes, sizeof sizes);
  for (int k = 0; k <= n; k++) {
    int64_t start = k ? bounds[k - 1] : 0, end = k < n ? bounds[k] : sz;
    if (start < 0) start += sz;
    if (end < 0) end += sz;
    start = start < 0 ? 0 : start > sz ? sz : start;
    end = end < start ? start : end > sz ? sz : end;
    sizes[d] = end - start;
    fbx_tensor *v = NULL;
    fbx_status *st = fbx_tensor_view(&v, t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
    if (!st) st = fbx_iv_list_push(&l, fbx_iv_tensor(v));
    if (st) {
      fbx_iv_release(&l);
      return st;
    }
  }
  outs[0] = l;
  return NULL;
}

/* `sections` pieces: the first size % sections one longer than the rest. */
static fbx_status *split_sections(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *t, int64_t d, int64_t sections) {
  if (sections <= 0) return fbx_kernel_error(ctx, "number of sections must be larger than 0, got %" PRId64, sections);
  if (sections > 1 << 20) return fbx_kernel_error(ctx, "%" PRId64 " sections: too many", sections);
  int64_t sz = t->sizes[d], small[64] = {0}, *b = small, at = 0;
  if (sections > 64 && !(b = fbx_malloc(sizeof *b * (size_t)sections))) return fbx_status_nomem();
  for (int64_t k = 0; k + 1 < sections; k++) {
    at += sz / sections + (k < sz % sections);
    b[k] = at;
  }
  fbx_status *st = split_at(outs, t, d, (int)sections - 1, b);
  if (b != small) fbx_free(b);
  return st;
}

static fbx_status *split_list(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *t, int64_t d, const fbx_ivalue *l) {
  if (l->kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "indices must be a list of ints");
  int n = fbx_iv_list_len(l);
  int64_t small[64] = {0}, *b = small;
  if (n > 64 && !(b = fbx_malloc(sizeof *b * (size_t)n))) return fbx_status_nomem();
  for (int i = 0; i < n; i++) b[i] = fbx_iv_to_int(fbx_iv_list_at(l, i));
  fbx_status *st = split_at(outs, t, d, n, b);
  if (b != small) fbx_free(b);
  return st;
}

/* aten::tensor_split.sections / .indices / .tensor_indices_or_sections
 * (Tensor(a -> *) self, ..., int dim=0) -> Tensor(a)[]: views. */
fbx_status *fbx_k_tensor_split(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  if (t->ndim == 0)
    return fbx_kernel_error(ctx, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), t->ndim));
  if (ctx->op->id == FBX_OP_tensor_split_sections) return split_sections(ctx, outs, t, d, fbx_iv_to_int(&args[1]));
  if (ctx->op->id == FBX_OP_tensor_split_indices) return split_list(ctx, outs, t, d, &args[1]);
  fbx_tensor *s;
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &s));
  if (s->dtype != FBX_DTYPE_INT64)
    return fbx_kernel_error(ctx, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                            fbx_dtype_torch_name(s->dtype));
  if (s->ndim > 1)
    return fbx_kernel_error(ctx, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                            "one-dimensional tensor, but got a tensor with %d dims", s->ndim);
  if (s->ndim == 0) return split_sections(ctx, outs, t, d, fbx_tensor_get_i64(s, 0));
  int64_t small[64] = {0}, *b = small, n = s->numel;
  if (n > 1 << 20) return fbx_kernel_error(ctx, "%" PRId64 " indices: too many", n);
  if (n > 64 && !(b = fbx_malloc(sizeof *b * (size_t)n))) return fbx_status_nomem();
  for (int64_t i = 0; i < n; i++) b[i] = fbx_tensor_get_i64(s, i);
  fbx_status *st = split_at(outs, t, d, (int)n, b);
  if (b != small) fbx_free(b);
  return st;
}

/* aten::{h,v,d}split.int(Tensor(a -> *) self, int sections) and .array(self,
 * int[] indices) -> Tensor(a)[]: tensor_split along dim 1 (dim 0 for a 1-d
 * hsplit), 0 or 2, which must exist; .int needs sections to divide it. */
fbx_status *fbx_k_hvdsplit(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *t;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &t));
  int id = ctx->op->id, need, d;
  const char *nm;
  if (id == FBX_OP_hsplit_int || id == FBX_OP_hsplit_array) nm = "hsplit", need = 1, d = t->ndim == 1 ? 0 : 1;
  else if (id == FBX_OP_vsplit_int || id == FBX_OP_vsplit_array) nm = "vsplit", need = 2, d = 0;
  else nm = "dsplit", need = 3, d = 2;
  if (t->ndim < need)
    return fbx_kernel_error(ctx, "torch.%s requires a tensor with at least %d dimension%s, but got a tensor with %d "
                            "dimensions!", nm, need, need > 1 ? "s" : "", t->ndim);
  if (args[1].kind == FBX_IV_LIST) return split_list(ctx, outs, t, d, &args[1]);
  int64_t sections = fbx_iv_to_int(&args[1]);
  if (sections == 0 || t->sizes[d] % sections != 0)
    return fbx_kernel_error(ctx, "torch.%s attempted to split along dimension %d, but the size of the dimension %" PRId64
                            " is not divisible by the split_size %" PRId64 "!", nm, d, t->sizes[d], sections);
  return split_sections(ctx, outs, t, d, sections);
}
