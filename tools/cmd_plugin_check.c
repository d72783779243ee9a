/* fusebox plugin-check PLUGIN [--isolate] [--corpus DIR] [--case NAME]... [--timeout S]
 *
 * The conformance checker for fuser plugins (fuser ABI rule 9). It loads any
 * plugin by name or path and runs, against the reference interpreter and
 * the conformance corpus (tests/corpus/cases):
 *
 *   load                   the plugin loads (entry point, ABI version, table)
 *   metadata               name, version, flags (exactly one of GUARDS_OUTSIDE
 *                          and SELF_FALLBACK, no unknown bits), devices, the
 *                          table's struct_size and ABI major
 *   lifecycle/CASE         the case's graph (default passes, value types as
 *                          observed on the case's inputs) is partitioned; every
 *                          proposal must pass the host's validation; every
 *                          accepted group is compiled for and run on the real
 *                          inputs it sees, compared with the interpreter
 *                          running the group's subgraph (the case's tolerance),
 *                          and released; the whole graph's outputs must match
 *   coverage               groups proposed, accepted, compiled, run and declined
 *                          over the corpus (printed as a `# coverage:` line); a
 *                          plugin that runs no kernel fails when the reference
 *                          legacy fuser runs kernels on the same corpus
 *   thread-safety          (plugins claiming FBXP_RUN_THREAD_SAFE) 4 threads run
 *                          each compiled kernel of the corpus at once, every
 *                          answer checked
 *   fault/wrong-shape      a kernel run on inputs of other sizes than it was
 *                          compiled for errors or declines (or is right)
 *   fault/unsupported-dtype a group compiled for int16 inputs fails cleanly or
 *                          runs correctly
 *   numeric/CASE           the case through the profiling executor with this
 *                          fuser equals PyTorch's outputs (outK.npy) within the
 *                          case's tolerance, with no kernel failing at run time
 *   unload                 kernels and the plugin are released, and it loads again
 *
 * A case the reference interpreter itself cannot run or match is skipped
 * (SKIP lines are not counted). With --isolate every test runs in a forked
 * child, so a plugin that crashes or hangs fails that test ("crashed:
 * SIGSEGV") and the checker goes on; without it a crash ends the checker
 * after a line naming the test, the plugin, the stage and the group. Output: one line per test, `PASS name`
 * or `FAIL name: reason`, then exactly `N passed, M failed`; exit 0 iff no
 * test failed. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fusebox/fuser_abi.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "cli.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "host/host.h"
#include "inputs.h"
#include "ir/text.h"
#include "passes/passes.h"

static const char *const USAGE = "fusebox plugin-check PLUGIN [--isolate] [--corpus DIR] [--case NAME]... [--timeout S] [--fuzz SECONDS]";

static void help(void) {
  printf("usage: %s\n\n"
         "Checks a fuser plugin (a name as for --fuser, or a path to its .so) against the\n"
         "reference interpreter over the conformance corpus: load, metadata, lifecycle of every\n"
         "case (partition, validation, compile/run/release of every group on real inputs),\n"
         "coverage (groups proposed, compiled, run, declined; a plugin that fuses nothing\n"
         "fails where the reference legacy fuser fuses), thread safety (when the plugin\n"
         "claims it), faults (wrong shapes, unsupported dtypes),\n"
         "numerics of every case through the executor against PyTorch's outputs, unload.\n\n"
         "  --isolate     run every test in a forked child: a crash or hang fails that test\n"
         "                and the checker goes on\n"
         "  --corpus DIR  the conformance cases (default: $FUSEBOX_CORPUS, else\n"
         "                tests/corpus/cases under the current directory, else the corpus\n"
         "                installed with fusebox (share/fusebox/corpus), else the source\n"
         "                tree of the fusebox binary's build tree, wherever that is)\n"
         "  --case NAME   only this case (repeatable)\n"
         "  --timeout S   with --isolate, a test running longer fails (default 120)\n"
         "  --fuzz S      last, `fusebox fuzz` against the plugin for S seconds (forward and\n"
         "                backward, each graph in its own process): a mismatch or crash fails\n"
         "                the `fuzz` test; its findings and minimized graphs are printed\n\n"
         "Prints `PASS name` or `FAIL name: reason` per test (SKIP for cases the reference\n"
         "itself cannot run) and closes with `N passed, M failed`. Exit status: 0 when nothing\n"
         "failed, 1 otherwise, 2 usage error.\n",
         USAGE);
}

typedef enum verdict { V_PASS, V_FAIL, V_SKIP } verdict;

typedef struct checker {
  const char *plugin;
  const char *corpus;
  char **cases;
  int ncases;
} checker;

typedef verdict (*test_fn)(const checker *c, const char *arg, fbx_strbuf *why);

#define MAX_ARGS 64
#define MAX_OUTS 256

/* ---- cases -------------------------------------------------------------------------------------- */

typedef struct tcase {
  fbx_graph *g;
  fbx_ivalue in[MAX_ARGS];
  int nin;
  double rtol, atol; /* -1: per-dtype defaults */
} tcase;

static void case_free(tcase *t) {
  for (int i = 0; i < t->nin; i++) fbx_iv_release(&t->in[i]);
  fbx_graph_destroy(t->g);
  memset(t, 0, sizeof *t);
}

static char *case_path(const checker *c, const char *name, const char *file) {
  size_t n = strlen(c->corpus) + strlen(name) + strlen(file) + 3;
  char *p = fbx_malloc(n);
  if (p) snprintf(p, n, "%s/%s/%s", c->corpus, name, file);
  return p;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fbx_strbuf b = {0};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fbx_strbuf_append(&b, buf, n);
  fclose(f);
  if (!b.data) fbx_strbuf_puts(&b, "");
  return fbx_strbuf_take(&b);
}

/* graph.ir, args (one line per input: inK.npy or a literal) and tol. */
static fbx_status *case_load(const checker *c, const char *name, tcase *t) {
  memset(t, 0, sizeof *t);
  t->rtol = t->atol = -1;
  char *p = case_path(c, name, "graph.ir");
  if (!p) return fbx_status_nomem();
  fbx_status *st = fbx_graph_parse_file(&t->g, p);
  fbx_free(p);
  if (st) return st;
  if (!(p = case_path(c, name, "args"))) return fbx_status_nomem();
  char *text = read_text(p);
  fbx_free(p);
  if (!text) return fbx_status_new(FBX_ERR_IO, "case %s has no args file", name);
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l && !st; l = strtok_r(NULL, "\n", &save)) {
    while (*l == ' ') l++;
    size_t len = strlen(l);
    while (len && (l[len - 1] == ' ' || l[len - 1] == '\r')) l[--len] = '\0';
    if (!len) continue;
    if (t->nin == MAX_ARGS) {
      st = fbx_status_new(FBX_ERR_UNSUPPORTED, "more than %d inputs", MAX_ARGS);
      break;
    }
    if (len > 4 && !strcmp(l + len - 4, ".npy")) {
      char *f = case_path(c, name, l);
      if (!f) st = fbx_status_nomem();
      else st = fbx_cli_load_value(f, &t->in[t->nin]);
      fbx_free(f);
    } else {
      st = fbx_cli_load_value(l, &t->in[t->nin]);
    }
    if (!st) t->nin++;
  }
  fbx_free(text);
  if (st) return st;
  if (!(p = case_path(c, name, "tol"))) return fbx_status_nomem();
  if ((text = read_text(p))) {
    if (sscanf(text, "%lf %lf", &t->rtol, &t->atol) != 2) t->rtol = t->atol = -1;
    fbx_free(text);
  }
  fbx_free(p);
  return NULL;
}

/* PyTorch's outputs: out0.npy, out1.npy, ... */
static fbx_status *case_golden(const checker *c, const char *name, fbx_ivalue *out, int cap, int *n) {
  *n = 0;
  for (int k = 0; k < cap; k++) {
    char f[32];
    snprintf(f, sizeof f, "out%d.npy", k);
    char *p = case_path(c, name, f);
    if (!p) return fbx_status_nomem();
    bool exists = access(p, R_OK) == 0;
    fbx_status *st = exists ? fbx_cli_load_value(p, &out[k]) : NULL;
    fbx_free(p);
    if (st) return st;
    if (!exists) break;
    (*n)++;
  }
  return NULL;
}

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

/* The reference: the interpreter on the case's graph. */
static fbx_status *run_reference(const fbx_graph *g, const fbx_ivalue *in, int nin, fbx_ivalue *out) {
  fbx_interp *it = NULL;
  FBX_TRY(fbx_interp_create(&it, g));
  fbx_run_opts o = {.seed = 0};
  fbx_status *st = fbx_interp_run(it, in, nin, out, &o);
  fbx_interp_destroy(it);
  return st;
}

/* ---- types as observed (what the executor partitions on) -------------------------------------- */

typedef struct seen {
  int state; /* 0 unseen, 1 one type, 2 several */
  fbx_dtype dtype;
  int ndim;
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
} seen;

typedef struct observed {
  seen *by_id;
  uint32_t n;
} observed;

static void see(observed *o, const fbx_value *v, const fbx_ivalue *iv) {
  if (v->id >= o->n) return;
  seen *s = &o->by_id[v->id];
  if (iv->kind != FBX_IV_TENSOR || !iv->u.t) {
    s->state = 2;
    return;
  }
  const fbx_tensor *t = iv->u.t;
  if (s->state == 0) {
    s->state = 1;
    s->dtype = t->dtype;
    s->ndim = t->ndim;
    memcpy(s->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(s->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
  } else if (s->state == 1) {
    if (s->dtype != t->dtype || s->ndim != t->ndim || memcmp(s->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim) ||
        memcmp(s->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim))
      s->state = 2;
  }
}

static void observe(void *ctx, const fbx_node *node, const fbx_ivalue *outs, int nouts) {
  for (int i = 0; i < nouts && i < node->noutputs; i++) see(ctx, node->outputs[i], &outs[i]);
}

static void refine_block(fbx_graph *g, const observed *o, fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(b); i++) {
    fbx_value *v = fbx_block_param(b, i);
    if (!v->type || v->type->kind != FBX_TYPE_TENSOR || v->id >= o->n || o->by_id[v->id].state != 1) continue;
    const seen *s = &o->by_id[v->id];
    fbx_type *t = fbx_type_tensor(g->arena, s->dtype, s->ndim, s->sizes, s->strides, 0, "cpu");
    if (t) fbx_value_set_type(v, t);
  }
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int i = 0; i < n->noutputs; i++) {
      fbx_value *v = n->outputs[i];
      if (!v->type || v->type->kind != FBX_TYPE_TENSOR || v->id >= o->n || o->by_id[v->id].state != 1) continue;
      const seen *s = &o->by_id[v->id];
      fbx_type *t = fbx_type_tensor(g->arena, s->dtype, s->ndim, s->sizes, s->strides, 0, "cpu");
      if (t) fbx_value_set_type(v, t);
    }
    for (int k = 0; k < n->nblocks; k++) refine_block(g, o, n->blocks[k]);
  }
}

/* Passes, then every tensor value typed as observed on these inputs (block
 * parameters and values that took several types keep their declared type). */
static fbx_status *prepare(fbx_graph *g, const fbx_ivalue *in, int nin) {
  FBX_TRY(fbx_pass_pipeline(g, "default"));
  observed o = {.n = g->next_value_id};
  o.by_id = fbx_calloc(o.n ? o.n : 1, sizeof *o.by_id);
  if (!o.by_id) return fbx_status_nomem();
  for (int i = 0; i < nin && i < fbx_graph_ninputs(g); i++) see(&o, fbx_graph_input(g, i), &in[i]);
  fbx_interp *it = NULL;
  fbx_status *st = fbx_interp_create(&it, g);
  fbx_ivalue out[MAX_OUTS] = {{0}};
  int nout = fbx_graph_noutputs(g);
  if (!st && nout > MAX_OUTS) st = fbx_status_new(FBX_ERR_UNSUPPORTED, "more than %d outputs", MAX_OUTS);
  if (!st) {
    fbx_run_opts ro = {.observe = observe, .observe_ctx = &o};
    st = fbx_interp_run(it, in, nin, out, &ro);
    release_all(out, nout);
  }
  fbx_interp_destroy(it);
  if (!st) refine_block(g, &o, g->block);
  fbx_free(o.by_id);
  return st;
}

/* A copy of a group's subgraph with tensor types erased, so that the
 * interpreter takes whatever inputs a test feeds the kernel. */
static void erase_block(fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(b); i++) {
    fbx_value *v = fbx_block_param(b, i);
    if (v->type && v->type->kind == FBX_TYPE_TENSOR) fbx_value_set_type(v, fbx_type_tensor_any());
  }
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int i = 0; i < n->noutputs; i++)
      if (n->outputs[i]->type && n->outputs[i]->type->kind == FBX_TYPE_TENSOR)
        fbx_value_set_type(n->outputs[i], fbx_type_tensor_any());
    for (int k = 0; k < n->nblocks; k++) erase_block(n->blocks[k]);
  }
}

static fbx_status *run_subgraph(const fbx_node *group, const fbx_ivalue *in, int nin, fbx_ivalue *out) {
  fbx_graph *sub = fbx_graph_clone(fbx_node_subgraph(group));
  if (!sub) return fbx_status_nomem();
  erase_block(sub->block);
  fbx_status *st = run_reference(sub, in, nin, out);
  fbx_graph_destroy(sub);
  return st;
}

/* ---- walking the groups of a case ---------------------------------------------------------------- */

/* Called for every fusion group a run reaches, with its inputs and the
 * reference outputs (the interpreter on its subgraph). Return a status to
 * stop (and set c->failed with the reason first). */
typedef struct walk walk;
typedef fbx_status *(*group_fn)(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, const fbx_ivalue *ref,
                                int nout);

struct walk {
  fbx_fuser *f;
  double rtol, atol;
  group_fn fn;
  void *ctx;
  int groups_run, compiled, compile_declined;
  bool failed, stop;
  bool strict; /* compile failures other than FBXP_ERR_UNSUPPORTED fail the test */
  fbx_strbuf *why;
};

static fbx_status *stop_status(void) { return fbx_status_new(FBX_ERR_INTERNAL, "plugin-check: stopped"); }

static fbx_status *on_group(void *ctx, const fbx_node *node, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs,
                            int nout) {
  walk *w = ctx;
  fbx_ivalue ref[MAX_OUTS] = {{0}};
  if (nout > MAX_OUTS) return fbx_status_new(FBX_ERR_UNSUPPORTED, "group with more than %d outputs", MAX_OUTS);
  fbx_status *st = run_subgraph(node, inputs, nin, ref);
  if (st) return fbx_status_wrap(st, "the interpreter on the group's subgraph");
  w->groups_run++;
  if (!w->stop) st = w->fn(w, node, inputs, nin, ref, nout);
  if (st) {
    release_all(ref, nout);
    return st;
  }
  for (int i = 0; i < nout; i++) outputs[i] = ref[i]; /* downstream sees exact values */
  return NULL;
}

typedef struct prepared {
  tcase t;
  fbx_graph *work;
  fbx_ivalue ref[MAX_OUTS];
  int nout;
  fbx_partition_report rep;
} prepared;

static void prepared_free(prepared *p) {
  release_all(p->ref, p->nout);
  fbx_graph_destroy(p->work);
  case_free(&p->t);
}

/* Load a case, run the reference, prepare and partition a copy. V_SKIP when
 * the reference cannot run the case. */
static verdict prepare_case(const checker *c, const char *name, fbx_fuser *f, prepared *p, fbx_strbuf *why) {
  memset(p, 0, sizeof *p);
  fbx_status *st = case_load(c, name, &p->t);
  if (st) {
    fbx_strbuf_printf(why, "cannot load the case: %s", fbx_status_message(st));
    fbx_status_free(st);
    return V_SKIP;
  }
  p->nout = fbx_graph_noutputs(p->t.g);
  if (p->nout > MAX_OUTS) {
    fbx_strbuf_puts(why, "too many outputs");
    return V_SKIP;
  }
  if ((st = run_reference(p->t.g, p->t.in, p->t.nin, p->ref))) {
    fbx_strbuf_printf(why, "the reference interpreter cannot run it: %s", fbx_status_message(st));
    fbx_status_free(st);
    return V_SKIP;
  }
  if (!(p->work = fbx_graph_clone(p->t.g))) {
    fbx_strbuf_puts(why, "out of memory");
    return V_FAIL;
  }
  if ((st = prepare(p->work, p->t.in, p->t.nin))) {
    fbx_strbuf_printf(why, "preparing the graph (passes, observed types): %s", fbx_status_message(st));
    fbx_status_free(st);
    return V_SKIP;
  }
  if ((st = fbx_fuser_partition(f, p->work, &p->rep))) {
    fbx_strbuf_printf(why, "partition failed: %s", fbx_status_message(st));
    fbx_status_free(st);
    return V_FAIL;
  }
  if (p->rep.rejected) {
    fbx_strbuf_printf(why, "%d of %d proposals rejected by the host's validation (FUSEBOX_LOG=fusion says why)",
                      p->rep.rejected, p->rep.proposed);
    return V_FAIL;
  }
  return V_PASS;
}

/* Run the partitioned copy with w->fn called on every group reached, then
 * compare its outputs with the reference. */
static verdict walk_case(prepared *p, walk *w, fbx_strbuf *why) {
  fbx_interp *it = NULL;
  fbx_ivalue out[MAX_OUTS] = {{0}};
  w->why = why;
  w->rtol = p->t.rtol;
  w->atol = p->t.atol;
  fbx_status *st = fbx_interp_create(&it, p->work);
  if (!st) {
    fbx_run_opts ro = {.run_group = on_group, .run_group_ctx = w};
    st = fbx_interp_run(it, p->t.in, p->t.nin, out, &ro);
  }
  fbx_interp_destroy(it);
  verdict v = V_PASS;
  if (w->failed) {
    v = V_FAIL;
  } else if (st) {
    fbx_strbuf_printf(why, "the partitioned graph failed to run: %s", fbx_status_message(st));
    v = V_FAIL;
  } else {
    fbx_strbuf w2 = {0};
    if (!fbx_cli_allclose(out, p->nout, p->ref, p->nout, p->t.rtol, p->t.atol, &w2)) {
      fbx_strbuf_printf(why, "the partitioned graph's outputs differ from the reference: %s", w2.data ? w2.data : "?");
      v = V_FAIL;
    }
    fbx_strbuf_free(&w2);
  }
  fbx_status_free(st);
  release_all(out, p->nout);
  return v;
}

static fbx_status *fail(walk *w, const fbx_node *node, const char *fmt, const char *msg) {
  fbx_strbuf_puts(w->why, "group");
  if (node->noutputs) fbx_strbuf_printf(w->why, " %%%s", node->outputs[0]->name);
  fbx_strbuf_puts(w->why, ": ");
  fbx_strbuf_printf(w->why, fmt, msg);
  w->failed = true;
  return stop_status();
}

static fbx_status *fail(walk *w, const fbx_node *node, const char *fmt, const char *msg);

/* Compile for these inputs; *k NULL (and no error) when the plugin declined
 * to compile with FBXP_ERR_UNSUPPORTED (the executor then runs the group
 * itself), or with w->strict off, after any clean failure. Other failures
 * (a compile error, output specs the host rejects) fail the test. The host
 * keeps the plugin's code only in the message ("... [unsupported] why"). */
static fbx_status *compile_group(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, fbx_fkernel **k) {
  *k = NULL;
  fbx_status *st = fbx_fuser_compile(w->f, node, in, nin, k);
  if (!st) {
    w->compiled++;
    return NULL;
  }
  if (fbx_status_code(st) == FBX_ERR_NOMEM) return st;
  if (w->strict && !strstr(fbx_status_message(st), "[unsupported]")) {
    fbx_status *r = fail(w, node, "compile failed: %s", fbx_status_message(st));
    fbx_status_free(st);
    return r;
  }
  w->compile_declined++;
  fbx_status_free(st);
  return NULL;
}

/* Run k and compare with ref; NULL or a stop status (w->failed set). */
static fbx_status *run_and_compare(walk *w, const fbx_node *node, fbx_fkernel *k, const fbx_ivalue *in, int nin,
                                   const fbx_ivalue *ref, int nout) {
  fbx_ivalue got[MAX_OUTS] = {{0}};
  bool declined = false;
  fbx_status *st = fbx_fkernel_run(k, in, nin, got, nout, &declined);
  if (st) {
    fbx_status *r = fail(w, node, "run failed: %s", fbx_status_message(st));
    fbx_status_free(st);
    return r;
  }
  if (declined) return NULL;
  fbx_strbuf d = {0};
  bool ok = fbx_cli_allclose(got, nout, ref, nout, w->rtol, w->atol, &d);
  release_all(got, nout);
  fbx_status *r = ok ? NULL : fail(w, node, "kernel result differs from the interpreter: %s", d.data ? d.data : "?");
  fbx_strbuf_free(&d);
  return r;
}

/* ---- the tests ------------------------------------------------------------------------------------ */

static verdict load_fuser(const checker *c, fbx_fuser **f, fbx_strbuf *why) {
  fbx_status *st = fbx_fuser_load(f, c->plugin);
  if (!st && !*f) st = fbx_status_new(FBX_ERR_INVALID_ARG, "'%s' selects no fuser", c->plugin);
  if (!st) return V_PASS;
  fbx_strbuf_printf(why, "cannot load: %s", fbx_status_message(st));
  fbx_status_free(st);
  return V_FAIL;
}

static verdict t_load(const checker *c, const char *arg, fbx_strbuf *why) {
  (void)arg;
  fbx_fuser *f = NULL;
  verdict v = load_fuser(c, &f, why);
  fbx_fuser_release(f);
  return v;
}

static bool sane_name(const char *s) {
  if (!s || !*s || strlen(s) > 64) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
          *s == '.'))
      return false;
  return true;
}

static verdict t_metadata(const checker *c, const char *arg, fbx_strbuf *why) {
  (void)arg;
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  const fbxp_plugin_api *api = fbx_fuser_api(f);
  uint32_t flags = fbx_fuser_flags(f), dev = fbx_fuser_devices(f);
  const uint32_t known_flags = FBXP_GUARDS_OUTSIDE | FBXP_SELF_FALLBACK | FBXP_RUN_THREAD_SAFE | FBXP_ACCEPTS_SYMBOLIC;
  const uint32_t known_dev = FBXP_DEVICE_CPU | FBXP_DEVICE_CUDA | FBXP_DEVICE_OPENCL;
  const char *name = fbx_fuser_name(f), *version = fbx_fuser_version(f);
  if (!sane_name(name)) fbx_strbuf_printf(why, "name '%s' is empty, long or has odd characters; ", name ? name : "");
  if (!version || !*version) fbx_strbuf_puts(why, "no version; ");
  if (!(flags & FBXP_GUARDS_OUTSIDE) == !(flags & FBXP_SELF_FALLBACK))
    fbx_strbuf_printf(why, "flags 0x%x: need exactly one of FBXP_GUARDS_OUTSIDE and FBXP_SELF_FALLBACK; ", flags);
  if (flags & ~known_flags) fbx_strbuf_printf(why, "flags 0x%x has unknown bits; ", flags);
  if (!dev) fbx_strbuf_puts(why, "devices is 0 (no device); ");
  if (dev & ~known_dev) fbx_strbuf_printf(why, "devices 0x%x has unknown bits; ", dev);
  if (!api) {
    fbx_strbuf_puts(why, "no function table; ");
  } else {
    if (api->struct_size < FBXP_SIZE_UPTO(fbxp_plugin_api, release))
      fbx_strbuf_printf(why, "struct_size %zu is smaller than the required v1.0 fields (%zu); ", api->struct_size,
                        (size_t)FBXP_SIZE_UPTO(fbxp_plugin_api, release));
    if (api->abi_major != FBXP_ABI_MAJOR)
      fbx_strbuf_printf(why, "built for ABI %u.%u, the host speaks %u.x; ", api->abi_major, api->abi_minor,
                        FBXP_ABI_MAJOR);
    if (!api->partition || !api->compile || !api->run || !api->release)
      fbx_strbuf_puts(why, "partition, compile, run or release is NULL; ");
  }
  fbx_fuser_release(f);
  if (why->len >= 2 && why->data[why->len - 2] == ';') why->data[why->len -= 2] = '\0';
  return why->len ? V_FAIL : V_PASS;
}

static fbx_status *lifecycle_group(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, const fbx_ivalue *ref,
                                   int nout) {
  fbx_fkernel *k = NULL;
  FBX_TRY(compile_group(w, node, in, nin, &k));
  if (!k) return NULL;
  fbx_status *st = run_and_compare(w, node, k, in, nin, ref, nout);
  /* the same kernel again (cached state must not leak between runs) */
  if (!st) st = run_and_compare(w, node, k, in, nin, ref, nout);
  fbx_fkernel_release(k);
  return st;
}

static verdict t_lifecycle(const checker *c, const char *name, fbx_strbuf *why) {
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  prepared p;
  verdict v = prepare_case(c, name, f, &p, why);
  if (v == V_PASS) {
    walk w = {.f = f, .fn = lifecycle_group, .strict = true};
    v = walk_case(&p, &w, why);
  }
  prepared_free(&p);
  fbx_fuser_release(f);
  return v;
}

/* ---- coverage ---------------------------------------------------------------------------------- */

/* What a fuser does with the corpus: groups proposed and accepted, compiled
 * (and answered FBXP_ERR_UNSUPPORTED or failed), kernel runs that produced
 * outputs, runs declined. */
typedef struct coverage {
  int cases, proposed, accepted, compiled, unsupported, failed, runs, declined;
} coverage;

static fbx_status *coverage_group(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, const fbx_ivalue *ref,
                                  int nout) {
  (void)ref;
  coverage *cv = w->ctx;
  fbx_fkernel *k = NULL;
  fbx_status *st = fbx_fuser_compile(w->f, node, in, nin, &k);
  if (st) {
    if (fbx_status_code(st) == FBX_ERR_NOMEM) return st;
    if (fbx_status_code(st) == FBX_ERR_UNSUPPORTED) cv->unsupported++;
    else cv->failed++;
    fbx_status_free(st);
    return NULL;
  }
  cv->compiled++;
  fbx_ivalue got[MAX_OUTS] = {{0}};
  bool declined = false;
  st = fbx_fkernel_run(k, in, nin, got, nout, &declined);
  if (!st && declined) cv->declined++;
  else if (!st) cv->runs++;
  fbx_status_free(st);
  release_all(got, nout);
  fbx_fkernel_release(k);
  return NULL;
}

static void cover(const checker *c, fbx_fuser *f, coverage *cv) {
  memset(cv, 0, sizeof *cv);
  for (int i = 0; i < c->ncases; i++) {
    fbx_strbuf why = {0};
    prepared p;
    if (prepare_case(c, c->cases[i], f, &p, &why) != V_SKIP) {
      cv->cases++;
      cv->proposed += p.rep.proposed;
      cv->accepted += p.rep.accepted;
      fbx_strbuf w2 = {0};
      walk w = {.f = f, .fn = coverage_group, .ctx = cv};
      if (p.work) walk_case(&p, &w, &w2);
      fbx_strbuf_free(&w2);
    }
    prepared_free(&p);
    fbx_strbuf_free(&why);
  }
}

/* A plugin that fuses nothing passes every lifecycle test (nothing it does
 * can be wrong); so it fails here when a reference fuser shipped with
 * fusebox (legacy) runs kernels on the same corpus. */
static verdict t_coverage(const checker *c, const char *arg, fbx_strbuf *why) {
  (void)arg;
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  coverage cv, ref = {0};
  cover(c, f, &cv);
  fbx_fuser_release(f);
  printf("# coverage: %d cases: %d groups proposed, %d accepted, %d compiled (%d unsupported, %d failed), "
         "%d kernel runs, %d declined\n",
         cv.cases, cv.proposed, cv.accepted, cv.compiled, cv.unsupported, cv.failed, cv.runs, cv.declined);
  fflush(stdout);
  if (cv.runs > 0) return V_PASS;
  fbx_fuser *r = NULL;
  fbx_status *st = fbx_fuser_load(&r, "legacy");
  if (st || !r) {
    fbx_strbuf_printf(why, "the plugin ran no kernel on the corpus, and no reference fuser (legacy) to compare: %s",
                      st ? fbx_status_message(st) : "none");
    fbx_status_free(st);
    return V_SKIP;
  }
  cover(c, r, &ref);
  fbx_fuser_release(r);
  if (!ref.runs) {
    fbx_strbuf_puts(why, "neither the plugin nor the reference fuser (legacy) runs a kernel on this corpus");
    return V_SKIP;
  }
  fbx_strbuf_printf(why,
                    "the plugin fuses nothing: %d groups proposed, %d compiled (%d unsupported), %d kernel runs "
                    "(%d declined), where the reference fuser legacy ran %d kernels on the same %d cases",
                    cv.proposed, cv.compiled, cv.unsupported, cv.runs, cv.declined, ref.runs, ref.cases);
  return V_FAIL;
}

/* ---- thread safety -------------------------------------------------------------------------------- */

#define NTHREADS 4
#define THREAD_RUNS 8

typedef struct tjob {
  fbx_fkernel *k;
  const fbx_ivalue *in, *ref;
  int nin, nout;
  double rtol, atol;
  pthread_mutex_t *lock;
  fbx_strbuf *why;
  bool *failed;
} tjob;

static void *thread_main(void *arg) {
  tjob *j = arg;
  for (int r = 0; r < THREAD_RUNS; r++) {
    fbx_ivalue got[MAX_OUTS] = {{0}};
    bool declined = false;
    fbx_status *st = fbx_fkernel_run(j->k, j->in, j->nin, got, j->nout, &declined);
    fbx_strbuf d = {0};
    bool ok = st || declined || fbx_cli_allclose(got, j->nout, j->ref, j->nout, j->rtol, j->atol, &d);
    if (st || !ok) {
      pthread_mutex_lock(j->lock);
      if (!*j->failed) {
        if (st) fbx_strbuf_printf(j->why, "concurrent run failed: %s", fbx_status_message(st));
        else fbx_strbuf_printf(j->why, "concurrent run gave a wrong answer: %s", d.data ? d.data : "?");
      }
      *j->failed = true;
      pthread_mutex_unlock(j->lock);
    }
    fbx_status_free(st);
    fbx_strbuf_free(&d);
    release_all(got, j->nout);
    if (st || !ok) break;
  }
  return NULL;
}

static fbx_status *threads_group(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, const fbx_ivalue *ref,
                                 int nout) {
  fbx_fkernel *k = NULL;
  FBX_TRY(compile_group(w, node, in, nin, &k));
  if (!k) return NULL;
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  fbx_strbuf msg = {0};
  bool failed = false;
  tjob job = {k, in, ref, nin, nout, w->rtol, w->atol, &lock, &msg, &failed};
  pthread_t th[NTHREADS];
  int started = 0;
  for (int i = 0; i < NTHREADS; i++)
    if (!pthread_create(&th[i], NULL, thread_main, &job)) started++;
    else break;
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  fbx_fkernel_release(k);
  fbx_status *st = failed ? fail(w, node, "%s", msg.data ? msg.data : "?") : NULL;
  fbx_strbuf_free(&msg);
  return st;
}

static verdict t_threads(const checker *c, const char *arg, fbx_strbuf *why) {
  (void)arg;
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  if (!(fbx_fuser_flags(f) & FBXP_RUN_THREAD_SAFE)) {
    fbx_strbuf_puts(why, "the plugin does not claim FBXP_RUN_THREAD_SAFE (the host serializes its runs)");
    fbx_fuser_release(f);
    return V_SKIP;
  }
  int kernels = 0;
  verdict v = V_PASS;
  for (int i = 0; i < c->ncases && v == V_PASS; i++) {
    prepared p;
    fbx_strbuf w1 = {0};
    if (prepare_case(c, c->cases[i], f, &p, &w1) == V_PASS) {
      walk w = {.f = f, .fn = threads_group};
      fbx_strbuf w2 = {0};
      v = walk_case(&p, &w, &w2);
      kernels += w.compiled;
      if (v == V_FAIL) fbx_strbuf_printf(why, "%s: %s", c->cases[i], w2.data ? w2.data : "?");
      if (v == V_SKIP) v = V_PASS;
      fbx_strbuf_free(&w2);
    }
    fbx_strbuf_free(&w1);
    prepared_free(&p);
  }
  if (v == V_PASS && !kernels) {
    fbx_strbuf_puts(why, "no kernel of the corpus compiled: nothing to run concurrently");
    v = V_SKIP;
  }
  fbx_fuser_release(f);
  return v;
}

/* ---- faults ------------------------------------------------------------------------------------------ */

typedef enum fault_kind { FAULT_SHAPE, FAULT_DTYPE } fault_kind;

typedef struct fault_ctx {
  fault_kind kind;
  bool done;
} fault_ctx;

/* Inputs changed for the fault: other sizes (one more along dim 0; 0-d
 * becomes [2]) or int16 values; NULL when no input is a tensor. */
static fbx_status *fault_inputs(fault_kind kind, const fbx_ivalue *in, int nin, fbx_ivalue *out, bool *any) {
  *any = false;
  for (int i = 0; i < nin; i++) {
    out[i] = in[i];
    if (in[i].kind != FBX_IV_TENSOR || !in[i].u.t) {
      fbx_iv_retain(&out[i]);
      continue;
    }
    const fbx_tensor *t = in[i].u.t;
    fbx_tensor *n = NULL;
    fbx_status *st;
    if (kind == FAULT_DTYPE) {
      st = fbx_tensor_clone_as(&n, t, FBX_DTYPE_INT16);
    } else {
      int64_t sizes[FBX_MAX_DIMS];
      int nd = t->ndim ? t->ndim : 1;
      for (int d = 0; d < t->ndim; d++) sizes[d] = t->sizes[d];
      sizes[0] = t->ndim ? t->sizes[0] + 1 : 2;
      st = fbx_tensor_zeros(&n, t->dtype, nd, sizes);
      for (int64_t e = 0; !st && e < n->numel; e++) fbx_tensor_set_f64(n, e, (double)(e % 7) - 3);
    }
    if (st) {
      release_all(out, i);
      return st;
    }
    out[i] = fbx_iv_tensor(n);
    *any = true;
  }
  return NULL;
}

static fbx_status *fault_group(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, const fbx_ivalue *ref,
                               int nout) {
  (void)ref;
  fault_ctx *fc = w->ctx;
  fbx_ivalue bad[MAX_ARGS];
  if (nin > MAX_ARGS) return NULL;
  bool any;
  FBX_TRY(fault_inputs(fc->kind, in, nin, bad, &any));
  fbx_status *st = NULL;
  fbx_fkernel *k = NULL;
  if (!any) goto out;
  /* The kernel under test: for the right inputs (shape), or for the int16
   * ones (dtype: a failing compile is a clean answer). */
  if ((st = compile_group(w, node, fc->kind == FAULT_SHAPE ? in : bad, nin, &k)) || !k) goto out;
  fc->done = true;
  fbx_ivalue got[MAX_OUTS] = {{0}}, want[MAX_OUTS] = {{0}};
  bool declined = false;
  fbx_status *rs = fbx_fkernel_run(k, bad, nin, got, nout, &declined);
  if (rs || declined) { /* an error or a decline: a clean answer */
    fbx_status_free(rs);
    goto out;
  }
  fbx_status *ws = run_subgraph(node, bad, nin, want);
  if (ws) {
    st = fail(w, node, "the kernel ran inputs the interpreter rejects (%s) without an error",
              fbx_status_message(ws));
    fbx_status_free(ws);
  } else {
    fbx_strbuf d = {0};
    if (!fbx_cli_allclose(got, nout, want, nout, w->rtol, w->atol, &d))
      st = fail(w, node, fc->kind == FAULT_SHAPE ? "ran wrong-shaped inputs without an error, and wrongly: %s"
                                                 : "compiled for int16 inputs, and ran them wrongly: %s",
                d.data ? d.data : "?");
    fbx_strbuf_free(&d);
  }
  release_all(want, nout);
  release_all(got, nout);
out:
  fbx_fkernel_release(k);
  release_all(bad, nin);
  if (!st && fc->done) w->stop = true; /* one group is enough */
  return st;
}

static verdict t_fault(const checker *c, const char *arg, fbx_strbuf *why) {
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  fault_ctx fc = {.kind = !strcmp(arg, "shape") ? FAULT_SHAPE : FAULT_DTYPE};
  verdict v = V_PASS;
  for (int i = 0; i < c->ncases && !fc.done && v == V_PASS; i++) {
    prepared p;
    fbx_strbuf w1 = {0};
    if (prepare_case(c, c->cases[i], f, &p, &w1) == V_PASS) {
      walk w = {.f = f, .fn = fault_group, .ctx = &fc};
      fbx_strbuf w2 = {0};
      v = walk_case(&p, &w, &w2);
      if (v == V_FAIL && w.failed) fbx_strbuf_printf(why, "%s: %s", c->cases[i], w2.data ? w2.data : "?");
      else v = V_PASS; /* other problems of the case are lifecycle's to report */
      fbx_strbuf_free(&w2);
    }
    fbx_strbuf_free(&w1);
    prepared_free(&p);
  }
  if (v == V_PASS && !fc.done && fc.kind == FAULT_SHAPE) {
    fbx_strbuf_puts(why, "no kernel of the corpus compiled: nothing to feed wrong shapes");
    v = V_SKIP;
  }
  fbx_fuser_release(f);
  return v;
}

/* ---- numeric ------------------------------------------------------------------------------------------ */

static verdict t_numeric(const checker *c, const char *name, fbx_strbuf *why) {
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  tcase t;
  fbx_ivalue gold[MAX_OUTS] = {{0}}, ref[MAX_OUTS] = {{0}}, out[MAX_OUTS] = {{0}};
  int ngold = 0, nout = 0;
  fbx_executor *ex = NULL;
  verdict v = V_SKIP;
  fbx_status *st = case_load(c, name, &t);
  if (st) {
    fbx_strbuf_printf(why, "cannot load the case: %s", fbx_status_message(st));
    goto done;
  }
  nout = fbx_graph_noutputs(t.g);
  if (nout > MAX_OUTS) goto done;
  if ((st = case_golden(c, name, gold, MAX_OUTS, &ngold))) {
    fbx_strbuf_printf(why, "cannot read PyTorch's outputs: %s", fbx_status_message(st));
    goto done;
  }
  /* The reference must match PyTorch for the comparison to mean anything. */
  if ((st = run_reference(t.g, t.in, t.nin, ref))) {
    fbx_strbuf_printf(why, "the reference interpreter cannot run it: %s", fbx_status_message(st));
    goto done;
  }
  fbx_strbuf d = {0};
  bool ref_ok = fbx_cli_allclose(ref, nout, gold, ngold, t.rtol, t.atol, &d);
  if (!ref_ok) fbx_strbuf_printf(why, "the reference interpreter does not match PyTorch: %s", d.data ? d.data : "?");
  fbx_strbuf_free(&d);
  if (!ref_ok) goto done;

  v = V_FAIL;
  fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none", .fuser_handle = f};
  if ((st = fbx_executor_create(&ex, t.g, &xo))) {
    fbx_strbuf_printf(why, "executor: %s", fbx_status_message(st));
    goto done;
  }
  const char *env = getenv("FUSEBOX_PROFILING_RUNS");
  int runs = (env && *env ? atoi(env) : 1) + 2;
  for (int r = 0; r < runs; r++) {
    release_all(out, nout);
    if ((st = fbx_executor_run_values(ex, t.in, t.nin, out, nout, 0))) {
      fbx_strbuf_printf(why, "run %d: %s", r + 1, fbx_status_message(st));
      goto done;
    }
    fbx_strbuf e = {0};
    bool ok = fbx_cli_allclose(out, nout, gold, ngold, t.rtol, t.atol, &e);
    if (!ok) fbx_strbuf_printf(why, "run %d differs from PyTorch: %s", r + 1, e.data ? e.data : "?");
    fbx_strbuf_free(&e);
    if (!ok) goto done;
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  if (s.fallbacks_run) {
    fbx_strbuf_printf(why, "kernels failed at run time %lld time%s (the interpreter's fallback gave the results)",
                      (long long)s.fallbacks_run, s.fallbacks_run == 1 ? "" : "s");
    goto done;
  }
  v = V_PASS;
done:
  fbx_status_free(st);
  release_all(out, nout);
  release_all(ref, nout);
  release_all(gold, ngold);
  fbx_executor_destroy(ex);
  case_free(&t);
  fbx_fuser_release(f);
  return v;
}

/* ---- unload ----------------------------------------------------------------------------------------- */

static fbx_status *keep_group(walk *w, const fbx_node *node, const fbx_ivalue *in, int nin, const fbx_ivalue *ref,
                              int nout) {
  (void)ref, (void)nout;
  fbx_fkernel **keep = w->ctx;
  if (*keep) return NULL;
  FBX_TRY(compile_group(w, node, in, nin, keep));
  if (*keep) w->stop = true;
  return NULL;
}

static verdict t_unload(const checker *c, const char *arg, fbx_strbuf *why) {
  (void)arg;
  fbx_fuser *f = NULL;
  if (load_fuser(c, &f, why) != V_PASS) return V_FAIL;
  fbx_fkernel *k = NULL;
  for (int i = 0; i < c->ncases && !k; i++) {
    prepared p;
    fbx_strbuf w1 = {0};
    if (prepare_case(c, c->cases[i], f, &p, &w1) == V_PASS) {
      walk w = {.f = f, .fn = keep_group, .ctx = &k};
      (void)walk_case(&p, &w, &w1);
    }
    fbx_strbuf_free(&w1);
    prepared_free(&p);
  }
  /* The kernel outlives the fuser's reference: the plugin must stay loaded
   * until it is released, then shut down and unload. */
  fbx_fuser_release(f);
  fbx_fkernel_release(k);
  f = NULL;
  verdict v = load_fuser(c, &f, why);
  if (v == V_FAIL) {
    char *m = fbx_strbuf_take(why);
    fbx_strbuf_printf(why, "loading again after unload: %s", m ? m : "?");
    fbx_free(m);
  }
  fbx_fuser_release(f);
  return v;
}

/* ---- running tests -------------------------------------------------------------------------------- */

typedef struct tally {
  int passed, failed, skipped;
} tally;

static void report(tally *t, const char *name, verdict v, const char *why) {
  if (v == V_PASS) {
    printf("PASS %s\n", name);
    t->passed++;
  } else if (v == V_FAIL) {
    printf("FAIL %s: %s\n", name, why && *why ? why : "?");
    t->failed++;
  } else {
    printf("SKIP %s: %s\n", name, why && *why ? why : "?");
    t->skipped++;
  }
  fflush(stdout);
}

static void run_test(const checker *c, tally *t, bool isolate, int timeout, const char *name, test_fn fn,
                     const char *arg) {
  if (!isolate) {
    /* A crash takes the checker down: at least say which test it was. */
    char ctx[600];
    snprintf(ctx, sizeof ctx, "plugin-check test %s of %s", name, c->plugin);
    fbx_host_set_crash_context(ctx);
    fbx_strbuf why = {0};
    verdict v = fn(c, arg, &why);
    fbx_host_set_crash_context(NULL);
    report(t, name, v, why.data);
    fbx_strbuf_free(&why);
    return;
  }
  fflush(stdout);
  fflush(stderr);
  int fds[2];
  if (pipe(fds)) {
    report(t, name, V_FAIL, strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    report(t, name, V_FAIL, strerror(errno));
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    if (timeout > 0) alarm((unsigned)timeout);
    fbx_strbuf why = {0};
    verdict v = fn(c, arg, &why);
    char head = v == V_PASS ? 'P' : v == V_FAIL ? 'F' : 'S';
    ssize_t wr = write(fds[1], &head, 1);
    const char *msg = why.data ? why.data : "";
    size_t len = strlen(msg), off = 0;
    while (wr >= 0 && off < len) {
      wr = write(fds[1], msg + off, len - off);
      if (wr > 0) off += (size_t)wr;
    }
    fflush(stdout);
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
    char why[160];
    const char *sname = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGABRT ? "SIGABRT"
                        : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : sig == SIGALRM ? "SIGALRM"
                        : sig == SIGKILL ? "SIGKILL" : NULL;
    if (sig == SIGALRM) snprintf(why, sizeof why, "timed out after %d s (killed by SIGALRM)", timeout);
    else if (sname) snprintf(why, sizeof why, "crashed: %s", sname);
    else snprintf(why, sizeof why, "crashed: signal %d", sig);
    report(t, name, V_FAIL, why);
  } else if (!msg.len) {
    char why[96];
    /* exit() in the plugin, or a sanitizer's report (UBSan/ASan exit instead of faulting) */
    snprintf(why, sizeof why, "crashed: the test process exited with status %d without a result",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    report(t, name, V_FAIL, why);
  } else {
    verdict v = msg.data[0] == 'P' ? V_PASS : msg.data[0] == 'S' ? V_SKIP : V_FAIL;
    report(t, name, v, msg.data + 1);
  }
  fbx_strbuf_free(&msg);
}

/* `fusebox fuzz --fuser PLUGIN --seconds S --backward` (tools/cmd_fuzz.c),
 * in a fresh process: the fuzzer forks a child per case, and this process
 * has the plugin loaded already, whose threads (an OpenCL device's, say) a
 * forked child would not have. */
static verdict t_fuzz(const checker *c, const char *seconds, fbx_strbuf *why) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fbx_strbuf_printf(why, "fork: %s", strerror(errno));
    return V_FAIL;
  }
  if (pid == 0) {
    char *args[] = {"fusebox", "fuzz", "--fuser", (char *)c->plugin, "--seconds", (char *)seconds, "--backward", NULL};
    execv("/proc/self/exe", args);
    fprintf(stderr, "fusebox plugin-check: cannot run fusebox fuzz: %s\n", strerror(errno));
    _exit(2);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (rc) fbx_strbuf_printf(why, "fusebox fuzz found mismatches or crashes (above)%s", rc == 2 ? " or could not start" : "");
  return rc ? V_FAIL : V_PASS;
}

/* ---- the corpus ----------------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool is_dir(const char *p) {
  struct stat sb;
  return !stat(p, &sb) && S_ISDIR(sb.st_mode);
}

/* Default corpus: $FUSEBOX_CORPUS, ./tests/corpus/cases, the corpus
 * installed with the command (<bin>/../share/fusebox/corpus), the source
 * tree of the build tree the binary is in (a build directory outside the
 * source tree too: cmake -B /tmp/b), or a source tree above the binary. */
static char *find_corpus(void) {
  const char *env = getenv("FUSEBOX_CORPUS");
  if (env && *env) return fbx_strdup(env);
  if (is_dir("tests/corpus/cases")) return fbx_strdup("tests/corpus/cases");
  /* An installed fusebox: <bin>/../share/fusebox/corpus. */
  char inst[PATH_MAX];
  bool in_build = false;
  if (fbx_exe_relative(inst, sizeof inst, fbx_corpus_from_bin(), &in_build) == 0 && is_dir(inst))
    return fbx_strdup(inst);
#ifdef FBX_SOURCE_DIR
  if (in_build && is_dir(FBX_SOURCE_DIR "/tests/corpus/cases")) return fbx_strdup(FBX_SOURCE_DIR "/tests/corpus/cases");
#endif
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = '\0';
  for (int up = 0; up < 4; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash) break;
    *slash = '\0';
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/tests/corpus/cases", exe);
    if (is_dir(p)) return fbx_strdup(p);
  }
  return NULL;
}

static fbx_status *list_cases(checker *c) {
  DIR *d = opendir(c->corpus);
  if (!d) return fbx_status_new(FBX_ERR_IO, "cannot open the corpus %s: %s", c->corpus, strerror(errno));
  int cap = 0;
  struct dirent *e;
  fbx_status *st = NULL;
  while ((e = readdir(d)) && !st) {
    if (e->d_name[0] == '.') continue;
    char *p = case_path(c, e->d_name, "graph.ir");
    bool ok = p && access(p, R_OK) == 0;
    fbx_free(p);
    if (!ok) continue;
    if (c->ncases == cap) {
      cap = cap ? cap * 2 : 64;
      char **nc = fbx_realloc(c->cases, sizeof *nc * (size_t)cap);
      if (!nc) {
        st = fbx_status_nomem();
        break;
      }
      c->cases = nc;
    }
    if (!(c->cases[c->ncases] = fbx_strdup(e->d_name))) st = fbx_status_nomem();
    else c->ncases++;
  }
  closedir(d);
  if (!st && c->ncases > 1) qsort(c->cases, (size_t)c->ncases, sizeof *c->cases, cmp_str);
  if (!st && !c->ncases) st = fbx_status_new(FBX_ERR_IO, "no cases (NAME/graph.ir) in %s", c->corpus);
  return st;
}

/* ---- the command ---------------------------------------------------------------------------------- */

int fbx_cmd_plugin_check(int argc, char **argv) {
  checker c = {0};
  bool isolate = false;
  long timeout = 120;
  const char *corpus = NULL, *fuzz = NULL;
  char **only = fbx_calloc((size_t)(argc > 0 ? argc : 1), sizeof *only);
  if (!only) return fbx_cli_fail("plugin-check", fbx_status_nomem());
  int nonly = 0, rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(only);
      return 0;
    } else if (!strcmp(a, "--isolate")) {
      isolate = true;
    } else if (!strcmp(a, "--corpus")) {
      if (!has_value) rc = fbx_cli_usage("plugin-check", USAGE, "--corpus needs a directory");
      else corpus = argv[++i];
    } else if (!strcmp(a, "--case")) {
      if (!has_value) rc = fbx_cli_usage("plugin-check", USAGE, "--case needs a name");
      else only[nonly++] = argv[++i];
    } else if (!strcmp(a, "--fuzz")) {
      long long secs;
      if (!has_value || !fbx_cli_parse_int(argv[i + 1], 1, &secs))
        rc = fbx_cli_usage("plugin-check", USAGE, "--fuzz needs seconds >= 1");
      else fuzz = argv[++i];
    } else if (!strcmp(a, "--timeout")) {
      char *end;
      if (!has_value || (timeout = strtol(argv[++i], &end, 10)) < 0 || *end || end == argv[i])
        rc = fbx_cli_usage("plugin-check", USAGE, "--timeout needs seconds >= 0 (0: none)");
    } else if (a[0] == '-' && a[1]) {
      rc = fbx_cli_usage("plugin-check", USAGE, "unknown option '%s'", a);
    } else if (!c.plugin) {
      c.plugin = a;
    } else {
      rc = fbx_cli_usage("plugin-check", USAGE, "more than one plugin given ('%s')", a);
    }
  }
  if (!rc && !c.plugin) rc = fbx_cli_usage("plugin-check", USAGE, "no plugin given");
  if (!rc && !strcmp(c.plugin, "none")) rc = fbx_cli_usage("plugin-check", USAGE, "`none` is not a plugin");
  char *found = NULL;
  if (!rc && !corpus) {
    if (!(found = find_corpus()))
      rc = fbx_cli_usage("plugin-check", USAGE, "no corpus found: give --corpus DIR (tests/corpus/cases)");
    corpus = found;
  }
  fbx_status *st = NULL;
  if (!rc) {
    c.corpus = corpus;
    st = list_cases(&c);
    if (st) rc = fbx_cli_fail("plugin-check", st);
  }
  if (!rc && nonly) { /* keep only the named cases, in the order given */
    for (int i = 0; i < nonly; i++) {
      bool have = false;
      for (int k = 0; k < c.ncases; k++) have |= !strcmp(c.cases[k], only[i]);
      if (!have) rc = fbx_cli_usage("plugin-check", USAGE, "no case '%s' in %s", only[i], c.corpus);
    }
    for (int k = 0; k < c.ncases; k++) fbx_free(c.cases[k]);
    c.ncases = 0;
    for (int i = 0; i < nonly && !rc; i++) c.cases[c.ncases++] = fbx_strdup(only[i]);
  }
  if (rc) goto out;

  printf("# fusebox plugin-check %s: %d corpus case%s from %s%s\n", c.plugin, c.ncases, c.ncases == 1 ? "" : "s",
         c.corpus, isolate ? ", each test in its own process" : "");
  tally t = {0};
  int to = (int)timeout;
  run_test(&c, &t, isolate, to, "load", t_load, NULL);
  if (t.failed) goto close; /* nothing else can run */
  run_test(&c, &t, isolate, to, "metadata", t_metadata, NULL);
  char name[512];
  for (int i = 0; i < c.ncases; i++) {
    snprintf(name, sizeof name, "lifecycle/%s", c.cases[i]);
    run_test(&c, &t, isolate, to, name, t_lifecycle, c.cases[i]);
  }
  run_test(&c, &t, isolate, to, "coverage", t_coverage, NULL);
  run_test(&c, &t, isolate, to, "thread-safety", t_threads, NULL);
  run_test(&c, &t, isolate, to, "fault/wrong-shape", t_fault, "shape");
  run_test(&c, &t, isolate, to, "fault/unsupported-dtype", t_fault, "dtype");
  for (int i = 0; i < c.ncases; i++) {
    snprintf(name, sizeof name, "numeric/%s", c.cases[i]);
    run_test(&c, &t, isolate, to, name, t_numeric, c.cases[i]);
  }
  run_test(&c, &t, isolate, to, "unload", t_unload, NULL);
  /* its own children isolate every case; a timeout of its own would cut it short */
  if (fuzz) run_test(&c, &t, false, 0, "fuzz", t_fuzz, fuzz);
close:
  if (t.skipped) printf("# %d skipped (SKIP lines are not counted)\n", t.skipped);
  printf("%d passed, %d failed\n", t.passed, t.failed);
  fflush(stdout);
  rc = t.failed ? 1 : 0;
out:
  for (int k = 0; k < c.ncases; k++) fbx_free(c.cases[k]);
  fbx_free(c.cases);
  fbx_free(found);
  fbx_free(only);
  return rc;
}
