/* The pointwise scheduler: every axis flattened into one index; a thread
 * computes `vec` elements (4 when all tensors are indexed by the flat index
 * and the count divides by 4; 1 otherwise), a work-group's block of
 * block * vec elements taken in vec steps of `block` consecutive ones, so
 * that each step's loads are coalesced, each under a tail predicate (a
 * dense kernel loads all vec elements of every input first, then computes:
 * vec loads in flight per thread); tensors that are not contiguous in the flattened order are
 * indexed through the per-axis indices. On a CPU device (PoCL), a fusion
 * that is not dense (a broadcast bias, a transposed input) gives each
 * work-item a row of the innermost axis instead, as a loop: the row's
 * index needs no division and its accesses are unit-stride for the device's
 * compiler to vectorize. */
#include <stdio.h>

#include "nvf.h"

/* a tensor the dense vec > 1 kernel reads per element */
static int loaded_first(const nvf_lctx *c, int t) {
  return c->param_of[t] >= 0 && !nvf_in_seg(c, t) && !c->f->tv[t].scalar && !nvf_tv_axisless(c, t);
}

/* a tensor the segment writes to device memory */
static int stored(const nvf_lctx *c, int t) {
  return c->pl->materialize[t] && c->param_of[t] >= 0 && nvf_in_seg(c, t);
}

/* CUDA, dense, 4 per thread: every tensor read per element and every one
 * written is float32, so a thread's 4 consecutive elements move as one
 * 16-byte access (device blocks are cuMemAlloc'ed whole: 256-byte aligned,
 * and numel % 4 == 0 keeps every thread's 4 inside). */
static int vload_ok(const nvf_lctx *c, const nvf_params *p) {
  if (c->k->dialect != FBXK_CUDA || c->pl->cpu_rows || c->pl->disable_vload || p->vec != 4 || !p->dense) return 0;
  int any = 0;
  for (int t = 0; t < c->f->ntv; t++)
    if (loaded_first(c, t) || stored(c, t)) {
      if (c->f->tv[t].dtype != FBXK_F32) return 0;
      any = 1;
    }
  return any;
}

void nvf_sched_pointwise_params(nvf_lctx *c) {
  const nvf_fusion *f = c->f;
  nvf_params *p = &c->pl->seg[c->s].p;
  p->kind = NVF_SCHED_POINTWISE;
  p->numel = 1;
  for (int a = 0; a < f->naxes; a++) p->numel *= f->axis_extent[a];
  p->dense = 1;
  for (int t = 0; t < f->ntv; t++)
    if (c->param_of[t] >= 0 && !f->tv[t].scalar && !nvf_tv_axisless(c, t) && !nvf_tv_flat(c, t)) p->dense = 0;
  p->vec = p->dense && p->numel % 4 == 0 && !c->pl->disable_vec ? 4 : 1;
  p->block = 128;
  p->pw_row = p->pw_chunk = 0;
  p->vload = vload_ok(c, p);
  if (!p->dense && c->pl->cpu_rows && f->naxes >= 2 && f->axis_extent[f->naxes - 1] >= 16) {
    p->pw_row = f->axis_extent[f->naxes - 1];
    p->block = 16;
  } else if (p->dense && c->pl->cpu_rows && p->numel >= 2 * NVF_PW_CHUNK) {
    p->pw_chunk = NVF_PW_CHUNK;
    p->vec = 1;
    p->block = 16;
  }
  int64_t threads = p->pw_row     ? p->numel / p->pw_row
                    : p->pw_chunk ? (p->numel + p->pw_chunk - 1) / p->pw_chunk
                                  : (p->numel + p->vec - 1) / p->vec;
  p->groups = (threads + p->block - 1) / p->block;
}

/* the segment's materialized values, stored at the current index */
static void store_outputs(nvf_lctx *c) {
  const nvf_segment *sg = &c->pl->seg[c->s];
  for (int i = 0; i < sg->nexprs; i++) {
    int t = c->f->ex[sg->exprs[i]].out;
    if (c->pl->materialize[t]) nvf_emit_store(c, t);
  }
}

/* Before a CPU device's element loop (OpenCL C): 16 lanes asked of
 * clang's loop vectorizer (PoCL). Left to its cost model, LLVM on an
 * AVX-512 CPU took 8 lanes with a scalar remainder; with the hint GELU's
 * chunk loop runs on whole 16-float registers (fusebox bench of GELU tanh
 * [4096, 1024], 2 threads: 2.3-2.8 ms without, 1.5-1.6 with). The loop is
 * unit-stride and has no reduction, so the lanes compute each element's
 * very operations: the same bits. Other compilers ignore the pragma. */
static void cpu_loop_hint(nvf_kernel_ir *k) {
  if (k->dialect == FBXK_OPENCL) nvf_kir_stmt(k, "#pragma clang loop vectorize_width(16)");
}

/* a row of the innermost axis per work-item */
static fbxp_status *lower_rows(nvf_lctx *c, const nvf_params *p) {
  nvf_kernel_ir *k = c->k;
  int last = c->f->naxes - 1;
  char cond[64], len[24];
  nvf_kir_stmt(k, "const int64_t row = (int64_t)(%s);", nvf_idx(c, 0));
  snprintf(cond, sizeof cond, "row < %lld", (long long)(p->numel / p->pw_row));
  nvf_kir_add(k, NVF_K_IF, cond, NULL, NULL, NULL);
  nvf_emit_axes(c, (1u << last) - 1, "row");
  snprintf(len, sizeof len, "%lld", (long long)p->pw_row);
  cpu_loop_hint(k);
  nvf_kir_add(k, NVF_K_FOR, "j", "0", len, "1");
  c->scope = 2;
  nvf_emit_axes(c, 1u << last, "j");
  store_outputs(c);
  nvf_kir_close(k);
  nvf_scope_exit(c);
  c->scope = 1;
  nvf_kir_close(k);
  return NULL;
}

/* a chunk of the flat index per work-item (dense) */
static fbxp_status *lower_chunks(nvf_lctx *c, const nvf_params *p) {
  nvf_kernel_ir *k = c->k;
  nvf_kir_stmt(k, "const int64_t base = (int64_t)(%s) * %lld;", nvf_idx(c, 0), (long long)p->pw_chunk);
  nvf_kir_stmt(k, "const int64_t count = %lld - base < %lld ? %lld - base : %lld;", (long long)p->numel,
               (long long)p->pw_chunk, (long long)p->numel, (long long)p->pw_chunk);
  cpu_loop_hint(k);
  nvf_kir_add(k, NVF_K_FOR, "j", "0", "count", "1");
  c->scope = 2;
  nvf_kir_stmt(k, "const int64_t lin = base + j;");
  c->flat = "lin";
  store_outputs(c);
  nvf_kir_close(k);
  nvf_scope_exit(c);
  c->scope = 1;
  return NULL;
}

/* Every element a thread reads, loaded before any is computed: vec loads
 * in flight per thread, not one (a GPU hides its memory latency with the
 * loads in flight: GELU's one input read one element at a time, each
 * behind the previous one's tanh and store, reached 0.42 of the copy
 * bandwidth on an H200). The values wait in registers (arrays of vec
 * elements indexed by the unrolled u). */
static void loads_first(nvf_lctx *c, const nvf_params *p, const char *end) {
  nvf_kernel_ir *k = c->k;
  fbxk_dialect d = k->dialect;
  int any = 0;
  for (int t = 0; t < c->f->ntv; t++)
    if (loaded_first(c, t)) {
      nvf_kir_stmt(k, "%s a%d[%d];", fbxk_compute_type(c->f->tv[t].dtype, d), t, p->vec);
      any = 1;
    }
  if (!any) return;
  nvf_kir_add(k, NVF_K_FOR, "u", "0", end, "1");
  nvf_kir_stmt(k, "const int64_t lin = base + u * %d;", p->block);
  char cond[64];
  snprintf(cond, sizeof cond, "lin < %lld", (long long)p->numel);
  nvf_kir_add(k, NVF_K_IF, cond, NULL, NULL, NULL);
  for (int t = 0; t < c->f->ntv; t++) {
    if (!loaded_first(c, t)) continue;
    char a[64];
    snprintf(a, sizeof a, "%s[lin]", k->pname[c->param_of[t]]);
    fbxk_buf b = {0};
    fbxk_print_load(&b, c->f->tv[t].dtype, a, d);
    char *s = fbxk_take(&b);
    if (!s) k->oom = 1;
    else nvf_kir_stmt(k, "a%d[u] = %s;", t, s);
    fbxk_free(s);
  }
  nvf_kir_close(k);
  nvf_kir_close(k);
}

/* 4 consecutive elements per thread, each tensor read in one 16-byte load
 * and written in one 16-byte store (the elements computed one by one in
 * between, from register arrays): a quarter of the memory instructions of
 * the 4 strided loads below, as nvFuser's vectorized pointwise kernels */
static fbxp_status *lower_vload(nvf_lctx *c) {
  const nvf_params *p = &c->pl->seg[c->s].p;
  nvf_kernel_ir *k = c->k;
  char cond[64];
  nvf_kir_stmt(k, "const int64_t base = (int64_t)(%s) * 4;", nvf_idx(c, 0));
  snprintf(cond, sizeof cond, "base < %lld", (long long)p->numel);
  nvf_kir_add(k, NVF_K_IF, cond, NULL, NULL, NULL);
  for (int t = 0; t < c->f->ntv; t++) {
    if (loaded_first(c, t)) {
      const char *pn = k->pname[c->param_of[t]];
      nvf_kir_stmt(k, "const float4 w%d = *(const float4 *)(%s + base);", t, pn);
      nvf_kir_stmt(k, "const float a%d[4] = {w%d.x, w%d.y, w%d.z, w%d.w};", t, t, t, t, t);
    }
    if (stored(c, t)) nvf_kir_stmt(k, "float o%d[4];", t);
  }
  c->scope = 2;
  nvf_kir_stmt(k, "#pragma unroll");
  nvf_kir_add(k, NVF_K_FOR, "u", "0", "4", "1");
  nvf_kir_stmt(k, "const int64_t lin = base + u;");
  c->flat = "lin";
  for (int t = 0; t < c->f->ntv; t++)
    if (loaded_first(c, t)) {
      snprintf(c->names[t], sizeof c->names[t], "a%d[u]", t);
      c->avail[t] = 2;
    }
  const nvf_segment *sg = &c->pl->seg[c->s];
  for (int i = 0; i < sg->nexprs; i++) {
    int t = c->f->ex[sg->exprs[i]].out;
    if (!stored(c, t)) continue;
    const char *v = nvf_emit_value(c, t);
    nvf_kir_stmt(k, "o%d[u] = (float)(%s);", t, v);
  }
  nvf_kir_close(k);
  nvf_scope_exit(c);
  c->scope = 1;
  for (int i = 0; i < sg->nexprs; i++) {
    int t = c->f->ex[sg->exprs[i]].out;
    if (stored(c, t))
      nvf_kir_stmt(k, "*(float4 *)(%s + base) = make_float4(o%d[0], o%d[1], o%d[2], o%d[3]);",
                   k->pname[c->param_of[t]], t, t, t, t);
  }
  nvf_kir_close(k);
  return NULL;
}

fbxp_status *nvf_sched_pointwise_lower(nvf_lctx *c) {
  const nvf_params *p = &c->pl->seg[c->s].p;
  nvf_kernel_ir *k = c->k;
  if (p->pw_row) return lower_rows(c, p);
  if (p->pw_chunk) return lower_chunks(c, p);
  if (p->vload) return lower_vload(c);
  c->scope = 2;
  if (p->vec > 1) {
    /* a work-group's block * vec elements, element u * block + thread of
     * each step u: at every step the threads of a warp touch consecutive
     * elements (coalesced on a GPU) */
    char end[16];
    snprintf(end, sizeof end, "%d", p->vec);
    nvf_kir_stmt(k, "const int64_t base = (int64_t)(%s) * %d + (int64_t)(%s);", nvf_idx(c, 2), p->block * p->vec,
                 nvf_idx(c, 1));
    if (p->dense) loads_first(c, p, end);
    nvf_kir_add(k, NVF_K_FOR, "u", "0", end, "1");
    nvf_kir_stmt(k, "const int64_t lin = base + u * %d;", p->block);
  } else {
    nvf_kir_stmt(k, "const int64_t base = (int64_t)(%s);", nvf_idx(c, 0));
    nvf_kir_stmt(k, "const int64_t lin = base;");
  }
  char cond[64];
  snprintf(cond, sizeof cond, "lin < %lld", (long long)p->numel);
  nvf_kir_add(k, NVF_K_IF, cond, NULL, NULL, NULL);
  if (p->dense) c->flat = "lin";
  else nvf_emit_axes(c, (1u << c->f->naxes) - 1, "lin");
  for (int t = 0; t < c->f->ntv && p->vec > 1 && p->dense; t++)
    if (loaded_first(c, t)) {
      snprintf(c->names[t], sizeof c->names[t], "a%d[u]", t);
      c->avail[t] = 2;
    }
  store_outputs(c);
  nvf_kir_close(k);
  if (p->vec > 1) nvf_kir_close(k);
  nvf_scope_exit(c);
  c->scope = 1;
  return NULL;
}
