/* Compiler settings for the pointwise kernel files (k_unary.c, k_binary.c,
 * k_ternary.c) and for tests that compile vmath.h as they do: include it
 * first, before anything that defines functions.
 *
 * The inner loops must vectorize at the project's -O2, whose cost model
 * (GCC's "very cheap") takes no loop that needs an epilogue; errno is never
 * read, so sqrt and friends may use the instructions directly; a * b + c
 * may become one FMA where the clone has it (FBX_PW_CLONES in
 * ops/pointwise.h; -DFBX_PW_NO_FMA keeps every clone's bits the same). */
#ifndef FBX_OPS_KOPT_H
#define FBX_OPS_KOPT_H
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-math-errno", "no-trapping-math")
#ifndef FBX_PW_NO_FMA
#pragma GCC optimize("fp-contract=fast")
#endif
#endif
#endif
