/* fusebox tensors: strided views over reference-counted storage, plus .npy
 * files and DLPack.
 *
 *   fbx_tensor *a = NULL, *t = NULL, *c = NULL;
 *   int64_t sizes[2] = {2, 3};
 *   FBX_TRY(fbx_tensor_zeros(&a, FBX_DTYPE_FLOAT32, 2, sizes));
 *   ((float *)a->data)[4] = 1.5f;                  // contiguous: plain indexing
 *
 *   int64_t tsizes[2] = {3, 2}, tstrides[2] = {1, 3};
 *   FBX_TRY(fbx_tensor_view(&t, a, 2, tsizes, tstrides, a->offset)); // a.t(), shares storage
 *   double v = fbx_tensor_get_f64(t, 3);           // t[1][1] == a[1][1] == 1.5
 *
 *   FBX_TRY(fbx_tensor_empty(&c, FBX_DTYPE_FLOAT16, 2, tsizes));
 *   FBX_TRY(fbx_tensor_copy_(c, t));               // strided copy with dtype conversion
 *   FBX_TRY(fbx_npy_write_file("c.npy", c));       // numpy.load("c.npy") works
 *
 *   char line[256];
 *   fbx_tensor_summary(line, sizeof line, c);      // "float16[3, 2] min=0 max=1.5 mean=0.25"
 *   fbx_tensor_release(c); fbx_tensor_release(t); fbx_tensor_release(a);
 *
 * Model (PyTorch's): a tensor is a heap object with its own reference count
 * that describes a strided view (dtype, sizes, strides, storage offset) of a
 * storage; views made with fbx_tensor_view share the storage, which lives
 * until the last tensor (or DLPack export) using it is released. Sizes,
 * strides and offsets are in elements, never bytes. Strides are non-negative
 * (as in PyTorch). A 0-d tensor has ndim 0 and numel 1; a tensor with a 0 in
 * its sizes has numel 0 (its data pointer is valid but must not be read).
 *
 * Core code reads the struct fields directly (kernels index `data` with
 * `strides`); only this module changes them. All fields are fixed once a
 * tensor is created, so a tensor may be shared by threads that only read it;
 * retain/release are atomic.
 *
 * Element storage: bool is one byte holding 0 or 1 (readers normalize);
 * float16 and bfloat16 are stored as their 16-bit patterns (uint16_t) and
 * computed in float32 — see core/tensor/half.h for the inline conversions
 * (fbx_half_to_float, fbx_float_to_half, fbx_bf16_to_float, fbx_float_to_bf16).
 *
 * Every function that can fail returns an fbx_status (NULL on success); on
 * failure no output is written (an `out` argument keeps its old value) and
 * nothing leaks. Allocation goes through base/alloc.h, so tests can fail it.
 */
#ifndef FUSEBOX_TENSOR_H
#define FUSEBOX_TENSOR_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>
#include <fusebox/dtype.h>
#include <fusebox/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FBX_MAX_DIMS 16
/* Storage buffers allocated by fusebox start on this boundary. */
#define FBX_STORAGE_ALIGN 64

/* ------------------------------------------------------------------------ */
/* Storage: a reference-counted byte buffer.                                 */

typedef struct fbx_storage fbx_storage;

/* Called once when a wrapped storage dies (ctx and data as given to wrap). */
typedef void (*fbx_storage_deleter)(void *ctx, void *data);

/* A new buffer of nbytes (uninitialized, FBX_STORAGE_ALIGN-aligned), refcount 1. */
fbx_status *fbx_storage_new(fbx_storage **out, size_t nbytes);
/* Wrap memory owned elsewhere; `deleter` (may be NULL: nothing to free) runs
 * when the last reference goes. On failure the deleter is NOT called: the
 * caller still owns `data`. */
fbx_status *fbx_storage_wrap(fbx_storage **out, void *data, size_t nbytes,
                             fbx_storage_deleter deleter, void *ctx);
fbx_storage *fbx_storage_retain(fbx_storage *s); /* returns s; NULL-safe */
void fbx_storage_release(fbx_storage *s);        /* NULL-safe */
void *fbx_storage_data(const fbx_storage *s);
size_t fbx_storage_nbytes(const fbx_storage *s);
long fbx_storage_refcount(const fbx_storage *s); /* for tests and debugging */

/* ------------------------------------------------------------------------ */
/* Tensors.                                                                  */

typedef struct fbx_tensor {
  fbx_storage *storage;            /* one reference held by this tensor */
  void *data;                      /* storage data + offset * element size (cached) */
  fbx_dtype dtype;
  int ndim;                        /* 0 .. FBX_MAX_DIMS */
  int64_t sizes[FBX_MAX_DIMS];     /* entries at and past ndim are 0 */
  int64_t strides[FBX_MAX_DIMS];   /* elements; >= 0 */
  int64_t offset;                  /* storage offset, elements */
  int64_t numel;                   /* product of sizes (1 for 0-d) */
  atomic_long refcount;            /* use retain/release */
} fbx_tensor;

fbx_tensor *fbx_tensor_retain(fbx_tensor *t); /* returns t; NULL-safe */
void fbx_tensor_release(fbx_tensor *t);       /* NULL-safe */

/* A new contiguous (row-major) tensor with fresh storage, uninitialized.
 * `sizes` may be NULL when ndim is 0. */
fbx_status *fbx_tensor_empty(fbx_tensor **out, fbx_dtype dtype, int ndim,
                             const int64_t *sizes);
/* As fbx_tensor_empty, filled with zeros (false, +0.0). */
fbx_status *fbx_tensor_zeros(fbx_tensor **out, fbx_dtype dtype, int ndim,
                             const int64_t *sizes);
/* Fresh storage just large enough for the given (non-negative) strides,
 * offset 0, uninitialized. Overlapping strides (e.g. 0) are allowed. */
fbx_status *fbx_tensor_empty_strided(fbx_tensor **out, fbx_dtype dtype, int ndim,
                                     const int64_t *sizes, const int64_t *strides);
/* A new contiguous tensor holding a copy of `data` (numel elements of dtype,
 * row-major). Bool bytes are normalized to 0/1. */
fbx_status *fbx_tensor_from_data(fbx_tensor **out, fbx_dtype dtype, int ndim,
                                 const int64_t *sizes, const void *data);
/* A tensor over an existing storage (retained). `strides` NULL means
 * contiguous. Fails (FBX_ERR_INVALID_ARG) unless every element lies inside
 * the storage. */
fbx_status *fbx_tensor_from_storage(fbx_tensor **out, fbx_storage *storage,
                                    fbx_dtype dtype, int ndim, const int64_t *sizes,
                                    const int64_t *strides, int64_t offset);
/* as_strided: a view of base's storage with the same dtype. `offset` is the
 * absolute storage offset (pass base->offset to stay where base starts);
 * `strides` NULL means contiguous. Bounds are checked against the storage. */
fbx_status *fbx_tensor_view(fbx_tensor **out, fbx_tensor *base, int ndim,
                            const int64_t *sizes, const int64_t *strides,
                            int64_t offset);
/* t itself (retained) if contiguous, else a contiguous copy. */
fbx_status *fbx_tensor_contiguous(fbx_tensor **out, fbx_tensor *t);
/* A contiguous copy of t in `dtype` (always a new tensor). */
fbx_status *fbx_tensor_clone_as(fbx_tensor **out, const fbx_tensor *t, fbx_dtype dtype);

/* dst[...] = src[...], converting dtype; both may have any strides. src is
 * broadcast to dst's shape (PyTorch's copy_ rule: trailing dims align; src
 * dims must be 1 or equal). Overlapping src and dst are handled (through a
 * temporary) except that an identical view is a no-op. Conversions follow
 * PyTorch/C: to bool is `x != 0` (NaN is true); float to integer truncates
 * toward zero through int64 and then wraps to the narrower type (300.0 ->
 * uint8 44, as PyTorch on x86); NaN and values outside int64 give INT64_MIN
 * before wrapping; double to float16/bfloat16 rounds through float32. */
fbx_status *fbx_tensor_copy_(fbx_tensor *dst, const fbx_tensor *src);

/* PyTorch's is_contiguous: row-major, ignoring the strides of size-1 dims;
 * numel 0 is always contiguous. */
int fbx_tensor_is_contiguous(const fbx_tensor *t);
/* 1 if a and b share storage and their byte ranges [first, last element]
 * intersect (conservative: interleaved views that never touch the same byte
 * still report 1). Tensors with numel 0 never overlap. */
int fbx_tensor_may_overlap(const fbx_tensor *a, const fbx_tensor *b);
/* 1 if a and b have the same ndim and sizes. */
int fbx_tensor_same_shape(const fbx_tensor *a, const fbx_tensor *b);
size_t fbx_tensor_elem_size(const fbx_tensor *t);
/* Row-major strides for sizes (what fbx_tensor_empty uses). */
void fbx_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);

/* Element access by linear index in logical (row-major) order, for tests and
 * small code; index must be in [0, numel) (checked by assert). Reads convert
 * like fbx_tensor_copy_; writes convert the value to t's dtype. */
double fbx_tensor_get_f64(const fbx_tensor *t, int64_t index);
int64_t fbx_tensor_get_i64(const fbx_tensor *t, int64_t index);
void fbx_tensor_set_f64(fbx_tensor *t, int64_t index, double v);
void fbx_tensor_set_i64(fbx_tensor *t, int64_t index, int64_t v);
/* The value of a one-element tensor (any ndim); FBX_ERR_INVALID_ARG otherwise. */
fbx_status *fbx_tensor_item_f64(double *out, const fbx_tensor *t);
fbx_status *fbx_tensor_item_i64(int64_t *out, const fbx_tensor *t);

/* One-line summary into buf (always NUL-terminated when n > 0), e.g.
 *   float32[2, 3] min=-1 max=4.5 mean=1.25
 *   float32[4] min=0 max=2 mean=1 nan=1        (statistics skip NaNs)
 *   int64[] min=7 max=7 mean=7                 (0-d)
 *   float32[0, 3] empty
 *   float32[3, 2] strides=[1, 3] min=...       (non-contiguous)
 * Returns what snprintf would: the length the full line needs. */
int fbx_tensor_summary(char *buf, size_t n, const fbx_tensor *t);

/* ------------------------------------------------------------------------ */
/* .npy files (NumPy format 1.0, 2.0 and 3.0).                               */
/*
 * dtypes: |b1 |u1 |i1 <i2 <i4 <i8 <f2 <f4 <f8, with any byte-order character
 * ('<' '>' '=' '|', or none); big-endian data is byte-swapped on read.
 * bfloat16 has no NumPy dtype: reading never produces it and writing it fails
 * with FBX_ERR_UNSUPPORTED (convert to float32 first). fortran_order: True
 * gives a tensor with column-major strides over the file's bytes (no
 * transpose copy); 0-d (`shape: ()`) and empty arrays work.
 *
 * Strictness (decided here; numpy is more lenient in places): the header dict
 * must have exactly the keys descr, fortran_order and shape; the data must be
 * exactly numel * itemsize bytes — trailing bytes after the array are an
 * error, as they usually mean the shape or dtype is wrong. Errors are
 * FBX_ERR_PARSE (malformed or short file), FBX_ERR_UNSUPPORTED (a valid file
 * with a dtype fusebox lacks, e.g. <c8, <u2, |O, structured) or FBX_ERR_IO,
 * and every message starts with the file name:
 *   "x.npy: data is 24 bytes, shape (2, 5) of <f4 needs 40"
 */

fbx_status *fbx_npy_read_file(fbx_tensor **out, const char *path);
/* Parse an in-memory .npy image; `name` is used in error messages only. */
fbx_status *fbx_npy_read_mem(fbx_tensor **out, const void *buf, size_t len,
                             const char *name);
/* Write t in C order (non-contiguous tensors are copied first) as format 1.0
 * (16 dims always fit), header padded so the data is 64-byte aligned. Atomic: the data goes to a temporary file in
 * the same directory which is renamed over `path`, so a failed write leaves
 * no partial file. */
fbx_status *fbx_npy_write_file(const char *path, const fbx_tensor *t);

/* ------------------------------------------------------------------------ */
/* DLPack (CPU only).                                                        */
/*
 * dtype mapping: intN/uintN/floatN as usual, bfloat16 <-> kDLBfloat 16,
 * bool -> code 6 (kDLBool, DLPack >= 0.8; the constant is written as a number
 * so it works with older headers). On import, kDLBool 8 bits is bool and
 * kDLUInt 8 bits is uint8 (older producers that exported bool as uint8 give
 * uint8). lanes must be 1. Imported tensors must have non-negative strides
 * (NULL strides mean compact row-major) and data aligned to the element size.
 */
#define FBX_DLPACK_BOOL_CODE 6

/* Export t. The DLManagedTensor keeps t (and so its storage) alive until
 * its deleter is called; data points at t->data, byte_offset is 0, strides
 * are always filled in. */
fbx_status *fbx_tensor_to_dlpack(DLManagedTensor **out, fbx_tensor *t);
/* Import. On success fusebox owns m and calls m->deleter (if any) when the
 * new tensor's storage dies; on failure m is untouched and still the
 * caller's. */
fbx_status *fbx_tensor_from_dlpack(fbx_tensor **out, DLManagedTensor *m);
/* Fill a borrowed DLTensor describing t (for the plugin ABI): shape and
 * strides point into t, so it is valid only while t is. */
fbx_status *fbx_tensor_to_dltensor(DLTensor *out, const fbx_tensor *t);
/* A tensor that views dl's memory without owning it: the caller keeps the
 * memory alive while the tensor (and any view of it) exists. */
fbx_status *fbx_tensor_wrap_dltensor(fbx_tensor **out, const DLTensor *dl);
/* dtype <-> DLDataType; return 0 on success, -1 if there is no mapping. */
int fbx_dtype_to_dlpack(fbx_dtype d, DLDataType *out);
int fbx_dtype_from_dlpack(DLDataType t, fbx_dtype *out);

#ifdef __cplusplus
}
#endif
#endif
