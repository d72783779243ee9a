/* fusebox ab SUITE|GRAPH... --fusers A,B,... [--baseline A] [--backward] [--quick] [--rounds N]
 *            [--json FILE] [--report DIR] [--markdown] [--shape DIMS] [--rtol R] [--atol A]
 * fusebox ab --compare OLD.json NEW.json [--fail-on-regression PCT] [--noise PCT] [--alpha P]
 *
 * A/B benchmarking of fusers over a suite of workloads (bench/suite). Per
 * workload: the inputs (random, sized by the manifest, or .npy files), the
 * reference interpreter's outputs (and with --backward the eager tape's
 * gradients), then per fuser two executors, each with its own fuser handle
 * (so that the fuser's in-memory kernel cache is empty): the first compiles
 * in a fresh cache directory (FUSEBOX_CACHE_DIR set to a new temporary
 * directory per workload, removed after it: compile time cold), is warmed past
 * profiling and destroyed; the second compiles the same kernels from that
 * directory (compile time from the disk cache), is warmed the same way (the
 * peak resident memory of the process is taken over these runs, after
 * resetting the high-water mark) and is the one timed.
 *
 * Timing: `rounds` rounds; in each, every fuser runs once (or, per fuser,
 * enough times back to back to take a millisecond when one run is shorter
 * and the graph writes none of its inputs; a sample is then the mean of the
 * loop), in
 * forward order in even rounds and reverse order in odd ones, and the
 * memcpy reference (benchrun.h) is timed too. Warm-up runs are not samples.
 * The median and a bootstrap 95% interval of it per fuser; the speedup
 * against the baseline fuser (median over median) with a paired bootstrap
 * interval (rounds resampled); outputs (and gradients) are compared with
 * the reference after the last round: beyond tolerance (--rtol/--atol, the
 * corpus's per-dtype defaults otherwise) the fuser is flagged WRONG and gets
 * no speedup. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ab.h"
#include "base/alloc.h"
#include "base/strbuf.h"
#include "benchrun.h"
#include "cli.h"
#include "exec/interp.h"
#include "ir/text.h"

static const char *const USAGE =
    "fusebox ab SUITE|GRAPH... --fusers A,B,... [--baseline A] [--backward] [--quick] [--rounds N] "
    "[--json FILE] [--report DIR] [--markdown]\n"
    "       fusebox ab --compare OLD.json NEW.json [--fail-on-regression PCT] [--noise PCT] [--alpha P]";

#define AB_MAX_FUSERS 16
#define AB_NBOOT 2000
#define AB_MIN_SAMPLE_MS 1.0

static void help(void) {
  printf("usage: %s\n\n"
         "Benchmarks fusers against each other on a suite of workloads: SUITE is a directory\n"
         "with a manifest.txt (bench/suite), a manifest file, or a graph (.ir) with typed or\n"
         "--shape-sized random inputs. Every (workload, fuser) is timed in interleaved rounds\n"
         "(fuser order alternating, warm-up excluded, a memcpy timed in the same rounds).\n\n"
         "  --fusers LIST     comma list of fuser names or plugin paths; `none` is the interpreter\n"
         "  --baseline A      the fuser speedups are against (default: the first of --fusers)\n"
         "  --backward        time forward + backward (workloads whose manifest says no are skipped)\n"
         "  --quick           smoke run: 5 rounds, one workload per size sweep\n"
         "  --rounds N        timed rounds (default 20; --quick 5)\n"
         "  --shape D0,D1,..  sizes of untyped inputs of graphs given directly\n"
         "  --rtol R --atol A tolerance against the reference interpreter (default per dtype:\n"
         "                    float32 1e-5/1e-6, float16 1e-3/1e-3, bfloat16 1e-2/1e-2)\n"
         "  --json FILE       every sample and figure, for --compare\n"
         "  --report DIR      DIR/index.html with SVG charts (speedup per workload with 95%%\n"
         "                    whiskers; time vs size per size sweep) and the table\n"
         "  --markdown        print the table as Markdown too\n\n"
         "Table columns: median ms per run and its 95%% interval (+-%%), speedup over the\n"
         "baseline and its 95%% interval, GB/s (bytes moved / median), kernels launched and ops\n"
         "interpreted per run (forward + backward), compile ms cold (fresh cache dir) and\n"
         "from the disk cache, peak resident MB during warm-up, largest relative error against\n"
         "the reference interpreter. WRONG: beyond tolerance (not ranked); FAILED: a run failed.\n\n"
         "--compare OLD.json NEW.json: per (workload, fuser) in both, the change of the median,\n"
         "significant when the Mann-Whitney U test gives p < --alpha (default 0.01) and the\n"
         "change is past --noise percent (default 5); --fail-on-regression PCT exits 1 when a\n"
         "significant slowdown is PCT percent or more.\n\n"
         "Exit status: 0 success, 1 a workload or fuser failed or was WRONG (or a regression),\n"
         "2 usage error or unknown fuser.\n",
         USAGE);
}

/* ---- progress ------------------------------------------------------------ */

typedef struct progress {
  bool on;
  int done, total;
} progress;

static void progress_show(progress *p, const char *what, const char *fuser) {
  if (!p->on) return;
  int width = 24, fill = p->total ? p->done * width / p->total : 0;
  char bar[32];
  for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
  bar[width] = 0;
  fprintf(stderr, "\r\033[K[%s] %d/%d %.40s %.20s", bar, p->done, p->total, what, fuser ? fuser : "");
  fflush(stderr);
}

static void progress_end(progress *p) {
  if (p->on) fprintf(stderr, "\r\033[K");
}

/* ---- peak memory --------------------------------------------------------- */

/* Reset the process's resident high-water mark (Linux: clear_refs 5). */
static void peak_reset(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) {
    fputs("5", f);
    fclose(f);
  }
}

/* VmHWM in MB, NAN where /proc says nothing. */
static double peak_mb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return NAN;
  char line[256];
  double mb = NAN;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) mb = strtod(line + 6, NULL) / 1024.0;
  fclose(f);
  return mb;
}

/* ---- one workload -------------------------------------------------------- */

typedef struct ab_slot {
  fbx_executor *ex;
  fbx_fuser *fuser;
  fbx_executor_stats before;
} ab_slot;

/* Inputs from the manifest's tokens: all .npy files, or all random. */
static fbx_status *make_inputs(const fbx_graph *g, const ab_workload *w, fbx_ivalue *vals) {
  int nnpy = 0;
  for (int i = 0; i < w->ninputs; i++) {
    size_t len = strlen(w->inputs[i]);
    nnpy += len > 4 && !strcmp(w->inputs[i] + len - 4, ".npy");
  }
  if (nnpy && nnpy != w->ninputs)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "workload %s: give every input as a .npy file or none", w->name);
  if (nnpy) return fbx_cli_gather_inputs(g, w->inputs, w->ninputs, vals);
  fbx_cli_shape shapes[64];
  if (w->ninputs > 64) return fbx_status_new(FBX_ERR_INVALID_ARG, "workload %s: more than 64 shapes", w->name);
  bool unnamed = false;
  for (int i = 0; i < w->ninputs; i++) {
    if (!fbx_cli_parse_shape(w->inputs[i], &shapes[i]))
      return fbx_status_new(FBX_ERR_INVALID_ARG, "workload %s: input '%s': expected D0,D1,..., NAME=D0,D1,... or NAME=FILE.npy",
                            w->name, w->inputs[i]);
    if (!shapes[i].name && unnamed)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "workload %s: two shapes without a name", w->name);
    unnamed |= !shapes[i].name;
  }
  return fbx_cli_random_inputs_shaped(g, 0, shapes, w->ninputs, vals);
}

static void cell_fail(ab_cell *c, const char *who, fbx_status *st) {
  c->ran = false;
  if (!c->note) {
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "%s: %s", who, fbx_status_message(st));
    c->note = fbx_strbuf_take(&b);
  }
  fbx_status_free(st);
}

static double elements_of(const fbx_ivalue *vals, int n) {
  double best = 0;
  for (int i = 0; i < n; i++)
    if (vals[i].kind == FBX_IV_TENSOR && (double)vals[i].u.t->numel > best) best = (double)vals[i].u.t->numel;
  return best;
}

/* Warm an executor: returns NULL or the failure. */
static fbx_status *warm(fbx_executor *ex, fbx_br_inputs *bi, fbx_ivalue *outs, int nout, fbx_br_grad *bg, int runs) {
  fbx_status *st = NULL;
  for (int w = 0; w < runs && !st; w++)
    if (!(st = fbx_br_fresh(bi))) st = fbx_br_step(ex, bi, outs, nout, 0, bg, bg ? bg->gin : NULL);
  return st;
}

static fbx_status *load_fuser(const char *name, fbx_fuser **out) { return fbx_cli_load_fuser(name, out); }

/* Everything about workload r with every fuser; errors of a fuser go into its cell. */
static fbx_status *run_workload(ab_run *run, ab_result *r, progress *pg) {
  const ab_workload *w = r->w;
  int nf = run->nf, rounds = run->rounds;
  fbx_graph *g = NULL;
  fbx_interp *ref = NULL;
  fbx_ivalue *vals = NULL, *want = NULL, *outs = NULL;
  bool *written = NULL;
  fbx_br_inputs bi = {0};
  fbx_br_grad bgs = {0}, *bg = NULL;
  fbx_br_memcpy mc = {0};
  fbx_executor *eager = NULL;
  ab_slot slot[AB_MAX_FUSERS];
  memset(slot, 0, sizeof slot);
  int nin = 0, nout = 0;
  fbx_status *st = NULL;
  if ((st = fbx_graph_parse_file(&g, w->graph))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  want = fbx_calloc((size_t)nout + 1, sizeof *want);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  bi.run = fbx_calloc((size_t)nin + 1, sizeof *bi.run);
  written = fbx_calloc((size_t)nin + 1, sizeof *written);
  if (!vals || !want || !outs || !bi.run || !written) {
    st = fbx_status_nomem();
    goto done;
  }
  if ((st = make_inputs(g, w, vals))) goto done;
  bi.vals = vals;
  bi.nin = nin;
  bi.written = fbx_cli_written_inputs(g, written) ? written : NULL;
  r->elements = elements_of(vals, nin);
  if ((st = fbx_interp_create(&ref, g))) goto done;
  fbx_run_opts ro = {.seed = 0};
  if ((st = fbx_br_fresh(&bi))) goto done;
  if ((st = fbx_interp_run(ref, bi.run, nin, want, &ro))) {
    st = fbx_status_wrap(st, "the reference interpreter failed");
    goto done;
  }
  double bytes = 0;
  if ((st = fbx_br_tensor_bytes(vals, nin, &bytes, &mc.bytes)) || (st = fbx_br_tensor_bytes(want, nout, &bytes, &mc.bytes)))
    goto done;
  if (run->backward) {
    bg = &bgs;
    if ((st = fbx_br_grad_init(bg, want, nout, nin))) goto done;
    fbx_executor_opts eo = {.struct_size = sizeof eo, .fuser = "none", .profiling_runs = 1};
    if ((st = fbx_executor_create(&eager, g, &eo))) goto done;
    if ((st = fbx_br_fresh(&bi))) goto done;
    if ((st = fbx_br_step(eager, &bi, outs, nout, 0, bg, bg->ref))) {
      st = fbx_status_wrap(st, "the eager tape's forward+backward failed");
      goto done;
    }
    if ((st = fbx_br_tensor_bytes(bg->gout, bg->nflat, &bytes, &mc.bytes)) ||
        (st = fbx_br_tensor_bytes(bg->ref, nin, &bytes, &mc.bytes)))
      goto done;
  }
  r->bytes = bytes;
  if ((st = fbx_br_memcpy_alloc(&mc, rounds))) goto done;
  int warmup = fbx_br_warmup_runs(run->backward);

  for (int i = 0; i < nf; i++) {
    ab_cell *c = &r->cells[i];
    c->ran = true;
    c->speedup = c->sp_lo = c->sp_hi = NAN;
    if (!(c->t = fbx_calloc((size_t)rounds, sizeof *c->t))) {
      st = fbx_status_nomem();
      goto done;
    }
    fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none"};
    fbx_status *fs = NULL;
    /* cold: a fresh handle (empty in-memory cache) compiling into the fresh cache directory */
    progress_show(pg, w->name, run->fusers[i]);
    fbx_fuser *cold = NULL;
    fbx_executor *cex = NULL;
    if ((fs = load_fuser(run->fusers[i], &cold))) {
      cell_fail(c, "loading the fuser", fs);
      continue;
    }
    xo.fuser_handle = cold;
    if (!(fs = fbx_executor_create(&cex, g, &xo))) fs = warm(cex, &bi, outs, nout, bg, warmup);
    if (!fs) {
      fbx_executor_stats s = {.struct_size = sizeof s};
      fbx_executor_stats_get(cex, &s);
      c->cold_ms = s.compile_seconds * 1e3;
      c->kernels = s.kernels_compiled;
    }
    fbx_executor_destroy(cex);
    fbx_fuser_release(cold);
    if (fs) {
      cell_fail(c, "warm-up (cold compile)", fs);
      continue;
    }
    /* the timed executor: kernels from the disk cache */
    if ((fs = load_fuser(run->fusers[i], &slot[i].fuser))) {
      cell_fail(c, "loading the fuser", fs);
      continue;
    }
    xo.fuser_handle = slot[i].fuser;
    peak_reset();
    if (!(fs = fbx_executor_create(&slot[i].ex, g, &xo))) fs = warm(slot[i].ex, &bi, outs, nout, bg, warmup);
    c->peak_mb = peak_mb();
    if (fs) {
      cell_fail(c, "warm-up", fs);
      continue;
    }
    fbx_executor_stats s = {.struct_size = sizeof s};
    fbx_executor_stats_get(slot[i].ex, &s);
    c->disk_ms = s.compile_seconds * 1e3;
    c->disk_hits = s.disk_cache_hits;
  }

  /* runs per sample, per fuser: a sample of at least AB_MIN_SAMPLE_MS */
  for (int i = 0; i < nf; i++) {
    ab_cell *c = &r->cells[i];
    c->loops = 1;
    if (!c->ran || bi.written) continue;
    double t0 = fbx_cli_now_ms();
    fbx_status *fs = fbx_br_step(slot[i].ex, &bi, outs, nout, 0, bg, bg ? bg->gin : NULL);
    double t = fbx_cli_now_ms() - t0;
    if (fs) cell_fail(c, "run", fs);
    else if (t < AB_MIN_SAMPLE_MS) c->loops = t > 0 ? (int)ceil(AB_MIN_SAMPLE_MS / t) : 1000;
    if (c->loops > 1000) c->loops = 1000;
  }

  /* the counters per run count the timed rounds only */
  for (int i = 0; i < nf; i++) {
    slot[i].before = (fbx_executor_stats){.struct_size = sizeof slot[i].before};
    if (slot[i].ex) fbx_executor_stats_get(slot[i].ex, &slot[i].before);
  }
  for (int k = 0; k < rounds; k++) {
    for (int j = 0; j < nf; j++) {
      int i = k % 2 ? nf - 1 - j : j;
      ab_cell *c = &r->cells[i];
      if (!c->ran) continue;
      double total = 0;
      fbx_status *fs = NULL;
      fbx_br_evict(&mc);
      for (int l = 0; l < c->loops && !fs; l++) {
        if (bi.written && (fs = fbx_br_fresh(&bi))) break;
        double t0 = fbx_cli_now_ms();
        fs = fbx_br_step(slot[i].ex, &bi, outs, nout, 0, bg, bg ? bg->gin : NULL);
        total += fbx_cli_now_ms() - t0;
      }
      c->t[k] = total / c->loops;
      if (fs) {
        cell_fail(c, "run", fs);
        continue;
      }
      if (k == rounds - 1) {
        fbx_strbuf why = {0};
        bool same = fbx_cli_max_error(outs, nout, want, nout, &c->max_abs, &c->max_rel, &why);
        char *mismatch = NULL;
        if (same && bg) fbx_br_grad_errors(bg, &same, &c->max_abs, &c->max_rel, &mismatch);
        if (!same) {
          c->wrong = true;
          c->note = mismatch ? mismatch : fbx_strbuf_take(&why);
          mismatch = NULL;
        } else {
          fbx_strbuf_free(&why);
          bool close = fbx_cli_allclose(outs, nout, want, nout, run->rtol, run->atol, &why);
          if (close && bg) {
            fbx_strbuf_free(&why);
            fbx_strbuf_puts(&why, "gradients (against the eager tape's): ");
            close = fbx_cli_allclose(bg->gin, nin, bg->ref, nin, run->rtol, run->atol, &why);
          }
          if (!close) {
            c->wrong = true;
            c->note = fbx_strbuf_take(&why);
          }
        }
        fbx_free(mismatch);
        fbx_strbuf_free(&why);
      }
    }
    if (mc.bytes) {
      fbx_br_memcpy_round(&mc, k);
      r->mc[k] = mc.t1[k] < mc.tn[k] ? mc.t1[k] : mc.tn[k];
    }
  }
  fbx_br_memcpy_finish(&mc, rounds);
  r->memcpy_gbs = mc.bytes ? mc.gbs : NAN;

  const ab_cell *base = &r->cells[run->baseline];
  for (int i = 0; i < nf; i++) {
    ab_cell *c = &r->cells[i];
    if (!c->ran) continue;
    fbx_executor_stats s = {.struct_size = sizeof s};
    fbx_executor_stats_get(slot[i].ex, &s);
    const fbx_executor_stats *b = &slot[i].before;
    double runs = (double)rounds * c->loops;
    c->launches = (double)(s.kernel_launches - b->kernel_launches) / runs;
    c->interp = (double)(s.interpreted_ops - b->interpreted_ops) / runs;
    c->bwd_launches = (double)(s.backward_kernel_launches - b->backward_kernel_launches) / runs;
    c->bwd_interp = (double)(s.backward_interpreted_ops - b->backward_interpreted_ops) / runs;
    c->groups = s.groups;
    c->fallbacks = s.fallbacks - b->fallbacks;
    c->median = ab_median(c->t, rounds);
    ab_boot_median(c->t, rounds, AB_NBOOT, &c->lo, &c->hi);
    c->gbs = bytes > 0 && c->median > 0 ? bytes / (c->median * 1e-3) / 1e9 : NAN;
  }
  for (int i = 0; i < nf; i++) {
    ab_cell *c = &r->cells[i];
    if (c->ran && !c->wrong && base->ran && !base->wrong)
      c->speedup = ab_boot_speedup(base->t, c->t, rounds, AB_NBOOT, &c->sp_lo, &c->sp_hi);
  }

done:
  for (int i = 0; i < nf; i++) {
    fbx_executor_destroy(slot[i].ex);
    fbx_fuser_release(slot[i].fuser);
  }
  fbx_executor_destroy(eager);
  fbx_br_grad_free(&bgs);
  fbx_br_memcpy_free(&mc);
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; bi.run && i < nin; i++) fbx_iv_release(&bi.run[i]);
  for (int i = 0; want && i < nout; i++) fbx_iv_release(&want[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  fbx_free(vals);
  fbx_free(want);
  fbx_free(outs);
  fbx_free(bi.run);
  fbx_free(written);
  fbx_interp_destroy(ref);
  fbx_graph_destroy(g);
  return st;
}

/* ---- the command --------------------------------------------------------- */

void ab_run_free(ab_run *run) {
  for (int i = 0; i < run->nw; i++) {
    ab_result *r = &run->r[i];
    for (int f = 0; r->cells && f < run->nf; f++) {
      fbx_free(r->cells[f].t);
      fbx_free(r->cells[f].note);
    }
    fbx_free(r->cells);
    fbx_free(r->mc);
    fbx_free(r->error);
  }
  fbx_free(run->r);
  for (int i = 0; i < run->nf; i++) {
    fbx_free(run->fusers[i]);
    if (run->fuser_names) fbx_free(run->fuser_names[i]);
  }
  fbx_free(run->fusers);
  fbx_free(run->fuser_names);
  fbx_free(run->suite);
  fbx_free(run->when);
  memset(run, 0, sizeof *run);
}

const char *ab_fuser_label(const ab_run *run, int i) {
  return strchr(run->fusers[i], '/') ? run->fuser_names[i] : run->fusers[i];
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

static bool parse_double(const char *s, double lo, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < lo) return false;
  *out = v;
  return true;
}

int fbx_cmd_ab(int argc, char **argv) {
  const char *fusers = NULL, *baseline = NULL, *json = NULL, *report = NULL, *shape = NULL;
  const char *cmp_old = NULL, *cmp_new = NULL;
  long long rounds = 0;
  double rtol = -1, atol = -1, fail_pct = -1, noise = 5, alpha = 0.01;
  bool backward = false, quick = false, markdown = false;
  int rc = 0, npaths = 0;
  const char **paths = fbx_calloc((size_t)argc + 1, sizeof *paths);
  if (!paths) return fbx_cli_fail("ab", fbx_status_nomem());
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(paths);
      return 0;
    } else if (!strcmp(a, "--fusers")) {
      if (!has) rc = fbx_cli_usage("ab", USAGE, "--fusers needs a comma list");
      else fusers = argv[++i];
    } else if (!strcmp(a, "--baseline")) {
      if (!has) rc = fbx_cli_usage("ab", USAGE, "--baseline needs a fuser of --fusers");
      else baseline = argv[++i];
    } else if (!strcmp(a, "--json")) {
      if (!has) rc = fbx_cli_usage("ab", USAGE, "--json needs a file name");
      else json = argv[++i];
    } else if (!strcmp(a, "--report")) {
      if (!has) rc = fbx_cli_usage("ab", USAGE, "--report needs a directory");
      else report = argv[++i];
    } else if (!strcmp(a, "--shape")) {
      if (!has) rc = fbx_cli_usage("ab", USAGE, "--shape needs D0,D1,...");
      else shape = argv[++i];
    } else if (!strcmp(a, "--rounds")) {
      if (!has || !fbx_cli_parse_int(argv[++i], 2, &rounds) || rounds > 100000)
        rc = fbx_cli_usage("ab", USAGE, "--rounds needs a count from 2 to 100000");
    } else if (!strcmp(a, "--rtol") || !strcmp(a, "--atol")) {
      if (!has || !parse_double(argv[++i], 0, a[2] == 'r' ? &rtol : &atol))
        rc = fbx_cli_usage("ab", USAGE, "%s needs a number >= 0", a);
    } else if (!strcmp(a, "--fail-on-regression")) {
      if (!has || !parse_double(argv[++i], 0, &fail_pct))
        rc = fbx_cli_usage("ab", USAGE, "--fail-on-regression needs a percentage >= 0");
    } else if (!strcmp(a, "--noise")) {
      if (!has || !parse_double(argv[++i], 0, &noise)) rc = fbx_cli_usage("ab", USAGE, "--noise needs a percentage >= 0");
    } else if (!strcmp(a, "--alpha")) {
      if (!has || !parse_double(argv[++i], 0, &alpha) || alpha <= 0 || alpha >= 1)
        rc = fbx_cli_usage("ab", USAGE, "--alpha needs a probability between 0 and 1");
    } else if (!strcmp(a, "--compare")) {
      if (i + 2 >= argc) rc = fbx_cli_usage("ab", USAGE, "--compare needs OLD.json NEW.json");
      else {
        cmp_old = argv[++i];
        cmp_new = argv[++i];
      }
    } else if (!strcmp(a, "--backward")) {
      backward = true;
    } else if (!strcmp(a, "--quick")) {
      quick = true;
    } else if (!strcmp(a, "--markdown")) {
      markdown = true;
    } else if (a[0] == '-' && a[1]) {
      rc = fbx_cli_usage("ab", USAGE, "unknown option '%s'", a);
    } else {
      paths[npaths++] = a;
    }
  }
  if (!rc && cmp_old) {
    if (npaths || fusers)
      rc = fbx_cli_usage("ab", USAGE, "--compare takes two JSON files and no suite or --fusers");
    fbx_free(paths);
    return rc ? rc : ab_compare(cmp_old, cmp_new, fail_pct, noise, alpha);
  }
  if (!rc && fail_pct >= 0) rc = fbx_cli_usage("ab", USAGE, "--fail-on-regression goes with --compare");
  if (!rc && !npaths) rc = fbx_cli_usage("ab", USAGE, "no suite or graph given (e.g. bench/suite)");
  if (!rc && !fusers) rc = fbx_cli_usage("ab", USAGE, "no --fusers given (e.g. --fusers none,legacy)");
  if (!rc && shape) {
    fbx_cli_shape sh;
    if (!fbx_cli_parse_shape(shape, &sh) || sh.name)
      rc = fbx_cli_usage("ab", USAGE, "--shape '%s': expected D0,D1,... (sizes >= 0)", shape);
  }
  if (rc) {
    fbx_free(paths);
    return rc;
  }

  ab_run run = {0};
  ab_suite suite = {0};
  progress pg = {.on = isatty(2) != 0};
  char cache_dir[64] = "";
  fbx_status *st = NULL;
  run.rounds = (int)(rounds ? rounds : quick ? 5 : 20);
  run.backward = backward;
  run.quick = quick;
  run.rtol = rtol;
  run.atol = atol;
  run.fusers = fbx_calloc(AB_MAX_FUSERS, sizeof *run.fusers);
  run.fuser_names = fbx_calloc(AB_MAX_FUSERS, sizeof *run.fuser_names);
  if (!run.fusers || !run.fuser_names) {
    rc = fbx_cli_fail("ab", fbx_status_nomem());
    goto out;
  }
  /* the fusers: each must load (and is loaded afresh per executor later) */
  {
    char *list = fbx_strdup(fusers), *save = NULL;
    if (!list) {
      rc = fbx_cli_fail("ab", fbx_status_nomem());
      goto out;
    }
    for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
      while (*tok == ' ') tok++;
      if (!*tok) continue;
      if (run.nf == AB_MAX_FUSERS) {
        rc = fbx_cli_usage("ab", USAGE, "at most %d fusers", AB_MAX_FUSERS);
        break;
      }
      for (int i = 0; i < run.nf && !rc; i++)
        if (!strcmp(run.fusers[i], tok)) rc = fbx_cli_usage("ab", USAGE, "fuser '%s' given twice", tok);
      if (rc) break;
      fbx_fuser *f = NULL;
      fbx_status *fs = fbx_cli_load_fuser(tok, &f);
      if (fs) {
        fprintf(stderr, "fusebox ab: fuser '%s' cannot be used: %s\n", tok, fbx_status_message(fs));
        fbx_status_free(fs);
        rc = 2;
        break;
      }
      run.fusers[run.nf] = fbx_strdup(tok);
      run.fuser_names[run.nf] = fbx_strdup(f ? fbx_fuser_name(f) : "none");
      fbx_fuser_release(f);
      if (!run.fusers[run.nf] || !run.fuser_names[run.nf++]) rc = fbx_cli_fail("ab", fbx_status_nomem());
    }
    fbx_free(list);
  }
  if (!rc && !run.nf) rc = fbx_cli_usage("ab", USAGE, "--fusers names no fuser");
  if (!rc && baseline) {
    run.baseline = -1;
    for (int i = 0; i < run.nf; i++)
      if (!strcmp(run.fusers[i], baseline) || !strcmp(run.fuser_names[i], baseline)) run.baseline = i;
    if (run.baseline < 0) rc = fbx_cli_usage("ab", USAGE, "--baseline '%s' is not one of --fusers", baseline);
  }
  if (rc) goto out;

  fbx_strbuf sb = {0};
  for (int i = 0; i < npaths; i++) {
    if ((st = ab_suite_add(&suite, paths[i], shape))) {
      fprintf(stderr, "fusebox ab: %s\n", fbx_status_message(st));
      fbx_status_free(st);
      fbx_strbuf_free(&sb);
      rc = 2;
      goto out;
    }
    fbx_strbuf_printf(&sb, "%s%s", i ? " " : "", paths[i]);
  }
  run.suite = fbx_strbuf_take(&sb);
  if (quick) ab_suite_quick(&suite);
  {
    time_t now = time(NULL);
    struct tm tmv;
    char buf[32];
    gmtime_r(&now, &tmv);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    run.when = fbx_strdup(buf);
  }
  run.nw = suite.n;
  run.r = fbx_calloc((size_t)suite.n + 1, sizeof *run.r);
  if (!run.r || !run.suite || !run.when) {
    rc = fbx_cli_fail("ab", fbx_status_nomem());
    goto out;
  }
  for (int i = 0; i < suite.n; i++) {
    run.r[i].w = &suite.w[i];
    run.r[i].cells = fbx_calloc((size_t)run.nf, sizeof *run.r[i].cells);
    run.r[i].mc = fbx_calloc((size_t)run.rounds, sizeof *run.r[i].mc);
    if (!run.r[i].cells || !run.r[i].mc) {
      rc = fbx_cli_fail("ab", fbx_status_nomem());
      goto out;
    }
  }

  pg.total = suite.n;
  for (int i = 0; i < suite.n; i++) {
    ab_result *r = &run.r[i];
    if (backward && !r->w->backward) {
      r->skipped = true;
      pg.done++;
      continue;
    }
    progress_show(&pg, r->w->name, NULL);
    /* compile time cold: a fresh cache directory per workload */
    const char *tmp = getenv("TMPDIR");
    snprintf(cache_dir, sizeof cache_dir, "%s/fusebox-ab-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(cache_dir)) {
      st = fbx_status_new(FBX_ERR_IO, "cannot make a cache directory %s: %s", cache_dir, strerror(errno));
      cache_dir[0] = 0;
      rc = fbx_cli_fail("ab", st);
      goto out;
    }
    setenv("FUSEBOX_CACHE_DIR", cache_dir, 1);
    fbx_status *ws = run_workload(&run, r, &pg);
    nftw(cache_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    cache_dir[0] = 0;
    if (ws) {
      r->error = fbx_strdup(fbx_status_message(ws));
      fbx_status_free(ws);
    }
    pg.done++;
  }
  progress_end(&pg);

  ab_print_table(stdout, &run);
  if (markdown) {
    printf("\n");
    ab_print_markdown(stdout, &run);
  }
  for (int i = 0; i < run.nw; i++) {
    ab_result *r = &run.r[i];
    if (r->error) {
      fprintf(stderr, "fusebox ab: %s: %s\n", r->w->name, r->error);
      rc = 1;
    }
    for (int f = 0; f < run.nf && !r->error && !r->skipped; f++)
      if (!r->cells[f].ran || r->cells[f].wrong) {
        fprintf(stderr, "fusebox ab: %s, fuser %s: %s%s\n", r->w->name, run.fusers[f],
                r->cells[f].wrong ? "outputs beyond tolerance: " : "", r->cells[f].note ? r->cells[f].note : "?");
        rc = 1;
      }
  }
  if (json) {
    if ((st = ab_write_json(json, &run))) rc = fbx_cli_fail("ab", st);
    else printf("# wrote %s\n", json);
  }
  if (report) {
    if ((st = ab_write_report(report, &run))) rc = fbx_cli_fail("ab", st);
    else printf("# wrote %s/index.html\n", report);
  }

out:
  if (cache_dir[0]) nftw(cache_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  ab_run_free(&run);
  ab_suite_free(&suite);
  fbx_free(paths);
  return rc;
}
