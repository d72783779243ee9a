/* Runtime-query folding: replace the run-time queries of scripted modules
 * (ops/list_runtime.h) by the answers fusebox gives whenever the answer is
 * already known, and fold what the guards built on them compute, so that
 * constprop and peephole can drop a guarded fast path the run never takes.
 *
 * Every fold gives exactly the kernel's answer (see list_runtime.h):
 *
 *   aten::is_autocast_enabled()    -> false
 *   aten::is_grad_enabled()        -> true
 *   prim::is_nested(x)             -> false
 *   prim::is_cuda(x)               -> false   (fusebox tensors live on the CPU)
 *   prim::device(x)                -> "cpu"   (the same)
 *   aten::str(d), d a Device constant -> its name ("cpu")
 *   prim::requires_grad(x), aten::is_floating_point(x)
 *                                  -> whether x's dtype is floating, when its
 *                                     type knows the dtype (Float(...), a
 *                                     profiled or annotated graph)
 *   aten::any(L), aten::all(L), L a list built by prim::ListConstruct and
 *   aten::append in n's block and only read otherwise (any/all/len)
 *                                  -> the answer, when the elements present at
 *                                     n decide it: a constant true among them
 *                                     for any (false for all), or all of them
 *                                     constant.
 *   aten::find(s, sub, start, end) on constants -> the index (the kernel's
 *                                     rule, repeated here because passes do
 *                                     not call kernels; test_runtime_ops
 *                                     checks that both agree) */
#include <string.h>

#include "base/log.h"
#include "ir/type.h"
#include "passes/passes.h"
#include "passes/passutil.h"

static fbx_status *replace(fbx_node *n, fbx_value *c, int *folded) {
  if (!c) return fbx_status_nomem();
  FBX_TRY(fbx_passutil_replace_uses(n->outputs[0], c));
  fbx_node_destroy(n);
  (*folded)++;
  return NULL;
}

static bool const_bool(const fbx_value *v, bool *out) {
  int64_t i;
  if (v->type->kind != FBX_TYPE_BOOL || !fbx_value_const_int(v, &i)) return false;
  *out = i != 0;
  return true;
}

static const char *const_str(const fbx_value *v, fbx_type_kind kind) {
  if (v->type->kind != kind || !fbx_value_is_const(v)) return NULL;
  const fbx_attr *a = fbx_node_attr(v->node, FBX_SYM_attr_value);
  return a && a->kind == FBX_ATTR_STR ? a->u.s : NULL;
}

/* TorchScript's str.find (k_runtime.c): -2 where the kernel raises. */
static int64_t str_find(const char *s, const char *sub, int64_t start, int64_t end) {
  int64_t size = (int64_t)strlen(s), sublen = (int64_t)strlen(sub);
  if (start < 0) start = size + start > 0 ? size + start : 0;
  if (end < 0) end = size + end + 1 > 0 ? size + end + 1 : 0;
  if (end > start && start > size) return -2;
  int64_t n = end > start ? (end < size ? end : size) - start : 0;
  for (int64_t i = 0; i + sublen <= n; i++)
    if (!memcmp(s + start + i, sub, (size_t)sublen)) return start + i;
  return -1;
}

/* aten::any / aten::all of a list whose contents at n are known. */
static bool fold_any_all(const fbx_node *n, bool is_any, bool *out) {
  const fbx_value *L = n->inputs[0];
  const fbx_node *lc = L->node;
  if (lc->kind != FBX_SYM_prim_ListConstruct || lc->owner != n->owner) return false;
  for (int i = 0; i < L->nuses; i++) {
    const fbx_node *u = L->uses[i].user;
    if (u == n) continue;
    if (fbx_passutil_kind_is(u, "aten::append")) {
      if (u->owner != n->owner || L->uses[i].offset != 0) return false;
    } else if (!fbx_passutil_kind_is(u, "aten::any") && !fbx_passutil_kind_is(u, "aten::all") &&
               !fbx_passutil_kind_is(u, "aten::len")) {
      return false;
    }
  }
  bool decisive = false, all_known = true;
  /* the appends between the ListConstruct and n, then its own elements */
  for (const fbx_node *p = n->prev; p && p != lc; p = p->prev) {
    if (!fbx_passutil_kind_is(p, "aten::append") || p->ninputs != 2 || p->inputs[0] != L) continue;
    bool b;
    if (!const_bool(p->inputs[1], &b)) all_known = false;
    else if (b == is_any) decisive = true;
  }
  for (int i = 0; i < lc->ninputs; i++) {
    bool b;
    if (!const_bool(lc->inputs[i], &b)) all_known = false;
    else if (b == is_any) decisive = true;
  }
  if (decisive) *out = is_any;
  else if (all_known) *out = !is_any;
  return decisive || all_known;
}

static fbx_status *fold_node(fbx_node *n, int *folded) {
  if (n->noutputs != 1) return NULL;
  fbx_block *b = n->owner;
  int out = n->outputs[0]->type->kind;
  const fbx_type *t = n->ninputs == 1 && n->inputs[0]->type->kind == FBX_TYPE_TENSOR ? n->inputs[0]->type : NULL;
  if (n->ninputs == 0 && out == FBX_TYPE_BOOL && fbx_passutil_kind_is(n, "aten::is_autocast_enabled"))
    return replace(n, fbx_insert_const_bool(b, n, false), folded);
  if (n->ninputs == 0 && out == FBX_TYPE_BOOL && fbx_passutil_kind_is(n, "aten::is_grad_enabled"))
    return replace(n, fbx_insert_const_bool(b, n, true), folded);
  if (t && out == FBX_TYPE_BOOL && (fbx_passutil_kind_is(n, "prim::is_nested") || n->kind == FBX_SYM_prim_is_cuda))
    return replace(n, fbx_insert_const_bool(b, n, false), folded);
  if (t && out == FBX_TYPE_DEVICE && n->kind == FBX_SYM_prim_device)
    return replace(n, fbx_passutil_const_str(n, "cpu", true), folded);
  if (t && out == FBX_TYPE_BOOL &&
      (fbx_passutil_kind_is(n, "prim::requires_grad") || fbx_passutil_kind_is(n, "aten::is_floating_point"))) {
    if (t->dtype == FBX_DTYPE_UNDEFINED) return NULL;
    return replace(n, fbx_insert_const_bool(b, n, fbx_dtype_is_floating(t->dtype) != 0), folded);
  }
  if (n->ninputs == 1 && out == FBX_TYPE_STR && fbx_passutil_kind_is(n, "aten::str")) {
    const char *d = const_str(n->inputs[0], FBX_TYPE_DEVICE);
    return d ? replace(n, fbx_passutil_const_str(n, d, false), folded) : NULL;
  }
  if (n->ninputs == 4 && out == FBX_TYPE_INT && fbx_passutil_kind_is(n, "aten::find")) {
    const char *s = const_str(n->inputs[0], FBX_TYPE_STR), *sub = const_str(n->inputs[1], FBX_TYPE_STR);
    int64_t start, end;
    if (!s || !sub || n->inputs[2]->type->kind != FBX_TYPE_INT || n->inputs[3]->type->kind != FBX_TYPE_INT ||
        !fbx_value_const_int(n->inputs[2], &start) || !fbx_value_const_int(n->inputs[3], &end))
      return NULL;
    int64_t r = str_find(s, sub, start, end);
    return r == -2 ? NULL : replace(n, fbx_insert_const_int(b, n, r), folded); /* the error stays */
  }
  bool is_any = fbx_passutil_kind_is(n, "aten::any");
  if (n->ninputs == 1 && out == FBX_TYPE_BOOL && n->inputs[0]->type->kind == FBX_TYPE_LIST &&
      (is_any || fbx_passutil_kind_is(n, "aten::all"))) {
    bool r;
    return fold_any_all(n, is_any, &r) ? replace(n, fbx_insert_const_bool(b, n, r), folded) : NULL;
  }
  return NULL;
}

static fbx_status *rq_block(fbx_block *b, int *folded) {
  FBX_BLOCK_FOR_EACH(n, b) {
    for (int i = 0; i < n->nblocks; i++) FBX_TRY(rq_block(n->blocks[i], folded));
    FBX_TRY(fold_node(n, folded));
  }
  return NULL;
}

fbx_status *fbx_pass_rtquery(fbx_graph *g, bool *changed) {
  if (!fbx_passutil_enter("rtquery", changed)) return NULL;
  int folded = 0;
  fbx_status *err = rq_block(g->block, &folded);
  if (changed) *changed = folded > 0;
  if (folded) fbx_log(FBX_LOG_PASSES, "rtquery: folded %d runtime queries", folded);
  return err;
}
