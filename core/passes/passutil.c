#include "passes/passutil.h"

#include <string.h>

#include "base/log.h"
#include "passes/passes.h"

bool fbx_passutil_kind_is(const fbx_node *n, const char *kind) {
  return !strcmp(fbx_sym_str(n->kind), kind);
}

bool fbx_passutil_enter(const char *pass, bool *changed) {
  if (changed) *changed = false;
  if (!fbx_pass_disabled(pass)) return true;
  fbx_log(FBX_LOG_PASSES, "%s: skipped (FUSEBOX_DISABLE_PASSES)", pass);
  return false;
}

fbx_status *fbx_passutil_replace_uses(fbx_value *from, fbx_value *to) {
  /* fbx_node_set_input keeps the old input when the new use cannot be
   * recorded; check the input itself rather than the use list. */
  while (from->nuses) {
    fbx_use u = from->uses[from->nuses - 1];
    fbx_node_set_input(u.user, u.offset, to);
    if (u.user->inputs[u.offset] != to) return fbx_status_nomem();
  }
  return NULL;
}

bool fbx_passutil_is_numeric_name(const char *name) {
  if (!*name) return true;
  for (; *name; name++)
    if (*name < '0' || *name > '9') return false;
  return true;
}

bool fbx_passutil_has_uses(const fbx_node *n) {
  for (int i = 0; i < n->noutputs; i++)
    if (n->outputs[i]->nuses) return true;
  return false;
}

/* ---- attribute equality ------------------------------------------------------ */

static bool tensor_const_equal(const fbx_tensor_const *a, const fbx_tensor_const *b) {
  if (!a->data || !b->data) return a == b; /* <Tensor>: value unknown */
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  int64_t numel = 1;
  for (int i = 0; i < a->rank; i++) {
    if (a->sizes[i] != b->sizes[i]) return false;
    numel *= a->sizes[i];
  }
  return !memcmp(a->data, b->data, fbx_dtype_size(a->dtype) * (size_t)numel);
}

static bool attr_equal(const fbx_attr *a, const fbx_attr *b) {
  if (a->name != b->name || a->kind != b->kind) return false;
  switch (a->kind) {
    case FBX_ATTR_INT: return a->u.i == b->u.i;
    /* Bits, not ==: NaN equals the same NaN, -0.0 differs from 0.0. */
    case FBX_ATTR_FLOAT: return !memcmp(&a->u.f, &b->u.f, sizeof(double));
    case FBX_ATTR_STR: return !strcmp(a->u.s, b->u.s);
    case FBX_ATTR_INTS:
      return a->n == b->n && (!a->n || !memcmp(a->u.is, b->u.is, sizeof(int64_t) * (size_t)a->n));
    case FBX_ATTR_FLOATS:
      return a->n == b->n && (!a->n || !memcmp(a->u.fs, b->u.fs, sizeof(double) * (size_t)a->n));
    case FBX_ATTR_STRS:
      if (a->n != b->n) return false;
      for (int i = 0; i < a->n; i++)
        if (strcmp(a->u.ss[i], b->u.ss[i])) return false;
      return true;
    case FBX_ATTR_TENSOR: return tensor_const_equal(a->u.t, b->u.t);
    case FBX_ATTR_TYPE: return fbx_type_equal(a->u.ty, b->u.ty);
    case FBX_ATTR_GRAPH:
    case FBX_ATTR_KIND_COUNT: break;
  }
  return false;
}

bool fbx_passutil_attrs_equal(const fbx_node *a, const fbx_node *b) {
  if (a->nattrs != b->nattrs) return false;
  for (int i = 0; i < a->nattrs; i++) {
    const fbx_attr *other = fbx_node_attr(b, a->attrs[i].name);
    if (!other || !attr_equal(&a->attrs[i], other)) return false;
  }
  return true;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

uint64_t fbx_passutil_attrs_hash(const fbx_node *n) {
  /* Order-independent over attributes, like the equality above. */
  uint64_t total = (uint64_t)n->nattrs;
  for (int i = 0; i < n->nattrs; i++) {
    const fbx_attr *a = &n->attrs[i];
    uint64_t h = mix(a->name, a->kind);
    switch (a->kind) {
      case FBX_ATTR_INT: h = mix(h, (uint64_t)a->u.i); break;
      case FBX_ATTR_FLOAT: h = hash_bytes(h, &a->u.f, sizeof a->u.f); break;
      case FBX_ATTR_STR: h = hash_bytes(h, a->u.s, strlen(a->u.s)); break;
      case FBX_ATTR_INTS: h = hash_bytes(h, a->u.is, sizeof(int64_t) * (size_t)a->n); break;
      case FBX_ATTR_FLOATS: h = hash_bytes(h, a->u.fs, sizeof(double) * (size_t)a->n); break;
      case FBX_ATTR_STRS:
        for (int k = 0; k < a->n; k++) h = hash_bytes(h, a->u.ss[k], strlen(a->u.ss[k]) + 1);
        break;
      case FBX_ATTR_TENSOR: h = mix(h, (uint64_t)a->u.t->dtype * 31u + (uint64_t)a->u.t->rank); break;
      case FBX_ATTR_TYPE: h = mix(h, a->u.ty->kind); break;
      case FBX_ATTR_GRAPH:
      case FBX_ATTR_KIND_COUNT: break;
    }
    total += h;
  }
  return total;
}

bool fbx_passutil_consts_equal(const fbx_node *a, const fbx_node *b) {
  return a->noutputs == 1 && b->noutputs == 1 &&
         fbx_type_equal(a->outputs[0]->type, b->outputs[0]->type) && fbx_passutil_attrs_equal(a, b);
}

/* ---- index folding ----------------------------------------------------------- */

fbx_value *fbx_passutil_fold_index(const fbx_node *n) {
  bool tuple = n->kind == FBX_SYM_prim_TupleIndex;
  if (!tuple && n->kind != FBX_SYM_aten___getitem__) return NULL;
  if (n->ninputs != 2 || n->noutputs != 1) return NULL;
  const fbx_node *c = n->inputs[0]->node;
  if (c->kind != (tuple ? FBX_SYM_prim_TupleConstruct : FBX_SYM_prim_ListConstruct)) return NULL;
  int64_t i;
  if (n->inputs[1]->type->kind != FBX_TYPE_INT || !fbx_value_const_int(n->inputs[1], &i)) return NULL;
  if (!tuple && fbx_value_may_be_mutated(n->inputs[0])) return NULL;
  if (i < 0) i += c->ninputs;
  if (i < 0 || i >= c->ninputs) return NULL; /* raises at run time: keep it */
  return c->inputs[i];
}

/* ---- constants --------------------------------------------------------------- */

fbx_value *fbx_passutil_const_str(fbx_node *pos, const char *s, bool device) {
  fbx_node *n = fbx_node_create(pos->graph, FBX_SYM_prim_Constant, 1);
  if (!n || fbx_node_set_s(n, FBX_SYM_attr_value, s)) return NULL;
  n->outputs[0]->type = fbx_type_simple(device ? FBX_TYPE_DEVICE : FBX_TYPE_STR);
  fbx_node_insert_before(n, pos);
  return n->outputs[0];
}

fbx_value *fbx_passutil_const_ints(fbx_node *pos, const int64_t *v, int count) {
  fbx_graph *g = pos->graph;
  fbx_type *elem = fbx_type_simple(FBX_TYPE_INT);
  fbx_type *t = fbx_type_container(g->arena, FBX_TYPE_LIST, 1, &elem);
  fbx_node *n = t ? fbx_node_create(g, FBX_SYM_prim_Constant, 1) : NULL;
  if (!n || fbx_node_set_is(n, FBX_SYM_attr_value, v, count)) return NULL;
  n->outputs[0]->type = t;
  fbx_node_insert_before(n, pos);
  return n->outputs[0];
}
