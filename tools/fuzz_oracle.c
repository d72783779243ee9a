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
 * transcendental op + 4 per reduction + 4 per composite op (softmax,
 * layer_norm, norm)), atol = rtol; integer and bool outputs exact; NaN
 * positions and infinities must match (fbx_cli_allclose). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "exec/executor.h"
#include "fuzz.h"
#include "inputs.h"
#include "ir/text.h"

const char *fz_kind_name(fz_kind k) {
  static const char *const N[] = {"ok", "invalid", "mismatch", "grad-mismatch", "fuser-error", "crash", "timeout"};
  return k >= 0 && k < FZ_KIND_COUNT ? N[k] : "?";
}

typedef struct child {
  const fz_oracle_opts *o;
  fbx_graph *g;
  fbx_ivalue in[FZ_MAX_IN];
  int nin, nout, nflat;
  double factor;
  double floor_tol; /* the loosest dtype tolerance among the graph's values */
  int64_t launches;
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

/* got/want flattened, compared one by one with their dtype's tolerance. */
static bool compare(const child *ch, const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, const char *what,
                    fbx_strbuf *why) {
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
    if (!fbx_cli_allclose(&fg[i], 1, &fw[i], 1, rtol, atol, &w)) {
      if (a > 1) fbx_strbuf_printf(why, "%s (value %d of %d): %s", what, i, a, w.data ? w.data : "differs");
      else fbx_strbuf_printf(why, "%s: %s", what, w.data ? w.data : "differs");
      fbx_strbuf_free(&w);
      return false;
    }
    fbx_strbuf_free(&w);
  }
  return true;
}

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
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
      if (!compare(ch, out, ch->nout, want, ch->nout, what, why)) k = FZ_MISMATCH;
    }
  }
  release_all(out, ch->nout);
  add_launches(ch, ex);
  fbx_executor_destroy(ex);
  return k;
}

/* Forward + backward `runs` times (at most 3); run r's input gradients in grads[r]. */
static fbx_status *grad_runs(child *ch, fbx_executor *ex, int runs, fbx_ivalue grads[][FZ_MAX_IN]) {
  fbx_status *st = NULL;
  for (int r = 0; r < runs && !st; r++) {
    fbx_ivalue out[4] = {0}, flat[MAX_FLAT], gout[MAX_FLAT];
    fbx_grad_handle *h = NULL;
    st = fbx_executor_forward_values(ex, ch->in, ch->nin, NULL, out, ch->nout, 0, &h);
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

static fz_kind backward(child *ch, fbx_strbuf *why) {
  fbx_executor *ref = NULL, *ex = NULL;
  fbx_ivalue want[3][FZ_MAX_IN], got[3][FZ_MAX_IN];
  memset(want, 0, sizeof want);
  memset(got, 0, sizeof got);
  fz_kind k = FZ_OK;
  fbx_status *st = make_executor(ch, false, 1, &ref);
  if (!st) st = grad_runs(ch, ref, 2, want);
  if (st) { /* none cannot differentiate it (no formula, an in-place op on a leaf): not a finding */
    fbx_status_free(st);
    k = FZ_INVALID;
  }
  if (k == FZ_OK && !(st = make_executor(ch, true, 1, &ex))) st = grad_runs(ch, ex, 3, got);
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
      } else if (want[1][i].kind == FBX_IV_TENSOR && !compare(ch, &got[r][i], 1, &want[1][i], 1, what, why)) {
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
  fbx_executor *ref = NULL;
  fbx_ivalue want[4] = {0};
  st = make_executor(&ch, false, 1, &ref);
  for (int r = 0; r < 2 && !st; r++) {
    release_all(want, ch.nout);
    st = fbx_executor_run_values(ref, ch.in, ch.nin, want, ch.nout, 0);
  }
  fbx_executor_destroy(ref);
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
