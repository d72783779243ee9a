/* The timing machinery shared by `fusebox bench` and `fusebox ab`; see benchrun.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "base/strbuf.h"
#include "benchrun.h"
#include "exec/interp.h"


typedef struct copy_ctx {
  char *dst;
  const char *src;
} copy_ctx;

static void copy_range(void *ctx, int64_t begin, int64_t end) {
  copy_ctx *c = ctx;
  memcpy(c->dst + begin, c->src + begin, (size_t)(end - begin));
}

void fbx_br_evict(const fbx_br_memcpy *m) {
  if (!m->bytes) return;
  copy_ctx c = {m->dst, m->src};
  fbx_parallel_for((int64_t)m->bytes, 4 * 32768, copy_range, &c);
}

void fbx_br_memcpy_round(fbx_br_memcpy *m, long long k) {
  double t0 = fbx_cli_now_ms();
  memcpy(m->dst, m->src, m->bytes);
  m->t1[k] = fbx_cli_now_ms() - t0;
  copy_ctx c = {m->dst, m->src};
  t0 = fbx_cli_now_ms();
  /* the grain the kernels use for float32 (32768 elements) */
  fbx_parallel_for((int64_t)m->bytes, 4 * 32768, copy_range, &c);
  m->tn[k] = fbx_cli_now_ms() - t0;
}

/* Bytes of the tensors among vals[0..n) (flattened): the sum and the largest. */
fbx_status *fbx_br_tensor_bytes(const fbx_ivalue *vals, int n, double *sum, size_t *largest) {
  int k = fbx_cli_flatten(vals, n, NULL, 0);
  fbx_ivalue *flat = fbx_calloc((size_t)k + 1, sizeof *flat);
  if (!flat) return fbx_status_nomem();
  fbx_cli_flatten(vals, n, flat, k);
  for (int i = 0; i < k; i++) {
    if (flat[i].kind != FBX_IV_TENSOR) continue;
    const fbx_tensor *t = flat[i].u.t;
    size_t b = (size_t)t->numel * fbx_tensor_elem_size(t);
    *sum += (double)b;
    if (b > *largest) *largest = b;
  }
  fbx_free(flat);
  return NULL;
}

void fbx_br_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

void fbx_br_json_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.9g", v);
  else fputs("null", f);
}


static void flatten_tuples(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < v->u.l->n; i++) flatten_tuples(&v->u.l->items[i], out, n, cap);
    return;
  }
  if (*n < cap) out[*n] = *v;
  (*n)++;
}

fbx_status *fbx_br_grad_init(fbx_br_grad *bg, const fbx_ivalue *want, int nout, int nin) {
  int n = 0;
  for (int i = 0; i < nout; i++) flatten_tuples(&want[i], NULL, &n, 0);
  bg->nflat = n;
  bg->nin = nin;
  fbx_ivalue *flat = fbx_calloc((size_t)n + 1, sizeof *flat);
  bg->gout = fbx_calloc((size_t)n + 1, sizeof *bg->gout);
  bg->gin = fbx_calloc((size_t)nin + 1, sizeof *bg->gin);
  bg->ref = fbx_calloc((size_t)nin + 1, sizeof *bg->ref);
  fbx_status *st = flat && bg->gout && bg->gin && bg->ref ? NULL : fbx_status_nomem();
  n = 0;
  for (int i = 0; i < nout && !st; i++) flatten_tuples(&want[i], flat, &n, bg->nflat);
  for (int k = 0; k < n && !st; k++) {
    const fbx_ivalue *o = &flat[k];
    if (o->kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(o->u.t->dtype)) continue;
    fbx_tensor *d = NULL, *t = NULL;
    if (!(st = fbx_tensor_empty(&d, FBX_DTYPE_FLOAT64, o->u.t->ndim, o->u.t->sizes))) {
      for (int64_t e = 0; e < d->numel; e++) ((double *)d->data)[e] = 1.0;
      st = fbx_tensor_clone_as(&t, d, o->u.t->dtype);
      fbx_tensor_release(d);
    }
    if (!st) bg->gout[k] = fbx_iv_tensor(t);
  }
  fbx_free(flat);
  return st;
}

void fbx_br_grad_free(fbx_br_grad *bg) {
  for (int k = 0; bg->gout && k < bg->nflat; k++) fbx_iv_release(&bg->gout[k]);
  for (int i = 0; bg->gin && i < bg->nin; i++) fbx_iv_release(&bg->gin[i]);
  for (int i = 0; bg->ref && i < bg->nin; i++) fbx_iv_release(&bg->ref[i]);
  fbx_free(bg->gout);
  fbx_free(bg->gin);
  fbx_free(bg->ref);
}


fbx_status *fbx_br_fresh(fbx_br_inputs *bi) {
  for (int i = 0; i < bi->nin; i++) fbx_iv_release(&bi->run[i]);
  return fbx_cli_fresh_inputs(bi->vals, bi->written, bi->nin, bi->run);
}

fbx_status *fbx_br_step(fbx_executor *ex, const fbx_br_inputs *bi, fbx_ivalue *outs, int nout, uint64_t seed,
                              fbx_br_grad *bg, fbx_ivalue *gin) {
  const fbx_ivalue *vals = bi->run;
  int nin = bi->nin;
  for (int o = 0; o < nout; o++) fbx_iv_release(&outs[o]);
  if (!bg) return fbx_executor_run_values(ex, vals, nin, outs, nout, seed);
  for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward_values(ex, vals, nin, NULL, outs, nout, seed, &h);
  if (!st) st = fbx_executor_backward_values(h, bg->gout, bg->nflat, gin, nin);
  fbx_grad_free(h);
  return st;
}

fbx_status *fbx_br_memcpy_alloc(fbx_br_memcpy *m, long long rounds) {
  m->threads = fbx_parallel_threads();
  if (!m->bytes) return NULL;
  m->src = fbx_malloc(m->bytes);
  m->dst = fbx_malloc(m->bytes);
  m->t1 = fbx_calloc((size_t)rounds, sizeof *m->t1);
  m->tn = fbx_calloc((size_t)rounds, sizeof *m->tn);
  if (!m->src || !m->dst || !m->t1 || !m->tn) return fbx_status_nomem();
  /* both buffers touched, so that no round pays for page faults */
  memset(m->src, 1, m->bytes);
  memset(m->dst, 0, m->bytes);
  return NULL;
}

void fbx_br_memcpy_finish(fbx_br_memcpy *m, long long n) {
  if (!m->bytes || n < 1) return;
  m->gbs1 = 2.0 * (double)m->bytes / (fbx_cli_median(m->t1, (int)n) * 1e-3) / 1e9;
  m->gbsn = 2.0 * (double)m->bytes / (fbx_cli_median(m->tn, (int)n) * 1e-3) / 1e9;
  m->gbs = m->gbs1 > m->gbsn ? m->gbs1 : m->gbsn;
}

void fbx_br_memcpy_free(fbx_br_memcpy *m) {
  fbx_free(m->src);
  fbx_free(m->dst);
  fbx_free(m->t1);
  fbx_free(m->tn);
  m->src = m->dst = NULL;
  m->t1 = m->tn = NULL;
}

void fbx_br_grad_errors(const fbx_br_grad *bg, bool *ok, double *max_abs, double *max_rel, char **mismatch) {
  for (int i = 0; i < bg->nin && *ok; i++) {
    const fbx_ivalue *a = &bg->gin[i], *b = &bg->ref[i];
    if (a->kind == FBX_IV_NONE && b->kind == FBX_IV_NONE) continue;
    double ea = 0, er = 0;
    fbx_strbuf why = {0};
    if (!fbx_cli_max_error(a, 1, b, 1, &ea, &er, &why)) {
      *ok = false;
      fbx_strbuf_printf(&why, " (gradient of input %d)", i);
      *mismatch = fbx_strbuf_take(&why);
    } else {
      if (ea > *max_abs) *max_abs = ea;
      if (er > *max_rel) *max_rel = er;
    }
    fbx_strbuf_free(&why);
  }
}

int fbx_br_warmup_runs(bool backward) {
  const char *env = getenv("FUSEBOX_PROFILING_RUNS");
  int prof = env && *env ? atoi(env) : 1;
  /* gradient mode: the plan's profiling, then its forward and backward executors' */
  return (backward ? 2 : 1) * (prof > 0 ? prof : 0) + 2;
}
