/* The TorchScript-IR printer: byte-for-byte what PyTorch's Graph::print
 * writes (torch/csrc/jit/ir/ir.cpp), so that graphs PyTorch printed come back
 * unchanged and print(parse(print(g))) == print(g).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/text.h"
#include "tensor/half.h"

/* IValue::repr for doubles: integral values below 1e10 as "N." ("-0." for
 * negative zero), everything else with max_digits10 significant digits. */
void fbx_print_double(fbx_strbuf *b, double v) {
  int c = fpclassify(v);
  if ((c == FP_NORMAL || c == FP_ZERO) && fabs(v) < 1e10) {
    int64_t i = (int64_t)v;
    if ((double)i == v) {
      if (i == 0 && signbit(v))
        fbx_strbuf_puts(b, "-0.");
      else
        fbx_strbuf_printf(b, "%" PRId64 ".", i);
      return;
    }
  }
  fbx_strbuf_printf(b, "%.17g", v);
}

/* c10::printQuotedString (bytes above 0x7e as octal escapes). */
static void print_string(fbx_strbuf *b, const char *s) {
  fbx_strbuf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '\\': fbx_strbuf_puts(b, "\\\\"); break;
      case '\'': fbx_strbuf_puts(b, "\\'"); break;
      case '"': fbx_strbuf_puts(b, "\\\""); break;
      case '\a': fbx_strbuf_puts(b, "\\a"); break;
      case '\b': fbx_strbuf_puts(b, "\\b"); break;
      case '\f': fbx_strbuf_puts(b, "\\f"); break;
      case '\n': fbx_strbuf_puts(b, "\\n"); break;
      case '\r': fbx_strbuf_puts(b, "\\r"); break;
      case '\t': fbx_strbuf_puts(b, "\\t"); break;
      case '\v': fbx_strbuf_puts(b, "\\v"); break;
      default:
        if (*p > 0x1f && *p < 0x7f)
          fbx_strbuf_putc(b, (char)*p);
        else
          fbx_strbuf_printf(b, "\\%03o", *p);
    }
  }
  fbx_strbuf_putc(b, '"');
}

static void print_ref(fbx_strbuf *b, const fbx_value *v) {
  fbx_strbuf_putc(b, '%');
  fbx_strbuf_puts(b, v->name);
}

static void print_refs(fbx_strbuf *b, fbx_value *const *vs, int n) {
  for (int i = 0; i < n; i++) {
    if (i) fbx_strbuf_puts(b, ", ");
    print_ref(b, vs[i]);
  }
}

static void print_typed(fbx_strbuf *b, fbx_value *const *vs, int n, const char *delim) {
  for (int i = 0; i < n; i++) {
    if (i) fbx_strbuf_puts(b, delim);
    print_ref(b, vs[i]);
    fbx_strbuf_puts(b, " : ");
    fbx_type_print(b, vs[i]->type);
  }
}

/* ---- tensor constants ----------------------------------------------------------------- */

static double elem_f(fbx_dtype dt, const void *data, int64_t k) {
  switch (dt) {
    case FBX_DTYPE_FLOAT16: return fbx_half_to_float(((const uint16_t *)data)[k]);
    case FBX_DTYPE_BFLOAT16: return fbx_bf16_to_float(((const uint16_t *)data)[k]);
    case FBX_DTYPE_FLOAT32: return ((const float *)data)[k];
    case FBX_DTYPE_FLOAT64: return ((const double *)data)[k];
    default: return 0;
  }
}

static int64_t elem_i(fbx_dtype dt, const void *data, int64_t k) {
  switch (dt) {
    case FBX_DTYPE_UINT8:
    case FBX_DTYPE_BOOL: return ((const uint8_t *)data)[k];
    case FBX_DTYPE_INT8: return ((const int8_t *)data)[k];
    case FBX_DTYPE_INT16: return ((const int16_t *)data)[k];
    case FBX_DTYPE_INT32: return ((const int32_t *)data)[k];
    case FBX_DTYPE_INT64: return ((const int64_t *)data)[k];
    default: return 0;
  }
}

static void print_tensor_const(fbx_strbuf *b, const fbx_tensor_const *t) {
  if (t->spelling == 2 && t->text) {
    fbx_strbuf_puts(b, t->text);
    return;
  }
  const char *dname = fbx_dtype_torch_name(t->dtype);
  if (t->spelling == 1 || !t->data || !dname) {
    fbx_strbuf_puts(b, "<Tensor>");
    return;
  }
  int64_t numel = 1;
  for (int i = 0; i < t->rank; i++) numel *= t->sizes[i];
  int flt = fbx_dtype_is_floating(t->dtype);
  if (numel == 1 && t->spelling == 3 && flt) {
    fbx_strbuf_printf(b, "{%.17g}", elem_f(t->dtype, t->data, 0));
    return;
  }
  if (numel == 1) {
    /* What `out << scalar.toDouble()` / `toLong()` gives: %g / %lld. */
    if (flt)
      fbx_strbuf_printf(b, "{%g}", elem_f(t->dtype, t->data, 0));
    else
      fbx_strbuf_printf(b, "{%" PRId64 "}", elem_i(t->dtype, t->data, 0));
    return;
  }
  /* No PyTorch spelling kept (a constant made by a pass): write the values
   * in the printout's shape, exactly enough to read them back. */
  for (int64_t k = 0; k < numel; k++) {
    if (flt)
      fbx_strbuf_printf(b, " %.*g ", t->dtype == FBX_DTYPE_FLOAT64 ? 17 : 9, elem_f(t->dtype, t->data, k));
    else
      fbx_strbuf_printf(b, " %" PRId64 " ", elem_i(t->dtype, t->data, k));
  }
  fbx_strbuf_printf(b, "[ CPU%sType{", dname);
  for (int i = 0; i < t->rank; i++) fbx_strbuf_printf(b, "%s%" PRId64, i ? "," : "", t->sizes[i]);
  fbx_strbuf_puts(b, "} ]");
}

/* ---- attributes ----------------------------------------------------------------------- */

static void print_attr_value(fbx_strbuf *b, const fbx_attr *a) {
  switch (a->kind) {
    case FBX_ATTR_INT: fbx_strbuf_printf(b, "%" PRId64, a->u.i); return;
    case FBX_ATTR_FLOAT: fbx_print_double(b, a->u.f); return;
    case FBX_ATTR_STR: print_string(b, a->u.s); return;
    case FBX_ATTR_INTS:
      /* IValue::repr writes empty lists with their type. */
      if (!a->n) {
        fbx_strbuf_puts(b, "annotate(List[int], [])");
        return;
      }
      fbx_strbuf_putc(b, '[');
      for (int i = 0; i < a->n; i++) fbx_strbuf_printf(b, "%s%" PRId64, i ? ", " : "", a->u.is[i]);
      fbx_strbuf_putc(b, ']');
      return;
    case FBX_ATTR_FLOATS:
      if (!a->n) {
        fbx_strbuf_puts(b, "annotate(List[float], [])");
        return;
      }
      fbx_strbuf_putc(b, '[');
      for (int i = 0; i < a->n; i++) {
        if (i) fbx_strbuf_puts(b, ", ");
        fbx_print_double(b, a->u.fs[i]);
      }
      fbx_strbuf_putc(b, ']');
      return;
    case FBX_ATTR_STRS:
      if (!a->n) {
        fbx_strbuf_puts(b, "annotate(List[str], [])");
        return;
      }
      fbx_strbuf_putc(b, '[');
      for (int i = 0; i < a->n; i++) {
        if (i) fbx_strbuf_puts(b, ", ");
        print_string(b, a->u.ss[i]);
      }
      fbx_strbuf_putc(b, ']');
      return;
    case FBX_ATTR_TENSOR: print_tensor_const(b, a->u.t); return;
    case FBX_ATTR_GRAPH: fbx_strbuf_puts(b, "<Graph>"); return;
    case FBX_ATTR_TYPE:
      /* A tuple here is a list of types (PyTorch's `tys`, as in
       * prim::TypeCheck[types=[...]]); the IR has no separate kind for it. */
      if (a->u.ty->kind == FBX_TYPE_TUPLE) {
        fbx_strbuf_putc(b, '[');
        for (int i = 0; i < a->u.ty->nelems; i++) {
          if (i) fbx_strbuf_puts(b, ", ");
          fbx_type_print(b, a->u.ty->elems[i]);
        }
        fbx_strbuf_putc(b, ']');
      } else {
        fbx_type_print(b, a->u.ty);
      }
      return;
    case FBX_ATTR_KIND_COUNT: break;
  }
  fbx_strbuf_puts(b, "<?>");
}

static void print_attrs(fbx_strbuf *b, const fbx_node *n, int skip_subgraph) {
  int k = 0;
  for (int i = 0; i < n->nattrs; i++) {
    const fbx_attr *a = &n->attrs[i];
    if (skip_subgraph && a->name == FBX_SYM_attr_Subgraph) continue;
    fbx_strbuf_puts(b, k++ ? ", " : "[");
    fbx_strbuf_puts(b, fbx_sym_unqual(a->name));
    fbx_strbuf_putc(b, '=');
    print_attr_value(b, a);
  }
  if (k) fbx_strbuf_putc(b, ']');
}

/* ---- nodes and graphs ------------------------------------------------------------------ */

typedef struct groups {
  const fbx_node **v;
  size_t n, cap;
} groups;

static int is_group(const fbx_node *n) { return fbx_node_subgraph(n) != NULL; }

static void indent(fbx_strbuf *b, int level) {
  for (int i = 0; i < level; i++) fbx_strbuf_puts(b, "  ");
}

/* The node's line up to and including its source comment. With `gs`, a
 * group node prints as KIND_N and is recorded for a `with` section. */
static void print_head(fbx_strbuf *b, const fbx_node *n, groups *gs) {
  print_typed(b, n->outputs, n->noutputs, ", ");
  fbx_strbuf_puts(b, " = ");
  fbx_strbuf_puts(b, fbx_sym_str(n->kind));
  if (gs && is_group(n)) {
    fbx_strbuf_printf(b, "_%zu", gs->n);
    print_attrs(b, n, 1);
    if (gs->n == gs->cap) {
      size_t ncap = gs->cap ? gs->cap * 2 : 8;
      const fbx_node **nv = fbx_realloc(gs->v, ncap * sizeof *nv);
      if (!nv) {
        b->oom = 1;
        return;
      }
      gs->v = nv;
      gs->cap = ncap;
    }
    gs->v[gs->n++] = n;
  } else {
    print_attrs(b, n, 0);
  }
  fbx_strbuf_putc(b, '(');
  print_refs(b, n->inputs, n->ninputs);
  fbx_strbuf_putc(b, ')');
  if (n->srcloc) {
    fbx_strbuf_puts(b, " # ");
    fbx_strbuf_puts(b, n->srcloc);
  }
}

static void print_node(fbx_strbuf *b, const fbx_node *n, int level, groups *gs) {
  indent(b, level);
  print_head(b, n, gs);
  fbx_strbuf_putc(b, '\n');
  for (int i = 0; i < n->nblocks; i++) {
    const fbx_block *blk = n->blocks[i];
    indent(b, level + 1);
    fbx_strbuf_printf(b, "block%d(", i);
    print_typed(b, blk->param->outputs, blk->param->noutputs, ", ");
    fbx_strbuf_puts(b, "):\n");
    for (const fbx_node *m = fbx_block_first(blk); m; m = m->next) print_node(b, m, level + 2, gs);
    indent(b, level + 2);
    fbx_strbuf_puts(b, "-> (");
    print_refs(b, blk->ret->inputs, blk->ret->ninputs);
    fbx_strbuf_puts(b, ")\n");
  }
}

void fbx_graph_print_to(fbx_strbuf *b, const fbx_graph *g) {
  groups gs = {0};
  fbx_strbuf_puts(b, "graph(");
  print_typed(b, g->block->param->outputs, g->block->param->noutputs, ",\n      ");
  fbx_strbuf_puts(b, "):\n");
  for (const fbx_node *n = fbx_block_first(g->block); n; n = n->next) print_node(b, n, 1, &gs);
  fbx_strbuf_puts(b, "  return (");
  print_refs(b, g->block->ret->inputs, g->block->ret->ninputs);
  fbx_strbuf_puts(b, ")\n");
  for (size_t i = 0; i < gs.n && !b->oom; i++) {
    fbx_strbuf_printf(b, "with %s_%zu = ", fbx_sym_str(gs.v[i]->kind), i);
    fbx_graph_print_to(b, fbx_node_subgraph(gs.v[i]));
  }
  fbx_free(gs.v);
}

char *fbx_graph_print(const fbx_graph *g) {
  fbx_strbuf b = {0};
  fbx_graph_print_to(&b, g);
  return fbx_strbuf_take(&b);
}

void fbx_node_print_line(fbx_strbuf *b, const fbx_node *n) { print_head(b, n, NULL); }
