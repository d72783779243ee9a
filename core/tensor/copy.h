/* The strided copy kernel and per-element conversions behind
 * fbx_tensor_copy_ and the element accessors (internal to core).
 *
 *   // dst[i][j] = (float)src[j][i] for a 3x2 transpose into float32
 *   int64_t sizes[2] = {3, 2}, ds[2] = {2, 1}, ss[2] = {1, 3};
 *   fbx_strided_copy(dst, FBX_DTYPE_FLOAT32, ds, src, FBX_DTYPE_INT64, ss, 2, sizes);
 */
#ifndef FBX_TENSOR_COPY_H
#define FBX_TENSOR_COPY_H
#include <stdint.h>

#include <fusebox/dtype.h>

/* Copy an ndim-dimensional block of `sizes`, strides in elements of each
 * side's own dtype (any sign; 0 broadcasts a source), converting dtypes as
 * fbx_tensor_copy_ documents. dst and src must not overlap. Dimensions are
 * reordered and collapsed so the inner loop walks dst memory in order; the
 * inner loop is a specialized function per (src, dst) dtype pair, memcpy
 * when both sides are contiguous in the same dtype. */
void fbx_strided_copy(void *dst, fbx_dtype dst_dtype, const int64_t *dst_strides,
                      const void *src, fbx_dtype src_dtype, const int64_t *src_strides,
                      int ndim, const int64_t *sizes);

/* One element at p, converted (same rules as the copy). */
double fbx_load_f64(const void *p, fbx_dtype d);
int64_t fbx_load_i64(const void *p, fbx_dtype d);
void fbx_store_f64(void *p, fbx_dtype d, double v);
void fbx_store_i64(void *p, fbx_dtype d, int64_t v);

/* The conversions to integers used everywhere: truncation toward zero; NaN
 * and out-of-range values give INT64_MIN (x86's answer, what PyTorch gets). */
static inline int64_t fbx_f64_to_i64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)v;
}
static inline int64_t fbx_f32_to_i64(float v) {
  if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f)) return INT64_MIN;
  return (int64_t)v;
}

#endif
