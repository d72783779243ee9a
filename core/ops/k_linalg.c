/* Linear-algebra kernels (ops/list_linalg.h): mm, bmm, matmul, addmm, linear.
 *
 * Everything becomes one batched product C[b] = A[b] @ B[b] over views whose
 * batch dims are already broadcast (stride 0 where a side is shared), read
 * through their strides, so transposed and expanded inputs need no copy:
 *   - float32/float64: OpenBLAS's sgemm/dgemm, single-threaded, when
 *     each operand has a unit stride in one of its two matrix dims (a
 *     transposed operand is passed as a CBLAS transpose with its leading
 *     dimension, never copied); fusebox's pool spreads the calls (whole
 *     batches per thread, or each product's rows or columns in blocks when
 *     the batches are too few to share evenly; see blas_run). Other
 *     layouts (both strides non-unit, a stride-0 expanded row or column)
 *     take the packed loops below. addmm's self and linear's bias, when they have the
 *     product's dtype and broadcast to it, are written into C first and the
 *     BLAS adds the product to them (beta = addmm's beta, 1 for linear):
 *     no separate pass over the result;
 *   - float32/float64 otherwise: B is packed once per distinct batch into panels of NR
 *     columns ([K][NR] each, zero-padded); row blocks of MB rows of C are
 *     spread over threads, and each runs MR x NR register tiles over KC-deep
 *     slices of A (read in place) and the packed panel (which stays in L1);
 *     with GNU C the tile lives in vector registers (vector extensions, no
 *     target flags needed), otherwise in a plain array;
 *   - float16/bfloat16: converted to float32, multiplied, rounded back;
 *   - integral dtypes: int64 accumulation with wraparound, which gives the
 *     narrow type's wrapped result exactly; bool is rejected like PyTorch.
 */
#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/gemm_small.h"
#include "ops/reduce.h"

#define MR 4
#define KC 256
#define MB 64

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Set by tests and benchmarks to time or check the packed loops (see
 * reduce.h); the BLAS path is taken otherwise wherever the layout allows. */
bool fbx_linalg_no_blas = false;

/* One batched product: A [nb][M][K] via strides, B likewise, C contiguous [nb][M][N]. */
typedef struct gemm_job {
  int64_t nb, M, N, K;
  int nbd;                         /* batch dims */
  const int64_t *bsizes;           /* batch sizes (nbd) */
  const int64_t *abstr, *bbstr;    /* batch strides of A and B (elements) */
  const void *a;
  int64_t sa0, sa1;                /* A[i][k] = a[i * sa0 + k * sa1] */
  const void *b;
  int64_t sb0, sb1;
  void *bp;                        /* packed B */
  bool b_shared;                   /* one packed B for every batch */
  int64_t npanels;
  void *c;
  int64_t nrb;                     /* row blocks per batch */
  double alpha, beta;              /* BLAS path: C = alpha * A @ B + beta * C */
} gemm_job;

/* Something added to the product inside the GEMM (addmm's self, linear's
 * bias): c is filled with s broadcast to the result (strides, 0 where
 * broadcast), and the BLAS computes alpha * A @ B + beta * c in its C
 * operand. applied tells whether that happened (the BLAS path only). */
typedef struct addend {
  const fbx_tensor *s;
  double alpha, beta;
  bool applied;
} addend;

/* Element offset of batch bi for the given batch strides. */
static int64_t batch_off(const gemm_job *j, int64_t bi, const int64_t *bstr) {
  int64_t off = 0;
  for (int d = j->nbd - 1; d >= 0; d--) {
    off += (bi % j->bsizes[d]) * bstr[d];
    bi /= j->bsizes[d];
  }
  return off;
}

#if defined(__GNUC__)
#define FBX_VEC 1
typedef float v4f __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));
#endif

/* GEMM_IMPL(T, SFX, VT, VL): NR = 2 * VL columns per tile. */
#ifdef FBX_VEC
#define TILE_DECL(VT) VT c0a = {0}, c0b = {0}, c1a = {0}, c1b = {0}, c2a = {0}, c2b = {0}, c3a = {0}, c3b = {0};
#define TILE_STEP(T, VT, VL, NRC)                                                   \
  {                                                                                \
    VT b0, b1;                                                                     \
    memcpy(&b0, bp + k * NRC, sizeof b0);                                          \
    memcpy(&b1, bp + k * NRC + VL, sizeof b1);                                     \
    T x0 = a0[k * sa1], x1 = a1[k * sa1], x2 = a2[k * sa1], x3 = a3[k * sa1];      \
    c0a += x0 * b0, c0b += x0 * b1;                                                \
    c1a += x1 * b0, c1b += x1 * b1;                                                \
    c2a += x2 * b0, c2b += x2 * b1;                                                \
    c3a += x3 * b0, c3b += x3 * b1;                                                \
  }
#define TILE_OUT(T, VL, NRC)                                                        \
  T out[MR][NRC];                                                                  \
  memcpy(&out[0][0], &c0a, sizeof c0a), memcpy(&out[0][VL], &c0b, sizeof c0b);     \
  memcpy(&out[1][0], &c1a, sizeof c1a), memcpy(&out[1][VL], &c1b, sizeof c1b);     \
  memcpy(&out[2][0], &c2a, sizeof c2a), memcpy(&out[2][VL], &c2b, sizeof c2b);     \
  memcpy(&out[3][0], &c3a, sizeof c3a), memcpy(&out[3][VL], &c3b, sizeof c3b);
#endif

#define GEMM_IMPL(T, SFX, VT, VL)                                                              \
  enum { NR_##SFX = 2 * (VL) };                                                                \
  static void tile_##SFX(int64_t kc, const T *a0, const T *a1, const T *a2, const T *a3,       \
                         int64_t sa1, const T *bp, T *c, int64_t ldc, int64_t mr, int64_t nr) { \
    GEMM_TILE_BODY_##SFX                                                                       \
    for (int64_t i = 0; i < mr; i++)                                                           \
      for (int64_t q = 0; q < nr; q++) c[i * ldc + q] += out[i][q];                            \
  }                                                                                            \
  static void pack_##SFX(const gemm_job *j, T *dst, const T *b) {                              \
    for (int64_t p = 0; p < j->npanels; p++)                                                   \
      for (int64_t k = 0; k < j->K; k++)                                                       \
        for (int64_t q = 0; q < NR_##SFX; q++) {                                               \
          int64_t col = p * NR_##SFX + q;                                                      \
          dst[(p * j->K + k) * NR_##SFX + q] = col < j->N ? b[k * j->sb0 + col * j->sb1] : 0;  \
        }                                                                                      \
  }                                                                                            \
  static void body_##SFX(void *ctx, int64_t begin, int64_t end) {                              \
    const gemm_job *j = ctx;                                                                   \
    for (int64_t t = begin; t < end; t++) {                                                    \
      int64_t bi = t / j->nrb, i0 = (t % j->nrb) * MB, i1 = min64(i0 + MB, j->M);              \
      const T *a = (const T *)j->a + batch_off(j, bi, j->abstr);                               \
      const T *bp = (const T *)j->bp + (j->b_shared ? 0 : bi * j->npanels * j->K * NR_##SFX);  \
      T *c = (T *)j->c + bi * j->M * j->N;                                                     \
      for (int64_t pc = 0; pc < j->K; pc += KC) {                                              \
        int64_t kc = min64(KC, j->K - pc);                                                     \
        for (int64_t p = 0; p < j->npanels; p++) {                                             \
          const T *panel = bp + (p * j->K + pc) * NR_##SFX;                                    \
          int64_t nr = min64(NR_##SFX, j->N - p * NR_##SFX);                                   \
          for (int64_t i = i0; i < i1; i += MR) {                                              \
            int64_t mr = min64(MR, i1 - i);                                                    \
            const T *r0 = a + i * j->sa0 + pc * j->sa1;                                        \
            const T *r1 = mr > 1 ? r0 + j->sa0 : r0, *r2 = mr > 2 ? r0 + 2 * j->sa0 : r0;      \
            const T *r3 = mr > 3 ? r0 + 3 * j->sa0 : r0;                                       \
            tile_##SFX(kc, r0, r1, r2, r3, j->sa1, panel, c + i * j->N + p * NR_##SFX, j->N,   \
                       mr, nr);                                                                \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }

#ifdef FBX_VEC
#define GEMM_TILE_BODY_f32 TILE_DECL(v4f) for (int64_t k = 0; k < kc; k++) TILE_STEP(float, v4f, 4, 8) TILE_OUT(float, 4, 8)
#define GEMM_TILE_BODY_f64 TILE_DECL(v2d) for (int64_t k = 0; k < kc; k++) TILE_STEP(double, v2d, 2, 4) TILE_OUT(double, 2, 4)
#else
#define SCALAR_TILE(T, NRC)                                                        \
  T out[MR][NRC] = {{0}};                                                          \
  const T *rows[MR] = {a0, a1, a2, a3};                                            \
  for (int64_t k = 0; k < kc; k++)                                                 \
    for (int i = 0; i < MR; i++) {                                                 \
      T x = rows[i][k * sa1];                                                      \
      for (int q = 0; q < NRC; q++) out[i][q] += x * bp[k * NRC + q];              \
    }
#define GEMM_TILE_BODY_f32 SCALAR_TILE(float, 8)
#define GEMM_TILE_BODY_f64 SCALAR_TILE(double, 4)
#endif

GEMM_IMPL(float, f32, v4f, 4)
GEMM_IMPL(double, f64, v2d, 2)

/* int64: B packed to contiguous [K][N] per batch; plain i-k-j loops (wrapping). */
static void pack_i64(const gemm_job *j, int64_t *dst, const int64_t *b) {
  for (int64_t k = 0; k < j->K; k++)
    for (int64_t q = 0; q < j->N; q++) dst[k * j->N + q] = b[k * j->sb0 + q * j->sb1];
}

static void body_i64(void *ctx, int64_t begin, int64_t end) {
  const gemm_job *j = ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t bi = t / j->nrb, i0 = (t % j->nrb) * MB, i1 = min64(i0 + MB, j->M);
    const int64_t *a = (const int64_t *)j->a + batch_off(j, bi, j->abstr);
    const uint64_t *bp = (const uint64_t *)j->bp + (j->b_shared ? 0 : bi * j->K * j->N);
    uint64_t *c = (uint64_t *)j->c + bi * j->M * j->N;
    for (int64_t i = i0; i < i1; i++)
      for (int64_t k = 0; k < j->K; k++) {
        uint64_t x = (uint64_t)a[i * j->sa0 + k * j->sa1];
        for (int64_t q = 0; q < j->N; q++) c[i * j->N + q] += x * bp[k * j->N + q];
      }
  }
}

/* ---- the BLAS path ------------------------------------------------------------------------ */

/* OpenBLAS runs single-threaded, set once before the first product: every
 * product is spread over the kernels' pool (FUSEBOX_NUM_THREADS) by
 * fusebox, each thread calling sgemm/dgemm on its own batches or its own
 * block of rows or columns. OpenBLAS's threads never run, so they neither
 * spin against the pool's workers nor pay their start-up on the small
 * per-batch products of bmm or a convolution's tiles. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
#if defined(OPENBLAS_VERSION) && defined(__GNUC__)
/* OpenBLAS's pthread build starts its worker threads when it is loaded;
 * idle, they spin on sched_yield for a while (about 0.1 s of CPU each here)
 * before they sleep, which took a share of the cores from the pool's
 * threads in every short run. Single-threaded calls never use them, so
 * they are stopped (OpenBLAS restarts them itself if a threaded call ever
 * comes). Weak: the OpenMP and serial builds have no such function. */
extern int blas_thread_shutdown_(void) __attribute__((weak));
#endif
static void blas_init(void) {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#ifdef __GNUC__
  if (blas_thread_shutdown_) blas_thread_shutdown_();
#endif
#endif
}
void fbx_linalg_blas_init(void) { pthread_once(&blas_once, blas_init); }

/* A product below this many multiply-adds runs on the calling thread
 * (about 10 µs of one core's GEMM: a pool dispatch costs a few µs). */
#define PAR_MIN_MACS (1 << 19)
/* Row and column blocks are multiples of 16 (whole register tiles of
 * OpenBLAS's kernels; a power-of-two dim splits evenly). */
#define ROW_ALIGN 16
#define COL_ALIGN 16

/* One row-major product C = alpha * op(A) @ op(B) + beta * C, repeated over
 * nb batches (offsets from j's batch strides; C's batches are M * ldc
 * apart), each split into `parts` blocks of `step` rows (split_m) or
 * columns: task t is batch t / parts, block t % parts. */
typedef struct blas_plan {
  bool f64, ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  double alpha, beta;
  const void *a, *b;
  void *c;
  const gemm_job *j; /* batch offsets, NULL for a single product */
  int64_t nb, parts, step;
  bool split_m;
} blas_plan;

static void blas_body(void *ctx, int64_t begin, int64_t end) {
  const blas_plan *p = ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t bi = t / p->parts, q = t % p->parts;
    int64_t ao = p->j ? batch_off(p->j, bi, p->j->abstr) : 0, bo = p->j ? batch_off(p->j, bi, p->j->bbstr) : 0;
    int64_t co = bi * p->M * p->ldc;
    int64_t m0 = 0, m = p->M, n0 = 0, n = p->N;
    if (p->split_m) m0 = q * p->step, m = min64(p->step, p->M - m0);
    else n0 = q * p->step, n = min64(p->step, p->N - n0);
    if (m <= 0 || n <= 0) continue;
    ao += p->ta ? m0 : m0 * p->lda; /* op(A)'s row m0 */
    bo += p->tb ? n0 * p->ldb : n0; /* op(B)'s column n0 */
    co += m0 * p->ldc + n0;
    enum CBLAS_TRANSPOSE TA = p->ta ? CblasTrans : CblasNoTrans, TB = p->tb ? CblasTrans : CblasNoTrans;
    if (p->f64)
      cblas_dgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)p->K, p->alpha, (const double *)p->a + ao, (int)p->lda,
                  (const double *)p->b + bo, (int)p->ldb, p->beta, (double *)p->c + co, (int)p->ldc);
    else
      cblas_sgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)p->K, (float)p->alpha, (const float *)p->a + ao,
                  (int)p->lda, (const float *)p->b + bo, (int)p->ldb, (float)p->beta, (float *)p->c + co, (int)p->ldc);
  }
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* Splits p's nb products over the pool: whole batches per thread when they
 * divide evenly among the threads or are many (at least 4 a thread),
 * otherwise each product in blocks of rows (when M >= N) or columns, as
 * many as make the tasks divide evenly among the threads. */
static void blas_run(blas_plan *p) {
  fbx_linalg_blas_init();
  int64_t T = fbx_parallel_threads(), macs = p->M * p->N * p->K;
  p->parts = 1, p->split_m = p->M >= p->N, p->step = p->split_m ? p->M : p->N;
  if (T > 1 && p->nb * macs >= 2 * PAR_MIN_MACS && p->nb % T && p->nb < 4 * T) {
    int64_t want = T / gcd64(p->nb, T), dim = p->split_m ? p->M : p->N, al = p->split_m ? ROW_ALIGN : COL_ALIGN;
    int64_t step = (dim + want - 1) / want;
    step = (step + al - 1) / al * al;
    if (step < dim) p->step = step, p->parts = (dim + step - 1) / step;
  }
  int64_t tasks = p->nb * p->parts, per = macs / p->parts + 1;
  fbx_parallel_for(tasks, per >= PAR_MIN_MACS ? 1 : PAR_MIN_MACS / per + 1, blas_body, p);
}

void fbx_linalg_gemm(bool f64, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  blas_plan p = {.f64 = f64, .ta = ta, .tb = tb, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc,
                 .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c, .nb = 1};
  blas_run(&p);
}

/* How a [rows, cols] operand with strides (s0, s1) is passed to CBLAS
 * (row-major): as itself with leading dimension s0 when its rows are
 * contiguous, as the transpose of a [cols, rows] matrix with leading
 * dimension s1 when its columns are; false when neither (the packed loops
 * take it then). Extents of 1 put no constraint on their stride. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1, bool *trans, int64_t *ld) {
  int64_t mr = rows > 1 ? rows : 1, mc = cols > 1 ? cols : 1;
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= mc)) {
    *trans = false, *ld = rows == 1 ? mc : s0;
  } else if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= mr)) {
    *trans = true, *ld = cols == 1 ? mr : s1;
  } else {
    return false;
  }
  return *ld <= INT_MAX;
}

/* Whether the BLAS takes j's operands as they are. */
static bool blas_fits(const gemm_job *j, bool *ta, int64_t *lda, bool *tb, int64_t *ldb) {
  if (j->M > INT_MAX || j->N > INT_MAX || j->K > INT_MAX) return false;
  return blas_layout(j->M, j->K, j->sa0, j->sa1, ta, lda) && blas_layout(j->K, j->N, j->sb0, j->sb1, tb, ldb);
}

/* A batch of small float32 products C[b] = A[b] @ B[b], A and B with
 * contiguous rows: gemm_small.h's kernel, whole batches per task. */
typedef struct small_plan {
  const gemm_job *j;
  int64_t lda, ldb;
} small_plan;

static void small_body(void *ctx, int64_t begin, int64_t end) {
  const small_plan *p = ctx;
  const gemm_job *j = p->j;
  _Alignas(32) float pack[FBX_GS_KMAX * FBX_GS_NR];
  for (int64_t bi = begin; bi < end; bi++)
    fbx_gemm_small_f32(j->M, j->N, j->K, (const float *)j->a + batch_off(j, bi, j->abstr), p->lda,
                       (const float *)j->b + batch_off(j, bi, j->bbstr), p->ldb, (float *)j->c + bi * j->M * j->N,
                       j->N, pack);
}

/* Whether a BLAS product goes to gemm_small.h instead: float32, neither
 * operand transposed, no alpha or beta, at least a batch per thread, and
 * each product small (A within 256 KiB, K within the kernel's limit), where
 * the BLAS's per-call packing and zeroing of C cost most. On the EPYC here,
 * bmm [64, 128, 64] x [64, 64, 128] on 2 threads: 91 GFLOP/s through
 * OpenBLAS (bench_ops.py). */
static bool small_fits(const gemm_job *j, fbx_dtype dt, bool ta, bool tb) {
  if (dt != FBX_DTYPE_FLOAT32 || ta || tb || j->alpha != 1 || j->beta != 0) return false;
  if (j->nb < 2 || j->nb < fbx_parallel_threads() || j->K > FBX_GS_KMAX || j->M * j->K > 65536 || j->N > 4096)
    return false;
  return fbx_gemm_small_ok();
}

/* C[b] = alpha * A[b] @ B[b] + beta * C[b] through sgemm/dgemm on the
 * pool (blas_run), or the small kernel (small_fits); the caller checked
 * blas_fits. */
static void bgemm_blas(const gemm_job *j, fbx_dtype dt) {
  bool ta, tb;
  int64_t lda, ldb;
  blas_fits(j, &ta, &lda, &tb, &ldb);
  if (small_fits(j, dt, ta, tb)) {
    small_plan sp = {.j = j, .lda = lda, .ldb = ldb};
    int64_t macs = j->M * j->N * j->K + 1;
    fbx_parallel_for(j->nb, macs >= PAR_MIN_MACS ? 1 : PAR_MIN_MACS / macs + 1, small_body, &sp);
    return;
  }
  blas_plan p = {.f64 = dt == FBX_DTYPE_FLOAT64, .ta = ta, .tb = tb, .M = j->M, .N = j->N, .K = j->K, .lda = lda,
                 .ldb = ldb, .ldc = j->N, .alpha = j->alpha, .beta = j->beta, .a = j->a, .b = j->b, .c = j->c,
                 .j = j, .nb = j->nb};
  blas_run(&p);
}

/* c (contiguous, `nd` dims `sizes`) := s read through `strides`, row by
 * row over the last dim, rows spread over threads. */
typedef struct fill_job {
  const fbx_tensor *s;
  const int64_t *strides, *sizes;
  int nd;
  void *c;
  int64_t N;
} fill_job;

static void fill_body(void *ctx, int64_t begin, int64_t end) {
  const fill_job *f = ctx;
  int nd = f->nd;
  int64_t N = f->N, sn = f->strides[nd - 1];
  size_t es = fbx_dtype_size(f->s->dtype);
  for (int64_t r = begin; r < end; r++) {
    int64_t off = 0, q = r;
    for (int d = nd - 2; d >= 0; d--) {
      off += (q % f->sizes[d]) * f->strides[d];
      q /= f->sizes[d];
    }
    char *p = (char *)f->c + (size_t)(r * N) * es;
    const char *x = (const char *)f->s->data + (size_t)off * es;
    if (sn == 1) {
      memcpy(p, x, (size_t)N * es);
    } else if (es == 4) {
      for (int64_t i = 0; i < N; i++) ((float *)p)[i] = ((const float *)x)[i * sn];
    } else {
      for (int64_t i = 0; i < N; i++) ((double *)p)[i] = ((const double *)x)[i * sn];
    }
  }
}

/* The strides that broadcast s to (nd, sizes); false when it does not. */
static bool broadcast_strides(const fbx_tensor *s, int nd, const int64_t *sizes, int64_t *strides) {
  if (s->ndim > nd) return false;
  for (int i = 0; i < nd; i++) {
    int is = i - (nd - s->ndim);
    if (is < 0) strides[i] = 0;
    else if (s->sizes[is] == sizes[i]) strides[i] = s->strides[is];
    else if (s->sizes[is] == 1) strides[i] = 0;
    else return false;
  }
  return true;
}

/* C = A @ B for a [nbd..., M, K] and b [nbd..., K, N] views (batch dims
 * equal, strides may be 0), both in dtype `work` (float32, float64 or
 * int64); c is a fresh contiguous [nbd..., M, N] tensor of that dtype
 * (contents undefined). With `fill` (a fill_job whose c is c's data, and
 * add's factors) on the BLAS path, C = alpha * A @ B + beta * the addend
 * and add->applied is set; otherwise C = A @ B. */
static fbx_status *bgemm(fbx_tensor *c, const fbx_tensor *a, const fbx_tensor *b, fill_job *fill, addend *add) {
  int nbd = a->ndim - 2;
  gemm_job j = {.nb = 1, .M = a->sizes[nbd], .K = a->sizes[nbd + 1], .N = b->sizes[nbd + 1], .nbd = nbd,
                .bsizes = a->sizes, .abstr = a->strides, .bbstr = b->strides, .a = a->data,
                .sa0 = a->strides[nbd], .sa1 = a->strides[nbd + 1], .b = b->data, .sb0 = b->strides[nbd],
                .sb1 = b->strides[nbd + 1], .c = c->data, .b_shared = true};
  for (int d = 0; d < nbd; d++) {
    j.nb *= a->sizes[d];
    if (b->strides[d] != 0 && b->sizes[d] > 1) j.b_shared = false;
  }
  if (j.nb * j.M * j.N == 0) return NULL;
  size_t esz = fbx_dtype_size(a->dtype);
  bool fl = a->dtype == FBX_DTYPE_FLOAT32 || a->dtype == FBX_DTYPE_FLOAT64, ta, tb;
  int64_t lda, ldb;
  if (fl && !fbx_linalg_no_blas && j.K > 0 && blas_fits(&j, &ta, &lda, &tb, &ldb)) {
    j.alpha = 1, j.beta = 0; /* beta 0: the BLAS writes C without reading it */
    if (fill && add) {
      int64_t rows = fill->N ? c->numel / fill->N : 0;
      fbx_parallel_for(rows, fill->N >= 16384 ? 1 : 16384 / (fill->N + 1) + 1, fill_body, fill);
      j.alpha = add->alpha, j.beta = add->beta, add->applied = true;
    }
    bgemm_blas(&j, a->dtype);
    return NULL;
  }
  memset(c->data, 0, esz * (size_t)c->numel); /* the packed loops add into C */
  if (j.K == 0) return NULL;
  int64_t nr = a->dtype == FBX_DTYPE_FLOAT32 ? NR_f32 : a->dtype == FBX_DTYPE_FLOAT64 ? NR_f64 : 0;
  j.npanels = nr ? (j.N + nr - 1) / nr : 1;
  int64_t per = nr ? j.npanels * nr * j.K : j.K * j.N, npack = j.b_shared ? 1 : j.nb;
  j.bp = fbx_malloc(esz * (size_t)(per * npack));
  if (!j.bp) return fbx_status_nomem();
  for (int64_t bi = 0; bi < npack; bi++) {
    int64_t off = batch_off(&j, bi, j.bbstr);
    if (a->dtype == FBX_DTYPE_FLOAT32) pack_f32(&j, (float *)j.bp + bi * per, (const float *)j.b + off);
    else if (a->dtype == FBX_DTYPE_FLOAT64) pack_f64(&j, (double *)j.bp + bi * per, (const double *)j.b + off);
    else pack_i64(&j, (int64_t *)j.bp + bi * per, (const int64_t *)j.b + off);
  }
  j.nrb = (j.M + MB - 1) / MB;
  int64_t work = min64(MB, j.M) * j.N * j.K;
  int64_t grain = work >= 65536 ? 1 : 65536 / (work + 1) + 1;
  fbx_range_fn fn = a->dtype == FBX_DTYPE_FLOAT32 ? body_f32 : a->dtype == FBX_DTYPE_FLOAT64 ? body_f64 : body_i64;
  fbx_parallel_for(j.nb * j.nrb, grain, fn, &j);
  fbx_free(j.bp);
  return NULL;
}

/* ---- shapes, dtypes and the shared product ------------------------------------------------- */

static fbx_dtype work_dtype(fbx_dtype d) {
  if (d == FBX_DTYPE_FLOAT64) return FBX_DTYPE_FLOAT64;
  if (fbx_dtype_is_floating(d)) return FBX_DTYPE_FLOAT32;
  return FBX_DTYPE_INT64;
}

static fbx_status *check_dtypes(const fbx_kctx *ctx, const fbx_tensor *a, const fbx_tensor *b) {
  if (a->dtype != b->dtype)
    return fbx_kernel_error(ctx, "expected both operands to have the same dtype, got %s and %s",
                            fbx_dtype_name(a->dtype), fbx_dtype_name(b->dtype));
  if (a->dtype == FBX_DTYPE_BOOL) return fbx_kernel_error(ctx, "not implemented for bool tensors (as in PyTorch)");
  return NULL;
}

static void dims_str(char *buf, size_t n, const fbx_tensor *t) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < t->ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? "x" : "", (long long)t->sizes[i]);
  if (t->ndim == 0) snprintf(buf, n, "(scalar)");
}

static fbx_status *shape_mismatch(const fbx_kctx *ctx, const fbx_tensor *a, const fbx_tensor *b) {
  char sa[200], sb[200];
  dims_str(sa, sizeof sa, a);
  dims_str(sb, sizeof sb, b);
  return fbx_kernel_error(ctx, "mat1 and mat2 shapes cannot be multiplied (%s and %s)", sa, sb);
}

/* matmul's rules on a and b (given dtype-checked): a 1-D a is a row [1, K]
 * and a 1-D b a column [K, 1], the extra dim dropped from the result; batch
 * dims broadcast. Returns a fresh contiguous tensor in the work dtype with
 * the final shape. */
static fbx_status *matmul_work(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *a, fbx_tensor *b, addend *add) {
  if (a->ndim == 0 || b->ndim == 0)
    return fbx_kernel_error(ctx, "both arguments need at least 1 dim, got %dD and %dD", a->ndim, b->ndim);
  fbx_dtype work = work_dtype(a->dtype);
  fbx_tensor *ac = NULL, *bc = NULL, *av = NULL, *bv = NULL, *c = NULL;
  fbx_status *st = NULL;
  /* matrix views [.., M, K] and [.., K, N] */
  int an = a->ndim < 2 ? 2 : a->ndim, bn = b->ndim < 2 ? 2 : b->ndim;
  int64_t as[FBX_MAX_DIMS + 1], ast[FBX_MAX_DIMS + 1], bs[FBX_MAX_DIMS + 1], bst[FBX_MAX_DIMS + 1];
  if (a->ndim == 1) as[0] = 1, ast[0] = 0, as[1] = a->sizes[0], ast[1] = a->strides[0];
  else memcpy(as, a->sizes, sizeof(int64_t) * (size_t)an), memcpy(ast, a->strides, sizeof(int64_t) * (size_t)an);
  if (b->ndim == 1) bs[0] = b->sizes[0], bst[0] = b->strides[0], bs[1] = 1, bst[1] = 0;
  else memcpy(bs, b->sizes, sizeof(int64_t) * (size_t)bn), memcpy(bst, b->strides, sizeof(int64_t) * (size_t)bn);
  if (as[an - 1] != bs[bn - 2]) return shape_mismatch(ctx, a, b);
  int64_t batch[FBX_MAX_DIMS];
  int nbd = 0;
  FBX_TRY(fbx_broadcast_into(ctx, batch, &nbd, an - 2, as));
  FBX_TRY(fbx_broadcast_into(ctx, batch, &nbd, bn - 2, bs));
  if (nbd + 2 > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "too many dims");
  /* convert dtypes (contiguous copies keep the same logical layout) */
  if (a->dtype != work) {
    FBX_TRY(fbx_tensor_clone_as(&ac, a, work));
    fbx_contiguous_strides(a->ndim, a->sizes, a->ndim == 1 ? ast + 1 : ast);
  }
  if (b->dtype != work) {
    st = fbx_tensor_clone_as(&bc, b, work);
    if (st) goto done;
    fbx_contiguous_strides(b->ndim, b->sizes, bst);
  }
  /* expand the batch dims */
  int64_t es[FBX_MAX_DIMS], est[FBX_MAX_DIMS], fs[FBX_MAX_DIMS], fst[FBX_MAX_DIMS];
  for (int d = 0; d < nbd; d++) {
    int ia = d - (nbd - (an - 2)), ib = d - (nbd - (bn - 2));
    es[d] = fs[d] = batch[d];
    est[d] = ia >= 0 && as[ia] != 1 ? ast[ia] : 0;
    fst[d] = ib >= 0 && bs[ib] != 1 ? bst[ib] : 0;
  }
  es[nbd] = as[an - 2], es[nbd + 1] = as[an - 1], est[nbd] = ast[an - 2], est[nbd + 1] = ast[an - 1];
  fs[nbd] = bs[bn - 2], fs[nbd + 1] = bs[bn - 1], fst[nbd] = bst[bn - 2], fst[nbd + 1] = bst[bn - 1];
  fbx_tensor *abase = ac ? ac : a, *bbase = bc ? bc : b;
  st = fbx_tensor_view(&av, abase, nbd + 2, es, est, abase->offset);
  if (!st) st = fbx_tensor_view(&bv, bbase, nbd + 2, fs, fst, bbase->offset);
  int64_t cs[FBX_MAX_DIMS];
  memcpy(cs, batch, sizeof(int64_t) * (size_t)nbd);
  cs[nbd] = es[nbd], cs[nbd + 1] = fs[nbd + 1];
  /* the result drops the dims a 1-D operand added */
  int64_t rs[FBX_MAX_DIMS], astr[FBX_MAX_DIMS];
  int nd = nbd;
  memcpy(rs, batch, sizeof(int64_t) * (size_t)nbd);
  if (a->ndim > 1) rs[nd++] = es[nbd];
  if (b->ndim > 1) rs[nd++] = fs[nbd + 1];
  /* an addend of the work dtype that broadcasts to the result can ride in the GEMM's C */
  bool fuse = add && add->s && add->beta != 0 && add->s->dtype == work &&
              (work == FBX_DTYPE_FLOAT32 || work == FBX_DTYPE_FLOAT64) && nd >= 1 &&
              broadcast_strides(add->s, nd, rs, astr);
  if (!st) st = fbx_tensor_empty(&c, work, nbd + 2, cs);
  fill_job fill = {.s = add ? add->s : NULL, .strides = astr, .sizes = rs, .nd = nd, .c = c ? c->data : NULL,
                   .N = nd >= 1 ? rs[nd - 1] : 1};
  if (!st) st = bgemm(c, av, bv, fuse ? &fill : NULL, fuse ? add : NULL);
  if (st) goto done;
  st = fbx_tensor_view(out, c, nd, rs, NULL, c->offset);
done:
  fbx_tensor_release(ac);
  fbx_tensor_release(bc);
  fbx_tensor_release(av);
  fbx_tensor_release(bv);
  fbx_tensor_release(c);
  return st;
}

/* Convert a work-dtype result to dtype d (or hand it over when equal). */
static fbx_status *finish(fbx_ivalue *outs, fbx_tensor *w, fbx_dtype d) {
  if (w->dtype == d) {
    fbx_set_out_tensor(outs, 0, w);
    return NULL;
  }
  fbx_tensor *r = NULL;
  fbx_status *st = fbx_tensor_clone_as(&r, w, d);
  fbx_tensor_release(w);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, r);
  return NULL;
}

/* axpby's float case with s already in w's dtype: row by row over w's last
 * dim, s read through its broadcast strides (no expanded copy of a bias). */
static void axpby_rows(fbx_tensor *w, const fbx_tensor *s, const int64_t *strides, double alpha, double beta) {
  int nd = w->ndim;
  int64_t N = w->sizes[nd - 1], rows = N ? w->numel / N : 0, sn = strides[nd - 1];
  bool f32 = w->dtype == FBX_DTYPE_FLOAT32;
  for (int64_t r = 0; r < rows; r++) {
    int64_t off = 0, q = r;
    for (int d = nd - 2; d >= 0; d--) {
      off += (q % w->sizes[d]) * strides[d];
      q /= w->sizes[d];
    }
    if (f32) {
      float *p = (float *)w->data + r * N;
      const float *x = (const float *)s->data + off;
      if (alpha == 1 && beta == 1)
        for (int64_t i = 0; i < N; i++) p[i] += x[i * sn];
      else
        for (int64_t i = 0; i < N; i++) p[i] = (float)(alpha * p[i] + beta * x[i * sn]);
    } else {
      double *p = (double *)w->data + r * N;
      const double *x = (const double *)s->data + off;
      for (int64_t i = 0; i < N; i++) p[i] = alpha * p[i] + beta * x[i * sn];
    }
  }
}

/* w = alpha * w + beta * s (s broadcast to w's shape; beta == 0 ignores s,
 * NaNs included, as in PyTorch). Integral work uses truncated int factors. */
static fbx_status *axpby(const fbx_kctx *ctx, fbx_tensor *w, const fbx_tensor *s, double alpha, double beta,
                         int64_t ialpha, int64_t ibeta) {
  fbx_tensor *sv = NULL, *sc = NULL;
  if (s && beta != 0) {
    int64_t strides[FBX_MAX_DIMS];
    bool ok = s->ndim <= w->ndim;
    for (int i = 0; ok && i < w->ndim; i++) {
      int is = i - (w->ndim - s->ndim);
      if (is < 0) strides[i] = 0;
      else if (s->sizes[is] == w->sizes[i]) strides[i] = s->strides[is];
      else if (s->sizes[is] == 1) strides[i] = 0;
      else ok = false;
    }
    if (!ok) {
      char a[256], b[256];
      fbx_red_shape_str(a, sizeof a, s->ndim, s->sizes);
      fbx_red_shape_str(b, sizeof b, w->ndim, w->sizes);
      return fbx_kernel_error(ctx, "the added tensor of shape %s does not broadcast to the product's shape %s", a, b);
    }
    if (s->dtype == w->dtype && (w->dtype == FBX_DTYPE_FLOAT32 || w->dtype == FBX_DTYPE_FLOAT64) && w->ndim >= 1) {
      axpby_rows(w, s, strides, alpha, beta);
      return NULL;
    }
    FBX_TRY(fbx_tensor_view(&sv, (fbx_tensor *)s, w->ndim, w->sizes, strides, s->offset));
    fbx_status *st = fbx_tensor_clone_as(&sc, sv, w->dtype);
    fbx_tensor_release(sv);
    if (st) return st;
  }
  int64_t n = w->numel;
  if (w->dtype == FBX_DTYPE_FLOAT32) {
    float *p = w->data;
    const float *q = sc ? sc->data : NULL;
    for (int64_t i = 0; i < n; i++) p[i] = (float)(alpha * p[i] + (q ? beta * q[i] : 0));
  } else if (w->dtype == FBX_DTYPE_FLOAT64) {
    double *p = w->data;
    const double *q = sc ? sc->data : NULL;
    for (int64_t i = 0; i < n; i++) p[i] = alpha * p[i] + (q ? beta * q[i] : 0);
  } else {
    uint64_t *p = w->data;
    const uint64_t *q = sc ? sc->data : NULL;
    for (int64_t i = 0; i < n; i++) p[i] = (uint64_t)ialpha * p[i] + (q ? (uint64_t)ibeta * q[i] : 0);
  }
  fbx_tensor_release(sc);
  return NULL;
}

/* ---- kernels ---------------------------------------------------------------------------------- */

/* mm(self, mat2): both 2-D. */
fbx_status *fbx_k_mm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *w;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim != 2 || b->ndim != 2)
    return fbx_kernel_error(ctx, "both arguments must be matrices, got %dD and %dD", a->ndim, b->ndim);
  if (a->sizes[1] != b->sizes[0]) return shape_mismatch(ctx, a, b);
  FBX_TRY(check_dtypes(ctx, a, b));
  FBX_TRY(matmul_work(ctx, &w, a, b, NULL));
  return finish(outs, w, a->dtype);
}

/* bmm(self, mat2): [b, n, m] @ [b, m, p], no broadcasting. */
fbx_status *fbx_k_bmm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *w;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim != 3 || b->ndim != 3)
    return fbx_kernel_error(ctx, "both arguments must be 3-D batches of matrices, got %dD and %dD", a->ndim, b->ndim);
  if (a->sizes[0] != b->sizes[0] || a->sizes[2] != b->sizes[1]) {
    char sa[200], sb[200];
    dims_str(sa, sizeof sa, a);
    dims_str(sb, sizeof sb, b);
    return fbx_kernel_error(ctx, "batch shapes cannot be multiplied (%s and %s)", sa, sb);
  }
  FBX_TRY(check_dtypes(ctx, a, b));
  FBX_TRY(matmul_work(ctx, &w, a, b, NULL));
  return finish(outs, w, a->dtype);
}

/* matmul(self, other): dot, mv, mm and broadcast batched products. */
fbx_status *fbx_k_matmul(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *w;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  FBX_TRY(check_dtypes(ctx, a, b));
  FBX_TRY(matmul_work(ctx, &w, a, b, NULL));
  return finish(outs, w, a->dtype);
}

/* addmm(self, mat1, mat2, *, beta=1, alpha=1) = beta * self + alpha * (mat1 @ mat2). */
fbx_status *fbx_k_addmm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *s, *a, *b, *w;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &s));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  if (a->ndim != 2 || b->ndim != 2)
    return fbx_kernel_error(ctx, "mat1 and mat2 must be matrices, got %dD and %dD", a->ndim, b->ndim);
  if (a->sizes[1] != b->sizes[0]) return shape_mismatch(ctx, a, b);
  FBX_TRY(check_dtypes(ctx, a, b));
  FBX_TRY(check_dtypes(ctx, s, a));
  if (!fbx_iv_is_scalar(&args[3]) || !fbx_iv_is_scalar(&args[4]))
    return fbx_kernel_error(ctx, "beta and alpha must be numbers");
  addend ad = {.s = s, .alpha = fbx_iv_to_double(&args[4]), .beta = fbx_iv_to_double(&args[3])};
  FBX_TRY(matmul_work(ctx, &w, a, b, &ad));
  fbx_status *st = ad.applied ? NULL
                              : axpby(ctx, w, s, fbx_iv_to_double(&args[4]), fbx_iv_to_double(&args[3]),
                                      fbx_iv_to_int(&args[4]), fbx_iv_to_int(&args[3]));
  if (st) {
    fbx_tensor_release(w);
    return st;
  }
  return finish(outs, w, a->dtype);
}

/* linear(input, weight, bias=None) = input @ weight^T + bias; the weight's
 * transpose is a strided view, never copied. */
fbx_status *fbx_k_linear(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *wt, *wtv = NULL, *w;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &wt));
  if (wt->ndim != 1 && wt->ndim != 2)
    return fbx_kernel_error(ctx, "weight must be 1-D or 2-D, got %dD", wt->ndim);
  const fbx_tensor *bias = NULL;
  if (args[2].kind == FBX_IV_TENSOR) bias = args[2].u.t;
  else if (args[2].kind != FBX_IV_NONE) return fbx_kernel_error(ctx, "bias must be a Tensor or None");
  FBX_TRY(check_dtypes(ctx, x, wt));
  if (bias) FBX_TRY(check_dtypes(ctx, x, bias));
  if (wt->ndim == 2) {
    int64_t sz[2] = {wt->sizes[1], wt->sizes[0]}, sd[2] = {wt->strides[1], wt->strides[0]};
    FBX_TRY(fbx_tensor_view(&wtv, wt, 2, sz, sd, wt->offset));
  } else {
    wtv = fbx_tensor_retain(wt);
  }
  addend ad = {.s = bias, .alpha = 1, .beta = 1};
  fbx_status *st = matmul_work(ctx, &w, x, wtv, &ad);
  fbx_tensor_release(wtv);
  if (st) return st;
  if (bias && !ad.applied) {
    st = axpby(ctx, w, bias, 1, 1, 1, 1);
    if (st) {
      fbx_tensor_release(w);
      return st;
    }
  }
  return finish(outs, w, x->dtype);
}
