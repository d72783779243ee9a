/* The pointwise engine: broadcasting, dtype conversion of inputs, output
 * allocation and a collapsed, parallel strided walk that calls one inner
 * loop per run of elements (never per element).
 *
 *   // out = a * b for float32 tensors of any strides and broadcastable shapes
 *   FBX_PW_LOOP2(mul_f32, float, float, FBX_PW_ID, float, FBX_PW_ID, , a * b)
 *   ...
 *   fbx_tensor *ins[2] = {a, b}, *out = NULL;
 *   FBX_TRY(fbx_pw_map(ctx, &out, FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT32, 2, ins, mul_f32, NULL));
 *
 * An inner loop gets pointers and byte strides for the output (index 0) and
 * each input (1..nin) and a count n. Loops made with the FBX_PW_LOOP*
 * macros have three bodies: all operands contiguous (a plain `for` over
 * restrict-qualified typed arrays, which the compiler vectorizes), one input
 * broadcast (stride 0: a scalar operand, loaded once) and the general
 * strided one. The walk drops size-1 dims and merges dims that are
 * contiguous for every operand, so same-shape contiguous operands become one
 * call per parallel chunk.
 *
 * Inputs are converted to the compute storage dtype first (a contiguous
 * temporary, as PyTorch's TensorIterator does on the CPU), so each loop sees
 * one input dtype. Work above FBX_PW_GRAIN elements (environment
 * FUSEBOX_PW_GRAIN overrides it; 0 turns parallelism off) is split with
 * fbx_parallel_for.
 */
#ifndef FBX_OPS_POINTWISE_H
#define FBX_OPS_POINTWISE_H
#include <stdbool.h>
#include <stdint.h>

#include <fusebox/tensor.h>

#include "ops/optable.h"
#include "tensor/half.h"

#define FBX_PW_MAX_IN 3
#define FBX_PW_GRAIN 32768

/* ptrs[0]/strides[0]: output; ptrs[1..]/strides[1..]: inputs. Byte strides. */
typedef void (*fbx_pw_loop_fn)(char *const *ptrs, const int64_t *strides, int64_t n, const void *params);

/* Scalar parameters of an op, read by its loops before the element loop. */
typedef struct fbx_pw_params {
  double f[4];
  int64_t i[4];
} fbx_pw_params;

/* out = loop(ins...) over the broadcast shape of ins, into a new contiguous
 * tensor of out_dtype. Inputs not already of in_dtype are converted to it
 * first. Shapes that do not broadcast are an error naming the op. */
fbx_status *fbx_pw_map(const fbx_kctx *ctx, fbx_tensor **out, fbx_dtype out_dtype, fbx_dtype in_dtype,
                       int nin, fbx_tensor *const *ins, fbx_pw_loop_fn loop, const void *params);
/* The same into an existing tensor `out` (any strides) whose shape must be
 * the broadcast shape; out may be one of the inputs (same element for same
 * index) but must not partially overlap one. */
fbx_status *fbx_pw_map_into(const fbx_kctx *ctx, fbx_tensor *out, fbx_dtype in_dtype, int nin,
                            fbx_tensor *const *ins, fbx_pw_loop_fn loop, const void *params);
/* The raw walk: nops operands with their base pointers and element byte
 * strides over one shape (strides 0 where broadcast). parallel=false runs
 * it on the calling thread. */
void fbx_pw_walk(int nops, char *const *base, const int64_t (*strides)[FBX_MAX_DIMS], int ndim,
                 const int64_t *sizes, fbx_pw_loop_fn loop, const void *params, bool parallel);
/* Is any element of t zero? (integer division checks) */
bool fbx_pw_any_zero(const fbx_tensor *t);

/* ---- helpers for the pointwise kernels ---------------------------------------------- */

/* "<op>: not implemented for 'Bool'" (PyTorch's wording for a dtype an op lacks). */
fbx_status *fbx_pw_unsupported(const fbx_kctx *ctx, fbx_dtype d);
/* A tensor operand in dtype d: a tensor ivalue is retained as it is (the
 * engine converts it), a scalar becomes a 0-d tensor of d (PyTorch casts a
 * wrapped number to the common dtype). */
fbx_status *fbx_pw_operand(const fbx_kctx *ctx, fbx_tensor **out, const fbx_ivalue *v, fbx_dtype d);
/* The common case of a kernel: operands (tensors or scalars) -> tab[compute]
 * over them -> outs[0] of out_dtype. Errors when tab has no loop for compute. */
fbx_status *fbx_pw_apply(const fbx_kctx *ctx, fbx_ivalue *outs, const fbx_pw_loop_fn *tab, fbx_dtype compute,
                         fbx_dtype out_dtype, int nin, const fbx_ivalue *const *vals, const fbx_pw_params *P);
/* A scalar as PyTorch's `scalar.to<T>()` sees it for dtype d: rounded
 * through float16/bfloat16/float32 for floating d, wrapped to the width of
 * an integral d (returned in *i; *f gets the value as a double). */
void fbx_pw_scalar_as(const fbx_ivalue *v, fbx_dtype d, double *f, int64_t *i);
/* The same with PyTorch's overflow check (c10::checked_convert): a value
 * outside d's range is an error "value cannot be converted to type int8_t
 * without overflow" (infinities and NaN pass for floating d). */
fbx_status *fbx_pw_scalar_checked(const fbx_kctx *ctx, const fbx_ivalue *v, fbx_dtype d, double *f, int64_t *i);

/* ---- loop generators ------------------------------------------------------------- */

/* Every generated loop is compiled three times on x86-64 with glibc (ifunc):
 * for the baseline (SSE2, 4 floats per vector), for AVX2 (8) and for
 * AVX-512F (16), picked at load time by the CPU. The transcendental loops
 * (erf, softplus, pow, ...) are bound by their dependency chains, not by
 * issue width: wider vectors put more elements in flight in the same
 * reorder window (about 1.4x on them on the Zen 4 this was measured on,
 * which runs 512-bit operations as two 256-bit halves). With GCC the
 * clones are the x86-64-v3 (AVX2 + FMA) and x86-64-v4 (AVX-512) levels,
 * and the kernel files let GCC contract a * b + c into an FMA: one
 * instruction instead of two, 1.15-1.4x on the transcendental loops.
 * Results then depend on the clone by rounding (every vmath.h bound holds
 * for both, tests/unit/test_vmath.c checks both); -DFBX_PW_NO_FMA keeps
 * the AVX2 and AVX-512F clones without FMA, which round exactly as the
 * baseline does (with GCC; clang contracts within an expression by
 * default, -ffp-contract=off stops it). -DFBX_PW_NO_CLONES turns the clones off; so does
 * ThreadSanitizer, whose runtime is not up yet when ifunc resolvers run. */
#if defined(__SANITIZE_THREAD__) && !defined(FBX_PW_NO_CLONES)
#define FBX_PW_NO_CLONES 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) && !defined(FBX_PW_NO_CLONES)
#define FBX_PW_NO_CLONES 1
#endif
#endif
#if !defined(FBX_PW_NO_CLONES) && defined(__x86_64__) && defined(__GLIBC__) && defined(__has_attribute)
/* clang before 16 names an extern clone's dispatcher `f.ifunc` and leaves `f`
 * itself undefined for other files (rowops.c's row functions hit it in the
 * clang-built fuzz targets), so clones start at clang 16. */
#if __has_attribute(target_clones) && (defined(__clang__) ? __clang_major__ >= 16 : __GNUC__ >= 8)
#if defined(__clang__) || defined(FBX_PW_NO_FMA)
#define FBX_PW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define FBX_PW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#endif
#ifndef FBX_PW_CLONES
#define FBX_PW_CLONES
#endif

/* Load/store conversions between storage and compute types. */
#define FBX_PW_ID(x) (x)
#define FBX_PW_LD_F16(x) fbx_half_to_float(x)
#define FBX_PW_ST_F16(x) fbx_float_to_half(x)
#define FBX_PW_LD_BF16(x) fbx_bf16_to_float(x)
#define FBX_PW_ST_BF16(x) fbx_float_to_bf16(x)
#define FBX_PW_LD_I64(x) ((int64_t)(x))
#define FBX_PW_ST_BOOL(x) ((uint8_t)((x) != 0))

/* One input. TA: input storage type, CT: compute type (typedef'd to T in
 * the body), LD: storage->compute; TO, ST: output storage type and
 * compute->storage. PREP: statements run once per call (read params from
 * `P`, a const fbx_pw_params *). The rest (EXPR, may hold commas): the
 * value, from `a` (and `b`, `c`). */
#define FBX_PW_LOOP1(NAME, TA, CT, LD, TO, ST, PREP, ...)                                         \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) {             \
    typedef CT T;                                                                                 \
    const fbx_pw_params *P = (const fbx_pw_params *)pv_;                                          \
    (void)P;                                                                                      \
    PREP;                                                                                         \
    if (s_[0] == (int64_t)sizeof(TO) && s_[1] == (int64_t)sizeof(TA)) {                           \
      TO *restrict o_ = (TO *)p_[0];                                                              \
      const TA *restrict a_ = (const TA *)p_[1];                                                  \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(a_[i_]); (void)a;                                                                \
        o_[i_] = ST((__VA_ARGS__));                                                               \
      }                                                                                           \
    } else {                                                                                      \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(*(const TA *)(p_[1] + i_ * s_[1])); (void)a;                                     \
        *(TO *)(p_[0] + i_ * s_[0]) = ST((__VA_ARGS__));                                          \
      }                                                                                           \
    }                                                                                             \
  }

/* Two inputs a, b of storage type TA. */
#define FBX_PW_LOOP2(NAME, TA, CT, LD, TO, ST, PREP, ...)                                         \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) {             \
    typedef CT T;                                                                                 \
    const fbx_pw_params *P = (const fbx_pw_params *)pv_;                                          \
    (void)P;                                                                                      \
    PREP;                                                                                         \
    TO *restrict o_ = (TO *)p_[0];                                                                \
    const TA *restrict a_ = (const TA *)p_[1];                                                    \
    const TA *restrict b_ = (const TA *)p_[2];                                                    \
    if (s_[0] == (int64_t)sizeof(TO) && s_[1] == (int64_t)sizeof(TA) &&                           \
        s_[2] == (int64_t)sizeof(TA)) {                                                           \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(a_[i_]), b = LD(b_[i_]);                                                         \
        o_[i_] = ST((__VA_ARGS__));                                                               \
      }                                                                                           \
    } else if (s_[0] == (int64_t)sizeof(TO) && s_[1] == (int64_t)sizeof(TA) && s_[2] == 0) {      \
      const T b = LD(b_[0]);                                                                      \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(a_[i_]); (void)a;                                                                \
        o_[i_] = ST((__VA_ARGS__));                                                               \
      }                                                                                           \
    } else if (s_[0] == (int64_t)sizeof(TO) && s_[1] == 0 && s_[2] == (int64_t)sizeof(TA)) {      \
      const T a = LD(a_[0]);                                                                      \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T b = LD(b_[i_]);                                                                         \
        o_[i_] = ST((__VA_ARGS__));                                                               \
      }                                                                                           \
    } else {                                                                                      \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(*(const TA *)((const char *)a_ + i_ * s_[1]));                                   \
        T b = LD(*(const TA *)((const char *)b_ + i_ * s_[2]));                                   \
        *(TO *)(p_[0] + i_ * s_[0]) = ST((__VA_ARGS__));                                          \
      }                                                                                           \
    }                                                                                             \
  }

/* Three inputs a, b, c (contiguous fast path and the strided one). */
#define FBX_PW_LOOP3(NAME, TA, CT, LD, TO, ST, PREP, ...)                                         \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) {             \
    typedef CT T;                                                                                 \
    const fbx_pw_params *P = (const fbx_pw_params *)pv_;                                          \
    (void)P;                                                                                      \
    PREP;                                                                                         \
    if (s_[0] == (int64_t)sizeof(TO) && s_[1] == (int64_t)sizeof(TA) &&                           \
        s_[2] == (int64_t)sizeof(TA) && s_[3] == (int64_t)sizeof(TA)) {                           \
      TO *restrict o_ = (TO *)p_[0];                                                              \
      const TA *restrict a_ = (const TA *)p_[1];                                                  \
      const TA *restrict b_ = (const TA *)p_[2];                                                  \
      const TA *restrict c_ = (const TA *)p_[3];                                                  \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(a_[i_]), b = LD(b_[i_]), c = LD(c_[i_]);                                         \
        o_[i_] = ST((__VA_ARGS__));                                                               \
      }                                                                                           \
    } else {                                                                                      \
      for (int64_t i_ = 0; i_ < n_; i_++) {                                                       \
        T a = LD(*(const TA *)(p_[1] + i_ * s_[1])); (void)a;                                     \
        T b = LD(*(const TA *)(p_[2] + i_ * s_[2]));                                              \
        T c = LD(*(const TA *)(p_[3] + i_ * s_[3]));                                              \
        *(TO *)(p_[0] + i_ * s_[0]) = ST((__VA_ARGS__));                                          \
      }                                                                                           \
    }                                                                                             \
  }

/* Loops for functions whose vectorized form (FAST) is wrong for a few
 * inputs (RARE, an int expression: sin of a huge argument, fmod with a
 * huge quotient). Contiguous operands whose memory does not overlap the
 * output's: blocks of FBX_PW_DBLOCK elements computed with FAST straight
 * into the output, RARE noted in the same loop, and those elements
 * recomputed with SLOW (the libm call) from the intact input. Otherwise blocks of
 * FBX_PW_BLOCK go through a buffer, which keeps the input intact when the
 * output overwrites it (the buffer and its copy cost 10-20% on an op as
 * slow as lgamma was in this loop). */
#define FBX_PW_BLOCK 256
#define FBX_PW_DBLOCK 4096
/* Do [p, p + n) and [q, q + m) (bytes) not overlap? */
#define FBX_PW_APART_(p, n, q, m) \
  ((uintptr_t)(p) + (uintptr_t)(n) <= (uintptr_t)(q) || (uintptr_t)(q) + (uintptr_t)(m) <= (uintptr_t)(p))
/* The direct form's body over [0, n_): DECL declares a (and b) for index i_. */
#define FBX_PW_XDIRECT_(TO, ST, DECL, FAST, RARE, SLOW)                                           \
  TO *restrict o_ = (TO *)p_[0];                                                                  \
  for (int64_t b_ = 0; b_ < n_; b_ += FBX_PW_DBLOCK) {                                            \
    int64_t e_ = n_ - b_ < FBX_PW_DBLOCK ? n_ : b_ + FBX_PW_DBLOCK;                               \
    int rare_ = 0;                                                                                \
    for (int64_t i_ = b_; i_ < e_; i_++) {                                                        \
      DECL;                                                                                       \
      o_[i_] = ST((FAST));                                                                        \
      rare_ |= (RARE);                                                                            \
    }                                                                                             \
    if (rare_)                                                                                    \
      for (int64_t i_ = b_; i_ < e_; i_++) {                                                      \
        DECL;                                                                                     \
        if (RARE) o_[i_] = ST((SLOW));                                                            \
      }                                                                                           \
  }
#define FBX_PW_LOOP1X(NAME, TA, CT, LD, TO, ST, PREP, FAST, RARE, SLOW)                           \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) { \
    typedef CT T;                                                                                 \
    const fbx_pw_params *P = (const fbx_pw_params *)pv_;                                          \
    (void)P;                                                                                      \
    PREP;                                                                                         \
    if (s_[0] == (int64_t)sizeof(TO) && s_[1] == (int64_t)sizeof(TA) &&                           \
        FBX_PW_APART_(p_[0], n_ * (int64_t)sizeof(TO), p_[1], n_ * (int64_t)sizeof(TA))) {        \
      const TA *restrict a_ = (const TA *)p_[1];                                                  \
      FBX_PW_XDIRECT_(TO, ST, T a = LD(a_[i_]), FAST, RARE, SLOW)                                 \
      return;                                                                                     \
    }                                                                                             \
    T buf_[FBX_PW_BLOCK];                                                                         \
    for (int64_t b_ = 0; b_ < n_; b_ += FBX_PW_BLOCK) {                                           \
      int m_ = (int)(n_ - b_ < FBX_PW_BLOCK ? n_ - b_ : FBX_PW_BLOCK), rare_ = 0;                 \
      const char *pa_ = p_[1] + b_ * s_[1];                                                       \
      char *po_ = p_[0] + b_ * s_[0];                                                             \
      if (s_[1] == (int64_t)sizeof(TA)) {                                                         \
        const TA *restrict a_ = (const TA *)pa_;                                                  \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(a_[i_]);                                                                       \
          buf_[i_] = (FAST);                                                                      \
          rare_ |= (RARE);                                                                        \
        }                                                                                         \
      } else {                                                                                    \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(*(const TA *)(pa_ + i_ * s_[1]));                                              \
          buf_[i_] = (FAST);                                                                      \
          rare_ |= (RARE);                                                                        \
        }                                                                                         \
      }                                                                                           \
      if (rare_)                                                                                  \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(*(const TA *)(pa_ + i_ * s_[1]));                                              \
          if (RARE) buf_[i_] = (SLOW);                                                            \
        }                                                                                         \
      if (s_[0] == (int64_t)sizeof(TO)) {                                                         \
        TO *restrict o_ = (TO *)po_;                                                              \
        for (int i_ = 0; i_ < m_; i_++) o_[i_] = ST(buf_[i_]);                                    \
      } else {                                                                                    \
        for (int i_ = 0; i_ < m_; i_++) *(TO *)(po_ + i_ * s_[0]) = ST(buf_[i_]);                 \
      }                                                                                           \
    }                                                                                             \
  }

/* The same with two inputs a, b (fast paths: both contiguous, b broadcast). */
#define FBX_PW_LOOP2X(NAME, TA, CT, LD, TO, ST, PREP, FAST, RARE, SLOW)                           \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) { \
    typedef CT T;                                                                                 \
    const fbx_pw_params *P = (const fbx_pw_params *)pv_;                                          \
    (void)P;                                                                                      \
    PREP;                                                                                         \
    if (s_[0] == (int64_t)sizeof(TO) && s_[1] == (int64_t)sizeof(TA) &&                           \
        (s_[2] == (int64_t)sizeof(TA) || s_[2] == 0) &&                                           \
        FBX_PW_APART_(p_[0], n_ * (int64_t)sizeof(TO), p_[1], n_ * (int64_t)sizeof(TA)) &&        \
        FBX_PW_APART_(p_[0], n_ * (int64_t)sizeof(TO), p_[2], s_[2] ? n_ * (int64_t)sizeof(TA) : (int64_t)sizeof(TA))) { \
      const TA *restrict a_ = (const TA *)p_[1], *restrict bb_ = (const TA *)p_[2];               \
      if (s_[2]) {                                                                                \
        FBX_PW_XDIRECT_(TO, ST, T a = LD(a_[i_]); T b = LD(bb_[i_]), FAST, RARE, SLOW)            \
      } else {                                                                                    \
        const T bv_ = LD(bb_[0]);                                                                 \
        FBX_PW_XDIRECT_(TO, ST, T a = LD(a_[i_]); const T b = bv_, FAST, RARE, SLOW)              \
      }                                                                                           \
      return;                                                                                     \
    }                                                                                             \
    T buf_[FBX_PW_BLOCK];                                                                         \
    for (int64_t b_ = 0; b_ < n_; b_ += FBX_PW_BLOCK) {                                           \
      int m_ = (int)(n_ - b_ < FBX_PW_BLOCK ? n_ - b_ : FBX_PW_BLOCK), rare_ = 0;                 \
      const char *pa_ = p_[1] + b_ * s_[1], *pb_ = p_[2] + b_ * s_[2];                            \
      char *po_ = p_[0] + b_ * s_[0];                                                             \
      if (s_[1] == (int64_t)sizeof(TA) && s_[2] == (int64_t)sizeof(TA)) {                         \
        const TA *restrict a_ = (const TA *)pa_, *restrict bb_ = (const TA *)pb_;                 \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(a_[i_]), b = LD(bb_[i_]);                                                      \
          buf_[i_] = (FAST);                                                                      \
          rare_ |= (RARE);                                                                        \
        }                                                                                         \
      } else if (s_[1] == (int64_t)sizeof(TA) && s_[2] == 0) {                                    \
        const TA *restrict a_ = (const TA *)pa_;                                                  \
        const T b = LD(*(const TA *)pb_);                                                         \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(a_[i_]);                                                                       \
          buf_[i_] = (FAST);                                                                      \
          rare_ |= (RARE);                                                                        \
        }                                                                                         \
      } else {                                                                                    \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(*(const TA *)(pa_ + i_ * s_[1])), b = LD(*(const TA *)(pb_ + i_ * s_[2]));     \
          buf_[i_] = (FAST);                                                                      \
          rare_ |= (RARE);                                                                        \
        }                                                                                         \
      }                                                                                           \
      if (rare_)                                                                                  \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = LD(*(const TA *)(pa_ + i_ * s_[1])), b = LD(*(const TA *)(pb_ + i_ * s_[2]));     \
          if (RARE) buf_[i_] = (SLOW);                                                            \
        }                                                                                         \
      if (s_[0] == (int64_t)sizeof(TO)) {                                                         \
        TO *restrict o_ = (TO *)po_;                                                              \
        for (int i_ = 0; i_ < m_; i_++) o_[i_] = ST(buf_[i_]);                                    \
      } else {                                                                                    \
        for (int i_ = 0; i_ < m_; i_++) *(TO *)(po_ + i_ * s_[0]) = ST(buf_[i_]);                 \
      }                                                                                           \
    }                                                                                             \
  }

/* Loops for functions computed a block at a time, BLOCK(out, a, b, m) on
 * arrays of the compute type (fbx_vm_powf_block: several passes over the
 * block, each a short dependency chain), RARE and SLOW as in FBX_PW_LOOP2X.
 * Inputs in another storage type or strided are first converted into block
 * buffers; a broadcast b fills one once. FBX_PW_LOOP1XB: one input a, and
 * b = BVAL (an expression in P) for every element. */
#define FBX_PW_XB_LOAD_(dst_, src_, stride_, TA, LD, m_)                                          \
  if (stride_ == (int64_t)sizeof(TA)) {                                                           \
    const TA *restrict x_ = (const TA *)(src_);                                                   \
    for (int i_ = 0; i_ < m_; i_++) dst_[i_] = LD(x_[i_]);                                        \
  } else {                                                                                        \
    for (int i_ = 0; i_ < m_; i_++) dst_[i_] = LD(*(const TA *)((src_) + i_ * stride_));          \
  }
/* The block loops' pieces: ua_ (input a as T, converted into xa_ when
 * needed); ob_ (the output itself when it has the compute type and lies
 * apart from the inputs, APART_B saying so for b, else buf_); the store of
 * buf_ when ob_ is buf_. */
#define FBX_PW_XB_IN_(TA, LD)                                                                     \
  const T *ua_ = xa_;                                                                             \
  if (sizeof(TA) == sizeof(T) && s_[1] == (int64_t)sizeof(TA))                                    \
    ua_ = (const T *)pa_;                                                                         \
  else {                                                                                          \
    FBX_PW_XB_LOAD_(xa_, pa_, s_[1], TA, LD, m_)                                                  \
  }
#define FBX_PW_XB_OUT_(TO, APART_B)                                                               \
  T *ob_ = _Generic((TO)0, T: 1, default: 0) && s_[0] == (int64_t)sizeof(TO) &&                  \
                   FBX_PW_APART_(po_, m_ * (int64_t)sizeof(T), ua_, m_ * (int64_t)sizeof(T)) &&   \
                   (APART_B)                                                                      \
               ? (T *)(void *)po_                                                                 \
               : buf_;
#define FBX_PW_XB_STORE_(TO, ST)                                                                  \
  if (ob_ == buf_) {                                                                              \
    if (s_[0] == (int64_t)sizeof(TO)) {                                                           \
      TO *restrict o_ = (TO *)po_;                                                                \
      for (int i_ = 0; i_ < m_; i_++) o_[i_] = ST(buf_[i_]);                                      \
    } else {                                                                                      \
      for (int i_ = 0; i_ < m_; i_++) *(TO *)(po_ + i_ * s_[0]) = ST(buf_[i_]);                   \
    }                                                                                             \
  }
#define FBX_PW_XB_BODY_(TA, TO, LD, ST, BLOCK, RARE, SLOW)                                        \
  FBX_PW_XB_IN_(TA, LD)                                                                           \
  FBX_PW_XB_OUT_(TO, FBX_PW_APART_(po_, m_ * (int64_t)sizeof(T), ub_, m_ * (int64_t)sizeof(T)))   \
  BLOCK(ob_, ua_, ub_, m_);                                                                       \
  for (int i_ = 0; i_ < m_; i_++) {                                                               \
    T a = ua_[i_], b = ub_[i_];                                                                   \
    rare_ |= (RARE);                                                                              \
  }                                                                                               \
  if (rare_)                                                                                      \
    for (int i_ = 0; i_ < m_; i_++) {                                                             \
      T a = ua_[i_], b = ub_[i_];                                                                 \
      if (RARE) ob_[i_] = (SLOW);                                                                 \
    }                                                                                             \
  FBX_PW_XB_STORE_(TO, ST)
#define FBX_PW_LOOP2XB(NAME, TA, CT, LD, TO, ST, BLOCK, RARE, SLOW)                               \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) { \
    typedef CT T;                                                                                 \
    (void)pv_;                                                                                    \
    T buf_[FBX_PW_BLOCK], xa_[FBX_PW_BLOCK], xb_[FBX_PW_BLOCK];                                   \
    int filled_ = 0;                                                                              \
    for (int64_t b_ = 0; b_ < n_; b_ += FBX_PW_BLOCK) {                                           \
      int m_ = (int)(n_ - b_ < FBX_PW_BLOCK ? n_ - b_ : FBX_PW_BLOCK), rare_ = 0;                 \
      const char *pa_ = p_[1] + b_ * s_[1], *pb_ = p_[2] + b_ * s_[2];                            \
      char *po_ = p_[0] + b_ * s_[0];                                                             \
      const T *ub_ = xb_;                                                                         \
      if (s_[2] == 0) {                                                                           \
        if (!filled_) {                                                                           \
          const T bv_ = LD(*(const TA *)pb_);                                                     \
          for (int i_ = 0; i_ < FBX_PW_BLOCK; i_++) xb_[i_] = bv_;                                \
          filled_ = 1;                                                                            \
        }                                                                                         \
      } else if (sizeof(TA) == sizeof(T) && s_[2] == (int64_t)sizeof(TA)) {                       \
        ub_ = (const T *)pb_;                                                                     \
      } else {                                                                                    \
        FBX_PW_XB_LOAD_(xb_, pb_, s_[2], TA, LD, m_)                                              \
      }                                                                                           \
      FBX_PW_XB_BODY_(TA, TO, LD, ST, BLOCK, RARE, SLOW)                                          \
    }                                                                                             \
  }
#define FBX_PW_LOOP1XB(NAME, TA, CT, LD, TO, ST, BVAL, BLOCK, RARE, SLOW)                         \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) { \
    typedef CT T;                                                                                 \
    const fbx_pw_params *P = (const fbx_pw_params *)pv_;                                          \
    (void)P;                                                                                      \
    T buf_[FBX_PW_BLOCK], xa_[FBX_PW_BLOCK], xb_[FBX_PW_BLOCK];                                   \
    const T bv_ = (BVAL);                                                                         \
    for (int i_ = 0; i_ < FBX_PW_BLOCK; i_++) xb_[i_] = bv_;                                      \
    const T *ub_ = xb_;                                                                           \
    for (int64_t b_ = 0; b_ < n_; b_ += FBX_PW_BLOCK) {                                           \
      int m_ = (int)(n_ - b_ < FBX_PW_BLOCK ? n_ - b_ : FBX_PW_BLOCK), rare_ = 0;                 \
      const char *pa_ = p_[1] + b_ * s_[1];                                                       \
      char *po_ = p_[0] + b_ * s_[0];                                                             \
      FBX_PW_XB_BODY_(TA, TO, LD, ST, BLOCK, RARE, SLOW)                                          \
    }                                                                                             \
  }

/* One input, computed a block at a time by BLOCK(out, a, m) on arrays of
 * the compute type (fbx_vm_erfcf_block: two passes; fbx_vm_lgammaf_block:
 * a loop picked by the block's range). BLOCK returns nonzero when the
 * block may hold inputs its vector code gets wrong: those (RARE, an int
 * expression in a) are then recomputed by SLOW from the intact input. An
 * output of the compute type apart from the input takes the block
 * directly; other storage types and strides go through buffers. */
#define FBX_PW_LOOP1B(NAME, TA, CT, LD, TO, ST, BLOCK, RARE, SLOW)                                \
  FBX_PW_CLONES static void NAME(char *const *p_, const int64_t *s_, int64_t n_, const void *pv_) { \
    typedef CT T;                                                                                 \
    (void)pv_;                                                                                    \
    T buf_[FBX_PW_BLOCK], xa_[FBX_PW_BLOCK];                                                      \
    for (int64_t b_ = 0; b_ < n_; b_ += FBX_PW_BLOCK) {                                           \
      int m_ = (int)(n_ - b_ < FBX_PW_BLOCK ? n_ - b_ : FBX_PW_BLOCK);                            \
      const char *pa_ = p_[1] + b_ * s_[1];                                                       \
      char *po_ = p_[0] + b_ * s_[0];                                                             \
      FBX_PW_XB_IN_(TA, LD)                                                                       \
      FBX_PW_XB_OUT_(TO, 1)                                                                       \
      if (BLOCK(ob_, ua_, m_))                                                                    \
        for (int i_ = 0; i_ < m_; i_++) {                                                         \
          T a = ua_[i_];                                                                          \
          if (RARE) ob_[i_] = (SLOW);                                                             \
        }                                                                                         \
      FBX_PW_XB_STORE_(TO, ST)                                                                    \
    }                                                                                             \
  }

/* Per-dtype instantiation: GEN(suffix, storage type, compute type, load,
 * store-to-same-dtype) for each dtype family. A loop table is indexed by
 * fbx_dtype (NULL: the op does not support that dtype). */
#define FBX_PW_FLOATS(GEN, ...)                                                                   \
  GEN(f32, float, float, FBX_PW_ID, FBX_PW_ID, __VA_ARGS__)                                       \
  GEN(f64, double, double, FBX_PW_ID, FBX_PW_ID, __VA_ARGS__)                                     \
  GEN(f16, uint16_t, float, FBX_PW_LD_F16, FBX_PW_ST_F16, __VA_ARGS__)                            \
  GEN(bf16, uint16_t, float, FBX_PW_LD_BF16, FBX_PW_ST_BF16, __VA_ARGS__)
#define FBX_PW_INTS(GEN, ...)                                                                     \
  GEN(u8, uint8_t, int64_t, FBX_PW_LD_I64, (uint8_t), __VA_ARGS__)                                \
  GEN(i8, int8_t, int64_t, FBX_PW_LD_I64, (int8_t), __VA_ARGS__)                                  \
  GEN(i16, int16_t, int64_t, FBX_PW_LD_I64, (int16_t), __VA_ARGS__)                               \
  GEN(i32, int32_t, int64_t, FBX_PW_LD_I64, (int32_t), __VA_ARGS__)                               \
  GEN(i64, int64_t, int64_t, FBX_PW_LD_I64, (int64_t), __VA_ARGS__)
#define FBX_PW_BOOLS(GEN, ...) GEN(b8, uint8_t, int64_t, FBX_PW_LD_I64, FBX_PW_ST_BOOL, __VA_ARGS__)

#define FBX_PW_TAB_FLOATS(op)                                                                     \
  [FBX_DTYPE_FLOAT32] = op##_f32, [FBX_DTYPE_FLOAT64] = op##_f64,                                 \
  [FBX_DTYPE_FLOAT16] = op##_f16, [FBX_DTYPE_BFLOAT16] = op##_bf16
#define FBX_PW_TAB_INTS(op)                                                                       \
  [FBX_DTYPE_UINT8] = op##_u8, [FBX_DTYPE_INT8] = op##_i8, [FBX_DTYPE_INT16] = op##_i16,          \
  [FBX_DTYPE_INT32] = op##_i32, [FBX_DTYPE_INT64] = op##_i64
#define FBX_PW_TAB_BOOL(op) [FBX_DTYPE_BOOL] = op##_b8

typedef fbx_pw_loop_fn fbx_pw_table[FBX_DTYPE_MAX_CODE];

#endif
