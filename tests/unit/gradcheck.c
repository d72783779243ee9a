/* The finite-difference gradient checker; see gradcheck.h. */
#include "gradcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/strbuf.h"
#include "exec/interp.h"
#include "ir/text.h"
#include "ops/optable.h"
#include <fusebox/tensor.h>

/* ---- inputs ------------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) {
  /* xorshift64*: plenty for test data, the same on every machine */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static double rng_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

typedef struct spec {
  int ndim;
  int64_t sizes[FBX_MAX_DIMS];
  double lo, hi;
  fbx_dtype dtype;
} spec;

static bool parse_spec(const char *text, spec *s, char *msg, size_t msgn) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", text);
  char *save = NULL, *tok = strtok_r(buf, ":", &save);
  *s = (spec){.lo = -2, .hi = 2, .dtype = FBX_DTYPE_FLOAT64};
  if (!tok) goto bad;
  if (strcmp(tok, "-")) {
    for (char *p = tok; *p;) {
      if (s->ndim == FBX_MAX_DIMS) goto bad;
      s->sizes[s->ndim++] = strtoll(p, &p, 10);
      if (*p == 'x') p++;
      else if (*p) goto bad;
    }
  }
  int nnum = 0;
  while ((tok = strtok_r(NULL, ":", &save))) {
    if (!strcmp(tok, "f64")) s->dtype = FBX_DTYPE_FLOAT64;
    else if (!strcmp(tok, "f32")) s->dtype = FBX_DTYPE_FLOAT32;
    else if (!strcmp(tok, "i64")) s->dtype = FBX_DTYPE_INT64;
    else if (!strcmp(tok, "bool")) s->dtype = FBX_DTYPE_BOOL;
    else if (nnum < 2) {
      char *end;
      double v = strtod(tok, &end);
      if (*end) goto bad;
      if (nnum++ == 0) s->lo = v;
      else s->hi = v;
    } else goto bad;
  }
  return true;
bad:
  snprintf(msg, msgn, "bad input spec '%s'", text);
  return false;
}

static fbx_status *make_input(const spec *s, uint64_t *rng, fbx_tensor **out) {
  FBX_TRY(fbx_tensor_empty(out, s->dtype, s->ndim, s->sizes));
  for (int64_t i = 0; i < (*out)->numel; i++) {
    double v = rng_uniform(rng, s->lo, s->hi);
    if (s->dtype == FBX_DTYPE_BOOL) v = v > (s->lo + s->hi) / 2;
    else if (s->dtype == FBX_DTYPE_INT64) v = floor(v + 0.5);
    fbx_tensor_set_f64(*out, i, v);
  }
  return NULL;
}

static bool is_float(fbx_dtype d) { return d == FBX_DTYPE_FLOAT64 || d == FBX_DTYPE_FLOAT32; }

/* ---- the backward graph ------------------------------------------------------------------- */

typedef struct bwd {
  const fbx_graph *fwd;
  const fbx_node *node;
  fbx_graph *g;
  fbx_ptrmap map;                /* forward value -> backward value */
  const fbx_value *saved[64];    /* forward values behind backward inputs after the gradients */
  int nsaved;
  fbx_status *err;
} bwd;

static fbx_status *fwd_value(void *ctx, const fbx_value *v, fbx_value **out);

static fbx_value *clone_map(void *ctx, fbx_value *v) {
  bwd *b = ctx;
  fbx_value *r = NULL;
  fbx_status *st = fwd_value(b, v, &r);
  if (st && !b->err) b->err = st;
  else fbx_status_free(st);
  return r;
}

static fbx_status *fwd_value(void *ctx, const fbx_value *v, fbx_value **out) {
  bwd *b = ctx;
  fbx_value *r = fbx_ptrmap_get(&b->map, v);
  if (r) {
    *out = r;
    return NULL;
  }
  bool is_input = v->node == b->fwd->block->param;
  if (is_input || v->node == b->node) {
    if (b->nsaved == 64) return fbx_status_new(FBX_ERR_INTERNAL, "gradcheck: too many saved values");
    fbx_type *t = fbx_type_clone(b->g->arena, v->type);
    r = t ? fbx_graph_add_input(b->g, t, NULL) : NULL;
    if (!r) return fbx_status_nomem();
    b->saved[b->nsaved++] = v;
  } else {
    /* constants and the scalar/list computations feeding the node: copy */
    fbx_node *m = fbx_node_clone_into(b->g->block, v->node, clone_map, b);
    if (b->err) {
      fbx_status *st = b->err;
      b->err = NULL;
      return st;
    }
    if (!m) return fbx_status_nomem();
    r = m->outputs[v->offset];
  }
  if (fbx_ptrmap_put(&b->map, v, r)) return fbx_status_nomem();
  *out = r;
  return NULL;
}

static const fbx_node *interesting_node(const fbx_graph *g) {
  const fbx_node *found = NULL;
  for (const fbx_node *n = fbx_block_first(g->block); n; n = n->next) {
    const char *k = fbx_sym_str(n->kind);
    if (strcmp(k, "prim::Constant") && strcmp(k, "prim::ListConstruct")) found = n;
  }
  return found;
}

/* ---- running ------------------------------------------------------------------------------ */

static fbx_status *run_graph(const fbx_graph *g, fbx_ivalue *in, int nin, fbx_ivalue *out) {
  fbx_interp *it;
  FBX_TRY(fbx_interp_create(&it, g));
  fbx_run_opts opts = {.seed = 1};
  fbx_status *st = fbx_interp_run(it, in, nin, out, &opts);
  fbx_interp_destroy(it);
  return st;
}

/* sum(G * y) over the node's outputs, for the forward graph at inputs `in`. */
static fbx_status *objective(const fbx_graph *g, fbx_ivalue *in, int nin, fbx_tensor **gouts, int nout,
                             double *out) {
  fbx_ivalue y[8];
  for (int i = 0; i < 8; i++) y[i] = fbx_iv_none();
  FBX_TRY(run_graph(g, in, nin, y));
  double s = 0;
  for (int j = 0; j < nout; j++) {
    if (!gouts[j]) continue;
    const fbx_tensor *t = y[j].u.t;
    for (int64_t e = 0; e < t->numel; e++) s += fbx_tensor_get_f64(gouts[j], e) * fbx_tensor_get_f64(t, e);
  }
  for (int j = 0; j < nout; j++) fbx_iv_release(&y[j]);
  *out = s;
  return NULL;
}

static void shape_str(char *buf, size_t n, const fbx_tensor *t) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < t->ndim && k < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

typedef struct check {
  const gc_case *c;
  char *msg;
  size_t msgn;
  fbx_graph *fwd, *bwd_g;
  fbx_tensor *in[GC_MAX_INPUTS];
  int nin;
  fbx_tensor *gout[8];
  int nout;
  fbx_ivalue fwd_out[8];
  fbx_ivalue grads[GC_MAX_INPUTS];
} check;

static bool fail(check *k, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->msg, k->msgn, fmt, ap);
  va_end(ap);
  return false;
}

static bool fail_st(check *k, const char *what, fbx_status *st) {
  fail(k, "%s: %s: %s", k->c->name ? k->c->name : "gradcheck", what, fbx_status_message(st));
  fbx_status_free(st);
  return false;
}

static void append_graph(check *k, const fbx_graph *g) {
  char *text = g ? fbx_graph_print(g) : NULL;
  size_t used = strlen(k->msg);
  if (text && used < k->msgn) snprintf(k->msg + used, k->msgn - used, "\nbackward graph:\n%s", text);
  fbx_free(text);
}

static bool compare(check *k, const fbx_node *node, int gi, const fbx_tensor *analytic) {
  const gc_case *c = k->c;
  double eps = c->eps > 0 ? c->eps : 1e-6, rtol = c->rtol > 0 ? c->rtol : 1e-5, atol = c->atol > 0 ? c->atol : 1e-7;
  fbx_tensor *x = k->in[gi];
  fbx_ivalue in[GC_MAX_INPUTS];
  for (int i = 0; i < k->nin; i++) in[i] = fbx_iv_tensor(k->in[i]);
  double worst = 0, worst_a = 0, worst_n = 0;
  int64_t worst_e = -1;
  for (int64_t e = 0; e < x->numel; e++) {
    double x0 = fbx_tensor_get_f64(x, e), fp, fm;
    fbx_tensor_set_f64(x, e, x0 + eps);
    double xp = fbx_tensor_get_f64(x, e);
    fbx_status *st = objective(k->fwd, in, k->nin, k->gout, k->nout, &fp);
    fbx_tensor_set_f64(x, e, x0 - eps);
    double xm = fbx_tensor_get_f64(x, e);
    if (!st) st = objective(k->fwd, in, k->nin, k->gout, k->nout, &fm);
    fbx_tensor_set_f64(x, e, x0);
    if (st) return fail_st(k, "forward run for finite differences", st);
    double num = (fp - fm) / (xp - xm);
    double an = analytic ? fbx_tensor_get_f64(analytic, e) : 0.0;
    double err = fabs(an - num), bound = atol + rtol * fabs(num);
    bool bad = isnan(an) != isnan(num) || (!isnan(num) && err > bound);
    double score = isnan(an) != isnan(num) ? INFINITY : err / bound;
    if (bad && score > worst) {
      worst = score;
      worst_e = e;
      worst_a = an;
      worst_n = num;
    }
  }
  if (worst_e < 0) return true;
  char sh[128];
  shape_str(sh, sizeof sh, x);
  fail(k,
       "%s: gradient of %s wrong for input %d (%%%s, %s %s): worst element %lld: analytic %.10g, numeric %.10g "
       "(|diff| %.3g, allowed %.3g + %.3g*|numeric|, eps %g)%s",
       c->name ? c->name : fbx_sym_str(node->kind), fbx_sym_str(node->kind), gi, fbx_graph_input(k->fwd, gi)->name,
       fbx_dtype_name(x->dtype), sh, (long long)worst_e, worst_a, worst_n, fabs(worst_a - worst_n), atol, rtol,
       eps, analytic ? "" : " (the formula gave no gradient)");
  return false;
}

static bool run_check(check *k, gc_info *info) {
  const gc_case *c = k->c;
  fbx_status *st = fbx_graph_parse(&k->fwd, c->graph, strlen(c->graph), c->name ? c->name : "gradcheck");
  if (st) return fail_st(k, "parse", st);
  const fbx_node *node = interesting_node(k->fwd);
  if (!node) return fail(k, "%s: no node to differentiate", c->name);
  k->nin = fbx_graph_ninputs(k->fwd);
  k->nout = fbx_graph_noutputs(k->fwd);
  if (k->nin > GC_MAX_INPUTS || k->nout > 8 || node->noutputs != k->nout)
    return fail(k, "%s: the graph must return exactly the node's outputs", c->name);
  uint64_t rng = c->seed ? c->seed : 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < k->nin; i++) {
    spec s;
    if (!c->inputs[i] || !parse_spec(c->inputs[i], &s, k->msg, k->msgn)) return c->inputs[i] ? false : fail(k, "%s: input %d has no spec", c->name, i);
    st = make_input(&s, &rng, &k->in[i]);
    if (st) return fail_st(k, "inputs", st);
  }
  /* forward once: outputs and the random output gradients */
  fbx_ivalue in[GC_MAX_INPUTS];
  for (int i = 0; i < k->nin; i++) in[i] = fbx_iv_tensor(k->in[i]);
  st = run_graph(k->fwd, in, k->nin, k->fwd_out);
  if (st) return fail_st(k, "forward run", st);
  for (int j = 0; j < k->nout; j++) {
    const fbx_tensor *y = k->fwd_out[j].u.t;
    if (k->fwd_out[j].kind != FBX_IV_TENSOR || !is_float(y->dtype)) continue;
    st = fbx_tensor_empty(&k->gout[j], y->dtype, y->ndim, y->sizes);
    if (st) return fail_st(k, "output gradient", st);
    for (int64_t e = 0; e < y->numel; e++) fbx_tensor_set_f64(k->gout[j], e, rng_uniform(&rng, -1, 1));
  }
  /* the backward graph */
  bwd b = {.fwd = k->fwd, .node = node};
  b.g = k->bwd_g = fbx_graph_create();
  if (!b.g) return fail(k, "out of memory");
  fbx_value *gvals[8] = {0}, *ginputs[FBX_SCHEMA_MAX_ARGS] = {0};
  if (node->ninputs > FBX_SCHEMA_MAX_ARGS) return fail(k, "%s: too many node inputs", c->name);
  for (int j = 0; j < k->nout; j++)
    if (k->gout[j] && !(gvals[j] = fbx_graph_add_input(b.g, fbx_type_tensor_any(), NULL))) return fail(k, "out of memory");
  fbx_grad_env env = {.graph = b.g, .block = b.g->block, .fwd_value = fwd_value, .ctx = &b};
  st = fbx_grad_build(&env, node, gvals, ginputs);
  if (st) {
    fbx_ptrmap_free(&b.map);
    return fail_st(k, "fbx_grad_build", st);
  }
  fbx_ptrmap_free(&b.map);
  /* B returns the gradient of each graph input the node uses directly */
  int which[GC_MAX_INPUTS];
  for (int gi = 0; gi < k->nin; gi++) {
    which[gi] = -1;
    for (int i = 0; i < node->ninputs; i++)
      if (node->inputs[i] == fbx_graph_input(k->fwd, gi) && ginputs[i]) {
        if (which[gi] >= 0) return fail(k, "%s: an input used twice by the node is not supported", c->name);
        which[gi] = fbx_graph_noutputs(b.g);
        if (fbx_block_add_return(b.g->block, ginputs[i])) return fail(k, "out of memory");
      }
  }
  if (info) {
    info->nbackward_nodes = fbx_graph_count_nodes(b.g);
    info->nsaved = b.nsaved;
    char *text = fbx_graph_print(b.g);
    snprintf(info->backward, sizeof info->backward, "%s", text ? text : "");
    fbx_free(text);
  }
  /* run it: gradients, then the saved forward values */
  fbx_ivalue bin[8 + 64];
  int nb = 0;
  for (int j = 0; j < k->nout; j++)
    if (k->gout[j]) bin[nb++] = fbx_iv_tensor(k->gout[j]);
  for (int s = 0; s < b.nsaved; s++) {
    const fbx_value *v = b.saved[s];
    bin[nb++] = v->node == node ? k->fwd_out[v->offset] : in[v->offset];
  }
  fbx_ivalue bout[GC_MAX_INPUTS];
  for (int i = 0; i < GC_MAX_INPUTS; i++) bout[i] = fbx_iv_none();
  st = run_graph(b.g, bin, nb, bout);
  if (st) {
    fail_st(k, "backward run", st);
    append_graph(k, b.g);
    return false;
  }
  int nret = fbx_graph_noutputs(b.g);
  for (int r = 0; r < nret; r++) k->grads[r] = bout[r];
  for (int gi = 0; gi < k->nin; gi++) {
    if (!is_float(k->in[gi]->dtype)) continue;
    const fbx_tensor *an = NULL;
    if (which[gi] >= 0) {
      const fbx_ivalue *g = &k->grads[which[gi]];
      if (g->kind != FBX_IV_TENSOR) {
        fail(k, "%s: gradient of input %d is a %s, not a tensor", c->name, gi, fbx_iv_kind_name(g->kind));
        append_graph(k, b.g);
        return false;
      }
      an = g->u.t;
      char s1[128], s2[128];
      shape_str(s1, sizeof s1, an);
      shape_str(s2, sizeof s2, k->in[gi]);
      if (!fbx_tensor_same_shape(an, k->in[gi]) || an->dtype != k->in[gi]->dtype) {
        fail(k, "%s: gradient of input %d (%%%s) is %s %s, the input %s %s", c->name ? c->name : "", gi,
             fbx_graph_input(k->fwd, gi)->name, fbx_dtype_name(an->dtype), s1, fbx_dtype_name(k->in[gi]->dtype), s2);
        append_graph(k, b.g);
        return false;
      }
    }
    if (!compare(k, node, gi, an)) {
      append_graph(k, b.g);
      return false;
    }
  }
  return true;
}

bool gc_check(const gc_case *c, char *msg, size_t msgn, gc_info *info) {
  check k = {.c = c, .msg = msg, .msgn = msgn};
  for (int i = 0; i < 8; i++) k.fwd_out[i] = fbx_iv_none();
  for (int i = 0; i < GC_MAX_INPUTS; i++) k.grads[i] = fbx_iv_none();
  msg[0] = 0;
  bool ok = run_check(&k, info);
  for (int i = 0; i < GC_MAX_INPUTS; i++) {
    fbx_tensor_release(k.in[i]);
    fbx_iv_release(&k.grads[i]);
  }
  for (int j = 0; j < 8; j++) {
    fbx_tensor_release(k.gout[j]);
    fbx_iv_release(&k.fwd_out[j]);
  }
  fbx_graph_destroy(k.bwd_g);
  fbx_graph_destroy(k.fwd);
  return ok;
}
