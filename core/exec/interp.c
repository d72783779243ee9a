/* The reference interpreter (see exec/interp.h).
 *
 * create builds a plan that mirrors the graph's blocks: one pnode per
 * non-constant node, with input references, output slots and the slots to
 * release after it (the values whose last use it is). A value reference is a
 * frame slot (>= 0) or a materialized constant (< 0, shared by all runs and
 * never released by them). run allocates a frame of slots and walks the plan;
 * nothing a run writes lives in the interp except the per-node overload
 * caches, whose entries are immutable and published with a compare-and-swap.
 */
#include "exec/interp.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/arena.h"
#include "base/strbuf.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "passes/passes.h"

/* ---- the plan --------------------------------------------------------------------------------- */

typedef int32_t vref; /* >= 0: frame slot; < 0: constant -(k + 1) */

typedef enum pkind {
  P_KERNEL,       /* an op table kernel */
  P_IF,
  P_LOOP,
  P_LIST,         /* prim::ListConstruct */
  P_TUPLE,        /* prim::TupleConstruct */
  P_LIST_UNPACK,
  P_TUPLE_UNPACK,
  P_UNINIT,       /* prim::Uninitialized */
  P_UNKNOWN,      /* not in the op table: an error if it is ever reached */
} pkind;

/* Overloads chosen at run time are cached per node, keyed by the kinds of
 * the argument values (and, for lists and tuples, the set of kinds of their
 * elements), which is everything overload resolution looks at. */
#define SIG_MAX 16
#define NCACHE 4

typedef struct cache_entry {
  int n;
  uint16_t sig[SIG_MAX];
  const fbx_op *op;
} cache_entry;

typedef struct pblock pblock;

typedef struct pnode {
  const fbx_node *node;
  pkind kind;
  const fbx_op *op; /* decided by the IR types; NULL: decide at run time */
  int nin, nout, nrel, nblocks;
  vref *in;
  int32_t *out; /* consecutive slots */
  int32_t *rel; /* slots to release after the node ran */
  pblock *blocks;
  bool group; /* holds a subgraph: run by fbx_run_opts.run_group when one is given */
  bool inplace; /* mutates its first input (fbx_run_opts.before is called) */
  _Atomic(cache_entry *) cache[NCACHE];
} pnode;

struct pblock {
  int nparams, nrets, nnodes, nrel_entry, nrel_end;
  int32_t *params;
  vref *rets;
  pnode *nodes;
  int32_t *rel_entry; /* unused parameters */
  int32_t *rel_end;   /* values whose last use is the block's return */
};

struct fbx_interp {
  const fbx_graph *g;
  fbx_arena *arena;
  pblock top;
  int nslots;
  int nconsts, cap_consts;
  fbx_ivalue *consts;
  vref *ref_of;       /* by value id */
  int32_t *pos_of;    /* by node id: index of the node's pnode in its block */
  bool *is_const_node; /* by node id */
};

/* ---- small helpers -------------------------------------------------------------------------- */

static fbx_status *nomem(void) { return fbx_status_nomem(); }

static void *arena_array(fbx_interp *it, int n, size_t size) {
  return fbx_arena_alloc(it->arena, (size_t)(n > 0 ? n : 1) * size);
}

/* "%y : Tensor = aten::view(%x, %4)", without the trailing "# file:line:col"
 * (error messages put the location first). */
static void put_node_line(fbx_strbuf *b, const fbx_node *n) {
  size_t start = b->len;
  fbx_node_print_line(b, n);
  if (b->oom || !n->srcloc) return;
  size_t tail = strlen(n->srcloc) + 3; /* " # " + srcloc */
  if (b->len - start >= tail && !strcmp(b->data + b->len - tail + 3, n->srcloc) &&
      !strncmp(b->data + b->len - tail, " # ", 3)) {
    b->len -= tail;
    b->data[b->len] = '\0';
  }
}

/* Wrap an error from running node n: "<srcloc>: <message>\n  in node: <line>". */
static fbx_status *node_error(fbx_status *st, const fbx_node *n) {
  if (st == fbx_status_nomem()) return st; /* nothing left to say it with */
  fbx_strbuf b = {0};
  const fbx_graph *root = n->graph;
  while (root && root->parent) root = root->parent;
  /* where the graph came from: PyTorch's source comment when the node has
   * one, else the node's place in the IR file */
  if (n->srcloc)
    fbx_strbuf_printf(&b, "%s: ", n->srcloc);
  else if (n->line && root && root->source)
    fbx_strbuf_printf(&b, "%s:%u:%u: ", root->source, n->line, n->col);
  fbx_strbuf_puts(&b, fbx_status_message(st));
  fbx_strbuf_puts(&b, "\n  in node: ");
  put_node_line(&b, n);
  fbx_status *w = b.oom ? fbx_status_nomem() : fbx_status_new(fbx_status_code(st), "%s", b.data);
  fbx_strbuf_free(&b);
  fbx_status_free(st);
  return w;
}

/* Add where an error inside a block happened: "\n  inside <what> of: <line> # <srcloc>". */
static fbx_status *inside_error(fbx_status *st, const fbx_node *n, const char *what, int64_t iter) {
  if (st == fbx_status_nomem()) return st;
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, fbx_status_message(st));
  if (iter >= 0) fbx_strbuf_printf(&b, "\n  inside iteration %lld of: ", (long long)iter);
  else fbx_strbuf_printf(&b, "\n  inside %s of: ", what);
  fbx_node_print_line(&b, n); /* with its "# file:line:col" */
  fbx_status *w = b.oom ? fbx_status_nomem() : fbx_status_new(fbx_status_code(st), "%s", b.data);
  fbx_strbuf_free(&b);
  fbx_status_free(st);
  return w;
}

/* ---- constants -------------------------------------------------------------------------------- */

static bool type_is_list_of(const fbx_type *t, fbx_type_kind k) {
  return t && t->kind == FBX_TYPE_LIST && t->nelems == 1 && t->elems[0]->kind == k;
}

static fbx_status *const_value(fbx_ivalue *out, const fbx_node *n) {
  const fbx_type *ty = n->noutputs ? n->outputs[0]->type : NULL;
  const fbx_attr *a = fbx_node_attr(n, FBX_SYM_attr_value);
  *out = fbx_iv_none();
  if (!a) return NULL; /* None, and Function constants (only prim::CallFunction would read them) */
  switch (a->kind) {
    case FBX_ATTR_INT:
      *out = ty && ty->kind == FBX_TYPE_BOOL ? fbx_iv_bool(a->u.i != 0) : fbx_iv_int(a->u.i);
      return NULL;
    case FBX_ATTR_FLOAT: *out = fbx_iv_float(a->u.f); return NULL;
    case FBX_ATTR_STR:
      if (ty && ty->kind == FBX_TYPE_DEVICE) return fbx_iv_device_new(out, a->u.s);
      return fbx_iv_str_new(out, a->u.s, strlen(a->u.s));
    case FBX_ATTR_INTS:
    case FBX_ATTR_FLOATS:
    case FBX_ATTR_STRS: {
      fbx_ivalue l;
      FBX_TRY(fbx_iv_list_new(&l, a->n));
      bool bools = type_is_list_of(ty, FBX_TYPE_BOOL);
      for (int i = 0; i < a->n; i++) {
        fbx_ivalue e;
        fbx_status *st = NULL;
        if (a->kind == FBX_ATTR_INTS) e = bools ? fbx_iv_bool(a->u.is[i] != 0) : fbx_iv_int(a->u.is[i]);
        else if (a->kind == FBX_ATTR_FLOATS) e = fbx_iv_float(a->u.fs[i]);
        else st = fbx_iv_str_new(&e, a->u.ss[i], strlen(a->u.ss[i]));
        if (st || (st = fbx_iv_list_push(&l, e))) {
          fbx_iv_release(&l);
          return st;
        }
      }
      *out = l;
      return NULL;
    }
    case FBX_ATTR_TENSOR: {
      const fbx_tensor_const *tc = a->u.t;
      if (!tc->data) {
        fbx_strbuf b = {0};
        if (n->srcloc) fbx_strbuf_printf(&b, "%s: ", n->srcloc);
        fbx_strbuf_puts(&b, "a tensor constant whose data the graph text does not give (<Tensor>) cannot be run: "
                            "PyTorch prints a constant of more than 10 elements (a frozen module's weights) without "
                            "its values. Give fusebox a graph that takes the weights as inputs (script a function "
                            "of the input and the parameters, and pass them with --input NAME=FILE.npy)\n"
                            "  in node: ");
        put_node_line(&b, n);
        fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_UNSUPPORTED, "%s", b.data);
        fbx_strbuf_free(&b);
        return st;
      }
      fbx_tensor *t = NULL;
      FBX_TRY(fbx_tensor_from_data(&t, tc->dtype, tc->rank, tc->sizes, tc->data));
      *out = fbx_iv_tensor(t);
      return NULL;
    }
    default: {
      fbx_strbuf b = {0};
      fbx_strbuf_puts(&b, "unsupported constant attribute\n  in node: ");
      put_node_line(&b, n);
      fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_UNSUPPORTED, "%s", b.data);
      fbx_strbuf_free(&b);
      return st;
    }
  }
}

static fbx_status *add_const(fbx_interp *it, const fbx_node *n, vref *out) {
  if (it->nconsts == it->cap_consts) {
    int cap = it->cap_consts ? it->cap_consts * 2 : 16;
    fbx_ivalue *nc = fbx_realloc(it->consts, sizeof *nc * (size_t)cap);
    if (!nc) return nomem();
    it->consts = nc;
    it->cap_consts = cap;
  }
  FBX_TRY(const_value(&it->consts[it->nconsts], n));
  *out = -(it->nconsts + 1);
  it->nconsts++;
  return NULL;
}

/* ---- planning ------------------------------------------------------------------------------------ */

/* Pass 1: give every value a reference (slot or constant), block by block. */
static fbx_status *assign_refs(fbx_interp *it, const fbx_block *b) {
  for (int i = 0; i < fbx_block_nparams(b); i++) it->ref_of[fbx_block_param(b, i)->id] = it->nslots++;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (n->kind == FBX_SYM_prim_Constant) {
      it->is_const_node[n->id] = true;
      for (int i = 0; i < n->noutputs; i++) FBX_TRY(add_const(it, n, &it->ref_of[n->outputs[i]->id]));
      continue;
    }
    for (int i = 0; i < n->noutputs; i++) it->ref_of[n->outputs[i]->id] = it->nslots++;
    for (int k = 0; k < n->nblocks; k++) FBX_TRY(assign_refs(it, n->blocks[k]));
  }
  return NULL;
}

static pkind kind_of(fbx_sym k) {
  switch (k) {
    case FBX_SYM_prim_If: return P_IF;
    case FBX_SYM_prim_Loop: return P_LOOP;
    case FBX_SYM_prim_ListConstruct: return P_LIST;
    case FBX_SYM_prim_TupleConstruct: return P_TUPLE;
    case FBX_SYM_prim_ListUnpack: return P_LIST_UNPACK;
    case FBX_SYM_prim_TupleUnpack: return P_TUPLE_UNPACK;
    case FBX_SYM_prim_Uninitialized: return P_UNINIT;
    default: return P_KERNEL;
  }
}


/* The node of block b that is, or contains, node u (NULL if none). */
static const fbx_node *ancestor_in(const fbx_node *u, const fbx_block *b) {
  while (u && u->owner != b) u = u->owner ? u->owner->owning : NULL;
  return u;
}

/* Where in b (pnode index; b's return = nnodes) the last use of v is;
 * `def` when v is unused. */
static int last_use(const fbx_interp *it, const fbx_value *v, const fbx_block *b, int nnodes, int def) {
  int last = def;
  for (int i = 0; i < v->nuses; i++) {
    const fbx_node *u = ancestor_in(v->uses[i].user, b);
    if (!u) continue; /* cannot happen in a verified graph */
    int p = u == b->ret ? nnodes : it->pos_of[u->id];
    if (p > last) last = p;
  }
  return last;
}

static fbx_status *plan_block(fbx_interp *it, pblock *pb, const fbx_block *b);

/* Could the schema's return r be held by a value declared t? (Any and
 * tuples of anything are not checked.) */
static bool ret_agrees(const fbx_schema *sc, const fbx_schema_arg *r, const fbx_type *t) {
  fbx_type *elem = NULL;
  switch (r->type) {
    case FBX_ARG_TENSOR: elem = fbx_type_tensor_any(); break;
    case FBX_ARG_INT:
    case FBX_ARG_SCALARTYPE:
    case FBX_ARG_LAYOUT:
    case FBX_ARG_MEMFORMAT: elem = fbx_type_simple(FBX_TYPE_INT); break;
    case FBX_ARG_FLOAT: elem = fbx_type_simple(FBX_TYPE_FLOAT); break;
    case FBX_ARG_BOOL: elem = fbx_type_simple(FBX_TYPE_BOOL); break;
    case FBX_ARG_NUMBER:
    case FBX_ARG_SCALAR: elem = fbx_type_simple(FBX_TYPE_NUMBER); break;
    case FBX_ARG_STR: elem = fbx_type_simple(FBX_TYPE_STR); break;
    case FBX_ARG_NONE: elem = fbx_type_simple(FBX_TYPE_NONE); break;
    default: return true;
  }
  if (r->optional && !r->list) return true;
  if (r->list || sc->ret_list) {
    fbx_type list = {.kind = FBX_TYPE_LIST, .nelems = 1, .elems = &elem};
    return fbx_type_may_agree(t, &list);
  }
  return fbx_type_may_agree(t, elem);
}

/* A node whose outputs contradict its op's schema: no overload returns
 * that many values, or the resolved overload returns a tensor where the
 * node declares a tuple (issue #12). */
static fbx_status *check_op_outputs(const fbx_node *n, const fbx_op *resolved) {
  const fbx_op *const *rows = NULL;
  int nrows = fbx_op_overloads(n->kind, &rows);
  bool count_ok = nrows == 0;
  int nrets = -1;
  for (int i = 0; i < nrows && !count_ok; i++) {
    if (rows[i]->kernel == fbx_k_interp || rows[i]->schema.varargs || rows[i]->schema.nrets == n->noutputs)
      count_ok = true;
    nrets = rows[i]->schema.nrets;
  }
  if (!count_ok)
    return node_error(fbx_status_new(FBX_ERR_VERIFY, "invalid graph: %s returns %d value%s but the node has %d output%s",
                                     fbx_sym_str(n->kind), nrets, nrets == 1 ? "" : "s", n->noutputs,
                                     n->noutputs == 1 ? "" : "s"),
                      n);
  if (!resolved || resolved->schema.nrets != n->noutputs) return NULL;
  for (int i = 0; i < n->noutputs; i++) {
    const fbx_value *v = n->outputs[i];
    if (ret_agrees(&resolved->schema, &resolved->schema.rets[i], v->type)) continue;
    fbx_strbuf d = {0};
    fbx_strbuf_printf(&d, "invalid graph: %%%s is declared ", v->name);
    fbx_type_print(&d, v->type);
    fbx_strbuf_printf(&d, " but %s returns something else there", resolved->schema_text);
    fbx_status *st = d.oom ? fbx_status_nomem() : node_error(fbx_status_new(FBX_ERR_VERIFY, "%s", d.data), n);
    fbx_strbuf_free(&d);
    return st;
  }
  return NULL;
}

static fbx_status *plan_node(fbx_interp *it, pnode *pn, const fbx_node *n) {
  pn->node = n;
  pn->kind = kind_of(n->kind);
  pn->nin = n->ninputs;
  pn->nout = n->noutputs;
  pn->in = arena_array(it, n->ninputs, sizeof *pn->in);
  pn->out = arena_array(it, n->noutputs, sizeof *pn->out);
  if (!pn->in || !pn->out) return nomem();
  for (int i = 0; i < n->ninputs; i++) pn->in[i] = it->ref_of[n->inputs[i]->id];
  for (int i = 0; i < n->noutputs; i++) pn->out[i] = it->ref_of[n->outputs[i]->id];
  for (int k = 0; k < NCACHE; k++) atomic_init(&pn->cache[k], NULL);

  /* Ops the table does not know fail only when reached: graphs from PyTorch
   * often carry in-place variants in branches a constant flag never takes. */
  if (!fbx_op_kind_known(n->kind)) {
    pn->kind = P_UNKNOWN;
  } else if (pn->kind == P_KERNEL) {
    fbx_type *types[FBX_SCHEMA_MAX_ARGS];
    if (n->ninputs <= FBX_SCHEMA_MAX_ARGS) {
      for (int i = 0; i < n->ninputs; i++) types[i] = n->inputs[i]->type;
      pn->op = fbx_op_resolve_types(n->kind, types, n->ninputs);
    }
    if (pn->op && pn->op->kernel == fbx_k_interp) pn->kind = P_UNKNOWN;
    if (pn->kind == P_KERNEL) FBX_TRY(check_op_outputs(n, pn->op));
    if (pn->op && pn->op->schema.nrets != n->noutputs && !pn->op->schema.varargs) pn->op = NULL; /* decide at run time */
  }
  if (pn->kind == P_IF && (n->nblocks != 2 || n->ninputs != 1))
    return fbx_status_new(FBX_ERR_VERIFY, "prim::If needs one condition and two blocks");
  if (pn->kind == P_LOOP && (n->nblocks != 1 || n->ninputs < 2 ||
                             fbx_block_nparams(n->blocks[0]) != n->ninputs - 1 ||
                             fbx_block_nreturns(n->blocks[0]) != n->ninputs - 1 || n->noutputs != n->ninputs - 2))
    return fbx_status_new(FBX_ERR_VERIFY, "malformed prim::Loop (inputs, block parameters and returns do not line up)");
  if (pn->kind == P_IF)
    for (int k = 0; k < 2; k++)
      if (fbx_block_nreturns(n->blocks[k]) != n->noutputs)
        return fbx_status_new(FBX_ERR_VERIFY, "prim::If block %d returns %d values for %d outputs", k,
                              fbx_block_nreturns(n->blocks[k]), n->noutputs);
  pn->group = fbx_node_subgraph(n) != NULL;
  pn->inplace = pn->kind == P_KERNEL && fbx_op_kind_has_flag(n->kind, FBX_OPF_INPLACE);
  pn->nblocks = n->nblocks;
  if (n->nblocks) {
    pn->blocks = arena_array(it, n->nblocks, sizeof *pn->blocks);
    if (!pn->blocks) return nomem();
    for (int k = 0; k < n->nblocks; k++) FBX_TRY(plan_block(it, &pn->blocks[k], n->blocks[k]));
  }
  return NULL;
}

static fbx_status *plan_block(fbx_interp *it, pblock *pb, const fbx_block *b) {
  int nn = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next)
    if (!it->is_const_node[n->id]) it->pos_of[n->id] = nn++;
  pb->nnodes = nn;
  pb->nparams = fbx_block_nparams(b);
  pb->nrets = fbx_block_nreturns(b);
  pb->nodes = arena_array(it, nn, sizeof *pb->nodes);
  pb->params = arena_array(it, pb->nparams, sizeof *pb->params);
  pb->rets = arena_array(it, pb->nrets, sizeof *pb->rets);
  if (!pb->nodes || !pb->params || !pb->rets) return nomem();
  for (int i = 0; i < pb->nparams; i++) pb->params[i] = it->ref_of[fbx_block_param(b, i)->id];
  for (int i = 0; i < pb->nrets; i++) pb->rets[i] = it->ref_of[fbx_block_return(b, i)->id];

  int k = 0;
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next)
    if (!it->is_const_node[n->id]) FBX_TRY(plan_node(it, &pb->nodes[k++], n));

  /* Last uses of the values this block defines: count per position, then fill. */
  int *count = fbx_calloc((size_t)nn + 2, sizeof *count); /* [0]: entry, [p + 1]: node p, [nn + 1]: end */
  if (!count) return nomem();
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      pb->rel_entry = arena_array(it, count[0], sizeof(int32_t));
      pb->rel_end = arena_array(it, count[nn + 1], sizeof(int32_t));
      bool ok = pb->rel_entry && pb->rel_end;
      for (int p = 0; p < nn && ok; p++) ok = (pb->nodes[p].rel = arena_array(it, count[p + 1], sizeof(int32_t))) != NULL;
      if (!ok) {
        fbx_free(count);
        return nomem();
      }
      memset(count, 0, sizeof *count * ((size_t)nn + 2));
    }
#define PLACE_(slot, pos)                                                     \
  do {                                                                        \
    int p_ = (pos) + 1;                                                       \
    if (pass == 1) {                                                          \
      int32_t *dst_ = p_ == 0 ? pb->rel_entry : p_ == nn + 1 ? pb->rel_end : pb->nodes[p_ - 1].rel; \
      dst_[count[p_]] = (slot);                                               \
    }                                                                         \
    count[p_]++;                                                              \
  } while (0)
    for (int i = 0; i < pb->nparams; i++) {
      const fbx_value *v = fbx_block_param(b, i);
      PLACE_(pb->params[i], last_use(it, v, b, nn, -1));
    }
    for (int p = 0; p < nn; p++) {
      const fbx_node *n = pb->nodes[p].node;
      for (int i = 0; i < n->noutputs; i++) PLACE_(pb->nodes[p].out[i], last_use(it, n->outputs[i], b, nn, p));
    }
#undef PLACE_
  }
  pb->nrel_entry = count[0];
  pb->nrel_end = count[nn + 1];
  for (int p = 0; p < nn; p++) pb->nodes[p].nrel = count[p + 1];
  fbx_free(count);
  return NULL;
}

static void free_caches(pblock *pb) {
  for (int p = 0; p < pb->nnodes; p++) {
    pnode *pn = &pb->nodes[p];
    for (int k = 0; k < NCACHE; k++) fbx_free(atomic_load(&pn->cache[k]));
    for (int k = 0; k < pn->nblocks; k++) free_caches(&pn->blocks[k]);
  }
}

void fbx_interp_destroy(fbx_interp *it) {
  if (!it) return;
  if (it->top.nodes) free_caches(&it->top);
  for (int i = 0; i < it->nconsts; i++) fbx_iv_release(&it->consts[i]);
  fbx_free(it->consts);
  fbx_free(it->ref_of);
  fbx_free(it->pos_of);
  fbx_free(it->is_const_node);
  fbx_arena_destroy(it->arena);
  fbx_free(it);
}

fbx_status *fbx_interp_create(fbx_interp **out, const fbx_graph *g) {
  FBX_TRY(fbx_op_table_init());
  fbx_interp *it = fbx_calloc(1, sizeof *it);
  if (!it) return nomem();
  it->g = g;
  size_t nv = g->next_value_id + 1, nn = g->next_node_id + 1;
  it->arena = fbx_arena_create();
  it->ref_of = fbx_calloc(nv, sizeof *it->ref_of);
  it->pos_of = fbx_calloc(nn, sizeof *it->pos_of);
  it->is_const_node = fbx_calloc(nn, sizeof *it->is_const_node);
  fbx_status *st = NULL;
  if (!it->arena || !it->ref_of || !it->pos_of || !it->is_const_node) {
    st = nomem();
    goto fail;
  }
  if ((st = assign_refs(it, g->block))) goto fail;
  if ((st = plan_block(it, &it->top, g->block))) goto fail;
  *out = it;
  return NULL;
fail:
  fbx_interp_destroy(it);
  return st;
}

const fbx_graph *fbx_interp_graph(const fbx_interp *it) { return it->g; }

/* ---- input checks ------------------------------------------------------------------------------- */

/* "int64[2, 3]", "int 3", "list of 2", ... for messages. */
static void describe_short(fbx_strbuf *b, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TENSOR) {
    const fbx_tensor *t = v->u.t;
    fbx_strbuf_printf(b, "a %s tensor of shape [", fbx_dtype_name(t->dtype));
    for (int i = 0; i < t->ndim; i++) fbx_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    fbx_strbuf_putc(b, ']');
  } else if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) {
    fbx_strbuf_printf(b, "a %s of %d", fbx_iv_kind_name(v->kind), v->u.l->n);
  } else {
    fbx_iv_describe(b, v);
  }
}

static bool named(const fbx_type *t, const char *name) { return t->kind == FBX_TYPE_NAMED && t->name && !strcmp(t->name, name); }

/* Does v fit type t? On mismatch, writes why into *why. */
static bool value_fits(const fbx_type *t, const fbx_ivalue *v, fbx_strbuf *why) {
  switch (t->kind) {
    case FBX_TYPE_OPTIONAL: return v->kind == FBX_IV_NONE || value_fits(t->elems[0], v, why);
    case FBX_TYPE_NONE: return v->kind == FBX_IV_NONE;
    case FBX_TYPE_INT: return v->kind == FBX_IV_INT;
    case FBX_TYPE_FLOAT: return v->kind == FBX_IV_FLOAT || v->kind == FBX_IV_INT;
    case FBX_TYPE_BOOL: return v->kind == FBX_IV_BOOL;
    case FBX_TYPE_STR: return v->kind == FBX_IV_STR;
    case FBX_TYPE_DEVICE: return v->kind == FBX_IV_DEVICE || v->kind == FBX_IV_STR;
    case FBX_TYPE_NUMBER: return v->kind == FBX_IV_INT || v->kind == FBX_IV_FLOAT;
    case FBX_TYPE_TENSOR: {
      if (v->kind != FBX_IV_TENSOR) return false;
      const fbx_tensor *x = v->u.t;
      if (t->dtype != FBX_DTYPE_UNDEFINED && x->dtype != t->dtype) {
        fbx_strbuf_printf(why, "dtype %s where the graph says %s", fbx_dtype_name(x->dtype), fbx_dtype_name(t->dtype));
        return false;
      }
      if (t->rank >= 0 && x->ndim != t->rank) {
        fbx_strbuf_printf(why, "%d dims where the graph says %d", x->ndim, t->rank);
        return false;
      }
      return true;
    }
    case FBX_TYPE_LIST:
      if (v->kind != FBX_IV_LIST) return false;
      for (int i = 0; i < v->u.l->n; i++)
        if (!value_fits(t->elems[0], &v->u.l->items[i], why)) {
          fbx_strbuf_printf(why, "%selement %d does not fit", why->len ? " (" : "", i);
          return false;
        }
      return true;
    case FBX_TYPE_TUPLE:
      if (v->kind != FBX_IV_TUPLE || v->u.l->n != t->nelems) return false;
      for (int i = 0; i < t->nelems; i++)
        if (!value_fits(t->elems[i], &v->u.l->items[i], why)) {
          fbx_strbuf_printf(why, "%selement %d does not fit", why->len ? "; " : "", i);
          return false;
        }
      return true;
    case FBX_TYPE_NAMED:
      if (named(t, "Scalar")) return fbx_iv_is_scalar(v);
      return true; /* Any, and types fusebox does not model */
    default: return true;
  }
}

fbx_status *fbx_interp_check_inputs(const fbx_interp *it, const fbx_ivalue *inputs, int n) {
  const fbx_graph *g = it->g;
  int want = fbx_graph_ninputs(g);
  if (n != want) {
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "the graph takes %d input%s (", want, want == 1 ? "" : "s");
    for (int i = 0; i < want; i++) {
      const fbx_value *v = fbx_graph_input(g, i);
      fbx_strbuf_printf(&b, "%s%%%s : ", i ? ", " : "", v->name);
      fbx_type_print(&b, v->type);
    }
    fbx_strbuf_printf(&b, "), %d given", n);
    fbx_status *st = b.oom ? nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
    fbx_strbuf_free(&b);
    return st;
  }
  for (int i = 0; i < n; i++) {
    const fbx_value *v = fbx_graph_input(g, i);
    fbx_strbuf why = {0};
    if (value_fits(v->type, &inputs[i], &why)) {
      fbx_strbuf_free(&why);
      continue;
    }
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "input %d (%%%s : ", i, v->name);
    fbx_type_print(&b, v->type);
    fbx_strbuf_puts(&b, "): got ");
    describe_short(&b, &inputs[i]);
    if (why.len) fbx_strbuf_printf(&b, ": %s", why.data);
    fbx_strbuf_free(&why);
    fbx_status *st = b.oom ? nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
    fbx_strbuf_free(&b);
    return st;
  }
  return NULL;
}

/* ---- running ------------------------------------------------------------------------------------ */

typedef struct frame {
  fbx_interp *it;
  fbx_ivalue *slots;
  const fbx_run_opts *opts;
  uint64_t rng;
  int64_t live_tensors;
  fbx_interp_stats stats;
} frame;

static inline const fbx_ivalue *ref_get(const frame *f, vref r) {
  return r >= 0 ? &f->slots[r] : &f->it->consts[-r - 1];
}

/* Store a new reference in a slot. */
static inline void slot_set(frame *f, int32_t s, fbx_ivalue v) {
  fbx_ivalue *d = &f->slots[s];
  if (d->kind != FBX_IV_NONE) { /* only after an error left a block half-run; keep it leak-free */
    if (d->kind == FBX_IV_TENSOR) f->live_tensors--;
    fbx_iv_release(d);
  }
  *d = v;
  if (v.kind == FBX_IV_TENSOR && ++f->live_tensors > f->stats.peak_live_tensors)
    f->stats.peak_live_tensors = f->live_tensors;
}

static inline void slot_release(frame *f, int32_t s) {
  fbx_ivalue *d = &f->slots[s];
  if (d->kind == FBX_IV_TENSOR) f->live_tensors--;
  fbx_iv_release(d);
}

/* A scratch array of ivalues: inline when small. */
typedef struct scratch {
  fbx_ivalue *v;
  fbx_ivalue inline_[24];
} scratch;

static fbx_status *scratch_init(scratch *s, int n) {
  s->v = n <= 24 ? s->inline_ : fbx_malloc(sizeof *s->v * (size_t)n);
  if (!s->v) return nomem();
  memset(s->v, 0, sizeof *s->v * (size_t)(n > 0 ? n : 0));
  return NULL;
}

static void scratch_free(scratch *s) {
  if (s->v != s->inline_) fbx_free(s->v);
}

static fbx_status *exec_block(frame *f, const pblock *b, fbx_ivalue *params, fbx_ivalue *rets);

/* The overload signature of some argument values (false: too many to cache). */
static bool signature(const fbx_ivalue *args, int n, uint16_t *sig) {
  if (n > SIG_MAX) return false;
  for (int i = 0; i < n; i++) {
    uint16_t s = (uint16_t)args[i].kind;
    if (args[i].kind == FBX_IV_LIST || args[i].kind == FBX_IV_TUPLE) {
      unsigned elems = 0;
      for (int k = 0; k < args[i].u.l->n; k++) elems |= 1u << args[i].u.l->items[k].kind;
      s |= (uint16_t)(elems << 4);
    }
    sig[i] = s;
  }
  return true;
}

static fbx_status *resolve(pnode *pn, const fbx_ivalue *args, const fbx_op **op) {
  if (pn->op) {
    *op = pn->op;
    return NULL;
  }
  uint16_t sig[SIG_MAX];
  bool cacheable = signature(args, pn->nin, sig);
  if (cacheable)
    for (int k = 0; k < NCACHE; k++) {
      const cache_entry *e = atomic_load_explicit(&pn->cache[k], memory_order_acquire);
      if (!e) break;
      if (e->n == pn->nin && !memcmp(e->sig, sig, sizeof *sig * (size_t)pn->nin)) {
        *op = e->op;
        return NULL;
      }
    }
  FBX_TRY(fbx_op_resolve(op, pn->node->kind, args, pn->nin));
  if (!cacheable) return NULL;
  cache_entry *e = fbx_malloc(sizeof *e);
  if (!e) return NULL; /* caching is optional */
  e->n = pn->nin;
  memcpy(e->sig, sig, sizeof *sig * (size_t)pn->nin);
  e->op = *op;
  for (int k = 0; k < NCACHE; k++) {
    cache_entry *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&pn->cache[k], &expected, e, memory_order_acq_rel,
                                                memory_order_acquire))
      return NULL;
  }
  fbx_free(e); /* all slots taken (a node that sees many kinds): resolve each time */
  return NULL;
}

/* ---- the perturbation hook (interp.h) ---- */

static int g_perturb_k;

void fbx_interp_set_perturbation(int k) { g_perturb_k = k; }

static fbx_status *perturb_outputs(const fbx_op *op, const fbx_node *node, fbx_ivalue *outs, int n) {
  unsigned keep = FBX_OPF_INPLACE | FBX_OPF_ALIAS | FBX_OPF_MUTABLE_OUT;
  if ((op->flags & keep) || fbx_op_kind_has_flag(node->kind, keep)) return NULL;
  for (int i = 0; i < n; i++) {
    if (outs[i].kind != FBX_IV_TENSOR || !fbx_dtype_is_floating(outs[i].u.t->dtype)) continue;
    fbx_tensor *t = outs[i].u.t, *d = NULL, *r = NULL;
    double u = t->dtype == FBX_DTYPE_FLOAT64   ? 0x1p-53
               : t->dtype == FBX_DTYPE_FLOAT16 ? 0x1p-11
               : t->dtype == FBX_DTYPE_BFLOAT16 ? 0x1p-8
                                                : 0x1p-24;
    FBX_TRY(fbx_tensor_clone_as(&d, t, FBX_DTYPE_FLOAT64));
    double *p = d->data;
    for (int64_t e = 0; e < d->numel; e++) p[e] *= 1 + g_perturb_k * u;
    fbx_status *st = fbx_tensor_clone_as(&r, d, t->dtype);
    fbx_tensor_release(d);
    if (st) return st;
    fbx_tensor_release(t);
    outs[i] = fbx_iv_tensor(r);
  }
  return NULL;
}

static fbx_status *exec_kernel(frame *f, pnode *pn) {
  const fbx_node *n = pn->node;
  scratch args, norm;
  FBX_TRY(scratch_init(&args, pn->nin));
  for (int i = 0; i < pn->nin; i++) args.v[i] = *ref_get(f, pn->in[i]);
  const fbx_op *op = NULL;
  fbx_status *st = resolve(pn, args.v, &op);
  if (st) {
    scratch_free(&args);
    return node_error(st, n);
  }
  int nnorm = op->schema.nargs > pn->nin ? op->schema.nargs : pn->nin;
  if ((st = scratch_init(&norm, nnorm))) {
    scratch_free(&args);
    return st;
  }
  int nrets = op->schema.nrets;
  if (nrets != pn->nout) {
    st = fbx_status_new(FBX_ERR_INTERNAL, "%s returns %d value%s but the node has %d output%s", op->schema_text,
                        nrets, nrets == 1 ? "" : "s", pn->nout, pn->nout == 1 ? "" : "s");
  } else {
    st = fbx_op_normalize_args(op, args.v, pn->nin, norm.v);
  }
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  memset(outs, 0, sizeof outs);
  if (!st) {
    fbx_kctx ctx = {.op = op, .node = n, .rng_state = &f->rng, .nargs = nnorm};
    st = op->kernel(&ctx, norm.v, outs);
    f->stats.kernels_run++;
    if (!st && g_perturb_k) st = perturb_outputs(op, n, outs, nrets);
  }
  scratch_free(&args);
  scratch_free(&norm);
  if (st) {
    for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) fbx_iv_release(&outs[i]);
    return node_error(st, n);
  }
  for (int i = 0; i < pn->nout; i++) slot_set(f, pn->out[i], outs[i]);
  return NULL;
}

static fbx_status *bool_input(frame *f, const pnode *pn, int i, bool *out) {
  const fbx_ivalue *v = ref_get(f, pn->in[i]);
  if (v->kind == FBX_IV_BOOL) *out = v->u.b;
  else if (v->kind == FBX_IV_INT) *out = v->u.i != 0;
  else return node_error(fbx_status_new(FBX_ERR_RUNTIME, "%s: the condition must be a bool, got %s",
                                        fbx_sym_str(pn->node->kind), fbx_iv_kind_name(v->kind)), pn->node);
  return NULL;
}

static fbx_status *exec_if(frame *f, pnode *pn) {
  bool c = false;
  FBX_TRY(bool_input(f, pn, 0, &c));
  scratch rets;
  FBX_TRY(scratch_init(&rets, pn->nout));
  fbx_status *st = exec_block(f, &pn->blocks[c ? 0 : 1], NULL, rets.v);
  if (st) {
    scratch_free(&rets);
    return inside_error(st, pn->node, c ? "the true branch (block0)" : "the false branch (block1)", -1);
  }
  for (int i = 0; i < pn->nout; i++) slot_set(f, pn->out[i], rets.v[i]);
  scratch_free(&rets);
  return NULL;
}

static fbx_status *exec_loop(frame *f, pnode *pn) {
  const fbx_ivalue *maxv = ref_get(f, pn->in[0]);
  if (maxv->kind != FBX_IV_INT)
    return node_error(fbx_status_new(FBX_ERR_RUNTIME, "prim::Loop: the trip count must be an int, got %s",
                                     fbx_iv_kind_name(maxv->kind)), pn->node);
  int64_t max = maxv->u.i;
  bool cond = false;
  FBX_TRY(bool_input(f, pn, 1, &cond));
  int nc = pn->nin - 2;
  scratch vals;
  FBX_TRY(scratch_init(&vals, nc + 1)); /* [0]: the iteration/condition, then the carried values */
  for (int k = 0; k < nc; k++) {
    vals.v[k + 1] = *ref_get(f, pn->in[k + 2]);
    fbx_iv_retain(&vals.v[k + 1]);
  }
  const pblock *body = &pn->blocks[0];
  for (int64_t i = 0; cond && i < max; i++) {
    vals.v[0] = fbx_iv_int(i);
    /* exec_block takes the parameters (moved into the frame) and fills vals with the results */
    fbx_status *st = exec_block(f, body, vals.v, vals.v);
    if (st) {
      scratch_free(&vals);
      return inside_error(st, pn->node, NULL, i);
    }
    if (vals.v[0].kind == FBX_IV_BOOL) cond = vals.v[0].u.b;
    else if (vals.v[0].kind == FBX_IV_INT) cond = vals.v[0].u.i != 0;
    else {
      for (int k = 0; k <= nc; k++) fbx_iv_release(&vals.v[k]);
      scratch_free(&vals);
      return node_error(fbx_status_new(FBX_ERR_RUNTIME, "prim::Loop: the body's condition must be a bool, got %s",
                                       fbx_iv_kind_name(vals.v[0].kind)), pn->node);
    }
  }
  for (int k = 0; k < nc; k++) slot_set(f, pn->out[k], vals.v[k + 1]);
  scratch_free(&vals);
  return NULL;
}

static fbx_status *exec_construct(frame *f, pnode *pn) {
  fbx_ivalue c;
  if (pn->kind == P_LIST) FBX_TRY(fbx_iv_list_new(&c, pn->nin));
  else FBX_TRY(fbx_iv_tuple_new(&c, pn->nin));
  for (int i = 0; i < pn->nin; i++) {
    c.u.l->items[i] = *ref_get(f, pn->in[i]);
    fbx_iv_retain(&c.u.l->items[i]);
  }
  c.u.l->n = pn->nin;
  slot_set(f, pn->out[0], c);
  return NULL;
}

static fbx_status *exec_unpack(frame *f, pnode *pn) {
  const fbx_ivalue *c = ref_get(f, pn->in[0]);
  bool list = pn->kind == P_LIST_UNPACK;
  if (c->kind != (list ? FBX_IV_LIST : FBX_IV_TUPLE))
    return node_error(fbx_status_new(FBX_ERR_RUNTIME, "%s: expected a %s, got %s", fbx_sym_str(pn->node->kind),
                                     list ? "list" : "tuple", fbx_iv_kind_name(c->kind)), pn->node);
  if (c->u.l->n != pn->nout)
    return node_error(fbx_status_new(FBX_ERR_RUNTIME, "%s: expected %d elements, got %d", fbx_sym_str(pn->node->kind),
                                     pn->nout, c->u.l->n), pn->node);
  for (int i = 0; i < pn->nout; i++) {
    fbx_iv_retain(&c->u.l->items[i]);
    slot_set(f, pn->out[i], c->u.l->items[i]);
  }
  return NULL;
}

static fbx_status *exec_unknown(const pnode *pn) {
  const char *kind = fbx_sym_str(pn->node->kind);
  fbx_status *st;
  if (pn->node->kind == FBX_SYM_prim_CallFunction) {
    const fbx_node *fn = pn->node->ninputs ? pn->node->inputs[0]->node : NULL;
    fbx_sym name_sym;
    const fbx_attr *a = fn && fn->kind == FBX_SYM_prim_Constant && !fbx_sym_intern(&name_sym, "name", 4)
                            ? fbx_node_attr(fn, name_sym)
                            : NULL;
    const char *name = a && a->kind == FBX_ATTR_STR ? a->u.s : "?";
    st = fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "prim::CallFunction of '%s' is not run by fusebox: the called function's body is not in the "
                        "graph. %s Give fusebox the inlined graph (torch.jit.script(fn).inlined_graph)",
                        name,
                        fbx_pass_inline_knows(name)
                            ? "The inline pass knows this torch.nn.functional function but kept the call "
                              "(FUSEBOX_LOG=passes says why: an argument it needs as a constant is not one), "
                              "or the pass is disabled."
                            : "The inline pass replaces calls of common torch.nn.functional functions by their "
                              "aten op; this one it does not know.");
  }
  else if (pn->node->kind == FBX_SYM_prim_GetAttr || pn->node->kind == FBX_SYM_prim_CallMethod)
    st = fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "%s reads a module's attribute or calls its method: the graph of a scripted nn.Module "
                        "refers to its submodules and parameters through `self`, and their values are not in the "
                        "text. Give fusebox a graph that takes the weights as inputs (script a function of the "
                        "input and the parameters, and pass them with --input NAME=FILE.npy)",
                        kind);
  else if (fbx_op_kind_known(pn->node->kind))
    st = fbx_status_new(FBX_ERR_INTERNAL, "%s has no kernel and the interpreter does not run it", kind);
  else
    st = fbx_status_new(FBX_ERR_UNSUPPORTED, "%s is not in fusebox's op table", kind);
  return node_error(st, pn->node);
}

static fbx_status *exec_group(frame *f, pnode *pn) {
  scratch args, outs;
  FBX_TRY(scratch_init(&args, pn->nin));
  fbx_status *st = scratch_init(&outs, pn->nout);
  if (st) {
    scratch_free(&args);
    return st;
  }
  for (int i = 0; i < pn->nin; i++) args.v[i] = *ref_get(f, pn->in[i]);
  st = f->opts->run_group(f->opts->run_group_ctx, pn->node, args.v, pn->nin, outs.v, pn->nout);
  scratch_free(&args);
  if (st) {
    for (int i = 0; i < pn->nout; i++) fbx_iv_release(&outs.v[i]);
    scratch_free(&outs);
    return node_error(st, pn->node);
  }
  for (int i = 0; i < pn->nout; i++) slot_set(f, pn->out[i], outs.v[i]);
  scratch_free(&outs);
  return NULL;
}

static fbx_status *exec_node(frame *f, pnode *pn) {
  if (pn->group && f->opts && f->opts->run_group) return exec_group(f, pn);
  switch (pn->kind) {
    case P_KERNEL: return exec_kernel(f, pn);
    case P_IF: return exec_if(f, pn);
    case P_LOOP: return exec_loop(f, pn);
    case P_LIST:
    case P_TUPLE: return exec_construct(f, pn);
    case P_LIST_UNPACK:
    case P_TUPLE_UNPACK: return exec_unpack(f, pn);
    case P_UNINIT: {
      fbx_ivalue u = {.kind = FBX_IV_UNINIT};
      for (int i = 0; i < pn->nout; i++) slot_set(f, pn->out[i], u);
      return NULL;
    }
    case P_UNKNOWN: return exec_unknown(pn);
  }
  return NULL;
}

/* Call a tape hook with the node's inputs (and outputs, consecutive slots). */
static fbx_status *call_recorder(frame *f, const pnode *pn, fbx_node_recorder fn, bool with_outputs) {
  scratch args;
  FBX_TRY(scratch_init(&args, pn->nin));
  for (int i = 0; i < pn->nin; i++) args.v[i] = *ref_get(f, pn->in[i]);
  fbx_status *st = fn(f->opts->record_ctx, pn->node, args.v, pn->nin,
                      with_outputs && pn->nout ? &f->slots[pn->out[0]] : NULL, with_outputs ? pn->nout : 0);
  scratch_free(&args);
  return st ? node_error(st, pn->node) : NULL;
}

/* Run block b: params (b->nparams values, new references) are moved into the
 * frame; rets receives b->nrets new references. params and rets may alias. */
static fbx_status *exec_block(frame *f, const pblock *b, fbx_ivalue *params, fbx_ivalue *rets) {
  for (int i = 0; i < b->nparams; i++) {
    slot_set(f, b->params[i], params[i]);
    params[i] = fbx_iv_none();
  }
  for (int i = 0; i < b->nrel_entry; i++) slot_release(f, b->rel_entry[i]);
  const fbx_run_opts *o = f->opts;
  for (int p = 0; p < b->nnodes; p++) {
    pnode *pn = &b->nodes[p];
    if (o && o->before && pn->inplace) FBX_TRY(call_recorder(f, pn, o->before, false));
    FBX_TRY(exec_node(f, pn));
    f->stats.nodes_run++;
    if (o && o->observe) o->observe(o->observe_ctx, pn->node, pn->nout ? &f->slots[pn->out[0]] : NULL, pn->nout);
    if (o && o->record) FBX_TRY(call_recorder(f, pn, o->record, true));
    for (int i = 0; i < pn->nrel; i++) slot_release(f, pn->rel[i]);
  }
  for (int i = 0; i < b->nrets; i++) {
    rets[i] = *ref_get(f, b->rets[i]);
    fbx_iv_retain(&rets[i]);
  }
  for (int i = 0; i < b->nrel_end; i++) slot_release(f, b->rel_end[i]);
  return NULL;
}

fbx_status *fbx_interp_run(fbx_interp *it, const fbx_ivalue *inputs, int n, fbx_ivalue *outputs,
                           const fbx_run_opts *opts) {
  int nout = fbx_graph_noutputs(it->g);
  for (int i = 0; i < nout; i++) outputs[i] = fbx_iv_none();
  FBX_TRY(fbx_interp_check_inputs(it, inputs, n));
  frame f = {.it = it, .opts = opts, .rng = opts ? opts->seed : 0};
  f.slots = fbx_calloc((size_t)(it->nslots > 0 ? it->nslots : 1), sizeof *f.slots);
  scratch params;
  if (!f.slots) return nomem();
  fbx_status *st = scratch_init(&params, n);
  if (st) {
    fbx_free(f.slots);
    return st;
  }
  for (int i = 0; i < n; i++) {
    params.v[i] = inputs[i];
    const fbx_type *t = fbx_graph_input(it->g, i)->type;
    if (t->kind == FBX_TYPE_OPTIONAL) t = t->elems[0];
    if (t->kind == FBX_TYPE_FLOAT && inputs[i].kind == FBX_IV_INT)
      params.v[i] = fbx_iv_float((double)inputs[i].u.i); /* an int where the graph takes a float */
    fbx_iv_retain(&params.v[i]);
  }
  st = exec_block(&f, &it->top, params.v, outputs);
  scratch_free(&params);
  for (int i = 0; i < it->nslots; i++) fbx_iv_release(&f.slots[i]); /* all None unless the run failed */
  fbx_free(f.slots);
  if (opts && opts->stats) *opts->stats = f.stats;
  return st;
}
