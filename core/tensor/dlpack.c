/* DLPack import and export (CPU). */
#include <inttypes.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/status.h"
#include "tensor/internal.h"
#include <fusebox/tensor.h>

int fbx_dtype_to_dlpack(fbx_dtype d, DLDataType *out) {
  uint8_t code;
  switch (d) {
    case FBX_DTYPE_UINT8: code = kDLUInt; break;
    case FBX_DTYPE_INT8: case FBX_DTYPE_INT16: case FBX_DTYPE_INT32: case FBX_DTYPE_INT64:
      code = kDLInt;
      break;
    case FBX_DTYPE_FLOAT16: case FBX_DTYPE_FLOAT32: case FBX_DTYPE_FLOAT64:
      code = kDLFloat;
      break;
    case FBX_DTYPE_BFLOAT16: code = kDLBfloat; break;
    case FBX_DTYPE_BOOL: code = FBX_DLPACK_BOOL_CODE; break;
    default: return -1;
  }
  out->code = code;
  out->bits = (uint8_t)(fbx_dtype_size(d) * 8);
  out->lanes = 1;
  return 0;
}

int fbx_dtype_from_dlpack(DLDataType t, fbx_dtype *out) {
  fbx_dtype d = FBX_DTYPE_UNDEFINED;
  if (t.lanes != 1) return -1;
  switch (t.code) {
    case kDLInt:
      d = t.bits == 8 ? FBX_DTYPE_INT8 : t.bits == 16 ? FBX_DTYPE_INT16
        : t.bits == 32 ? FBX_DTYPE_INT32 : t.bits == 64 ? FBX_DTYPE_INT64
        : FBX_DTYPE_UNDEFINED;
      break;
    case kDLUInt: if (t.bits == 8) d = FBX_DTYPE_UINT8; break;
    case kDLFloat:
      d = t.bits == 16 ? FBX_DTYPE_FLOAT16 : t.bits == 32 ? FBX_DTYPE_FLOAT32
        : t.bits == 64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_UNDEFINED;
      break;
    case kDLBfloat: if (t.bits == 16) d = FBX_DTYPE_BFLOAT16; break;
    case FBX_DLPACK_BOOL_CODE: if (t.bits == 8) d = FBX_DTYPE_BOOL; break;
    default: break;
  }
  if (d == FBX_DTYPE_UNDEFINED) return -1;
  *out = d;
  return 0;
}

fbx_status *fbx_tensor_to_dltensor(DLTensor *out, const fbx_tensor *t) {
  DLDataType dt;
  if (fbx_dtype_to_dlpack(t->dtype, &dt) != 0)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "dtype %s has no DLPack mapping",
                          fbx_dtype_name(t->dtype));
  out->data = t->data;
  out->device.device_type = kDLCPU;
  out->device.device_id = 0;
  out->ndim = t->ndim;
  out->dtype = dt;
  out->shape = (int64_t *)t->sizes;
  out->strides = (int64_t *)t->strides;
  out->byte_offset = 0;
  return NULL;
}

typedef struct {
  DLManagedTensor m; /* first: the deleter gets this pointer back */
  fbx_tensor *t;
} export_ctx;

static void export_deleter(DLManagedTensor *self) {
  export_ctx *c = (export_ctx *)(void *)self;
  fbx_tensor_release(c->t);
  fbx_free(c);
}

fbx_status *fbx_tensor_to_dlpack(DLManagedTensor **out, fbx_tensor *t) {
  export_ctx *c = fbx_calloc(1, sizeof *c);
  if (!c) return fbx_status_nomem();
  fbx_status *st = fbx_tensor_to_dltensor(&c->m.dl_tensor, t);
  if (st) {
    fbx_free(c);
    return st;
  }
  /* shape/strides point into t, which the export keeps alive */
  c->t = fbx_tensor_retain(t);
  c->m.manager_ctx = c;
  c->m.deleter = export_deleter;
  *out = &c->m;
  return NULL;
}

/* Checks dl and computes the view's sizes/strides and the bytes it spans. */
static fbx_status *describe(const DLTensor *dl, fbx_dtype *dtype, int64_t *sizes,
                            int64_t *strides, size_t *nbytes, char **data) {
  if (dl->device.device_type != kDLCPU)
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "DLPack tensor on device type %d; only CPU (kDLCPU) is supported",
                          (int)dl->device.device_type);
  if (fbx_dtype_from_dlpack(dl->dtype, dtype) != 0)
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "DLPack dtype (code %u, bits %u, lanes %u) has no fusebox dtype",
                          dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
  if (dl->ndim < 0 || dl->ndim > FBX_MAX_DIMS)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "DLPack tensor with %d dimensions (limit %d)",
                          dl->ndim, FBX_MAX_DIMS);
  if (dl->ndim > 0 && !dl->shape)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "DLPack tensor has no shape");
  int64_t es = (int64_t)fbx_dtype_size(*dtype), numel = 1, last = 0;
  for (int i = 0; i < dl->ndim; i++) {
    sizes[i] = dl->shape[i];
    if (sizes[i] < 0)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "DLPack shape has negative size %" PRId64,
                            sizes[i]);
  }
  if (dl->strides) {
    for (int i = 0; i < dl->ndim; i++) strides[i] = dl->strides[i];
  } else {
    fbx_contiguous_strides(dl->ndim, sizes, strides);
  }
  int64_t limit = INT64_MAX / es;
  for (int i = 0; i < dl->ndim; i++) {
    if (strides[i] < 0)
      return fbx_status_new(FBX_ERR_UNSUPPORTED,
                            "DLPack tensor has negative stride %" PRId64 " (dim %d)", strides[i],
                            i);
    if (sizes[i] == 0) numel = 0;
    if (sizes[i] > 1) {
      if (strides[i] > (limit - last) / (sizes[i] - 1) || (numel && numel > limit / sizes[i]))
        return fbx_status_new(FBX_ERR_INVALID_ARG, "DLPack tensor is too large");
      last += strides[i] * (sizes[i] - 1);
      numel *= sizes[i];
    }
  }
  *data = (char *)dl->data + dl->byte_offset;
  if (numel && !dl->data)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "DLPack tensor has NULL data");
  if ((uintptr_t)*data % (uintptr_t)es != 0)
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "DLPack data is not aligned to its %" PRId64 "-byte element size",
                          es);
  *nbytes = numel ? (size_t)((last + 1) * es) : 0;
  return NULL;
}

static void dlpack_deleter(void *ctx, void *data) {
  DLManagedTensor *m = ctx;
  (void)data;
  if (m->deleter) m->deleter(m);
}

static fbx_status *import(fbx_tensor **out, const DLTensor *dl, fbx_storage_deleter del,
                          void *ctx) {
  fbx_dtype dtype;
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  size_t nbytes = 0;
  char *data = NULL;
  FBX_TRY(describe(dl, &dtype, sizes, strides, &nbytes, &data));
  fbx_storage *s;
  FBX_TRY(fbx_storage_wrap(&s, data, nbytes, NULL, NULL));
  fbx_status *st = fbx_tensor_from_storage(out, s, dtype, dl->ndim, sizes, strides, 0);
  /* Arm the deleter only once nothing can fail: on failure the caller
   * still owns the memory. */
  if (!st) fbx_storage_set_deleter_(s, del, ctx);
  fbx_storage_release(s);
  return st;
}

fbx_status *fbx_tensor_from_dlpack(fbx_tensor **out, DLManagedTensor *m) {
  return import(out, &m->dl_tensor, dlpack_deleter, m);
}

fbx_status *fbx_tensor_wrap_dltensor(fbx_tensor **out, const DLTensor *dl) {
  return import(out, dl, NULL, NULL);
}
