/* The executor's gradient mode (see executor.h): forward runs that record
 * an autodiff tape, DifferentiableGraph plans whose forward and backward
 * graphs run through sub-executors (so the fuser fuses both), the eager tape
 * for everything else, and backward.
 *
 * Units of differentiation (xgradfn) come in two flavours sharing one type:
 * a single node run eagerly (a one-node subgraph, its backward graph run by
 * an unfused executor), and a DifferentiableGraph (its forward F and
 * backward B each run by an executor with the parent's fuser and strategy).
 * Eager units are shared: every node whose one-node subgraph prints the same
 * (same op, constants, input dtypes and ranks, inputs requiring grad) uses
 * one unit, found by that text (ex->ad_units). A node keeps only a small
 * entry (xeager, per set of inputs requiring grad and per input signature)
 * that the tape records and that names the node in messages. Every profiling
 * run of a DifferentiableGraph runs its nodes on the eager tape, so a unit
 * per node cost a differentiation and two executors per node (~59 KB each: a
 * 64k-node chain needed 3.8 GB); shared, a chain of four distinct ops builds
 * four.
 * Both kinds of unit keep, per set of defined output gradients, a
 * respecialized backward (or fall back to materializing zeros when
 * respecializing is refused). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "autodiff/tape.h"
#include "base/alloc.h"
#include "base/log.h"
#include "base/workcount.h"
#include "exec/execimpl.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "passes/passes.h"

#define MAX_VARIANTS 8
#define DIFFGRAPH_MIN_SIZE 2

typedef struct xvariant {
  uint64_t defined;    /* bit j: output j's gradient is defined */
  fbx_gradient *grad;  /* NULL: respecializing was refused, zeros are materialized */
  fbx_executor *bex;
} xvariant;

typedef struct xgradfn xgradfn;
struct xgradfn {
  fbx_tape_fn base;      /* first: the tape calls base.backward */
  fbx_executor *owner;
  char *what;
  char *no_grad;         /* not differentiable: why (then nothing else is set) */
  bool constant;         /* no input requiring grad is differentiable: the outputs do not require grad */
  fbx_graph *S;
  int nin, nout;
  bool *rg;              /* by S input */
  fbx_gradient *grad;    /* all output gradients defined */
  fbx_executor *fex;     /* runs F (a DifferentiableGraph always; a node only when F saves more) */
  fbx_executor *bex;
  pthread_mutex_t lock;  /* variants */
  int nvariants;
  xvariant variants[MAX_VARIANTS];
  char *why;             /* with no_grad: the reason alone (an eager unit's entries name their node with it) */
  /* the cache key */
  const fbx_node *node;  /* DifferentiableGraph units */
  uint64_t rgmask;       /* DifferentiableGraph units */
  char *sig;             /* eager units: the key in ex->ad_units (S printed, then rg by input) */
  /* eager units: S input k is node input in_index[k] */
  int *in_index;
  xgradfn *next;
};

/* A node run on the eager tape, for one set of inputs requiring grad and one
 * input signature: what the tape records for it. */
typedef struct xeager {
  fbx_tape_fn base;      /* first: the tape calls base.backward */
  const fbx_node *node;
  uint64_t rgmask;
  char *sig;
  char *what;            /* "aten::mul (corpus.py:3:8)" */
  bool constant;         /* see xgradfn */
  char *no_grad;         /* not differentiable: why (then unit is NULL) */
  xgradfn *unit;         /* shared, owned by ex->ad_units */
  struct xeager *next;
} xeager;

/* One specialization of a DifferentiableGraph: its subgraph typed for the
 * shapes it was profiled with (exact sizes at static levels, generalized at
 * dynamic ones) and the guard that checks them. */
typedef struct xdgver {
  int level;              /* 0: built with the plan; d: after d guard failures led here */
  fbx_spec_kind kind;
  int nin;
  fbx_obs *guard;         /* nin */
  fbx_graph *S;           /* what its units differentiate */
  xgradfn *fns;           /* by runtime requires-grad mask (under ex->ad_lock) */
  _Atomic(struct xdgver *) next; /* the next level (published with a release store) */
} xdgver;

/* A DifferentiableGraph node of a plan. */
typedef struct xdg {
  const fbx_node *node;   /* in the plan's graph */
  int nin;
  fbx_graph *eager_graph; /* S with tensor types erased: run node by node on the tape */
  fbx_interp *eager;
  xdgver *versions;       /* level 0, then the respecializations in level order */
  xdgver *last;           /* under ex->lock */
  atomic_bool spent;      /* the strategy's budget is spent: unguarded shapes run on the eager tape */
  /* under ex->lock: profile of eager_graph for the next version */
  int profiled;
  fbx_profile profile;
  struct xdg *next;
} xdg;

typedef enum { PLAN_PROFILING, PLAN_READY, PLAN_EAGER } plan_state;

struct fbx_xgplan {
  bool *mask;             /* by graph input */
  int nmask;
  _Atomic int state;
  int profiled;           /* under ex->lock */
  fbx_profile profile;
  fbx_graph *opt;
  fbx_interp *opt_interp;
  xdg **by_node;
  uint32_t nby_node;
  xdg *dgs;
  int ndgs;
  fbx_xgplan *next;
};

struct fbx_grad_handle {
  fbx_executor *ex;
  fbx_tape *tape;
  atomic_bool used;
  int nin, nout;
  fbx_ivalue *inputs;     /* retained */
  fbx_ivalue *outs;       /* flat, retained */
};

/* One forward run's context for the hooks. */
typedef struct runctx {
  fbx_executor *ex;
  fbx_xgplan *plan;
  fbx_tape *tape;
  uint64_t seed;
} runctx;

static char *xasprintf(const char *fmt, ...) FBX_PRINTF(1, 2);
static char *xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = fbx_vasprintf(fmt, ap);
  va_end(ap);
  return s;
}

/* ---- units ----------------------------------------------------------------------------------- */

static void xgradfn_free(xgradfn *f) {
  if (!f) return;
  for (int i = 0; i < f->nvariants; i++) {
    fbx_executor_destroy(f->variants[i].bex);
    fbx_gradient_free(f->variants[i].grad);
  }
  if (f->grad) pthread_mutex_destroy(&f->lock);
  fbx_executor_destroy(f->fex);
  fbx_executor_destroy(f->bex);
  fbx_gradient_free(f->grad);
  fbx_graph_destroy(f->S);
  fbx_free(f->rg);
  fbx_free(f->in_index);
  fbx_free(f->sig);
  fbx_free(f->what);
  fbx_free(f->no_grad);
  fbx_free(f->why);
  fbx_free(f);
}

static void xeager_free(xeager *e) {
  if (!e) return;
  fbx_free(e->sig);
  fbx_free(e->what);
  fbx_free(e->no_grad);
  fbx_free(e);
}

/* An executor for a forward or backward graph: the parent's fuser and
 * strategy for DifferentiableGraphs, the interpreter alone for single nodes. */
static fbx_status *sub_executor(fbx_executor **out, fbx_executor *ex, const fbx_graph *g, bool fused) {
  fbx_strbuf sb = {0};
  fbx_strategy_print(&sb, &ex->strategy);
  if (sb.oom) {
    fbx_strbuf_free(&sb);
    return fbx_status_nomem();
  }
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .strategy = sb.data,
                         .profiling_runs = ex->profiling_runs};
  if (fused) o.fuser_handle = ex->fuser;
  fbx_status *st = fbx_executor_create(out, g, &o);
  fbx_strbuf_free(&sb);
  return st;
}

static bool fused_unit(const xgradfn *f) { return !f->in_index; }

static fbx_status *run_backward(fbx_executor *bex, const fbx_gradient *g, const fbx_ivalue *gin_vals, int ngin,
                                const fbx_ivalue *saved, int nsaved, fbx_ivalue *gin, int nin) {
  int nb = ngin + nsaved, nbout = g->ngrads;
  fbx_ivalue *bin = fbx_calloc((size_t)nb + 1, sizeof *bin);
  fbx_ivalue *bout = fbx_calloc((size_t)nbout + 1, sizeof *bout);
  fbx_status *st = bin && bout ? NULL : fbx_status_nomem();
  if (!st) {
    for (int k = 0; k < ngin; k++) bin[k] = gin_vals[k];
    for (int k = 0; k < nsaved; k++) bin[ngin + k] = saved[k];
    st = fbx_executor_run_values(bex, bin, nb, bout, nbout, 0);
  }
  for (int k = 0; !st && k < nbout; k++) {
    int i = g->grad_of[k];
    if (i >= 0 && i < nin) {
      fbx_iv_release(&gin[i]);
      gin[i] = bout[k];
    } else {
      fbx_iv_release(&bout[k]);
    }
  }
  fbx_free(bin);
  fbx_free(bout);
  return st;
}

/* Zeros shaped like output value v (a tensor or a list of them). */
static fbx_status *zeros_like_value(fbx_ivalue *out, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TENSOR) {
    fbx_tensor *z = NULL;
    FBX_TRY(fbx_tensor_zeros(&z, v->u.t->dtype, v->u.t->ndim, v->u.t->sizes));
    *out = fbx_iv_tensor(z);
    return NULL;
  }
  if (v->kind != FBX_IV_LIST && v->kind != FBX_IV_TUPLE)
    return fbx_status_new(FBX_ERR_INTERNAL, "no zero gradient for a %s output", fbx_iv_kind_name(v->kind));
  FBX_TRY(fbx_iv_list_new(out, v->u.l->n));
  for (int i = 0; i < v->u.l->n; i++) {
    fbx_ivalue z;
    fbx_status *st = zeros_like_value(&z, &v->u.l->items[i]);
    if (!st) st = fbx_iv_list_push(out, z);
    if (st) {
      fbx_iv_release(out);
      return st;
    }
  }
  return NULL;
}

static fbx_status *get_variant(xgradfn *f, uint64_t defined, xvariant **out) {
  fbx_status *st = NULL;
  *out = NULL;
  pthread_mutex_lock(&f->lock);
  for (int i = 0; i < f->nvariants && !*out; i++)
    if (f->variants[i].defined == defined) *out = &f->variants[i];
  if (!*out && f->nvariants < MAX_VARIANTS) {
    xvariant v = {.defined = defined};
    bool *mask = fbx_calloc((size_t)f->nout + 1, sizeof *mask);
    if (!mask) st = fbx_status_nomem();
    for (int j = 0; j < f->nout && !st; j++) mask[j] = (defined >> j) & 1;
    if (!st) {
      st = fbx_autodiff_respecialize(&v.grad, f->S, f->grad, f->rg, mask);
      if (st && fbx_status_code(st) == FBX_ERR_UNSUPPORTED) {
        fbx_status_free(st); /* the caller materializes zeros */
        st = NULL;
        v.grad = NULL;
      }
    }
    if (!st && v.grad) st = sub_executor(&v.bex, f->owner, v.grad->backward, fused_unit(f));
    fbx_free(mask);
    if (st) fbx_gradient_free(v.grad);
    else {
      f->variants[f->nvariants] = v;
      *out = &f->variants[f->nvariants++];
    }
  }
  pthread_mutex_unlock(&f->lock);
  return st;
}

/* Unit f's backward; the caller names the unit or node in an error. */
static fbx_status *unit_backward(xgradfn *f, const fbx_ivalue *gout, const fbx_ivalue *outs, int nout,
                                 const fbx_ivalue *saved, int nsaved, fbx_ivalue *gin, int nin) {
  if (nout != f->nout || nsaved != f->grad->nsaved || nin != f->nin)
    return fbx_status_new(FBX_ERR_INTERNAL, "%s: tape entry does not match its unit", f->what);
  uint64_t defined = 0;
  bool all = true;
  for (int j = 0; j < nout; j++) {
    bool d = gout[j].kind != FBX_IV_NONE;
    all &= d;
    if (d && j < 64) defined |= (uint64_t)1 << j;
  }
  xvariant *v = NULL;
  if (!all && nout <= 64) FBX_TRY(get_variant(f, defined, &v));
  fbx_ivalue *vals = fbx_calloc((size_t)nout + 1, sizeof *vals);
  if (!vals) return fbx_status_nomem();
  int n = 0;
  fbx_status *st = NULL;
  fbx_ivalue *zeros = NULL;
  if (all || (v && v->grad)) {
    for (int j = 0; j < nout; j++)
      if (gout[j].kind != FBX_IV_NONE) vals[n++] = gout[j];
  } else {
    /* Zeros where a gradient is undefined, then the all-defined backward. */
    zeros = fbx_calloc((size_t)nout + 1, sizeof *zeros);
    if (!zeros) st = fbx_status_nomem();
    for (int j = 0; j < nout && !st; j++) {
      if (gout[j].kind != FBX_IV_NONE) vals[n++] = gout[j];
      else if (!(st = zeros_like_value(&zeros[j], &outs[j]))) vals[n++] = zeros[j];
    }
  }
  if (!st) {
    const fbx_gradient *g = v && v->grad ? v->grad : f->grad;
    fbx_executor *bex = v && v->grad ? v->bex : f->bex;
    st = run_backward(bex, g, vals, n, saved, nsaved, gin, nin);
  }
  for (int j = 0; zeros && j < nout; j++) fbx_iv_release(&zeros[j]);
  fbx_free(zeros);
  fbx_free(vals);
  return st;
}

static fbx_status *xgradfn_backward(fbx_tape_fn *base, const fbx_ivalue *gout, const fbx_ivalue *outs, int nout,
                                    const fbx_ivalue *saved, int nsaved, fbx_ivalue *gin, int nin) {
  xgradfn *f = (xgradfn *)base;
  fbx_status *st = unit_backward(f, gout, outs, nout, saved, nsaved, gin, nin);
  return st ? fbx_status_wrap(st, "backward of %s", f->what) : NULL;
}

static fbx_status *xeager_backward(fbx_tape_fn *base, const fbx_ivalue *gout, const fbx_ivalue *outs, int nout,
                                   const fbx_ivalue *saved, int nsaved, fbx_ivalue *gin, int nin) {
  xeager *e = (xeager *)base;
  fbx_status *st = unit_backward(e->unit, gout, outs, nout, saved, nsaved, gin, nin);
  return st ? fbx_status_wrap(st, "backward of %s", e->what) : NULL;
}

/* Differentiate f->S for f->rg and build the executors. On an unsupported
 * gradient f->no_grad gets the reason and NULL is returned. */
static fbx_status *xgradfn_build(xgradfn *f, bool fused, bool need_forward) {
  /* Recomputing instead of saving moves fewer bytes only when the fuser fuses F and B (autodiff/recompute.c). */
  int mode = f->owner->ad_recompute;
  bool recompute = mode == 2 || (mode == 1 && fused && f->owner->fuser);
  fbx_status *st = fbx_autodiff_differentiate_ex(&f->grad, f->S, f->rg, NULL, recompute);
  if (st) {
    if (fbx_status_code(st) == FBX_ERR_NOMEM) return st;
    f->no_grad = xasprintf("%s: %s", f->what, fbx_status_message(st));
    f->why = fbx_strdup(fbx_status_message(st));
    fbx_status_free(st);
    return f->no_grad && f->why ? NULL : fbx_status_nomem();
  }
  pthread_mutex_init(&f->lock, NULL);
  for (int k = 0; k < f->grad->nsaved; k++)
    need_forward |= f->grad->saved[k].from_forward && f->grad->saved[k].index >= f->grad->nreal_outputs;
  if (need_forward) FBX_TRY(sub_executor(&f->fex, f->owner, f->grad->forward, fused));
  return sub_executor(&f->bex, f->owner, f->grad->backward, fused);
}

/* The saved values of one run: from its inputs, its real outputs, and F's
 * extra outputs (fouts, NULL when F did not run). */
static fbx_status *gather_saved(const xgradfn *f, const fbx_ivalue *ins, const fbx_ivalue *outs,
                                const fbx_ivalue *fouts, fbx_ivalue **out) {
  int ns = f->grad->nsaved;
  fbx_ivalue *saved = fbx_calloc((size_t)ns + 1, sizeof *saved);
  if (!saved) return fbx_status_nomem();
  for (int k = 0; k < ns; k++) {
    fbx_saved_ref r = f->grad->saved[k];
    if (!r.from_forward) saved[k] = ins[r.index];
    else if (fouts) saved[k] = fouts[r.index];
    else saved[k] = outs[r.index];
    fbx_iv_retain(&saved[k]);
  }
  *out = saved;
  return NULL;
}

/* ---- the eager tape --------------------------------------------------------------------------- */

static bool is_routing(fbx_sym k) {
  return k == FBX_SYM_prim_Constant || k == FBX_SYM_prim_If || k == FBX_SYM_prim_Loop ||
         k == FBX_SYM_prim_ListConstruct || k == FBX_SYM_prim_TupleConstruct || k == FBX_SYM_prim_ListUnpack ||
         k == FBX_SYM_prim_TupleUnpack;
}

static bool in_value(const fbx_tensor *t, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TENSOR) return v->u.t == t;
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE)
    for (int i = 0; i < v->u.l->n; i++)
      if (in_value(t, &v->u.l->items[i])) return true;
  return false;
}

/* Does the node yield a floating tensor that is not one of its inputs? */
static bool new_float_output(const fbx_ivalue *v, const fbx_ivalue *ins, int nin) {
  if (v->kind == FBX_IV_TENSOR) {
    if (!v->u.t || !fbx_dtype_is_floating(v->u.t->dtype)) return false;
    for (int i = 0; i < nin; i++)
      if (in_value(v->u.t, &ins[i])) return false;
    return true;
  }
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE)
    for (int i = 0; i < v->u.l->n; i++)
      if (new_float_output(&v->u.l->items[i], ins, nin)) return true;
  return false;
}

/* Inputs that are constants (or lists/tuples of constants) are copied into
 * the one-node subgraph, so formulas see their values. A list some node may
 * mutate (aten::append into an empty literal) is a run-time value: the
 * literal is only its starting point. */
static bool static_input(const fbx_value *v) {
  const fbx_node *d = v->node;
  if (d->kind == FBX_SYM_prim_Constant) return true;
  if (d->kind != FBX_SYM_prim_ListConstruct && d->kind != FBX_SYM_prim_TupleConstruct) return false;
  if (fbx_value_may_be_mutated(v)) return false;
  for (int i = 0; i < d->ninputs; i++)
    if (d->inputs[i]->node->kind != FBX_SYM_prim_Constant) return false;
  return true;
}

/* The type a one-node subgraph gives a value seen at run time: tensors keep
 * their dtype and rank (sizes stay free: the unit serves every shape). */
static fbx_type *eager_type(fbx_graph *S, const fbx_type *declared, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TENSOR && v->u.t) {
    int64_t sizes[FBX_MAX_DIMS];
    for (int d = 0; d < v->u.t->ndim; d++) sizes[d] = FBX_SIZE_UNKNOWN;
    return fbx_type_tensor(S->arena, v->u.t->dtype, v->u.t->ndim, sizes, NULL, -1, NULL);
  }
  return fbx_type_clone(S->arena, declared);
}

typedef struct clone_map {
  fbx_ptrmap m; /* node's graph value -> S value */
} clone_map;

static fbx_value *map_value(void *ctx, fbx_value *v) { return fbx_ptrmap_get(&((clone_map *)ctx)->m, v); }

static fbx_status *clone_static(fbx_graph *S, clone_map *cm, fbx_value *v) {
  if (fbx_ptrmap_has(&cm->m, v)) return NULL;
  const fbx_node *d = v->node;
  for (int i = 0; i < d->ninputs; i++) FBX_TRY(clone_static(S, cm, d->inputs[i]));
  fbx_node *c = fbx_node_clone_into(S->block, d, map_value, cm);
  if (!c || fbx_ptrmap_put(&cm->m, v, c->outputs[v->offset])) return fbx_status_nomem();
  return NULL;
}

/* The one-node subgraph of node n for the values it ran on. In-place ops are
 * differentiated as their functional twin (aten::mul_ as aten::mul). */
static fbx_status *eager_subgraph(xgradfn *f, const fbx_node *n, const fbx_ivalue *ins, const fbx_ivalue *outs) {
  fbx_graph *S = fbx_graph_create();
  clone_map cm = {{0}};
  fbx_status *st = S ? NULL : fbx_status_nomem();
  f->S = S;
  if (!st && !(f->in_index = fbx_calloc((size_t)n->ninputs + 1, sizeof *f->in_index))) st = fbx_status_nomem();
  for (int i = 0; i < n->ninputs && !st; i++) {
    fbx_value *v = n->inputs[i];
    if (fbx_ptrmap_has(&cm.m, v)) continue;
    if (static_input(v)) {
      st = clone_static(S, &cm, v);
      continue;
    }
    fbx_type *ty = eager_type(S, v->type, &ins[i]);
    fbx_value *p = ty ? fbx_graph_add_input(S, ty, NULL) : NULL;
    if (!p || fbx_ptrmap_put(&cm.m, v, p)) st = fbx_status_nomem();
    else f->in_index[f->nin++] = i;
  }
  fbx_node *c = NULL;
  if (!st && !(c = fbx_node_clone_into(S->block, n, map_value, &cm))) st = fbx_status_nomem();
  if (!st && fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE)) {
    const char *name = fbx_sym_str(n->kind);
    size_t len = strlen(name);
    fbx_sym fk;
    if (len > 1 && name[len - 1] == '_' && !fbx_sym_intern(&fk, name, len - 1) && fbx_op_kind_known(fk)) c->kind = fk;
  }
  for (int j = 0; c && !st && j < c->noutputs; j++) {
    fbx_type *ty = eager_type(S, c->outputs[j]->type, &outs[j]);
    if (!ty) st = fbx_status_nomem();
    else fbx_value_set_type(c->outputs[j], ty);
    if (!st && fbx_block_add_return(S->block, c->outputs[j])) st = fbx_status_nomem();
  }
  fbx_ptrmap_free(&cm.m);
  f->nout = n->noutputs;
  /* No source locations: the unit serves every node alike (its entries name
   * their node), and its text is the key that finds it. */
  for (fbx_node *x = S ? fbx_block_first(S->block) : NULL; x; x = x->next) x->srcloc = NULL;
  return st;
}

/* "aten::mul (corpus.py:3:8)" */
static char *node_what(const fbx_node *n) {
  return n->srcloc ? xasprintf("%s (%s)", fbx_sym_str(n->kind), n->srcloc) : fbx_strdup(fbx_sym_str(n->kind));
}

static char *signature(const fbx_node *n, const fbx_ivalue *ins) {
  fbx_strbuf b = {0};
  for (int i = 0; i < n->ninputs; i++) {
    const fbx_ivalue *v = &ins[i];
    if (v->kind == FBX_IV_TENSOR && v->u.t) fbx_strbuf_printf(&b, "t%d.%d;", (int)v->u.t->dtype, v->u.t->ndim);
    else if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) {
      fbx_strbuf_printf(&b, "l%d:", v->u.l->n);
      for (int k = 0; k < v->u.l->n; k++) {
        const fbx_ivalue *e = &v->u.l->items[k];
        if (e->kind == FBX_IV_TENSOR && e->u.t) fbx_strbuf_printf(&b, "t%d.%d,", (int)e->u.t->dtype, e->u.t->ndim);
        else fbx_strbuf_printf(&b, "k%d,", (int)e->kind);
      }
      fbx_strbuf_putc(&b, ';');
    } else fbx_strbuf_printf(&b, "k%d;", (int)v->kind);
  }
  for (int i = 0; i < n->noutputs; i++) fbx_strbuf_putc(&b, 'o');
  return fbx_strbuf_take(&b);
}

/* The key of eager unit f in ex->ad_units: S as printed, then which S
 * input is which node input and whether it requires grad. */
static char *unit_key(const xgradfn *f) {
  fbx_strbuf b = {0};
  fbx_graph_print_to(&b, f->S);
  fbx_strbuf_puts(&b, "# inputs:");
  for (int k = 0; k < f->nin; k++) fbx_strbuf_printf(&b, " %d%s", f->in_index[k], f->rg[k] ? "g" : "");
  return fbx_strbuf_take(&b);
}

/* Node n's new entry: its one-node subgraph for these values, and the shared
 * unit of that subgraph (built when it is the first of its kind). Takes sig.
 * ex->ad_lock held. */
static fbx_status *new_eager_entry(fbx_executor *ex, const fbx_node *n, const fbx_ivalue *ins, const fbx_ivalue *outs,
                                   uint64_t rgmask, char *sig, xeager **out) {
  *out = NULL;
  xeager *e = fbx_calloc(1, sizeof *e);
  if (!e) {
    fbx_free(sig);
    return fbx_status_nomem();
  }
  e->base.backward = xeager_backward;
  e->node = n;
  e->rgmask = rgmask;
  e->sig = sig;
  e->what = node_what(n);
  e->base.what = e->what;
  xgradfn *f = fbx_calloc(1, sizeof *f);
  fbx_status *st = e->what && f ? NULL : fbx_status_nomem();
  if (!st) {
    f->base.backward = xgradfn_backward;
    f->owner = ex;
    f->what = fbx_strdup(fbx_sym_str(n->kind));
    f->base.what = f->what;
    st = f->what ? eager_subgraph(f, n, ins, outs) : fbx_status_nomem();
  }
  if (!st && !(f->rg = fbx_calloc((size_t)f->nin + 1, sizeof *f->rg))) st = fbx_status_nomem();
  const fbx_node *sn = !st ? fbx_block_last(f->S->block) : NULL; /* after the constants it uses */
  bool any = false;
  for (int k = 0; !st && k < f->nin; k++) {
    int i = f->in_index[k];
    f->rg[k] = i < 64 && ((rgmask >> i) & 1) && fbx_grad_input_differentiable(sn, i);
    any |= f->rg[k];
  }
  if (!st && !fbx_grad_has_formula(sn)) {
    e->no_grad = n->srcloc ? xasprintf("%s has no formula (%s)", fbx_sym_str(n->kind), n->srcloc)
                           : xasprintf("%s has no formula", fbx_sym_str(n->kind));
    if (!e->no_grad) st = fbx_status_nomem();
  } else if (!st && !any) {
    e->constant = true;
  } else if (!st) {
    char *key = unit_key(f);
    xgradfn *unit = key ? fbx_strmap_get(&ex->ad_units, key) : NULL;
    if (!key) st = fbx_status_nomem();
    else if (unit) fbx_free(key);
    else {
      f->sig = key;
      fbx_work_add(FBX_WORK_EAGER_UNIT, 1);
      st = xgradfn_build(f, false, false);
      if (!st && fbx_strmap_put(&ex->ad_units, f->sig, f)) st = fbx_status_nomem();
      if (!st) {
        unit = f;
        f = NULL; /* ex->ad_units owns it */
      }
    }
    if (!st && unit->no_grad) {
      e->no_grad = xasprintf("%s: %s", e->what, unit->why);
      if (!e->no_grad) st = fbx_status_nomem();
    } else if (!st) {
      e->unit = unit;
    }
  }
  xgradfn_free(f);
  if (st) xeager_free(e);
  else *out = e;
  return st;
}

/* Node n's entry for these values (cached in the executor). */
static fbx_status *eager_entry(fbx_executor *ex, const fbx_node *n, const fbx_ivalue *ins, const fbx_ivalue *outs,
                               uint64_t rgmask, xeager **out) {
  char *sig = signature(n, ins);
  if (!sig) return fbx_status_nomem();
  fbx_status *st = NULL;
  pthread_mutex_lock(&ex->ad_lock);
  xeager *head = fbx_ptrmap_get(&ex->ad_eager, n), *e = head;
  while (e && (e->rgmask != rgmask || strcmp(e->sig, sig))) e = e->next;
  if (!e) {
    st = new_eager_entry(ex, n, ins, outs, rgmask, sig, &e);
    sig = NULL;
    if (!st) {
      e->next = head;
      if (fbx_ptrmap_put(&ex->ad_eager, n, e)) {
        st = fbx_status_nomem();
        xeager_free(e);
        e = NULL;
      }
    }
  }
  pthread_mutex_unlock(&ex->ad_lock);
  fbx_free(sig);
  *out = e;
  return st;
}

static fbx_status *tape_before(void *ctx, const fbx_node *n, const fbx_ivalue *ins, int nin, const fbx_ivalue *outs,
                               int nout) {
  (void)outs;
  (void)nout;
  runctx *c = ctx;
  return fbx_tape_before_inplace(c->tape, n, ins, nin);
}

static fbx_status *tape_record(void *ctx, const fbx_node *n, const fbx_ivalue *ins, int nin, const fbx_ivalue *outs,
                               int nout) {
  runctx *c = ctx;
  if (is_routing(n->kind) || n->nblocks || fbx_node_subgraph(n)) return NULL;
  uint64_t rgmask = 0;
  for (int i = 0; i < nin; i++)
    if (fbx_tape_requires_grad(c->tape, &ins[i])) rgmask |= (uint64_t)1 << (i < 63 ? i : 63);
  bool inplace = fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE);
  /* A write that involves no gradient may still land in a view of a tensor
   * that requires grad: the tape rebases that tensor. */
  if (!rgmask) return inplace ? fbx_tape_mark_constant(c->tape, outs, nout) : NULL;
  bool fresh = false;
  for (int j = 0; j < nout; j++) fresh |= new_float_output(&outs[j], ins, nin);
  if (!fresh && !(inplace && nout > 0 && outs[0].kind == FBX_IV_TENSOR && outs[0].u.t &&
                  fbx_dtype_is_floating(outs[0].u.t->dtype)))
    return NULL; /* it only routes its inputs (or yields no floating tensor) */
  xeager *e = NULL;
  FBX_TRY(eager_entry(c->ex, n, ins, outs, rgmask, &e));
  if (e->constant) return fbx_tape_mark_constant(c->tape, outs, nout);
  if (e->no_grad) return fbx_tape_mark_no_grad(c->tape, outs, nout, e->no_grad);
  xgradfn *f = e->unit;
  fbx_ivalue *sin = fbx_calloc((size_t)f->nin + 1, sizeof *sin);
  if (!sin) return fbx_status_nomem();
  for (int k = 0; k < f->nin; k++) sin[k] = ins[f->in_index[k]];
  fbx_ivalue *fouts = NULL, *saved = NULL;
  int nf = f->fex ? fbx_graph_noutputs(f->grad->forward) : 0;
  fbx_status *st = NULL;
  if (f->fex) {
    /* F saves intermediates the node alone does not give: run F too. */
    fouts = fbx_calloc((size_t)nf + 1, sizeof *fouts);
    st = fouts ? fbx_executor_run_values(f->fex, sin, f->nin, fouts, nf, c->seed) : fbx_status_nomem();
  }
  if (!st) st = gather_saved(f, sin, outs, fouts, &saved);
  if (!st) st = fbx_tape_record(c->tape, &e->base, sin, f->rg, f->nin, outs, nout, saved, f->grad->nsaved, inplace);
  for (int k = 0; fouts && k < nf; k++) fbx_iv_release(&fouts[k]);
  fbx_free(fouts);
  fbx_free(saved);
  fbx_free(sin);
  return st;
}

/* ---- DifferentiableGraph plans ------------------------------------------------------------ */

static void xdgver_free(xdgver *v) {
  if (!v) return;
  for (xgradfn *f = v->fns, *next; f; f = next) {
    next = f->next;
    xgradfn_free(f);
  }
  fbx_graph_destroy(v->S);
  fbx_free(v->guard);
  fbx_free(v);
}

static void xdg_free(xdg *d) {
  for (xdgver *v = d->versions, *next; v; v = next) {
    next = atomic_load_explicit(&v->next, memory_order_relaxed);
    xdgver_free(v);
  }
  fbx_interp_destroy(d->eager);
  fbx_graph_destroy(d->eager_graph);
  fbx_profile_free(&d->profile);
  fbx_free(d);
}

void fbx_xgplan_free(fbx_xgplan *p) {
  if (!p) return;
  for (xdg *d = p->dgs, *next; d; d = next) {
    next = d->next;
    xdg_free(d);
  }
  fbx_free(p->by_node);
  fbx_interp_destroy(p->opt_interp);
  fbx_graph_destroy(p->opt);
  fbx_profile_free(&p->profile);
  fbx_free(p->mask);
  fbx_free(p);
}

void fbx_executor_grad_free_all(fbx_executor *ex) {
  for (fbx_xgplan *p = ex->gplans, *next; p; p = next) {
    next = p->next;
    fbx_xgplan_free(p);
  }
  for (size_t i = 0; i < ex->ad_eager.cap; i++) {
    if (!ex->ad_eager.keys[i]) continue;
    for (xeager *e = ex->ad_eager.vals[i], *next; e; e = next) {
      next = e->next;
      xeager_free(e);
    }
  }
  fbx_ptrmap_free(&ex->ad_eager);
  for (size_t i = 0; i < ex->ad_units.cap; i++)
    if (ex->ad_units.keys[i]) xgradfn_free(ex->ad_units.vals[i]);
  fbx_strmap_free(&ex->ad_units);
}

typedef struct typing {
  const fbx_profile *prof;
  uint32_t *orig_of;
  uint32_t n;
  fbx_type **saved;
  fbx_arena *arena;
  fbx_spec_kind kind;
} typing;

/* What a DifferentiableGraph version keeps of an observation: static levels
 * keep exact sizes (so gradient formulas can drop the reductions that undo
 * broadcasting when shapes already agree), dynamic ones dtype, rank and
 * size-1 dims. Strides are never specialized on: the forward and backward
 * executors guard their own fusion groups. */
static void specialize_obs(fbx_obs *o, fbx_spec_kind kind) {
  if (kind != FBX_SPEC_STATIC) {
    fbx_obs_generalize(o);
    return;
  }
  o->strides_known = false;
  memset(o->strides, 0, sizeof o->strides);
}

static void pair_values(uint32_t *orig_of, const fbx_block *a, const fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(a) && i < fbx_block_nparams(b); i++)
    orig_of[fbx_block_param(b, i)->id] = fbx_block_param(a, i)->id;
  const fbx_node *na = fbx_block_first(a), *nb = fbx_block_first(b);
  for (; na && nb; na = na->next, nb = nb->next) {
    for (int i = 0; i < na->noutputs && i < nb->noutputs; i++) orig_of[nb->outputs[i]->id] = na->outputs[i]->id;
    for (int k = 0; k < na->nblocks && k < nb->nblocks; k++) pair_values(orig_of, na->blocks[k], nb->blocks[k]);
  }
}

static const fbx_obs *obs_of(const typing *ty, const fbx_value *v) {
  if (v->id >= ty->n || ty->orig_of[v->id] == UINT32_MAX) return NULL;
  uint32_t o = ty->orig_of[v->id];
  return o < (uint32_t)ty->prof->n ? &ty->prof->obs[o] : NULL;
}

/* Give (restore = false) or take back (true) the profiled types, specialized
 * for ty->kind. */
static void retype_block(typing *ty, fbx_block *b, bool restore);
static void retype(typing *ty, fbx_value *v, bool restore) {
  if (v->id >= ty->n) return;
  if (restore) {
    if (ty->saved[v->id]) fbx_value_set_type(v, ty->saved[v->id]);
    return;
  }
  const fbx_obs *o = obs_of(ty, v);
  if (!o) return;
  fbx_obs g = *o;
  specialize_obs(&g, ty->kind);
  fbx_type *t = fbx_obs_type(ty->arena, &g, v->type);
  if (!t) return;
  ty->saved[v->id] = v->type;
  fbx_value_set_type(v, t);
}

static void retype_block(typing *ty, fbx_block *b, bool restore) {
  for (int i = 0; i < fbx_block_nparams(b); i++) retype(ty, fbx_block_param(b, i), restore);
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int i = 0; i < n->noutputs; i++) retype(ty, n->outputs[i], restore);
    for (int k = 0; k < n->nblocks; k++) retype_block(ty, n->blocks[k], restore);
  }
}

fbx_graph *fbx_xfn_erased_clone(const fbx_graph *sub); /* function.c */

static fbx_status *collect_dgs(fbx_xgplan *p, typing *ty, fbx_block *b) {
  for (fbx_node *n = fbx_block_first(b); n; n = n->next) {
    for (int k = 0; k < n->nblocks; k++) FBX_TRY(collect_dgs(p, ty, n->blocks[k]));
    if (n->kind != FBX_SYM_prim_DifferentiableGraph || !fbx_node_subgraph(n)) continue;
    xdg *d = fbx_calloc(1, sizeof *d);
    if (!d) return fbx_status_nomem();
    d->next = p->dgs;
    p->dgs = d;
    p->ndgs++;
    d->node = n;
    d->nin = n->ninputs;
    atomic_init(&d->spent, false);
    xdgver *v = fbx_calloc(1, sizeof *v);
    if (!v) return fbx_status_nomem();
    d->versions = d->last = v;
    v->kind = ty->kind;
    v->nin = n->ninputs;
    atomic_init(&v->next, NULL);
    v->guard = fbx_calloc((size_t)n->ninputs + 1, sizeof *v->guard);
    if (!v->guard || !(v->S = fbx_graph_clone(fbx_node_subgraph(n)))) return fbx_status_nomem();
    for (int i = 0; i < n->ninputs; i++) {
      const fbx_obs *o = obs_of(ty, n->inputs[i]);
      v->guard[i].dtype = FBX_DTYPE_UNDEFINED;
      v->guard[i].ndim = -1;
      if (!o) continue;
      v->guard[i] = *o;
      specialize_obs(&v->guard[i], ty->kind);
    }
    if (!(d->eager_graph = fbx_xfn_erased_clone(fbx_node_subgraph(n)))) return fbx_status_nomem();
    FBX_TRY(fbx_interp_create(&d->eager, d->eager_graph));
    if (n->id < p->nby_node) p->by_node[n->id] = d;
    /* Outside the DifferentiableGraph nothing is guarded. */
    for (int i = 0; i < n->noutputs; i++)
      if (n->outputs[i]->type && n->outputs[i]->type->kind == FBX_TYPE_TENSOR)
        fbx_value_set_type(n->outputs[i], fbx_type_tensor_any());
  }
  return NULL;
}

static fbx_status *build_plan(fbx_executor *ex, fbx_xgplan *p) {
  fbx_graph *opt = fbx_graph_clone(ex->graph);
  if (!opt) return fbx_status_nomem();
  p->opt = opt;
  /* Level 0 of the strategy; with a budget of 0 the subgraphs still get the
   * generalized types (their only version then serves every shape). */
  fbx_spec_kind kind = fbx_strategy_kind_at(&ex->strategy, 0);
  typing ty = {.prof = &p->profile, .n = opt->next_value_id, .arena = opt->arena,
               .kind = kind == FBX_SPEC_STATIC ? kind : FBX_SPEC_DYNAMIC};
  ty.orig_of = fbx_malloc(sizeof *ty.orig_of * (ty.n + 1));
  ty.saved = fbx_calloc(ty.n + 1, sizeof *ty.saved);
  fbx_status *st = ty.orig_of && ty.saved ? NULL : fbx_status_nomem();
  if (!st) {
    memset(ty.orig_of, 0xff, sizeof *ty.orig_of * (ty.n + 1));
    pair_values(ty.orig_of, ex->graph->block, opt->block);
    st = fbx_pass_pipeline(opt, "default");
  }
  int created = 0;
  if (!st) {
    retype_block(&ty, opt->block, false);
    st = fbx_autodiff_create_subgraphs(opt, p->mask, DIFFGRAPH_MIN_SIZE, &created);
    retype_block(&ty, opt->block, true);
  }
  if (!st) {
    p->nby_node = opt->next_node_id;
    p->by_node = fbx_calloc(p->nby_node + 1, sizeof *p->by_node);
    if (!p->by_node) st = fbx_status_nomem();
  }
  if (!st) st = collect_dgs(p, &ty, opt->block);
  if (!st) st = fbx_interp_create(&p->opt_interp, opt);
  fbx_free(ty.orig_of);
  fbx_free(ty.saved);
  return st;
}

/* Build the plan after its profiling runs (ex->lock held). */
static void finish_profiling_locked(fbx_executor *ex, fbx_xgplan *p) {
  fbx_status *st = build_plan(ex, p);
  if (st) {
    fbx_executor_event(ex, "gradient mode: building the DifferentiableGraph plan failed, the graph runs on the eager "
                           "tape: %s", fbx_status_message(st));
    fbx_status_free(st);
    atomic_store_explicit(&p->state, PLAN_EAGER, memory_order_release);
    return;
  }
  atomic_fetch_add(&ex->diff_graphs, p->ndgs);
  fbx_spec_kind kind = fbx_strategy_kind_at(&ex->strategy, 0);
  if (kind != FBX_SPEC_NONE) atomic_fetch_add(kind == FBX_SPEC_STATIC ? &ex->specs_static : &ex->specs_dynamic, p->ndgs);
  fbx_executor_event(ex, "gradient mode: %d DifferentiableGraph%s (level 0, %s) after %d profiling run%s", p->ndgs,
                     p->ndgs == 1 ? "" : "s", p->ndgs ? fbx_spec_kind_name(p->dgs->versions->kind) : "-",
                     p->profiled, p->profiled == 1 ? "" : "s");
  fbx_profile_free(&p->profile);
  atomic_store_explicit(&p->state, PLAN_READY, memory_order_release);
}

static fbx_status *get_plan(fbx_executor *ex, const bool *mask, int n, fbx_xgplan **out) {
  fbx_status *st = NULL;
  pthread_mutex_lock(&ex->lock);
  fbx_xgplan *p = ex->gplans;
  while (p && memcmp(p->mask, mask, sizeof *mask * (size_t)n)) p = p->next;
  if (!p) {
    p = fbx_calloc(1, sizeof *p);
    if (!p || !(p->mask = fbx_calloc((size_t)n + 1, sizeof *p->mask))) st = fbx_status_nomem();
    if (!st) st = fbx_profile_init(&p->profile, (int)ex->graph->next_value_id);
    if (st) {
      fbx_xgplan_free(p);
      p = NULL;
    } else {
      memcpy(p->mask, mask, sizeof *mask * (size_t)n);
      p->nmask = n;
      atomic_init(&p->state, PLAN_PROFILING);
      p->next = ex->gplans;
      ex->gplans = p;
      if (ex->profiling_runs == 0) finish_profiling_locked(ex, p);
    }
  }
  pthread_mutex_unlock(&ex->lock);
  *out = p;
  return st;
}

static uint64_t runtime_rg(const fbx_tape *t, const fbx_ivalue *ins, int nin) {
  uint64_t m = 0;
  for (int i = 0; i < nin; i++)
    if (fbx_tape_requires_grad(t, &ins[i])) m |= (uint64_t)1 << (i < 63 ? i : 63);
  return m;
}

/* The unit of a DifferentiableGraph for the inputs that require grad now. */
static fbx_status *dg_unit(fbx_executor *ex, xdg *d, xdgver *ver, uint64_t rgmask, xgradfn **out) {
  fbx_status *st = NULL;
  pthread_mutex_lock(&ex->ad_lock);
  xgradfn *f = ver->fns;
  while (f && f->rgmask != rgmask) f = f->next;
  if (!f) {
    f = fbx_calloc(1, sizeof *f);
    if (!f) st = fbx_status_nomem();
    else {
      f->base.backward = xgradfn_backward;
      f->owner = ex;
      f->node = d->node;
      f->rgmask = rgmask;
      const char *name = d->node->noutputs ? d->node->outputs[0]->name : "?";
      f->what = ver->level ? xasprintf("prim::DifferentiableGraph %%%s (level %d)", name, ver->level)
                           : xasprintf("prim::DifferentiableGraph %%%s", name);
      f->base.what = f->what;
      f->S = fbx_graph_clone(ver->S);
      f->nin = d->node->ninputs;
      f->nout = d->node->noutputs;
      f->rg = fbx_calloc((size_t)f->nin + 1, sizeof *f->rg);
      if (!f->what || !f->S || !f->rg) st = fbx_status_nomem();
      for (int i = 0; !st && i < f->nin; i++) f->rg[i] = i < 64 && ((rgmask >> i) & 1);
      if (!st) st = xgradfn_build(f, true, true);
      if (!st && f->no_grad) {
        fbx_executor_event(ex, "%s runs on the eager tape: %s", f->what, f->no_grad);
      }
      if (st) {
        xgradfn_free(f);
        f = NULL;
      } else {
        f->next = ver->fns;
        ver->fns = f;
      }
    }
  }
  pthread_mutex_unlock(&ex->ad_lock);
  *out = f;
  return st;
}

static fbx_status *run_eager_dg(runctx *c, xdg *d, const fbx_ivalue *ins, int nin, fbx_ivalue *outs,
                                fbx_profile *observe) {
  fbx_interp_stats is = {0};
  fbx_run_opts o = {.seed = c->seed, .before = tape_before, .record = tape_record, .record_ctx = c, .stats = &is};
  if (observe) {
    o.observe = fbx_profile_observe;
    o.observe_ctx = observe;
  }
  fbx_status *st = fbx_interp_run(d->eager, ins, nin, outs, &o);
  atomic_fetch_add(&c->ex->interp_ops, is.kernels_run);
  return st;
}

static const char *dg_name(const xdg *d) { return d->node->noutputs ? d->node->outputs[0]->name : "?"; }

/* A new version of d at `level` from d->profile (ex->lock held). */
static fbx_status *new_version_locked(xdg *d, int level, fbx_spec_kind kind, xdgver **out) {
  xdgver *v = fbx_calloc(1, sizeof *v);
  if (!v) return fbx_status_nomem();
  v->level = level;
  v->kind = kind;
  v->nin = d->nin;
  atomic_init(&v->next, NULL);
  fbx_graph *S = v->S = fbx_graph_clone(d->eager_graph);
  typing ty = {.prof = &d->profile, .n = S ? S->next_value_id : 0, .arena = S ? S->arena : NULL, .kind = kind};
  ty.orig_of = fbx_malloc(sizeof *ty.orig_of * (ty.n + 1));
  ty.saved = fbx_calloc(ty.n + 1, sizeof *ty.saved);
  v->guard = fbx_calloc((size_t)d->nin + 1, sizeof *v->guard);
  fbx_status *st = S && ty.orig_of && ty.saved && v->guard ? NULL : fbx_status_nomem();
  if (!st) {
    memset(ty.orig_of, 0xff, sizeof *ty.orig_of * (ty.n + 1));
    pair_values(ty.orig_of, d->eager_graph->block, S->block);
    retype_block(&ty, S->block, false);
    for (int i = 0; i < d->nin; i++) {
      const fbx_obs *o = obs_of(&ty, fbx_graph_input(S, i));
      v->guard[i].dtype = FBX_DTYPE_UNDEFINED;
      v->guard[i].ndim = -1;
      if (!o) continue;
      v->guard[i] = *o;
      specialize_obs(&v->guard[i], kind);
    }
  }
  fbx_free(ty.orig_of);
  fbx_free(ty.saved);
  if (st) {
    xdgver_free(v);
    v = NULL;
  }
  *out = v;
  return st;
}

/* No version's guard accepts these inputs: run d on the eager tape, and
 * profile the run for the next version (respecializing like a fusion
 * group's fallback: one level deeper, as the strategy says) until the
 * budget is spent. */
static fbx_status *dg_respecialize(runctx *c, xdg *d, const fbx_ivalue *ins, int nin, fbx_ivalue *outs,
                                   const char *why) {
  fbx_executor *ex = c->ex;
  if (atomic_load_explicit(&d->spent, memory_order_acquire)) return run_eager_dg(c, d, ins, nin, outs, NULL);
  fbx_profile local;
  FBX_TRY(fbx_profile_init(&local, (int)d->eager_graph->next_value_id));
  for (int i = 0; i < nin; i++) {
    uint32_t id = fbx_graph_input(d->eager_graph, i)->id;
    if (id < (uint32_t)local.n) fbx_obs_record(&local.obs[id], &ins[i]);
  }
  fbx_status *st = run_eager_dg(c, d, ins, nin, outs, &local);
  if (st) {
    fbx_profile_free(&local);
    return st;
  }
  pthread_mutex_lock(&ex->lock);
  if (!atomic_load_explicit(&d->spent, memory_order_relaxed)) {
    int level = d->last->level + 1;
    fbx_spec_kind kind = fbx_strategy_kind_at(&ex->strategy, level);
    if (kind == FBX_SPEC_NONE) {
      fbx_executor_event(ex, "prim::DifferentiableGraph %%%s at level %d: specialization budget spent (%s), shapes "
                             "its guards reject run on the eager tape",
                         dg_name(d), d->last->level, why);
      atomic_store_explicit(&d->spent, true, memory_order_release);
    } else if (!d->profile.obs && (st = fbx_profile_init(&d->profile, local.n))) {
      /* out of memory: this run is still good, the next one tries again */
    } else {
      fbx_profile_merge(&d->profile, &local);
      d->profiled++;
      atomic_fetch_add(&ex->profiling_runs_done, 1);
      if (d->profiled >= (ex->profiling_runs > 0 ? ex->profiling_runs : 1)) {
        xdgver *v = NULL;
        st = new_version_locked(d, level, kind, &v);
        if (!st) {
          atomic_fetch_add(kind == FBX_SPEC_STATIC ? &ex->specs_static : &ex->specs_dynamic, 1);
          fbx_executor_event(ex, "respecializing prim::DifferentiableGraph %%%s (level %d, %s) after guard "
                                 "failure: %s; %d profiling run%s",
                             dg_name(d), level, fbx_spec_kind_name(kind), why, d->profiled,
                             d->profiled == 1 ? "" : "s");
          atomic_store_explicit(&d->last->next, v, memory_order_release);
          d->last = v;
          fbx_profile_free(&d->profile);
          d->profiled = 0;
        }
      }
    }
  }
  pthread_mutex_unlock(&ex->lock);
  fbx_profile_free(&local);
  if (st) {
    /* The outputs are good; only the next version could not be built. */
    fbx_executor_event(ex, "respecializing prim::DifferentiableGraph %%%s failed: %s", dg_name(d),
                       fbx_status_message(st));
    fbx_status_free(st);
  }
  return NULL;
}

static fbx_status *dg_run(void *ctx, const fbx_node *node, const fbx_ivalue *ins, int nin, fbx_ivalue *outs,
                          int nout) {
  runctx *c = ctx;
  fbx_executor *ex = c->ex;
  xdg *d = node->id < c->plan->nby_node ? c->plan->by_node[node->id] : NULL;
  if (!d || nin != d->nin) return fbx_status_new(FBX_ERR_INTERNAL, "DifferentiableGraph node without its runtime");
  uint64_t rg = runtime_rg(c->tape, ins, nin);
  if (!rg) return run_eager_dg(c, d, ins, nin, outs, NULL); /* nothing to differentiate: no entry */
  fbx_strbuf why = {0};
  xdgver *ver = d->versions;
  while (ver) {
    fbx_strbuf_free(&why); /* the reason given is the last level's */
    if (fbx_guard_check(ver->guard, nin, ins, &why)) break;
    ver = atomic_load_explicit(&ver->next, memory_order_acquire);
  }
  if (!ver) {
    atomic_fetch_add(&ex->guard_failures, 1);
    fbx_status *st = dg_respecialize(c, d, ins, nin, outs, why.data ? why.data : "?");
    fbx_strbuf_free(&why);
    return st;
  }
  fbx_strbuf_free(&why);
  xgradfn *f = NULL;
  FBX_TRY(dg_unit(ex, d, ver, rg, &f));
  if (f->no_grad) return run_eager_dg(c, d, ins, nin, outs, NULL);
  int nf = fbx_graph_noutputs(f->grad->forward);
  fbx_ivalue *fouts = fbx_calloc((size_t)nf + 1, sizeof *fouts);
  if (!fouts) return fbx_status_nomem();
  fbx_status *st = fbx_executor_run_values(f->fex, ins, nin, fouts, nf, c->seed);
  fbx_ivalue *saved = NULL;
  if (!st) st = gather_saved(f, ins, fouts, fouts, &saved);
  if (!st) st = fbx_tape_record(c->tape, &f->base, ins, f->rg, nin, fouts, nout, saved, f->grad->nsaved, false);
  if (!st)
    for (int j = 0; j < nout; j++) {
      outs[j] = fouts[j];
      fouts[j] = fbx_iv_none();
    }
  for (int k = 0; k < nf; k++) fbx_iv_release(&fouts[k]);
  fbx_free(fouts);
  fbx_free(saved);
  return st;
}

/* ---- forward and backward ------------------------------------------------------------------ */

/* Flattens v's tuples into out[*n..cap); counts past cap without writing. */
static void flatten(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < v->u.l->n; i++) flatten(&v->u.l->items[i], out, n, cap);
    return;
  }
  if (*n < cap) {
    out[*n] = *v;
    fbx_iv_retain(&out[*n]);
  }
  (*n)++;
}

static fbx_status *forward_run(fbx_executor *ex, fbx_xgplan *p, runctx *c, const fbx_ivalue *ins, int nin,
                               fbx_ivalue *outs) {
  int state = atomic_load_explicit(&p->state, memory_order_acquire);
  fbx_interp_stats is = {0};
  fbx_run_opts o = {.seed = c->seed, .before = tape_before, .record = tape_record, .record_ctx = c, .stats = &is};
  fbx_status *st;
  if (state == PLAN_READY) {
    o.run_group = dg_run;
    o.run_group_ctx = c;
    st = fbx_interp_run(p->opt_interp, ins, nin, outs, &o);
    atomic_fetch_add(&ex->interp_ops, is.kernels_run);
    return st;
  }
  if (state == PLAN_EAGER) {
    st = fbx_interp_run(ex->top->interp, ins, nin, outs, &o);
    atomic_fetch_add(&ex->interp_ops, is.kernels_run);
    return st;
  }
  fbx_profile local;
  FBX_TRY(fbx_profile_init(&local, (int)ex->graph->next_value_id));
  for (int i = 0; i < nin; i++) {
    uint32_t id = fbx_graph_input(ex->graph, i)->id;
    if (id < (uint32_t)local.n) fbx_obs_record(&local.obs[id], &ins[i]);
  }
  o.observe = fbx_profile_observe;
  o.observe_ctx = &local;
  st = fbx_interp_run(ex->top->interp, ins, nin, outs, &o);
  atomic_fetch_add(&ex->interp_ops, is.kernels_run);
  if (!st) {
    pthread_mutex_lock(&ex->lock);
    if (atomic_load_explicit(&p->state, memory_order_relaxed) == PLAN_PROFILING) {
      fbx_profile_merge(&p->profile, &local);
      p->profiled++;
      atomic_fetch_add(&ex->profiling_runs_done, 1);
      if (p->profiled >= ex->profiling_runs) finish_profiling_locked(ex, p);
    }
    pthread_mutex_unlock(&ex->lock);
  }
  fbx_profile_free(&local);
  return st;
}

void fbx_grad_free(fbx_grad_handle *h) {
  if (!h) return;
  fbx_tape_destroy(h->tape);
  for (int i = 0; h->inputs && i < h->nin; i++) fbx_iv_release(&h->inputs[i]);
  for (int i = 0; h->outs && i < h->nout; i++) fbx_iv_release(&h->outs[i]);
  fbx_free(h->inputs);
  fbx_free(h->outs);
  fbx_free(h);
}

fbx_status *fbx_executor_forward_values(fbx_executor *ex, const fbx_ivalue *inputs, int nin,
                                        const bool *requires_grad, fbx_ivalue *outputs, int nout, uint64_t seed,
                                        fbx_grad_handle **handle) {
  if (handle) *handle = NULL;
  if (!ex || (nin > 0 && !inputs) || !outputs || !handle)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_forward: NULL argument");
  int want = fbx_graph_noutputs(ex->graph);
  for (int i = 0; i < nout; i++) outputs[i] = fbx_iv_none();
  if (nout != want)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "the graph gives %d output%s, room for %d given", want,
                          want == 1 ? "" : "s", nout);
  FBX_TRY(fbx_executor_check_inputs(ex, inputs, nin));
  bool *mask = fbx_calloc((size_t)nin + 1, sizeof *mask);
  fbx_grad_handle *h = fbx_calloc(1, sizeof *h);
  fbx_status *st = mask && h ? NULL : fbx_status_nomem();
  if (!st) {
    h->ex = ex;
    atomic_init(&h->used, false);
    h->nin = nin;
    h->nout = ex->nflat_outputs;
    h->inputs = fbx_calloc((size_t)nin + 1, sizeof *h->inputs);
    h->outs = fbx_calloc((size_t)h->nout + 1, sizeof *h->outs);
    if (!h->inputs || !h->outs) st = fbx_status_nomem();
  }
  if (!st) st = fbx_tape_create(&h->tape);
  for (int i = 0; i < nin && !st; i++) {
    const fbx_ivalue *v = &inputs[i];
    bool floating = v->kind == FBX_IV_TENSOR && v->u.t && fbx_dtype_is_floating(v->u.t->dtype);
    mask[i] = requires_grad ? requires_grad[i] : floating;
    h->inputs[i] = *v;
    fbx_iv_retain(&h->inputs[i]);
    if (mask[i] && !floating)
      st = fbx_status_new(FBX_ERR_INVALID_ARG, "input %d (%%%s): only floating-point tensors can require grad", i,
                          fbx_graph_input(ex->graph, i)->name);
    else if (mask[i]) st = fbx_tape_watch(h->tape, v);
  }
  fbx_xgplan *p = NULL;
  if (!st) st = get_plan(ex, mask, nin, &p);
  runctx c = {.ex = ex, .plan = p, .tape = h ? h->tape : NULL, .seed = seed};
  if (!st) st = forward_run(ex, p, &c, inputs, nin, outputs);
  if (!st) st = fbx_executor_check_outputs(ex, outputs, nout);
  if (!st) {
    int n = 0;
    for (int i = 0; i < nout; i++) flatten(&outputs[i], h->outs, &n, h->nout);
    atomic_fetch_add(&ex->forward_runs, 1);
    *handle = h;
  } else {
    for (int i = 0; i < nout; i++) fbx_iv_release(&outputs[i]);
    fbx_grad_free(h);
  }
  fbx_free(mask);
  return st;
}

fbx_status *fbx_grad_unborrow(fbx_grad_handle *h, const fbx_tensor *x, bool *kept) {
  int n = 0;
  fbx_status *st = h->tape ? fbx_tape_unshare_saved(h->tape, x, &n) : NULL;
  if (kept) *kept = n > 0;
  return st;
}

const fbx_tensor *fbx_grad_input_tensor(const fbx_grad_handle *h, int i) {
  if (!h || i < 0 || i >= h->nin || h->inputs[i].kind != FBX_IV_TENSOR) return NULL;
  return h->inputs[i].u.t;
}

fbx_status *fbx_executor_backward_values(fbx_grad_handle *h, const fbx_ivalue *grad_outputs, int n,
                                         fbx_ivalue *grad_inputs, int nin) {
  if (!h || (n > 0 && !grad_outputs) || (nin > 0 && !grad_inputs))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_executor_backward: NULL argument");
  for (int i = 0; i < nin; i++) grad_inputs[i] = fbx_iv_none();
  if (n != h->nout)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "backward: the graph gives %d output%s, %d gradient%s given", h->nout,
                          h->nout == 1 ? "" : "s", n, n == 1 ? "" : "s");
  if (nin != h->nin)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "backward: the graph takes %d input%s, room for %d gradient%s given",
                          h->nin, h->nin == 1 ? "" : "s", nin, nin == 1 ? "" : "s");
  if (atomic_exchange(&h->used, true))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "backward already ran on this handle (its saved values are freed); "
                                               "run forward again for another backward");
  fbx_status *st = fbx_tape_backward(h->tape, h->outs, grad_outputs, n, h->inputs, grad_inputs, nin);
  /* A gradient has its input's floating dtype, as PyTorch's engine casts it
   * (validate_outputs): a backward graph built without IR types (no
   * profiling run) cannot convert a float64 gradient of a float32 input
   * itself. */
  for (int i = 0; !st && i < nin; i++) {
    const fbx_ivalue *x = &h->inputs[i], *g = &grad_inputs[i];
    if (x->kind != FBX_IV_TENSOR || g->kind != FBX_IV_TENSOR || g->u.t->dtype == x->u.t->dtype ||
        !fbx_dtype_is_floating(x->u.t->dtype) || !fbx_dtype_is_floating(g->u.t->dtype))
      continue;
    fbx_tensor *c = NULL;
    if ((st = fbx_tensor_clone_as(&c, g->u.t, x->u.t->dtype))) break;
    fbx_iv_release(&grad_inputs[i]);
    grad_inputs[i] = fbx_iv_tensor(c);
  }
  if (st)
    for (int i = 0; i < nin; i++) fbx_iv_release(&grad_inputs[i]);
  /* What the forward saved is not needed any more, whatever happened. */
  fbx_tape_destroy(h->tape);
  h->tape = NULL;
  atomic_fetch_add(&h->ex->backward_runs, 1);
  return st;
}

/* ---- stats and explain ------------------------------------------------------------------------ */

/* Add sub-executor counters b to *s: every counter but the parent's own
 * (runs, forward/backward runs, DifferentiableGraphs); kernel runs, launches
 * and interpreted ops go to the backward ones when `backward`. */
static void add_sub_stats(fbx_executor_stats *s, const fbx_executor_stats *b, bool backward) {
  s->profiling_runs += b->profiling_runs;
  s->specializations += b->specializations;
  s->static_specializations += b->static_specializations;
  s->dynamic_specializations += b->dynamic_specializations;
  s->guard_failures += b->guard_failures;
  s->fallbacks += b->fallbacks;
  s->fallbacks_unfused += b->fallbacks_unfused;
  s->fallbacks_compile += b->fallbacks_compile;
  s->fallbacks_run += b->fallbacks_run;
  s->fallbacks_declined += b->fallbacks_declined;
  s->optimize_failures += b->optimize_failures;
  s->groups += b->groups;
  s->kernels_compiled += b->kernels_compiled;
  s->compile_failures += b->compile_failures;
  s->compile_unsupported += b->compile_unsupported;
  s->memory_cache_hits += b->memory_cache_hits;
  s->disk_cache_hits += b->disk_cache_hits;
  s->compile_seconds += b->compile_seconds;
  if (backward) {
    s->backward_kernel_runs += b->kernel_runs;
    s->backward_kernel_launches += b->kernel_launches;
    s->backward_interpreted_ops += b->interpreted_ops;
  } else {
    s->kernel_runs += b->kernel_runs;
    s->kernel_launches += b->kernel_launches;
    s->interpreted_ops += b->interpreted_ops;
  }
}

static void add_sub(fbx_executor_stats *s, fbx_executor *sub, bool backward) {
  if (!sub) return;
  fbx_executor_stats b = {.struct_size = sizeof b};
  fbx_executor_stats_get(sub, &b);
  add_sub_stats(s, &b, backward);
}

/* Add unit f's forward and backward sub-executors' counters to *s. */
static void unit_stats(const xgradfn *f, fbx_executor_stats *s) {
  add_sub(s, f->fex, false);
  add_sub(s, f->bex, true);
  for (int i = 0; i < f->nvariants; i++) add_sub(s, f->variants[i].bex, true);
}

void fbx_executor_grad_stats(const fbx_executor *cex, fbx_executor_stats *s) {
  fbx_executor *ex = (fbx_executor *)cex;
  pthread_mutex_lock(&ex->ad_lock);
  for (fbx_xgplan *p = ex->gplans; p; p = p->next) {
    if (atomic_load(&p->state) != PLAN_READY) continue;
    for (xdg *d = p->dgs; d; d = d->next)
      for (xdgver *v = d->versions; v; v = atomic_load(&v->next))
        for (xgradfn *f = v->fns; f; f = f->next) unit_stats(f, s);
  }
  for (size_t i = 0; i < ex->ad_units.cap; i++)
    if (ex->ad_units.keys[i]) unit_stats(ex->ad_units.vals[i], s);
  pthread_mutex_unlock(&ex->ad_lock);
}

static void sub_events(fbx_strbuf *b, const xgradfn *f, const char *which, fbx_executor *sub) {
  if (!sub) return;
  pthread_mutex_lock(&sub->ev_lock);
  for (int i = 0; i < sub->nevents; i++) {
    fbx_strbuf_printf(b, "    %s, %s: ", f->what, which);
    if (sub->events[i].count > 1) fbx_strbuf_printf(b, "[%lldx] ", (long long)sub->events[i].count);
    fbx_strbuf_printf(b, "%s\n", sub->events[i].msg);
  }
  if (sub->events_dropped)
    fbx_strbuf_printf(b, "    %s, %s: (%lld more events not kept)\n", f->what, which, (long long)sub->events_dropped);
  pthread_mutex_unlock(&sub->ev_lock);
}

static void unit_events(fbx_strbuf *b, const xgradfn *f) {
  sub_events(b, f, "forward", f->fex);
  sub_events(b, f, "backward", f->bex);
  for (int i = 0; i < f->nvariants; i++) sub_events(b, f, "backward (respecialized)", f->variants[i].bex);
}

void fbx_executor_grad_events(const fbx_executor *cex, fbx_strbuf *b) {
  fbx_executor *ex = (fbx_executor *)cex;
  fbx_strbuf t = {0};
  pthread_mutex_lock(&ex->ad_lock);
  for (fbx_xgplan *p = ex->gplans; p; p = p->next) {
    if (atomic_load(&p->state) != PLAN_READY) continue;
    for (xdg *d = p->dgs; d; d = d->next)
      for (xdgver *v = d->versions; v; v = atomic_load(&v->next))
        for (xgradfn *f = v->fns; f; f = f->next) unit_events(&t, f);
  }
  for (size_t i = 0; i < ex->ad_units.cap; i++)
    if (ex->ad_units.keys[i]) unit_events(&t, ex->ad_units.vals[i]);
  pthread_mutex_unlock(&ex->ad_lock);
  if (t.len) {
    fbx_strbuf_puts(b, "  events of the forward and backward executors:\n");
    fbx_strbuf_append(b, t.data, t.len);
  }
  if (t.oom) b->oom = true;
  fbx_strbuf_free(&t);
}

static void explain_sub(fbx_strbuf *b, const char *what, const fbx_executor *sub) {
  fbx_strbuf_printf(b, "## %s (executor with fuser %s):\n", what, fbx_executor_fuser_name(sub));
  fbx_executor_explain(sub, b);
}

void fbx_executor_grad_each_sub(const fbx_executor *cex, fbx_grad_sub_visitor visit, void *ctx) {
  fbx_executor *ex = (fbx_executor *)cex;
  pthread_mutex_lock(&ex->lock);
  pthread_mutex_lock(&ex->ad_lock);
  for (fbx_xgplan *p = ex->gplans; p; p = p->next) {
    if (atomic_load(&p->state) != PLAN_READY) continue;
    for (xdg *d = p->dgs; d; d = d->next)
      for (xdgver *v = d->versions; v; v = atomic_load(&v->next))
        for (xgradfn *f = v->fns; f; f = f->next) {
          if (f->no_grad) continue;
          if (f->fex) visit(ctx, dg_name(d), v->level, "forward", f->fex);
          if (f->bex) visit(ctx, dg_name(d), v->level, "backward", f->bex);
          for (int i = 0; i < f->nvariants; i++) {
            if (!f->variants[i].bex) continue;
            char what[96];
            snprintf(what, sizeof what, "backward respecialized for defined output gradients 0x%llx",
                     (unsigned long long)f->variants[i].defined);
            visit(ctx, dg_name(d), v->level, what, f->variants[i].bex);
          }
        }
  }
  pthread_mutex_unlock(&ex->ad_lock);
  pthread_mutex_unlock(&ex->lock);
}

void fbx_executor_grad_explain(const fbx_executor *cex, fbx_strbuf *b) {
  fbx_executor *ex = (fbx_executor *)cex;
  pthread_mutex_lock(&ex->lock);
  pthread_mutex_lock(&ex->ad_lock);
  for (fbx_xgplan *p = ex->gplans; p; p = p->next) {
    fbx_strbuf_puts(b, "# gradient mode, inputs requiring grad:");
    int k = 0;
    for (int i = 0; i < p->nmask; i++)
      if (p->mask[i]) fbx_strbuf_printf(b, "%s%%%s", k++ ? ", " : " ", fbx_graph_input(ex->graph, i)->name);
    if (!k) fbx_strbuf_puts(b, " none");
    int state = atomic_load(&p->state);
    if (state == PLAN_PROFILING) {
      fbx_strbuf_puts(b, ": profiling on the eager tape (no DifferentiableGraph plan yet)\n");
      continue;
    }
    if (state == PLAN_EAGER) {
      fbx_strbuf_puts(b, ": every node runs on the eager tape (building the plan failed)\n");
      continue;
    }
    fbx_strbuf_printf(b, ": %d DifferentiableGraph%s (the graph itself is not fused; their forward and backward "
                         "graphs are)\n", p->ndgs, p->ndgs == 1 ? "" : "s");
    fbx_graph_print_to(b, p->opt);
    fbx_strbuf_puts(b, "# nodes outside DifferentiableGraphs (run on the eager tape), and why:\n");
    fbx_status *st = fbx_autodiff_explain_outside(p->opt, p->mask, b);
    if (st) {
      fbx_strbuf_printf(b, "#   (not known: %s)\n", fbx_status_message(st));
      fbx_status_free(st);
    }
    for (xdg *d = p->dgs; d; d = d->next)
    for (xdgver *v = d->versions; v; v = atomic_load(&v->next)) {
      fbx_strbuf_printf(b, "# prim::DifferentiableGraph %%%s, level %d (%s), guard:", dg_name(d), v->level,
                        fbx_spec_kind_name(v->kind));
      for (int j = 0; j < d->nin; j++) {
        fbx_strbuf_puts(b, j ? ", " : " ");
        fbx_guard_print(b, &v->guard[j]);
      }
      fbx_strbuf_putc(b, '\n');
      if (!v->fns) fbx_strbuf_puts(b, "#   not run yet with inputs that require grad\n");
      for (xgradfn *f = v->fns; f; f = f->next) {
        if (f->no_grad) {
          fbx_strbuf_printf(b, "#   runs on the eager tape: %s\n", f->no_grad);
          continue;
        }
        int from_inputs = 0;
        for (int s = 0; s < f->grad->nsaved; s++) from_inputs += !f->grad->saved[s].from_forward;
        fbx_strbuf_printf(b, "#   %d value%s saved for backward (%d input%s, %d computed by the forward)",
                          f->grad->nsaved, f->grad->nsaved == 1 ? "" : "s", from_inputs, from_inputs == 1 ? "" : "s",
                          f->grad->nsaved - from_inputs);
        if (f->grad->nrecomputed)
          fbx_strbuf_printf(b, "; %d recomputed in the backward instead (%d node%s)", f->grad->nrecomputed,
                            f->grad->nrecompute_nodes, f->grad->nrecompute_nodes == 1 ? "" : "s");
        else if (!f->grad->recompute)
          fbx_strbuf_puts(b, "; no recomputation (FUSEBOX_AUTODIFF_RECOMPUTE, or no fuser)");
        fbx_strbuf_putc(b, '\n');
        explain_sub(b, "forward", f->fex);
        explain_sub(b, "backward", f->bex);
        for (int i = 0; i < f->nvariants; i++) {
          if (!f->variants[i].bex) continue;
          char what[96];
          snprintf(what, sizeof what, "backward respecialized for defined output gradients 0x%llx",
                   (unsigned long long)f->variants[i].defined);
          explain_sub(b, what, f->variants[i].bex);
        }
      }
    }
  }
  pthread_mutex_unlock(&ex->ad_lock);
  pthread_mutex_unlock(&ex->lock);
}
