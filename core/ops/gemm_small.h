/* A float32 GEMM for the small products of a batch (bmm and batched
 * matmul), for x86-64 CPUs with AVX2 and FMA:
 *
 *   C[i][j] = sum over k < K of A[i][k] * B[k][j]     (i < M, j < N)
 *
 * with A, B and C row-major (leading dimensions lda, ldb, ldc; unit stride
 * along a row). B is copied 16 columns at a time into `pack` (K x 16
 * floats, zero past N), and each panel is swept by register blocks of
 * FBX_GS_MR rows by 16 columns, A's values broadcast from its rows as they
 * are: no packing of A, no pass that zeroes C first (BLAS libraries pack
 * both operands and zero C with beta = 0 on every call, which on products
 * of 128 x 64 x 128 costs a fifth of the time). Each C[i][j] adds its K
 * products in k order with fused multiply-adds, so the result does not
 * depend on the thread that computes it. Where fbx_gemm_small_ok() is
 * false the caller keeps its BLAS. */
#ifndef FBX_OPS_GEMM_SMALL_H
#define FBX_OPS_GEMM_SMALL_H

#include <stdbool.h>
#include <stdint.h>

#define FBX_GS_MR 6     /* rows per register block */
#define FBX_GS_NR 16    /* columns per register block and per packed panel */
#define FBX_GS_KMAX 512 /* the largest K (pack: FBX_GS_KMAX x 16 floats, 32 KiB) */

/* Whether this build and CPU run fbx_gemm_small_f32. */
bool fbx_gemm_small_ok(void);

/* C = A @ B as above; 1 <= K <= FBX_GS_KMAX, M, N >= 1; pack holds
 * K * FBX_GS_NR floats and is 32-byte aligned. */
void fbx_gemm_small_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                        float *C, int64_t ldc, float *pack);

/* For a product by the same Wᵀ many times (a recurrent layer's step: h @
 * w_hhᵀ at every step): B = Wᵀ, W [N, K] row-major with leading dimension
 * ldw, packed once into fbx_gemm_packed_size(N, K) floats of 16-column
 * panels (K x 16 each, zeros past N; `packed` 32-byte aligned), then
 * C[:, columns of panels p0 .. p1) = A @ B with no packing per call
 * (panels may be split among threads). */
int64_t fbx_gemm_packed_size(int64_t N, int64_t K);
void fbx_gemm_pack_bt_f32(int64_t N, int64_t K, const float *W, int64_t ldw, float *packed);
/* The same for B itself ([K, N] row-major, leading dimension ldb). */
void fbx_gemm_pack_b_f32(int64_t N, int64_t K, const float *B, int64_t ldb, float *packed);
void fbx_gemm_packed_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *packed,
                         int64_t p0, int64_t p1, float *C, int64_t ldc);

#endif
