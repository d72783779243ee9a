/* The autodiff tape (see autodiff/tape.h). */
#include "autodiff/tape.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/ptrmap.h"
#include "base/strbuf.h"
#include "ir/text.h"
#include "ops/optable.h"

typedef struct slot {
  fbx_tensor *t;    /* retained: keeps the address unique while the tape lives */
  fbx_tensor *grad; /* accumulated during backward */
  char *no_grad;    /* why no gradient can flow through this tensor, or NULL */
} slot;

/* An input or output of an entry, as slots. */
typedef enum ref_kind { REF_NONE, REF_TENSOR, REF_LIST } ref_kind;
typedef struct ref {
  ref_kind kind;
  int slot;   /* REF_TENSOR: -1 when not tracked */
  int n;      /* REF_LIST: elements; slots[k] -1 when not tracked */
  int *slots;
} ref;

typedef struct entry {
  fbx_tape_fn *fn;
  int nin, nout, nsaved;
  ref *in, *out;
  fbx_ivalue *outs;  /* retained, for the shapes of undefined gradients */
  fbx_ivalue *saved;
} entry;

/* The entry that rebases a view's base after an in-place write into the
 * view (PyTorch's CopySlices): input 0 is the base's old version, input 1
 * the view's new one, output 0 the base's new version. The base is
 * contiguous; the view's elements are those of the base's gradient at
 * `offset` (from the base's start) with the view's sizes and strides. */
typedef struct copyslices {
  fbx_tape_fn base;
  int ndim;
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS], offset;
  struct copyslices *next;
} copyslices;

struct fbx_tape {
  slot *slots;
  int nslots, cap_slots;
  fbx_ptrmap cur;     /* tensor -> current slot + 1; NULL: its current version does not require grad */
  fbx_ptrmap watched; /* tensor -> slot + 1 when watched */
  entry *entries;
  int nentries, cap_entries;
  /* set by before_inplace for the next in-place record */
  fbx_tensor *pending_self; /* borrowed: identity only */
  int pending_slot;
  fbx_tensor *pending_copy;
  fbx_tensor *pending_base; /* borrowed (a slot retains it): the base self is a view of */
  copyslices *rebases;      /* owned */
  bool done;
};

#define SLOT_OF(m, t) ((int)(intptr_t)fbx_ptrmap_get((m), (t)) - 1)
#define TRACKED(t, x) (fbx_ptrmap_get(&(t)->cur, (x)) != NULL)

fbx_status *fbx_tape_create(fbx_tape **out) {
  fbx_tape *t = fbx_calloc(1, sizeof *t);
  if (!t) return fbx_status_nomem();
  t->pending_slot = -1;
  *out = t;
  return NULL;
}

static void free_ref(ref *r) {
  if (r->kind == REF_LIST) fbx_free(r->slots);
}

static void free_saved(entry *e) {
  for (int i = 0; e->saved && i < e->nsaved; i++) fbx_iv_release(&e->saved[i]);
  fbx_free(e->saved);
  e->saved = NULL;
  e->nsaved = 0;
}

static void free_entry(entry *e) {
  for (int i = 0; e->in && i < e->nin; i++) free_ref(&e->in[i]);
  for (int i = 0; e->out && i < e->nout; i++) free_ref(&e->out[i]);
  for (int i = 0; e->outs && i < e->nout; i++) fbx_iv_release(&e->outs[i]);
  fbx_free(e->in);
  fbx_free(e->out);
  fbx_free(e->outs);
  free_saved(e);
}

void fbx_tape_destroy(fbx_tape *t) {
  if (!t) return;
  for (int i = 0; i < t->nentries; i++) free_entry(&t->entries[i]);
  fbx_free(t->entries);
  for (int i = 0; i < t->nslots; i++) {
    fbx_tensor_release(t->slots[i].t);
    fbx_tensor_release(t->slots[i].grad);
    fbx_free(t->slots[i].no_grad);
  }
  fbx_free(t->slots);
  fbx_ptrmap_free(&t->cur);
  fbx_ptrmap_free(&t->watched);
  fbx_tensor_release(t->pending_copy);
  for (copyslices *c = t->rebases, *next; c; c = next) {
    next = c->next;
    fbx_free(c);
  }
  fbx_free(t);
}

int fbx_tape_nentries(const fbx_tape *t) { return t ? t->nentries : 0; }

/* ---- slots -------------------------------------------------------------------------------- */

/* A new slot for tensor x, made its current version. */
static fbx_status *new_slot(fbx_tape *t, fbx_tensor *x, const char *no_grad, int *out) {
  if (t->nslots == t->cap_slots) {
    int cap = t->cap_slots ? t->cap_slots * 2 : 32;
    slot *s = fbx_realloc(t->slots, sizeof *s * (size_t)cap);
    if (!s) return fbx_status_nomem();
    t->slots = s;
    t->cap_slots = cap;
  }
  char *why = NULL;
  if (no_grad && !(why = fbx_strdup(no_grad))) return fbx_status_nomem();
  if (fbx_ptrmap_put(&t->cur, x, (void *)(intptr_t)(t->nslots + 1))) {
    fbx_free(why);
    return fbx_status_nomem();
  }
  slot *s = &t->slots[t->nslots];
  s->t = fbx_tensor_retain(x);
  s->grad = NULL;
  s->no_grad = why;
  *out = t->nslots++;
  return NULL;
}

static bool is_float_tensor(const fbx_ivalue *v) {
  return v->kind == FBX_IV_TENSOR && v->u.t && fbx_dtype_is_floating(v->u.t->dtype);
}

fbx_status *fbx_tape_watch(fbx_tape *t, const fbx_ivalue *v) {
  if (!is_float_tensor(v))
    return fbx_status_new(FBX_ERR_INVALID_ARG, "only floating-point tensors can require gradients, got %s",
                          v->kind == FBX_IV_TENSOR ? fbx_dtype_name(v->u.t->dtype) : fbx_iv_kind_name(v->kind));
  if (fbx_ptrmap_has(&t->watched, v->u.t)) return NULL; /* the same tensor given for two inputs */
  int s;
  FBX_TRY(new_slot(t, v->u.t, NULL, &s));
  if (fbx_ptrmap_put(&t->watched, v->u.t, (void *)(intptr_t)(s + 1))) return fbx_status_nomem();
  return NULL;
}

bool fbx_tape_requires_grad(const fbx_tape *t, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TENSOR) return v->u.t && TRACKED(t, v->u.t);
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE)
    for (int i = 0; i < v->u.l->n; i++)
      if (fbx_tape_requires_grad(t, &v->u.l->items[i])) return true;
  return false;
}

/* ---- recording -------------------------------------------------------------------------------- */

static fbx_status *copy_tensor(fbx_tensor **out, const fbx_tensor *x) { return fbx_tensor_clone_as(out, x, x->dtype); }

/* Replace *v by a copy where it shares memory with `self` (a list gets a new
 * list: the graph may still use the old one). With `memo` (tensor -> its
 * copy, keys retained), a tensor met again gets the same copy; *ncopied
 * (may be NULL) counts the copies made. */
static fbx_status *unshare(fbx_ivalue *v, const fbx_tensor *self, fbx_ptrmap *memo, int *ncopied) {
  if (v->kind == FBX_IV_TENSOR) {
    if (!v->u.t || !fbx_tensor_may_overlap(v->u.t, self)) return NULL;
    fbx_tensor *c = memo ? fbx_ptrmap_get(memo, v->u.t) : NULL;
    if (c) {
      fbx_tensor_retain(c);
    } else {
      FBX_TRY(copy_tensor(&c, v->u.t));
      if (memo && fbx_ptrmap_put(memo, fbx_tensor_retain(v->u.t), c)) {
        fbx_tensor_release(v->u.t);
        fbx_tensor_release(c);
        return fbx_status_nomem();
      }
      if (ncopied) (*ncopied)++;
    }
    fbx_iv_release(v);
    *v = fbx_iv_tensor(c);
    return NULL;
  }
  if (v->kind != FBX_IV_LIST && v->kind != FBX_IV_TUPLE) return NULL;
  bool any = false;
  for (int i = 0; i < v->u.l->n; i++) {
    const fbx_ivalue *e = &v->u.l->items[i];
    any |= e->kind == FBX_IV_TENSOR && e->u.t && fbx_tensor_may_overlap(e->u.t, self);
  }
  if (!any) return NULL;
  fbx_ivalue c;
  if (v->kind == FBX_IV_LIST) FBX_TRY(fbx_iv_list_new(&c, v->u.l->n));
  else FBX_TRY(fbx_iv_tuple_new(&c, v->u.l->n));
  for (int i = 0; i < v->u.l->n; i++) {
    c.u.l->items[i] = v->u.l->items[i];
    fbx_iv_retain(&c.u.l->items[i]);
  }
  c.u.l->n = v->u.l->n;
  fbx_status *st = NULL;
  for (int i = 0; i < c.u.l->n && !st; i++) st = unshare(&c.u.l->items[i], self, memo, ncopied);
  if (st) {
    fbx_iv_release(&c);
    return st;
  }
  fbx_iv_release(v);
  *v = c;
  return NULL;
}

fbx_status *fbx_tape_unshare_saved(fbx_tape *t, const fbx_tensor *x, int *ncopied) {
  if (ncopied) *ncopied = 0;
  fbx_ptrmap memo = {0};
  fbx_status *st = NULL;
  for (int e = 0; e < t->nentries && !st; e++)
    for (int i = 0; i < t->entries[e].nsaved && !st; i++) st = unshare(&t->entries[e].saved[i], x, &memo, ncopied);
  for (size_t k = 0; k < memo.cap; k++)
    if (memo.keys[k]) fbx_tensor_release((fbx_tensor *)memo.keys[k]);
  fbx_ptrmap_free(&memo);
  return st;
}

/* Is o a contiguous tensor whose memory holds every element of v? */
static bool contains(const fbx_tensor *o, const fbx_tensor *v) {
  if (o->storage != v->storage || !fbx_tensor_is_contiguous(o) || o->dtype != v->dtype || v->numel == 0) return false;
  int64_t hi = v->offset;
  for (int d = 0; d < v->ndim; d++) hi += (v->sizes[d] - 1) * v->strides[d];
  return v->offset >= o->offset && hi < o->offset + o->numel;
}

static fbx_status *copyslices_backward(fbx_tape_fn *fn, const fbx_ivalue *gout, const fbx_ivalue *outs, int nout,
                                       const fbx_ivalue *saved, int nsaved, fbx_ivalue *gin, int nin) {
  (void)outs;
  (void)nout;
  (void)saved;
  (void)nsaved;
  copyslices *c = (copyslices *)fn;
  if (nin != 2 || gout[0].kind != FBX_IV_TENSOR) return NULL;
  fbx_tensor *g = NULL, *region = NULL, *gv = NULL, *z = NULL;
  fbx_status *st = fbx_tensor_clone_as(&g, gout[0].u.t, gout[0].u.t->dtype); /* contiguous */
  if (!st) st = fbx_tensor_view(&region, g, c->ndim, c->sizes, c->strides, g->offset + c->offset);
  if (!st) st = fbx_tensor_clone_as(&gv, region, region->dtype);
  if (!st) st = fbx_tensor_zeros(&z, region->dtype, region->ndim, region->sizes);
  if (!st) st = fbx_tensor_copy_(region, z); /* what the write replaced gets nothing from the new base */
  fbx_tensor_release(region);
  fbx_tensor_release(z);
  if (st) {
    fbx_tensor_release(g);
    fbx_tensor_release(gv);
    return st;
  }
  gin[0] = fbx_iv_tensor(g);
  gin[1] = fbx_iv_tensor(gv);
  return NULL;
}

/* After an in-place write into a view of t->pending_base: the base gets a
 * new version whose gradient flows to its old version outside the view and
 * to the view's new version inside it; other tracked views of the base
 * still name the old memory's versions and are marked (no gradient through
 * them). */
static fbx_status *rebase(fbx_tape *t, fbx_tensor *view) {
  fbx_tensor *b = t->pending_base;
  t->pending_base = NULL;
  if (!b) return NULL;
  copyslices *c = fbx_calloc(1, sizeof *c);
  if (!c) return fbx_status_nomem();
  c->next = t->rebases;
  t->rebases = c;
  c->base.backward = copyslices_backward;
  c->base.what = "an in-place write into a view (CopySlices)";
  c->ndim = view->ndim;
  for (int d = 0; d < view->ndim; d++) {
    c->sizes[d] = view->sizes[d];
    c->strides[d] = view->strides[d];
  }
  c->offset = view->offset - b->offset;
  for (size_t k = 0; k < t->cur.cap; k++) {
    const fbx_tensor *o = t->cur.keys[k];
    if (!o || !t->cur.vals[k] || o == b || o == view || !contains(b, o) || !fbx_tensor_may_overlap(o, view)) continue;
    int s;
    FBX_TRY(new_slot(t, (fbx_tensor *)o, "a view of a tensor written in place through another view (fusebox does "
                                         "not rebase such views)", &s));
  }
  fbx_ivalue ins[2] = {fbx_iv_tensor(b), fbx_iv_tensor(view)}, outs[1] = {fbx_iv_tensor(b)};
  return fbx_tape_record(t, &c->base, ins, NULL, 2, outs, 1, NULL, 0, false);
}

fbx_status *fbx_tape_before_inplace(fbx_tape *t, const fbx_node *n, const fbx_ivalue *ins, int nin) {
  fbx_tensor_release(t->pending_copy);
  t->pending_copy = NULL;
  t->pending_self = NULL;
  t->pending_slot = -1;
  t->pending_base = NULL;
  if (nin < 1 || ins[0].kind != FBX_IV_TENSOR || !ins[0].u.t) return NULL;
  fbx_tensor *self = ins[0].u.t;
  /* Earlier entries keep the values they saw. */
  for (int e = 0; e < t->nentries; e++)
    for (int i = 0; i < t->entries[e].nsaved; i++) FBX_TRY(unshare(&t->entries[e].saved[i], self, NULL, NULL));
  bool involved = false;
  for (int i = 0; i < nin; i++) involved |= fbx_tape_requires_grad(t, &ins[i]);
  /* A write into a view of a tensor that requires grad involves it too. */
  fbx_tensor *base = NULL;
  for (size_t k = 0; k < t->cur.cap; k++) {
    fbx_tensor *o = (fbx_tensor *)t->cur.keys[k];
    if (!o || !t->cur.vals[k] || o == self || !fbx_tensor_may_overlap(o, self)) continue;
    involved = true;
    /* the largest; of equal ones (a full slice) the oldest version */
    if (contains(o, self) &&
        (!base || o->numel > base->numel ||
         (o->numel == base->numel && SLOT_OF(&t->cur, o) < SLOT_OF(&t->cur, base))))
      base = o;
  }
  if (!involved) return NULL;
  for (size_t k = 0; k < t->cur.cap; k++) {
    const fbx_tensor *o = t->cur.keys[k];
    if (!o || !t->cur.vals[k] || o == self || o == base || !fbx_tensor_may_overlap(o, self)) continue;
    if (base && contains(base, o)) continue; /* another view of the base: it loses its gradient (rebase) */
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "%s writes in place into memory that a tensor requiring grad shares without being a "
                          "contiguous base of the written view; fusebox's autodiff does not track views through "
                          "such writes",
                          fbx_sym_str(n->kind));
  }
  t->pending_base = base;
  t->pending_self = self;
  t->pending_slot = SLOT_OF(&t->cur, self);
  return copy_tensor(&t->pending_copy, self);
}

/* The slots of an input value (current versions). */
static fbx_status *input_ref(fbx_tape *t, const fbx_ivalue *v, bool diff, ref *r) {
  memset(r, 0, sizeof *r);
  r->slot = -1;
  if (!diff) return NULL;
  if (v->kind == FBX_IV_TENSOR) {
    r->kind = REF_TENSOR;
    r->slot = v->u.t ? SLOT_OF(&t->cur, v->u.t) : -1;
    return NULL;
  }
  if ((v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) && v->u.l->n > 0) {
    r->kind = REF_LIST;
    r->n = v->u.l->n;
    if (!(r->slots = fbx_malloc(sizeof *r->slots * (size_t)r->n))) return fbx_status_nomem();
    for (int i = 0; i < r->n; i++) {
      const fbx_ivalue *e = &v->u.l->items[i];
      r->slots[i] = e->kind == FBX_IV_TENSOR && e->u.t ? SLOT_OF(&t->cur, e->u.t) : -1;
    }
  }
  return NULL;
}

/* New slots for the floating tensors of an output value. */
static fbx_status *output_ref(fbx_tape *t, const fbx_ivalue *v, const char *no_grad, ref *r) {
  memset(r, 0, sizeof *r);
  r->slot = -1;
  if (v->kind == FBX_IV_TENSOR) {
    r->kind = REF_TENSOR;
    if (is_float_tensor(v)) FBX_TRY(new_slot(t, v->u.t, no_grad, &r->slot));
    return NULL;
  }
  if ((v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) && v->u.l->n > 0) {
    r->kind = REF_LIST;
    r->n = v->u.l->n;
    if (!(r->slots = fbx_malloc(sizeof *r->slots * (size_t)r->n))) return fbx_status_nomem();
    for (int i = 0; i < r->n; i++) r->slots[i] = -1;
    for (int i = 0; i < r->n; i++)
      if (is_float_tensor(&v->u.l->items[i])) FBX_TRY(new_slot(t, v->u.l->items[i].u.t, no_grad, &r->slots[i]));
  }
  return NULL;
}

fbx_status *fbx_tape_record(fbx_tape *t, fbx_tape_fn *fn, const fbx_ivalue *ins, const bool *diff, int nin,
                            const fbx_ivalue *outs, int nout, fbx_ivalue *saved, int nsaved, bool inplace) {
  fbx_status *st = NULL;
  if (t->nentries == t->cap_entries) {
    int cap = t->cap_entries ? t->cap_entries * 2 : 32;
    entry *e = fbx_realloc(t->entries, sizeof *e * (size_t)cap);
    if (!e) st = fbx_status_nomem();
    else {
      t->entries = e;
      t->cap_entries = cap;
    }
  }
  entry *e = st ? NULL : &t->entries[t->nentries];
  if (e) {
    memset(e, 0, sizeof *e);
    e->fn = fn;
    e->in = fbx_calloc((size_t)(nin > 0 ? nin : 1), sizeof *e->in);
    e->out = fbx_calloc((size_t)(nout > 0 ? nout : 1), sizeof *e->out);
    e->outs = fbx_calloc((size_t)(nout > 0 ? nout : 1), sizeof *e->outs);
    e->saved = fbx_calloc((size_t)(nsaved > 0 ? nsaved : 1), sizeof *e->saved);
    if (!e->in || !e->out || !e->outs || !e->saved) {
      /* not counted in nentries, so destroy would not free these */
      fbx_free(e->in);
      fbx_free(e->out);
      fbx_free(e->outs);
      fbx_free(e->saved);
      memset(e, 0, sizeof *e);
      st = fbx_status_nomem();
    }
  }
  if (!st) {
    /* From here on the entry owns what it holds; it is counted even if a
     * later step fails, so that destroy frees it. */
    e->nin = nin;
    e->nout = nout;
    e->nsaved = nsaved;
    for (int i = 0; i < nsaved; i++) {
      e->saved[i] = saved[i];
      saved[i] = fbx_iv_none();
    }
    t->nentries++;
    bool self_pending = inplace && nin > 0 && ins[0].kind == FBX_IV_TENSOR && ins[0].u.t == t->pending_self &&
                        t->pending_self;
    if (self_pending) {
      /* The entry saw self before the write: its copy, and the old version's slot. */
      for (int i = 0; i < nsaved; i++)
        if (e->saved[i].kind == FBX_IV_TENSOR && e->saved[i].u.t == t->pending_self) {
          fbx_iv_release(&e->saved[i]);
          e->saved[i] = fbx_iv_tensor(fbx_tensor_retain(t->pending_copy));
        }
    }
    for (int i = 0; i < nin && !st; i++) st = input_ref(t, &ins[i], !diff || diff[i], &e->in[i]);
    if (!st && self_pending && e->in[0].kind == REF_TENSOR) e->in[0].slot = t->pending_slot;
    for (int j = 0; j < nout && !st; j++) {
      e->outs[j] = outs[j];
      fbx_iv_retain(&e->outs[j]);
      st = output_ref(t, &outs[j], NULL, &e->out[j]);
    }
  }
  for (int i = 0; i < nsaved; i++) fbx_iv_release(&saved[i]);
  if (inplace) {
    fbx_tensor_release(t->pending_copy);
    t->pending_copy = NULL;
    t->pending_self = NULL;
    t->pending_slot = -1;
    if (!st && nin > 0 && ins[0].kind == FBX_IV_TENSOR && ins[0].u.t) st = rebase(t, ins[0].u.t);
    t->pending_base = NULL;
  }
  return st;
}

/* Is this the in-place write fbx_tape_before_inplace prepared (self is its
 * output 0), not some other unit after a write the runtime skipped? */
static bool writes(const fbx_tensor *self, const fbx_ivalue *outs, int nout) {
  return self && nout > 0 && outs[0].kind == FBX_IV_TENSOR && outs[0].u.t == self;
}

fbx_status *fbx_tape_mark_no_grad(fbx_tape *t, const fbx_ivalue *outs, int nout, const char *reason) {
  for (int j = 0; j < nout; j++) {
    ref r;
    fbx_status *st = output_ref(t, &outs[j], reason, &r);
    free_ref(&r);
    FBX_TRY(st);
  }
  /* An in-place write without a gradient into a view: the base's new
   * version leads to the view's, which carries the reason. */
  fbx_tensor *self = t->pending_self;
  fbx_tensor_release(t->pending_copy);
  t->pending_copy = NULL;
  t->pending_self = NULL;
  t->pending_slot = -1;
  return writes(self, outs, nout) ? rebase(t, self) : NULL;
}

static fbx_status *untrack(fbx_tape *t, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TENSOR && v->u.t && TRACKED(t, v->u.t))
    return fbx_ptrmap_put(&t->cur, v->u.t, NULL) ? fbx_status_nomem() : NULL;
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE)
    for (int i = 0; i < v->u.l->n; i++) FBX_TRY(untrack(t, &v->u.l->items[i]));
  return NULL;
}

fbx_status *fbx_tape_mark_constant(fbx_tape *t, const fbx_ivalue *outs, int nout) {
  fbx_tensor *self = t->pending_self;
  fbx_tensor_release(t->pending_copy);
  t->pending_copy = NULL;
  t->pending_self = NULL;
  t->pending_slot = -1;
  for (int j = 0; j < nout; j++) FBX_TRY(untrack(t, &outs[j]));
  return writes(self, outs, nout) ? rebase(t, self) : NULL;
}

/* ---- backward ---------------------------------------------------------------------------------- */

static void shape_str(fbx_strbuf *b, const fbx_tensor *x) {
  fbx_strbuf_puts(b, "[");
  for (int d = 0; d < x->ndim; d++) fbx_strbuf_printf(b, "%s%lld", d ? ", " : "", (long long)x->sizes[d]);
  fbx_strbuf_puts(b, "]");
}

static fbx_status *add_tensors(fbx_tensor **out, fbx_tensor *a, fbx_tensor *b) {
  const fbx_op *op = fbx_op_get(FBX_OP_add_Tensor);
  if (!op) return fbx_status_nomem();
  fbx_ivalue args[3] = {fbx_iv_tensor(a), fbx_iv_tensor(b), fbx_iv_int(1)};
  fbx_ivalue res[FBX_SCHEMA_MAX_RETS];
  memset(res, 0, sizeof res);
  uint64_t rng = 0;
  fbx_kctx ctx = {.op = op, .rng_state = &rng, .nargs = 3};
  FBX_TRY(op->kernel(&ctx, args, res));
  *out = res[0].u.t;
  return NULL;
}

/* Add gradient g (borrowed) into slot s. `from` names where it came from. */
static fbx_status *accumulate(fbx_tape *t, int s, fbx_tensor *g, const char *from) {
  slot *sl = &t->slots[s];
  if (sl->no_grad) return fbx_status_new(FBX_ERR_UNSUPPORTED, "no gradient: %s", sl->no_grad);
  if (!fbx_tensor_same_shape(g, sl->t)) {
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "%s gave a gradient of shape ", from);
    shape_str(&b, g);
    fbx_strbuf_puts(&b, " for a tensor of shape ");
    shape_str(&b, sl->t);
    fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_INTERNAL, "%s", b.data);
    fbx_strbuf_free(&b);
    return st;
  }
  if (!sl->grad) {
    sl->grad = fbx_tensor_retain(g);
    return NULL;
  }
  fbx_tensor *sum = NULL;
  FBX_TRY(add_tensors(&sum, sl->grad, g));
  fbx_tensor_release(sl->grad);
  sl->grad = sum;
  return NULL;
}

/* Take (move out) the gradient of an output ref; lists get zeros for their
 * elements without one, or None when none has one. */
static fbx_status *take_grad(fbx_tape *t, const ref *r, const fbx_ivalue *outv, fbx_ivalue *g) {
  *g = fbx_iv_none();
  if (r->kind == REF_TENSOR) {
    if (r->slot >= 0 && t->slots[r->slot].grad) {
      *g = fbx_iv_tensor(t->slots[r->slot].grad);
      t->slots[r->slot].grad = NULL;
    }
    return NULL;
  }
  if (r->kind != REF_LIST) return NULL;
  bool any = false;
  for (int i = 0; i < r->n; i++) any |= r->slots[i] >= 0 && t->slots[r->slots[i]].grad;
  if (!any) return NULL;
  FBX_TRY(fbx_iv_list_new(g, r->n));
  for (int i = 0; i < r->n; i++) {
    fbx_tensor *x = NULL;
    if (r->slots[i] >= 0 && t->slots[r->slots[i]].grad) {
      x = t->slots[r->slots[i]].grad;
      t->slots[r->slots[i]].grad = NULL;
    } else {
      const fbx_tensor *o = outv->u.l->items[i].u.t;
      fbx_status *st = fbx_tensor_zeros(&x, o->dtype, o->ndim, o->sizes);
      if (st) {
        fbx_iv_release(g);
        return st;
      }
    }
    fbx_status *st = fbx_iv_list_push(g, fbx_iv_tensor(x));
    if (st) {
      fbx_iv_release(g);
      return st;
    }
  }
  return NULL;
}

static fbx_status *route_grad(fbx_tape *t, const ref *r, const fbx_ivalue *g, const char *from) {
  if (g->kind == FBX_IV_NONE) return NULL;
  if (r->kind == REF_TENSOR) {
    if (r->slot < 0) return NULL;
    if (g->kind != FBX_IV_TENSOR)
      return fbx_status_new(FBX_ERR_INTERNAL, "%s gave a %s as the gradient of a tensor", from, fbx_iv_kind_name(g->kind));
    return accumulate(t, r->slot, g->u.t, from);
  }
  if (r->kind != REF_LIST) return NULL;
  if ((g->kind != FBX_IV_LIST && g->kind != FBX_IV_TUPLE) || g->u.l->n != r->n)
    return fbx_status_new(FBX_ERR_INTERNAL, "%s gave a %s as the gradient of a %d-element list", from,
                          fbx_iv_kind_name(g->kind), r->n);
  for (int i = 0; i < r->n; i++) {
    const fbx_ivalue *e = &g->u.l->items[i];
    if (r->slots[i] < 0 || e->kind != FBX_IV_TENSOR) continue;
    FBX_TRY(accumulate(t, r->slots[i], e->u.t, from));
  }
  return NULL;
}

static fbx_status *run_entry(fbx_tape *t, entry *e) {
  fbx_ivalue *gout = fbx_calloc((size_t)(e->nout > 0 ? e->nout : 1), sizeof *gout);
  fbx_ivalue *gin = fbx_calloc((size_t)(e->nin > 0 ? e->nin : 1), sizeof *gin);
  fbx_status *st = gout && gin ? NULL : fbx_status_nomem();
  bool any = false;
  for (int j = 0; j < e->nout && !st; j++) {
    st = take_grad(t, &e->out[j], &e->outs[j], &gout[j]);
    any |= gout[j].kind != FBX_IV_NONE;
  }
  if (!st && any) st = e->fn->backward(e->fn, gout, e->outs, e->nout, e->saved, e->nsaved, gin, e->nin);
  for (int i = 0; i < e->nin && !st; i++) st = route_grad(t, &e->in[i], &gin[i], e->fn->what);
  for (int j = 0; gout && j < e->nout; j++) fbx_iv_release(&gout[j]);
  for (int i = 0; gin && i < e->nin; i++) fbx_iv_release(&gin[i]);
  fbx_free(gout);
  fbx_free(gin);
  free_saved(e);
  return st;
}

/* Output k's gradient g into the tape (element i of a list output, or -1). */
static fbx_status *seed_grad(fbx_tape *t, int k, int i, const fbx_ivalue *out, const fbx_ivalue *g) {
  char at[48];
  if (i < 0) snprintf(at, sizeof at, "grad_outputs[%d]", k);
  else snprintf(at, sizeof at, "grad_outputs[%d][%d]", k, i);
  if (g->kind == FBX_IV_NONE) return NULL;
  if (out->kind != FBX_IV_TENSOR || g->kind != FBX_IV_TENSOR)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "%s: a gradient for a %s", at, fbx_iv_kind_name(out->kind));
  if (!fbx_tensor_same_shape(g->u.t, out->u.t)) {
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "%s: shape ", at);
    shape_str(&b, g->u.t);
    if (i < 0) fbx_strbuf_printf(&b, " where output %d has shape ", k);
    else fbx_strbuf_printf(&b, " where output %d[%d] has shape ", k, i);
    shape_str(&b, out->u.t);
    fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
    fbx_strbuf_free(&b);
    return st;
  }
  if (!TRACKED(t, out->u.t)) return NULL; /* it does not depend on an input that requires grad */
  return accumulate(t, SLOT_OF(&t->cur, out->u.t), g->u.t, at);
}

fbx_status *fbx_tape_backward(fbx_tape *t, const fbx_ivalue *outs, const fbx_ivalue *gout, int n,
                              const fbx_ivalue *inputs, fbx_ivalue *gin, int nin) {
  for (int i = 0; i < nin; i++) gin[i] = fbx_iv_none();
  if (t->done)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "backward already ran on this handle (its saved values are freed); "
                                               "run forward again for another backward");
  t->done = true;
  fbx_status *st = NULL;
  for (int k = 0; k < n && !st; k++) {
    if (gout[k].kind == FBX_IV_NONE) continue;
    if (outs[k].kind == FBX_IV_LIST && gout[k].kind == FBX_IV_LIST) { /* a Tensor[] output: per element */
      if (gout[k].u.l->n != outs[k].u.l->n) {
        st = fbx_status_new(FBX_ERR_INVALID_ARG, "grad_outputs[%d]: %d gradients for a list of %d", k, gout[k].u.l->n,
                            outs[k].u.l->n);
        break;
      }
      for (int i = 0; i < outs[k].u.l->n && !st; i++)
        st = seed_grad(t, k, i, &outs[k].u.l->items[i], &gout[k].u.l->items[i]);
      continue;
    }
    st = seed_grad(t, k, -1, &outs[k], &gout[k]);
  }
  for (int e = t->nentries - 1; e >= 0 && !st; e--) st = run_entry(t, &t->entries[e]);
  for (int i = 0; i < nin && !st; i++) {
    const fbx_ivalue *v = &inputs[i];
    if (v->kind != FBX_IV_TENSOR || !fbx_ptrmap_has(&t->watched, v->u.t)) continue;
    fbx_tensor *g = t->slots[SLOT_OF(&t->watched, v->u.t)].grad;
    if (g) gin[i] = fbx_iv_tensor(fbx_tensor_retain(g));
  }
  if (st)
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
  /* What backward held is not needed any more. */
  for (int e = 0; e < t->nentries; e++) free_saved(&t->entries[e]);
  for (int i = 0; i < t->nslots; i++) {
    fbx_tensor_release(t->slots[i].grad);
    t->slots[i].grad = NULL;
  }
  return st;
}
