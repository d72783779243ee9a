/* The small float32 GEMM of batched products (gemm_small.h). */
#include "ops/gemm_small.h"

#include <string.h>

int64_t fbx_gemm_packed_size(int64_t N, int64_t K) { return (N + FBX_GS_NR - 1) / FBX_GS_NR * FBX_GS_NR * K; }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

bool fbx_gemm_small_ok(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* Columns [n0, n0 + nb) of B into pack[k][16], zeros past nb. */
static void pack_panel(const float *B, int64_t ldb, int64_t K, int64_t n0, int64_t nb, float *pack) {
  for (int64_t k = 0; k < K; k++) {
    float *p = pack + k * FBX_GS_NR;
    memcpy(p, B + k * ldb + n0, (size_t)nb * sizeof(float));
    for (int64_t j = nb; j < FBX_GS_NR; j++) p[j] = 0.0f;
  }
}

/* Rows [0, mb) of C's block (16 columns, nb of them stored) from mb rows
 * of A and a packed panel. Rows past mb read A's row 0 and are not stored. */
__attribute__((target("avx2,fma"))) static void block(int mb, int64_t K, const float *A, int64_t lda,
                                                      const float *pack, float *C, int64_t ldc, int64_t nb) {
  const float *a0 = A, *a1 = A + (mb > 1 ? lda : 0), *a2 = A + (mb > 2 ? 2 * lda : 0);
  const float *a3 = A + (mb > 3 ? 3 * lda : 0), *a4 = A + (mb > 4 ? 4 * lda : 0), *a5 = A + (mb > 5 ? 5 * lda : 0);
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t k = 0; k < K; k++) {
    __m256 b0 = _mm256_load_ps(pack + k * FBX_GS_NR), b1 = _mm256_load_ps(pack + k * FBX_GS_NR + 8), a;
    a = _mm256_broadcast_ss(a0 + k), c00 = _mm256_fmadd_ps(a, b0, c00), c01 = _mm256_fmadd_ps(a, b1, c01);
    a = _mm256_broadcast_ss(a1 + k), c10 = _mm256_fmadd_ps(a, b0, c10), c11 = _mm256_fmadd_ps(a, b1, c11);
    a = _mm256_broadcast_ss(a2 + k), c20 = _mm256_fmadd_ps(a, b0, c20), c21 = _mm256_fmadd_ps(a, b1, c21);
    a = _mm256_broadcast_ss(a3 + k), c30 = _mm256_fmadd_ps(a, b0, c30), c31 = _mm256_fmadd_ps(a, b1, c31);
    a = _mm256_broadcast_ss(a4 + k), c40 = _mm256_fmadd_ps(a, b0, c40), c41 = _mm256_fmadd_ps(a, b1, c41);
    a = _mm256_broadcast_ss(a5 + k), c50 = _mm256_fmadd_ps(a, b0, c50), c51 = _mm256_fmadd_ps(a, b1, c51);
  }
  __m256 r[FBX_GS_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (nb == FBX_GS_NR) {
    for (int i = 0; i < mb; i++) {
      _mm256_storeu_ps(C + i * ldc, r[i][0]);
      _mm256_storeu_ps(C + i * ldc + 8, r[i][1]);
    }
    return;
  }
  /* a partial panel: lanes below nb only (a masked store never touches the rest) */
  __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nb), lane);
  __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)nb - 8), lane);
  for (int i = 0; i < mb; i++) {
    _mm256_maskstore_ps(C + i * ldc, m0, r[i][0]);
    _mm256_maskstore_ps(C + i * ldc + 8, m1, r[i][1]);
  }
}

void fbx_gemm_small_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                        float *C, int64_t ldc, float *pack) {
  for (int64_t n0 = 0; n0 < N; n0 += FBX_GS_NR) {
    int64_t nb = N - n0 < FBX_GS_NR ? N - n0 : FBX_GS_NR;
    pack_panel(B, ldb, K, n0, nb, pack);
    for (int64_t m0 = 0; m0 < M; m0 += FBX_GS_MR) {
      int mb = M - m0 < FBX_GS_MR ? (int)(M - m0) : FBX_GS_MR;
      block(mb, K, A + m0 * lda, lda, pack, C + m0 * ldc + n0, ldc, nb);
    }
  }
}

void fbx_gemm_pack_bt_f32(int64_t N, int64_t K, const float *W, int64_t ldw, float *packed) {
  for (int64_t n0 = 0; n0 < N; n0 += FBX_GS_NR) {
    int64_t nb = N - n0 < FBX_GS_NR ? N - n0 : FBX_GS_NR;
    float *pk = packed + (n0 / FBX_GS_NR) * K * FBX_GS_NR;
    for (int64_t k = 0; k < K; k++) {
      for (int64_t j = 0; j < nb; j++) pk[k * FBX_GS_NR + j] = W[(n0 + j) * ldw + k];
      for (int64_t j = nb; j < FBX_GS_NR; j++) pk[k * FBX_GS_NR + j] = 0.0f;
    }
  }
}

void fbx_gemm_pack_b_f32(int64_t N, int64_t K, const float *B, int64_t ldb, float *packed) {
  for (int64_t n0 = 0; n0 < N; n0 += FBX_GS_NR) {
    int64_t nb = N - n0 < FBX_GS_NR ? N - n0 : FBX_GS_NR;
    pack_panel(B, ldb, K, n0, nb, packed + (n0 / FBX_GS_NR) * K * FBX_GS_NR);
  }
}

void fbx_gemm_packed_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *packed,
                         int64_t p0, int64_t p1, float *C, int64_t ldc) {
  for (int64_t p = p0; p < p1; p++) {
    int64_t n0 = p * FBX_GS_NR, nb = N - n0 < FBX_GS_NR ? N - n0 : FBX_GS_NR;
    for (int64_t m0 = 0; m0 < M; m0 += FBX_GS_MR) {
      int mb = M - m0 < FBX_GS_MR ? (int)(M - m0) : FBX_GS_MR;
      block(mb, K, A + m0 * lda, lda, packed + p * K * FBX_GS_NR, C + m0 * ldc + n0, ldc, nb);
    }
  }
}

#else
bool fbx_gemm_small_ok(void) { return false; }
void fbx_gemm_pack_bt_f32(int64_t N, int64_t K, const float *W, int64_t ldw, float *packed) {
  (void)N, (void)K, (void)W, (void)ldw, (void)packed;
}
void fbx_gemm_pack_b_f32(int64_t N, int64_t K, const float *B, int64_t ldb, float *packed) {
  (void)N, (void)K, (void)B, (void)ldb, (void)packed;
}
void fbx_gemm_packed_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *packed,
                         int64_t p0, int64_t p1, float *C, int64_t ldc) {
  (void)M, (void)N, (void)K, (void)A, (void)lda, (void)packed, (void)p0, (void)p1, (void)C, (void)ldc;
}
void fbx_gemm_small_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                        float *C, int64_t ldc, float *pack) {
  (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc, (void)pack;
}
#endif
