/* Kernel IR -> source, through the kit's C-family printer pieces. What
 * differs between C for the CPU and CUDA C for NVRTC is data (the kit's
 * dialect table, <fusebox/kit/kit_print.h>): the head and prelude (integer
 * types, bit casts, infinity, math), kernel qualifiers, restrict spelling,
 * type names; and here how the element loop is distributed
 * (a range [begin, end) split by an OpenMP pragma or handed out by the
 * plugin on the host's thread pool, or a CUDA grid-stride loop). The expressions themselves come from the
 * kit's op templates (fbxk_op_print) and are printed the same way for both.
 *
 * Generated kernel, C:
 *
 *   void NAME(int64_t begin, int64_t end, int32_t nd, const int64_t *sizes,
 *             char *const *ptrs, const int64_t *strides, int32_t flat,
 *             const double *fs, const int64_t *is, int64_t par_min,
 *             int32_t nt)
 *   const int lf_openmp;  (1 when the object was compiled with OpenMP)
 *
 * [begin, end): elements of the flat path, rows (of the innermost collapsed
 * dim) of the strided path. LF_PAR_OMP: the loop carries
 * `#pragma omp parallel for simd if (<elements in range> >= par_min)
 * num_threads(nt)` and is called once with the whole range; LF_PAR_POOL:
 * `#pragma omp simd` only (compiled with -fopenmp-simd: no libgomp), par_min
 * and nt unused, the plugin splits the range. The strided path's inner loop
 * is `omp simd` in both modes.
 * CUDA C (__global__) covers all n elements:
 *
 *   void NAME(int64_t n, int32_t nd, const int64_t *sizes, char *const *ptrs,
 *             const int64_t *strides, int32_t flat, const double *fs,
 *             const int64_t *is, int64_t par_min)
 *
 * ptrs: the tensor operands, then the stores (data + byte offset already
 * applied); strides: [noperands + nstores][nd] in elements over the
 * (collapsed) iteration shape `sizes`; flat != 0 when every operand and
 * store is contiguous over n elements (the fast path the C compiler
 * vectorizes; 2 in CUDA when also 16-byte aligned: the float4 path of
 * all-float32 kernels); fs/is: scalar inputs by kernel input index.
 */
#include <stdio.h>
#include <string.h>

#include "lf.h"

/* The dialect's head and the math prelude (half/bfloat16 conversions and
 * rounding, floor division, remainder, the vectorizable float math
 * fbxk_v*f), type names, casts, loads and stores are the kit's
 * (<fusebox/kit/kit_print.h>, kit_math.h); what is left here is legacy's
 * kernel shape. */

static char *cast_str(int dt, const char *x, fbxk_dialect d) {
  fbxk_buf b = {0};
  fbxk_print_cast(&b, dt, x, d);
  return fbxk_take(&b);
}

/* a value's expression: its variable, or a constant's literal */
static void value_ref(fbxk_buf *b, const lf_kir *k, int id, fbxk_dialect d) {
  const lf_value *v = &k->values[id];
  if (v->kind != LF_CONST) fbxk_printf(b, "v%d", id);
  else if (v->dtype == FBXK_F64) fbxk_print_float(b, v->cf, FBXK_F64, d);
  else fbxk_print_int(b, v->ci);
}

static char *arg_str(const lf_kir *k, int id, int cd, int raw, fbxk_dialect d) {
  fbxk_buf r = {0};
  value_ref(&r, k, id, d);
  char *ref = fbxk_take(&r);
  if (!ref || raw || k->values[id].dtype == cd) return ref;
  char *c = cast_str(cd, ref, d);
  fbxk_free(ref);
  return c;
}

/* the template of op value v with its arguments (the kit prints it) */
static void expand(fbxk_buf *b, const lf_kir *k, const lf_value *v, fbxk_dialect d) {
  int sel = fbxk_op_selector(v->op);
  char *args[4] = {NULL, NULL, NULL, NULL};
  int missing = 0;
  for (int i = 0; i < v->nargs && i < 4; i++) {
    args[i] = arg_str(k, v->args[i], v->cdtype, sel == i, d);
    missing |= !args[i];
  }
  if (missing) b->oom = 1; /* out of memory: fail the kernel, never print a partial expression */
  else fbxk_op_print(b, v->op, v->cdtype, d, (const char *const *)args);
  for (int i = 0; i < 4; i++) fbxk_free(args[i]);
}

/* The straight-line body for one element. access[j]: operand j's element
 * lvalue; out[s]: store s's element lvalue. */
static void body(fbxk_buf *b, const lf_kir *k, char **access, char **out, const char *ind, fbxk_dialect d) {
  for (int id = 0; id < k->nvalues; id++) {
    const lf_value *v = &k->values[id];
    if (v->kind == LF_LOAD) {
      const char *a = access[v->slot];
      if (!a) b->oom = 1; /* never print "(null)": fail the kernel as out of memory */
      fbxk_printf(b, "%sconst %s v%d = ", ind, fbxk_compute_type(v->dtype, d), id);
      fbxk_print_load(b, v->dtype, a ? a : "0", d);
      fbxk_puts(b, ";\n");
    } else if (v->kind == LF_OP) {
      fbxk_buf e = {0};
      expand(&e, k, v, d);
      char *raw = fbxk_take(&e);
      int rawdt = fbxk_op_is_bool_valued(v->op) ? FBXK_BOOL : v->cdtype;
      char *x = cast_str(rawdt, raw ? raw : "0", d);
      if (rawdt != v->dtype) {
        char *y = cast_str(v->dtype, x ? x : "0", d);
        fbxk_free(x);
        x = y;
      }
      if (!raw || !x) b->oom = 1; /* a "0" in place of the op would compile and be wrong */
      fbxk_printf(b, "%sconst %s v%d = %s; /* %s */\n", ind, fbxk_compute_type(v->dtype, d), id, x ? x : "0",
                  fbxk_op_name(v->op));
      fbxk_free(raw);
      fbxk_free(x);
    }
  }
  for (int s = 0; s < k->nstores; s++) {
    const lf_store *st = &k->stores[s];
    fbxk_buf r = {0};
    value_ref(&r, k, st->value, d);
    char *ref = fbxk_take(&r);
    if (!ref || !out[s]) b->oom = 1;
    fbxk_puts(b, ind);
    fbxk_print_store(b, st->dtype, out[s] ? out[s] : "0", ref ? ref : "0", d);
    fbxk_puts(b, "\n");
    fbxk_free(ref);
  }
}

static char *fmt(const char *f, int j, const char *lane) {
  fbxk_buf b = {0};
  if (lane) fbxk_printf(&b, f, j, lane);
  else fbxk_printf(&b, f, j);
  return fbxk_take(&b);
}

static char *fmt3(const char *f, int j) {
  fbxk_buf b = {0};
  fbxk_printf(&b, f, j, j, j);
  return fbxk_take(&b);
}

static void free_strs(char **s, int n) {
  for (int i = 0; i < n; i++) fbxk_free(s[i]);
}

/* typed pointers a<j> (operands) and o<s> (stores) */
static void pointers(fbxk_buf *b, const lf_kir *k, fbxk_dialect did, const char *ind) {
  const fbxk_dialect_info *d = fbxk_dialect_get(did);
  for (int j = 0; j < k->noperands; j++)
    fbxk_printf(b, "%sconst %s *%s a%d = (const %s *)ptrs[%d];\n", ind, fbxk_storage_type(k->operands[j].dtype, did),
              d->restrict_kw, j, fbxk_storage_type(k->operands[j].dtype, did), j);
  for (int s = 0; s < k->nstores; s++)
    fbxk_printf(b, "%s%s *%s o%d = (%s *)ptrs[%d];\n", ind, fbxk_storage_type(k->stores[s].dtype, did), d->restrict_kw, s,
              fbxk_storage_type(k->stores[s].dtype, did), k->noperands + s);
}

static int all_float32(const lf_kir *k) {
  for (int j = 0; j < k->noperands; j++)
    if (k->operands[j].dtype != FBXK_F32) return 0;
  for (int s = 0; s < k->nstores; s++)
    if (k->stores[s].dtype != FBXK_F32) return 0;
  return 1;
}

char *lf_codegen(const lf_kir *k, fbxk_dialect did, lf_parallel par, const char *name, const char *first_line) {
  const fbxk_dialect_info *d = fbxk_dialect_get(did);
  int nargs = k->noperands + k->nstores;
  char *acc[LF_MAX_ARGS], *out[LF_MAX_ARGS];
  fbxk_buf b = {0};
  if (first_line) fbxk_puts(&b, first_line);
  fbxk_puts(&b, fbxk_prelude(did));
  if (did == FBXK_C)
    fbxk_printf(&b,
              "\n#ifdef _OPENMP\nconst int lf_openmp = 1;\n#else\nconst int lf_openmp = 0;\n#endif\n"
              "\n%svoid %s(int64_t begin, int64_t end, int32_t nd, const int64_t *sizes, char *const *ptrs,\n"
              "    const int64_t *strides, int32_t flat, const double *fs, const int64_t *is, int64_t par_min,\n"
              "    int32_t nt) {\n",
              d->kernel, name);
  else
    fbxk_printf(&b,
              "\n%svoid %s(int64_t n, int32_t nd, const int64_t *sizes, char *const *ptrs, const int64_t *strides,\n"
              "    int32_t flat, const double *fs, const int64_t *is, int64_t par_min) {\n",
              d->kernel, name);
  fbxk_puts(&b, did == FBXK_C ? "  (void)fs; (void)is; (void)sizes; (void)strides; (void)nd; (void)par_min; (void)nt;\n"
                                  : "  (void)fs; (void)is; (void)par_min; (void)sizes; (void)strides; (void)nd;\n");
  for (int id = 0; id < k->nvalues; id++) {
    const lf_value *v = &k->values[id];
    if (v->kind == LF_SCALAR)
      fbxk_printf(&b, "  const %s v%d = %s[%d];\n", v->dtype == FBXK_F64 ? "double" : "int64_t", id,
                v->dtype == FBXK_F64 ? "fs" : "is", v->slot);
  }
  if (did == FBXK_C) {
    fbxk_puts(&b, "  if (end <= begin) return;\n");
    /* flat: one index for all, restrict pointers: the loop the compiler vectorizes */
    fbxk_puts(&b, "  if (flat) {\n");
    pointers(&b, k, did, "    ");
    /* `simd`: GCC gives up on loops with many streams and mixed-width temporaries
     * (a backward kernel of 20 inputs and 8 outputs stayed scalar); the pragma
     * states what is true here, no dependence between iterations. */
    if (par == LF_PAR_OMP) fbxk_puts(&b, "#pragma omp parallel for simd if (end - begin >= par_min) num_threads(nt)\n");
    else fbxk_puts(&b, "#pragma omp simd\n");
    fbxk_puts(&b, "    for (int64_t i = begin; i < end; i++) {\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%d[i]", j, NULL);
    for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%d[i]", s, NULL);
    body(&b, k, acc, out, "      ", did);
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    fbxk_puts(&b, "    }\n    return;\n  }\n");
    /* strided: rows of the innermost (collapsed) dim, each row's offsets from its index */
    fbxk_puts(&b, "  const int64_t inner = nd > 0 ? sizes[nd - 1] : 1;\n");
    pointers(&b, k, did, "  ");
    /* par_min counts elements; the range counts rows of `inner` */
    if (par == LF_PAR_OMP)
      fbxk_puts(&b, "#pragma omp parallel for if ((end - begin) * inner >= par_min) num_threads(nt)\n");
    fbxk_puts(&b, "  for (int64_t r = begin; r < end; r++) {\n    int64_t rem = r");
    for (int j = 0; j < nargs; j++) fbxk_printf(&b, ", off%d = 0", j);
    fbxk_puts(&b, ";\n    for (int32_t dd = nd - 2; dd >= 0; dd--) {\n");
    fbxk_puts(&b, "      const int64_t ix = rem % sizes[dd];\n      rem /= sizes[dd];\n");
    for (int j = 0; j < nargs; j++) fbxk_printf(&b, "      off%d += ix * strides[%d * nd + dd];\n", j, j);
    fbxk_puts(&b, "    }\n");
    for (int j = 0; j < nargs; j++) fbxk_printf(&b, "    const int64_t st%d = nd > 0 ? strides[%d * nd + nd - 1] : 0;\n", j, j);
    fbxk_puts(&b, "#pragma omp simd\n    for (int64_t i = 0; i < inner; i++) {\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt3("a%d[off%d + i * st%d]", j);
    for (int s = 0; s < k->nstores; s++) {
      int j = k->noperands + s;
      fbxk_buf t = {0};
      fbxk_printf(&t, "o%d[off%d + i * st%d]", s, j, j);
      out[s] = fbxk_take(&t);
    }
    body(&b, k, acc, out, "      ", did);
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    fbxk_puts(&b, "    }\n  }\n}\n");
  } else {
    fbxk_puts(&b, "  if (n <= 0) return;\n");
    fbxk_puts(&b, "  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;\n");
    fbxk_puts(&b, "  const int64_t step = (int64_t)blockDim.x * gridDim.x;\n");
    pointers(&b, k, did, "  ");
    if (all_float32(k)) {
      /* every pointer 16-byte aligned (flat == 2): four elements per thread step */
      fbxk_puts(&b, "  if (flat == 2) {\n    const int64_t n4 = n / 4;\n");
      fbxk_puts(&b, "    for (int64_t q = tid; q < n4; q += step) {\n");
      for (int j = 0; j < k->noperands; j++)
        fbxk_printf(&b, "      const float4 a%dq = ((const float4 *)a%d)[q];\n", j, j);
      for (int s = 0; s < k->nstores; s++) fbxk_printf(&b, "      float4 o%dq;\n", s);
      static const char *lane[4] = {"x", "y", "z", "w"};
      for (int l = 0; l < 4; l++) {
        fbxk_printf(&b, "      {\n");
        for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%dq.%s", j, lane[l]);
        for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%dq.%s", s, lane[l]);
        body(&b, k, acc, out, "        ", did);
        free_strs(acc, k->noperands);
        free_strs(out, k->nstores);
        fbxk_printf(&b, "      }\n");
      }
      for (int s = 0; s < k->nstores; s++) fbxk_printf(&b, "      ((float4 *)o%d)[q] = o%dq;\n", s, s);
      fbxk_puts(&b, "    }\n    for (int64_t i = n4 * 4 + tid; i < n; i += step) {\n");
      for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%d[i]", j, NULL);
      for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%d[i]", s, NULL);
      body(&b, k, acc, out, "      ", did);
      free_strs(acc, k->noperands);
      free_strs(out, k->nstores);
      fbxk_puts(&b, "    }\n    return;\n  }\n");
    }
    fbxk_puts(&b, "  if (flat) {\n    for (int64_t i = tid; i < n; i += step) {\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt("a%d[i]", j, NULL);
    for (int s = 0; s < k->nstores; s++) out[s] = fmt("o%d[i]", s, NULL);
    body(&b, k, acc, out, "      ", did);
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    fbxk_puts(&b, "    }\n    return;\n  }\n");
    fbxk_puts(&b, "  for (int64_t i = tid; i < n; i += step) {\n    int64_t rem = i");
    for (int j = 0; j < nargs; j++) fbxk_printf(&b, ", off%d = 0", j);
    fbxk_puts(&b, ";\n    for (int32_t dd = nd - 1; dd >= 0; dd--) {\n");
    fbxk_puts(&b, "      const int64_t ix = rem % sizes[dd];\n      rem /= sizes[dd];\n");
    for (int j = 0; j < nargs; j++) fbxk_printf(&b, "      off%d += ix * strides[%d * nd + dd];\n", j, j);
    fbxk_puts(&b, "    }\n");
    for (int j = 0; j < k->noperands; j++) acc[j] = fmt3("a%d[off%d]", j);
    for (int s = 0; s < k->nstores; s++) {
      fbxk_buf t = {0};
      fbxk_printf(&t, "o%d[off%d]", s, k->noperands + s);
      out[s] = fbxk_take(&t);
    }
    body(&b, k, acc, out, "    ", did);
    free_strs(acc, k->noperands);
    free_strs(out, k->nstores);
    fbxk_puts(&b, "  }\n}\n");
  }
  return fbxk_take(&b);
}
