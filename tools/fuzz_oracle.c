/* The oracle of `fusebox fuzz`: one case against `none`, in a child process.
 * See tools/fuzz.h.
 *
 * The child parses the case's IR, makes its inputs, and runs:
 *   1. a `none` executor twice (profiling run, then the optimized graph):
 *      the reference; if none fails the case is INVALID (inputs the ops
 *      reject; the generator does not model every rule);
 *   2. the fuser with one profiling run, three runs: runs 2 and 3 (the
 *      compiled graph, then a warm run) are compared;
 *   3. the fuser with FUSEBOX_PROFILING_RUNS=0 (optimized from the first
 *      run), two runs, both compared;
 *   4. with backward: forward + backward (output gradients of ones for
 *      floating outputs) under none and under the fuser, three times, the
 *      gradients of runs 2 and 3 compared.
 * The parent never runs a graph, so every case starts from the same state
 * and a crash or hang takes only its child (which runs kernels serially when
 * the parent's thread pool already started: base/parallel.h).
 *
 * Tolerances: per output dtype, PyTorch's test defaults (float32 1e-5 rtol,
 * float16 1e-3, bfloat16 1e-2, float64 1e-12), at least the loosest of
 * those among the dtypes of every value in the graph (a float64 result of
 * float32 math is only as exact as float32), scaled by what the ops
 * in the case may legitimately reorder or approximate: x(1 + 2 per
 * transcendental op + 4 per reduction + 6 per composite op (softmax,
 * layer_norm, norm)), atol = rtol; integer and bool outputs exact; NaN
 * positions and infinities must match (fbx_cli_allclose).
 *
 * Conditioning: a floating value outside that tolerance gets a second look.
 * A fuser that sums in another order (or rounds an intermediate once more)
 * computes, by backward error analysis, the exact result of inputs moved by
 * a few units of roundoff; where the graph amplifies such a move (sin of a
 * mean of values near 65504, a difference of two large sums) the reference
 * itself is only that precise. So `none` runs again four times: on the
 * inputs scaled by (1 + 4u) and by (1 +- 4u) with a fixed pseudo-random
 * sign per element (u: the unit roundoff of each floating input's dtype),
 * and on the original inputs with every floating op result scaled by
 * (1 + 4u) and by (1 - 4u) (fbx_interp_set_perturbation: the rounding of
 * an intermediate, such as cos near 1 before a log, that no input move
 * reaches); an element passes when |got - want| <= atol + rtol |want| +
 * 2 * spread, spread being the largest |perturbed - want| there (unbounded
 * where a perturbed run is not finite). NaN positions and infinities still match exactly; integer and
 * bool values are never perturbed or excused. A planted bug (a wrong
 * broadcast, a dropped element) moves well-conditioned elements far beyond
 * this spread and is still found (test_cli_fuzz). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "fuzz.h"
#include "inputs.h"
#include "ir/text.h"

const char *fz_kind_name(fz_kind k) {
  static const char *const N[] = {"ok", "invalid", "mismatch", "grad-mismatch", "fuser-error", "crash", "timeout"};
  return k >= 0 && k < FZ_KIND_COUNT ? N[k] : "?";
}

/* perturbed references: inputs x (1 + 4u), x (1 +- 4u), op results x (1 + 4u), x (1 - 4u) */
#define FZ_NALT 4

typedef struct child {
  const fz_oracle_opts *o;
  fbx_graph *g;
  fbx_ivalue in[FZ_MAX_IN];
  int nin, nout, nflat;
  double factor;
  double floor_tol; /* the loosest dtype tolerance among the graph's values */
  int64_t launches;
  /* the reference on perturbed inputs (see the top), made on first need:
   * forward outputs, and input gradients */
  int alt_fwd_state, alt_grad_state; /* 0 not made, 1 made, -1 failed */
  fbx_ivalue alt_fwd[FZ_NALT][4];
  fbx_ivalue alt_grad[FZ_NALT][FZ_MAX_IN];
} child;

#define MAX_FLAT 64

double fz_dtype_tolerance(fbx_dtype dt) {
  return dt == FBX_DTYPE_FLOAT16 ? 1e-3 : dt == FBX_DTYPE_BFLOAT16 ? 1e-2 : dt == FBX_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
}

static void tol_for(fbx_dtype dt, double floor_tol, double factor, double *rtol, double *atol) {
  double r = fz_dtype_tolerance(dt);
  if (r < floor_tol) r = floor_tol;
  *rtol = r * factor;
  *atol = r * factor;
}

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

static fbx_status *reference_outputs(child *ch, const fbx_ivalue *in, fbx_ivalue *out);
static fbx_status *reference_grads(child *ch, const fbx_ivalue *in, fbx_ivalue *grads);

/* The unit roundoff of a floating dtype. */
static double unit_roundoff(fbx_dtype dt) {
  return dt == FBX_DTYPE_FLOAT64 ? 0x1p-53 : dt == FBX_DTYPE_FLOAT16 ? 0x1p-11 : dt == FBX_DTYPE_BFLOAT16 ? 0x1p-8 : 0x1p-24;
}

/* ch->in with every floating tensor's elements scaled by (1 + 4u) (variant
 * 0) or (1 +- 4u), the sign a hash of the element's index (variant 1). */
static fbx_status *perturbed_inputs(const child *ch, int variant, fbx_ivalue *out) {
  fbx_status *st = NULL;
  for (int i = 0; i < ch->nin; i++) out[i] = fbx_iv_none();
  for (int i = 0; i < ch->nin && !st; i++) {
    const fbx_ivalue *v = &ch->in[i];
    if (v->kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(v->u.t->dtype)) {
      out[i] = *v;
      fbx_iv_retain(v);
      continue;
    }
    fbx_tensor *d = NULL, *t = NULL;
    if ((st = fbx_tensor_clone_as(&d, v->u.t, FBX_DTYPE_FLOAT64))) break;
    double delta = 4 * unit_roundoff(v->u.t->dtype);
    double *p = d->data;
    for (int64_t e = 0; e < d->numel; e++) {
      uint64_t h = ((uint64_t)e + 1) * 0x9E3779B97F4A7C15ull;
      bool down = variant == 1 && ((h >> 61) & 1);
      p[e] *= down ? 1 - delta : 1 + delta;
    }
    st = fbx_tensor_clone_as(&t, d, v->u.t->dtype);
    fbx_tensor_release(d);
    if (!st) out[i] = fbx_iv_tensor(t);
  }
  if (st) release_all(out, ch->nin);
  return st;
}

/* Makes the perturbed references for the forward outputs (grad_input < 0)
 * or the input gradients; false if a perturbed run failed. */
static bool ensure_alts(child *ch, int grad_input) {
  int *state = grad_input < 0 ? &ch->alt_fwd_state : &ch->alt_grad_state;
  if (*state) return *state > 0;
  *state = -1;
  for (int k = 0; k < FZ_NALT; k++) {
    fbx_ivalue in[FZ_MAX_IN];
    fbx_status *st = k < 2 ? perturbed_inputs(ch, k, in) : NULL;
    if (!st) {
      const fbx_ivalue *use = k < 2 ? in : ch->in;
      if (k >= 2) fbx_interp_set_perturbation(k == 2 ? 4 : -4);
      st = grad_input < 0 ? reference_outputs(ch, use, ch->alt_fwd[k]) : reference_grads(ch, use, ch->alt_grad[k]);
      fbx_interp_set_perturbation(0);
      if (k < 2) release_all(in, ch->nin);
    }
    if (st) {
      fbx_status_free(st);
      for (int j = 0; j < k; j++) release_all(grad_input < 0 ? ch->alt_fwd[j] : ch->alt_grad[j], grad_input < 0 ? ch->nout : ch->nin);
      return false;
    }
  }
  *state = 1;
  return true;
}

/* Element by element: NaN positions and infinities equal, and |g - w| within
 * atol + rtol |w| + 2 * the perturbed references' spread. */
static bool within_spread(const fbx_tensor *got, const fbx_tensor *want, const fbx_tensor *const alt[FZ_NALT],
                          double rtol, double atol, fbx_strbuf *why) {
  fbx_tensor *t[2 + FZ_NALT] = {0};
  const fbx_tensor *src[2 + FZ_NALT] = {got, want};
  for (int k = 0; k < FZ_NALT; k++) src[2 + k] = alt[k];
  bool ok = true;
  for (int k = 0; k < 2 + FZ_NALT && ok; k++) {
    fbx_status *st = fbx_tensor_clone_as(&t[k], src[k], FBX_DTYPE_FLOAT64);
    if (st) {
      fbx_status_free(st);
      ok = false;
    } else if (t[k]->ndim != want->ndim || memcmp(t[k]->sizes, want->sizes, sizeof(int64_t) * (size_t)want->ndim)) {
      ok = false;
    }
  }
  if (!ok) fbx_strbuf_printf(why, "; the perturbed references could not be compared");
  const double *g = ok ? t[0]->data : NULL, *w = ok ? t[1]->data : NULL;
  for (int64_t e = 0; ok && e < t[1]->numel; e++) {
    if (isnan(g[e]) || isnan(w[e]) || isinf(g[e]) || isinf(w[e])) continue; /* allclose's exact checks */
    double spread = 0;
    for (int k = 0; k < FZ_NALT; k++) {
      double a = ((const double *)t[2 + k]->data)[e];
      double d = isfinite(a) ? fabs(a - w[e]) : INFINITY;
      if (d > spread) spread = d;
    }
    if (fabs(g[e] - w[e]) > atol + rtol * fabs(w[e]) + 2 * spread) {
      fbx_strbuf_printf(why, "; element %lld also beyond the spread %.3g of none with inputs or op results moved by 4 units of roundoff",
                        (long long)e, spread);
      ok = false;
    }
  }
  for (int k = 0; k < 2 + FZ_NALT; k++) fbx_tensor_release(t[k]);
  return ok;
}

/* got/want flattened, compared one by one with their dtype's tolerance; a
 * floating value outside it is checked against the reference's spread
 * under perturbed inputs and op results (grad_input < 0: forward outputs,
 * else that input's gradient). */
static bool compare(child *ch, const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, int grad_input,
                    const char *what, fbx_strbuf *why) {
  fbx_ivalue fg[MAX_FLAT], fw[MAX_FLAT];
  int a = fbx_cli_flatten(got, ngot, fg, MAX_FLAT), b = fbx_cli_flatten(want, nwant, fw, MAX_FLAT);
  if (a != b || a > MAX_FLAT) {
    fbx_strbuf_printf(why, "%s: %d values, none gave %d", what, a, b);
    return false;
  }
  for (int i = 0; i < a; i++) {
    double rtol = 0, atol = 0;
    if (fw[i].kind == FBX_IV_TENSOR) tol_for(fw[i].u.t->dtype, ch->floor_tol, ch->factor, &rtol, &atol);
    fbx_strbuf w = {0};
    if (fbx_cli_allclose(&fg[i], 1, &fw[i], 1, rtol, atol, &w)) {
      fbx_strbuf_free(&w);
      continue;
    }
    /* the exact checks (NaN, infinities, shapes, dtypes) pass with an unbounded tolerance */
    bool floating = fw[i].kind == FBX_IV_TENSOR && fg[i].kind == FBX_IV_TENSOR &&
                    fbx_dtype_is_floating(fw[i].u.t->dtype) && fbx_dtype_is_floating(fg[i].u.t->dtype);
    fbx_strbuf ignored = {0};
    bool excusable = floating && fbx_cli_allclose(&fg[i], 1, &fw[i], 1, 1e300, 1e300, &ignored);
    fbx_strbuf_free(&ignored);
    if (excusable && ensure_alts(ch, grad_input)) {
      fbx_ivalue fa[FZ_NALT][MAX_FLAT];
      const fbx_tensor *alt[FZ_NALT] = {NULL};
      bool all = true;
      for (int k = 0; k < FZ_NALT; k++) {
        int n = grad_input < 0 ? fbx_cli_flatten(ch->alt_fwd[k], ch->nout, fa[k], MAX_FLAT)
                               : fbx_cli_flatten(&ch->alt_grad[k][grad_input], 1, fa[k], MAX_FLAT);
        if (n == a && fa[k][i].kind == FBX_IV_TENSOR) alt[k] = fa[k][i].u.t;
        else all = false;
      }
      if (all && within_spread(fg[i].u.t, fw[i].u.t, alt, rtol, atol, &w)) {
        fbx_strbuf_free(&w);
        continue;
      }
    }
    if (a > 1) fbx_strbuf_printf(why, "%s (value %d of %d): %s", what, i, a, w.data ? w.data : "differs");
    else fbx_strbuf_printf(why, "%s: %s", what, w.data ? w.data : "differs");
    fbx_strbuf_free(&w);
    return false;
  }
  return true;
}

static fbx_status *make_executor(child *ch, bool fused, int profiling, fbx_executor **ex) {
  fbx_executor_opts eo = {.struct_size = sizeof eo, .fuser = "none", .profiling_runs = profiling};
  if (fused && ch->o->handle) eo.fuser_handle = ch->o->handle;
  else if (fused) eo.fuser = ch->o->fuser;
  return fbx_executor_create(ex, ch->g, &eo);
}

static void add_launches(child *ch, fbx_executor *ex) {
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ch->launches += s.kernel_launches + s.backward_kernel_launches;
}

/* Forward runs: `runs` runs, the ones from `first` on compared with want. */
static fz_kind forward(child *ch, int profiling, int runs, int first, const fbx_ivalue *want, const char *mode,
                       fbx_strbuf *why) {
  fbx_executor *ex = NULL;
  fbx_status *st = make_executor(ch, true, profiling, &ex);
  fz_kind k = FZ_OK;
  if (st) {
    fbx_strbuf_printf(why, "%s: executor: %s", mode, fbx_status_message(st));
    fbx_status_free(st);
    return FZ_ERROR;
  }
  fbx_ivalue out[4] = {0};
  for (int r = 0; r < runs && k == FZ_OK; r++) {
    release_all(out, ch->nout);
    if ((st = fbx_executor_run_values(ex, ch->in, ch->nin, out, ch->nout, 0))) {
      fbx_strbuf_printf(why, "%s run %d: %s", mode, r + 1, fbx_status_message(st));
      fbx_status_free(st);
      k = FZ_ERROR;
    } else if (r >= first) {
      char what[96];
      snprintf(what, sizeof what, "%s run %d, output", mode, r + 1);
      if (!compare(ch, out, ch->nout, want, ch->nout, -1, what, why)) k = FZ_MISMATCH;
    }
  }
  release_all(out, ch->nout);
  add_launches(ch, ex);
  fbx_executor_destroy(ex);
  return k;
}

/* Forward + backward `runs` times (at most 3); run r's input gradients in grads[r]. */
static fbx_status *grad_runs(child *ch, fbx_executor *ex, const fbx_ivalue *in, int runs, fbx_ivalue grads[][FZ_MAX_IN]) {
  fbx_status *st = NULL;
  for (int r = 0; r < runs && !st; r++) {
    fbx_ivalue out[4] = {0}, flat[MAX_FLAT], gout[MAX_FLAT];
    fbx_grad_handle *h = NULL;
    st = fbx_executor_forward_values(ex, in, ch->nin, NULL, out, ch->nout, 0, &h);
    int n = st ? 0 : fbx_cli_flatten(out, ch->nout, flat, MAX_FLAT);
    if (n > MAX_FLAT) {
      st = fbx_status_new(FBX_ERR_INVALID_ARG, "too many outputs");
      n = 0;
    }
    for (int i = 0; i < n; i++) gout[i] = fbx_iv_none();
    for (int i = 0; i < n && !st; i++) {
      if (flat[i].kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(flat[i].u.t->dtype)) continue;
      fbx_tensor *d = NULL, *t = NULL;
      if ((st = fbx_tensor_empty(&d, FBX_DTYPE_FLOAT64, flat[i].u.t->ndim, flat[i].u.t->sizes))) break;
      for (int64_t e = 0; e < d->numel; e++) ((double *)d->data)[e] = 1.0;
      st = fbx_tensor_clone_as(&t, d, flat[i].u.t->dtype);
      fbx_tensor_release(d);
      if (!st) gout[i] = fbx_iv_tensor(t);
    }
    for (int i = 0; i < ch->nin; i++) grads[r][i] = fbx_iv_none();
    if (!st) st = fbx_executor_backward_values(h, gout, n, grads[r], ch->nin);
    for (int i = 0; i < n; i++) fbx_iv_release(&gout[i]);
    fbx_grad_free(h);
    release_all(out, ch->nout);
  }
  return st;
}

/* none after its profiling run, on `in`: the forward outputs. */
static fbx_status *reference_outputs(child *ch, const fbx_ivalue *in, fbx_ivalue *out) {
  fbx_executor *ref = NULL;
  for (int i = 0; i < ch->nout; i++) out[i] = fbx_iv_none();
  fbx_status *st = make_executor(ch, false, 1, &ref);
  for (int r = 0; r < 2 && !st; r++) {
    release_all(out, ch->nout);
    st = fbx_executor_run_values(ref, in, ch->nin, out, ch->nout, 0);
  }
  fbx_executor_destroy(ref);
  if (st) release_all(out, ch->nout);
  return st;
}

/* none's input gradients on `in` (its second forward + backward). */
static fbx_status *reference_grads(child *ch, const fbx_ivalue *in, fbx_ivalue *grads) {
  fbx_executor *ref = NULL;
  fbx_ivalue g[2][FZ_MAX_IN];
  memset(g, 0, sizeof g);
  for (int i = 0; i < ch->nin; i++) grads[i] = fbx_iv_none();
  fbx_status *st = make_executor(ch, false, 1, &ref);
  if (!st) st = grad_runs(ch, ref, in, 2, g);
  fbx_executor_destroy(ref);
  release_all(g[0], ch->nin);
  if (st) release_all(g[1], ch->nin);
  else memcpy(grads, g[1], sizeof(fbx_ivalue) * (size_t)ch->nin);
  return st;
}

static fz_kind backward(child *ch, fbx_strbuf *why) {
  fbx_executor *ref = NULL, *ex = NULL;
  fbx_ivalue want[3][FZ_MAX_IN], got[3][FZ_MAX_IN];
  memset(want, 0, sizeof want);
  memset(got, 0, sizeof got);
  fz_kind k = FZ_OK;
  fbx_status *st = make_executor(ch, false, 1, &ref);
  if (!st) st = grad_runs(ch, ref, ch->in, 2, want);
  if (st) { /* none cannot differentiate it (no formula, an in-place op on a leaf): not a finding */
    fbx_status_free(st);
    k = FZ_INVALID;
  }
  if (k == FZ_OK && !(st = make_executor(ch, true, 1, &ex))) st = grad_runs(ch, ex, ch->in, 3, got);
  if (k == FZ_OK && st) {
    fbx_strbuf_printf(why, "backward: %s", fbx_status_message(st));
    fbx_status_free(st);
    k = FZ_ERROR;
  }
  for (int r = 1; r < 3 && k == FZ_OK; r++)
    for (int i = 0; i < ch->nin && k == FZ_OK; i++) {
      char what[64];
      snprintf(what, sizeof what, "gradient of input %d, run %d", i, r + 1);
      if (want[1][i].kind != got[r][i].kind) {
        fbx_strbuf_printf(why, "%s: defined under one executor only", what);
        k = FZ_GRAD_MISMATCH;
      } else if (want[1][i].kind == FBX_IV_TENSOR && !compare(ch, &got[r][i], 1, &want[1][i], 1, i, what, why)) {
        k = FZ_GRAD_MISMATCH;
      }
    }
  if (ex) add_launches(ch, ex);
  for (int r = 0; r < 3; r++) {
    release_all(want[r], ch->nin);
    release_all(got[r], ch->nin);
  }
  fbx_executor_destroy(ex);
  fbx_executor_destroy(ref);
  return k == FZ_INVALID ? FZ_OK : k;
}

static fz_kind child_main(const char *text, const fbx_ivalue *in, int nin, double floor_tol, const fz_oracle_opts *o,
                          fbx_strbuf *why, int64_t *launches) {
  child ch = {.o = o, .nin = nin, .floor_tol = floor_tol};
  ch.factor = fz_text_tolerance_factor(text);
  for (int i = 0; i < nin; i++) ch.in[i] = in[i];
  fbx_status *st = fbx_graph_parse(&ch.g, text, strlen(text), "fuzz.ir");
  if (st) {
    fbx_strbuf_printf(why, "%s", fbx_status_message(st));
    fbx_status_free(st);
    return FZ_INVALID;
  }
  ch.nout = fbx_graph_noutputs(ch.g);
  fz_kind k = FZ_OK;
  /* the reference: none after its profiling run */
  fbx_ivalue want[4] = {0};
  st = reference_outputs(&ch, ch.in, want);
  if (st) {
    fbx_strbuf_printf(why, "none: %s", fbx_status_message(st));
    fbx_status_free(st);
    k = FZ_INVALID;
  }
  if (k == FZ_OK) k = forward(&ch, 1, 3, 1, want, "profiled", why);
  if (k == FZ_OK) {
    setenv("FUSEBOX_PROFILING_RUNS", "0", 1);
    k = forward(&ch, 0, 2, 0, want, "FUSEBOX_PROFILING_RUNS=0", why);
    unsetenv("FUSEBOX_PROFILING_RUNS");
  }
  if (k == FZ_OK && o->backward) k = backward(&ch, why);
  release_all(want, ch.nout);
  for (int a = 0; a < FZ_NALT; a++) {
    if (ch.alt_fwd_state > 0) release_all(ch.alt_fwd[a], ch.nout);
    if (ch.alt_grad_state > 0) release_all(ch.alt_grad[a], ch.nin);
  }
  fbx_graph_destroy(ch.g);
  *launches = ch.launches;
  return k;
}

void fz_oracle_run(const fz_case *c, const fz_oracle_opts *o, fz_result *r) {
  memset(r, 0, sizeof *r);
  char *text = fz_case_print(c);
  fbx_ivalue in[FZ_MAX_IN] = {0};
  fbx_status *st = text ? fz_case_inputs(c, in) : NULL;
  if (!text || st) {
    r->kind = FZ_INVALID;
    snprintf(r->why, sizeof r->why, "%s", st ? fbx_status_message(st) : "the case is not valid");
    fbx_status_free(st);
  } else {
    /* a float64 output computed from float32 values is as exact as float32 */
    fz_vinfo info[FZ_NODE_ID + FZ_MAX_NODES];
    double floor_tol = 0;
    fz_case_infer(c, info);
    for (int i = 0; i < c->nin + c->nnodes; i++) {
      const fz_vinfo *v = &info[i < c->nin ? i : FZ_NODE_ID + i - c->nin];
      if (fbx_dtype_is_floating(v->dt) && fz_dtype_tolerance(v->dt) > floor_tol) floor_tol = fz_dtype_tolerance(v->dt);
    }
    fz_oracle_run_graph(text, in, c->nin, floor_tol, o, r);
  }
  release_all(in, c->nin);
  fbx_free(text);
}

void fz_oracle_run_graph(const char *text, const fbx_ivalue *in, int nin, double floor_tol, const fz_oracle_opts *o,
                         fz_result *r) {
  memset(r, 0, sizeof *r);
  fflush(stdout);
  fflush(stderr);
  int fds[2];
  if (pipe(fds)) {
    r->kind = FZ_CRASH;
    snprintf(r->why, sizeof r->why, "pipe: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    r->kind = FZ_CRASH;
    snprintf(r->why, sizeof r->why, "fork: %s", strerror(errno));
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    if (o->timeout_s > 0) alarm((unsigned)o->timeout_s);
    /* the fuser's own warnings would drown the summary */
    if (!getenv("FUSEBOX_FUZZ_VERBOSE")) {
      FILE *devnull = freopen("/dev/null", "w", stderr);
      (void)devnull;
    }
    fbx_strbuf why = {0};
    int64_t launches = 0;
    fz_kind k = child_main(text, in, nin, floor_tol, o, &why, &launches);
    char head[64];
    int hn = snprintf(head, sizeof head, "%d %lld ", (int)k, (long long)launches);
    ssize_t wr = write(fds[1], head, (size_t)hn);
    const char *msg = why.data ? why.data : "";
    size_t len = strlen(msg), off = 0;
    while (wr >= 0 && off < len) {
      wr = write(fds[1], msg + off, len - off);
      if (wr > 0) off += (size_t)wr;
    }
    _exit(0);
  }
  close(fds[1]);
  fbx_strbuf msg = {0};
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    fbx_strbuf_append(&msg, buf, (size_t)n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    r->kind = sig == SIGALRM ? FZ_TIMEOUT : FZ_CRASH;
    if (sig == SIGALRM) snprintf(r->why, sizeof r->why, "timed out after %d s", o->timeout_s);
    else snprintf(r->why, sizeof r->why, "killed by signal %d (%s)", sig, strsignal(sig));
  } else if (!msg.len) {
    r->kind = FZ_CRASH;
    snprintf(r->why, sizeof r->why, "the case's process exited with status %d without a result",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    int k = 0, used = 0;
    long long l = 0;
    if (sscanf(msg.data, "%d %lld %n", &k, &l, &used) >= 2 && k >= 0 && k < FZ_KIND_COUNT) {
      r->kind = (fz_kind)k;
      r->launches = l;
      snprintf(r->why, sizeof r->why, "%s", msg.data + used);
    } else {
      r->kind = FZ_CRASH;
      snprintf(r->why, sizeof r->why, "garbled result from the case's process");
    }
  }
  fbx_strbuf_free(&msg);
}
