/* The op table's runtime side: schema parsing, lookup by name and overload
 * resolution. The rows themselves are in ops/list_*.h. */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "ops/optable.h"

static fbx_op table[FBX_OP_COUNT] = {
#define FBX_OP_ROW_(id_, schema_, cat_, dt_, sh_, flags_, kernel_) \
  {.id = FBX_OP_##id_, .id_name = #id_, .schema_text = schema_, .category = cat_,   \
   .dtype_rule = dt_, .shape_rule = sh_, .flags = flags_, .kernel = kernel_},
    FBX_OP_LIST(FBX_OP_ROW_)
#undef FBX_OP_ROW_
};

_Static_assert(sizeof table / sizeof table[0] == FBX_OP_COUNT, "op table size");

/* Rows sorted by name symbol (stable: table order within a name). */
static const fbx_op **by_name;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static fbx_status *init_status;

/* ---- schema parsing ------------------------------------------------------------------ */

typedef struct sp {
  const char *s, *p;
  const char *err;
} sp;

static void skip_ws(sp *c) {
  while (*c->p == ' ') c->p++;
}

static bool eat(sp *c, const char *tok) {
  skip_ws(c);
  size_t n = strlen(tok);
  if (strncmp(c->p, tok, n)) return false;
  c->p += n;
  return true;
}

static size_t ident_len(const char *p) {
  size_t n = 0;
  while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == ':' || p[n] == '.') n++;
  return n;
}

static bool parse_type(sp *c, fbx_schema_arg *a) {
  skip_ws(c);
  size_t n = ident_len(c->p);
  /* base type names */
  static const struct {
    const char *name;
    fbx_argtype t;
  } names[] = {
      {"Tensor", FBX_ARG_TENSOR},       {"Scalar", FBX_ARG_SCALAR},
      {"int", FBX_ARG_INT},             {"SymInt", FBX_ARG_INT},
      {"float", FBX_ARG_FLOAT},         {"bool", FBX_ARG_BOOL},
      {"number", FBX_ARG_NUMBER},       {"str", FBX_ARG_STR},
      {"ScalarType", FBX_ARG_SCALARTYPE}, {"Layout", FBX_ARG_LAYOUT},
      {"Device", FBX_ARG_DEVICE},       {"MemoryFormat", FBX_ARG_MEMFORMAT},
      {"Generator", FBX_ARG_GENERATOR}, {"t", FBX_ARG_ANY},
      {"Any", FBX_ARG_ANY},             {"NoneType", FBX_ARG_NONE},
      {"t1", FBX_ARG_ANY},              {"t2", FBX_ARG_ANY},
      {"tuple", FBX_ARG_TUPLE},
  };
  bool found = false;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i].name) == n && !strncmp(c->p, names[i].name, n)) {
      a->type = names[i].t;
      found = true;
    }
  if (!found) {
    c->err = "unknown type";
    return false;
  }
  c->p += n;
  for (;;) {
    if (*c->p == '(') { /* alias annotation: Tensor(a), Tensor(a!), t[](a!) */
      while (*c->p && *c->p != ')') c->p++;
      if (*c->p != ')') {
        c->err = "unterminated alias annotation";
        return false;
      }
      c->p++;
    } else if (*c->p == '?') {
      a->optional = true;
      c->p++;
    } else if (*c->p == '[') {
      c->p++;
      if (a->optional) { /* T?[] */
        a->elem_optional = true;
        a->optional = false;
      }
      a->list = true;
      a->list_len = 0;
      while (isdigit((unsigned char)*c->p)) a->list_len = a->list_len * 10 + (*c->p++ - '0');
      if (*c->p != ']') {
        c->err = "expected ]";
        return false;
      }
      c->p++;
    } else {
      return true;
    }
  }
}

static bool parse_default(sp *c, fbx_schema_arg *a) {
  skip_ws(c);
  const char *p = c->p;
  if (!strncmp(p, "None", 4)) {
    a->def = fbx_iv_none();
    c->p += 4;
  } else if (!strncmp(p, "True", 4) || !strncmp(p, "False", 5)) {
    a->def = fbx_iv_bool(p[0] == 'T');
    c->p += p[0] == 'T' ? 4 : 5;
  } else if (*p == '"' || *p == '\'') {
    char q = *p++;
    const char *e = strchr(p, q);
    if (!e) {
      c->err = "unterminated string default";
      return false;
    }
    if (fbx_iv_str_new(&a->def, p, (size_t)(e - p))) {
      c->err = "out of memory";
      return false;
    }
    c->p = e + 1;
  } else if (*p == '[') {
    /* int list default: [] or [0, 1] */
    fbx_ivalue l;
    if (fbx_iv_list_new(&l, 4)) {
      c->err = "out of memory";
      return false;
    }
    c->p++;
    skip_ws(c);
    while (*c->p && *c->p != ']') {
      char *end;
      long long v = strtoll(c->p, &end, 10);
      if (end == c->p || fbx_iv_list_push(&l, fbx_iv_int(v))) {
        fbx_iv_release(&l);
        c->err = "bad list default";
        return false;
      }
      c->p = end;
      eat(c, ",");
      skip_ws(c);
    }
    if (*c->p != ']') {
      fbx_iv_release(&l);
      c->err = "unterminated list default";
      return false;
    }
    c->p++;
    a->def = l;
  } else if (isdigit((unsigned char)*p) || *p == '-' || *p == '.') {
    char *end;
    double d = strtod(p, &end);
    bool is_float = false;
    for (const char *q = p; q < end; q++)
      if (*q == '.' || *q == 'e' || *q == 'E') is_float = true;
    if (end == p) {
      c->err = "bad number default";
      return false;
    }
    if (is_float || a->type == FBX_ARG_FLOAT) {
      a->def = fbx_iv_float(d);
    } else {
      a->def = fbx_iv_int(strtoll(p, NULL, 10));
    }
    c->p = end;
  } else if (!strncmp(p, "contiguous_format", 17)) {
    a->def = fbx_iv_int(0); /* c10::MemoryFormat::Contiguous */
    c->p += 17;
  } else if (!strncmp(p, "Mean", 4)) {
    a->def = fbx_iv_int(1);
    c->p += 4;
  } else {
    c->err = "unknown default";
    return false;
  }
  a->has_default = true;
  return true;
}

static bool parse_arg(sp *c, fbx_schema_arg *a, bool kwarg_only, bool with_name) {
  memset(a, 0, sizeof *a);
  a->kwarg_only = kwarg_only;
  if (!parse_type(c, a)) return false;
  skip_ws(c);
  size_t n = ident_len(c->p);
  if (n) {
    /* names are static strings in the table: keep a pointer into them */
    char *name = fbx_strndup(c->p, n);
    if (!name) {
      c->err = "out of memory";
      return false;
    }
    a->name = name;
    c->p += n;
  } else if (with_name) {
    c->err = "expected an argument name";
    return false;
  }
  if (eat(c, "=")) return parse_default(c, a);
  return true;
}

static fbx_status *parse_schema(fbx_op *op) {
  fbx_schema *s = &op->schema;
  sp c = {op->schema_text, op->schema_text, NULL};
  size_t n = 0;
  while (c.p[n] && c.p[n] != '(' && c.p[n] != '.') n++;
  /* "aten::add.Tensor": the first '.' after "::" starts the overload name */
  const char *colon = strstr(c.p, "::");
  if (colon && colon < c.p + n) {
    n = (size_t)(strchr(colon, '(') - c.p);
    const char *dot = memchr(colon, '.', (size_t)(c.p + n - colon));
    if (dot) n = (size_t)(dot - c.p);
  }
  if (fbx_sym_intern(&s->name, c.p, n)) return fbx_status_nomem();
  c.p += n;
  s->overload = "";
  if (*c.p == '.') {
    c.p++;
    size_t m = strcspn(c.p, "(");
    char *ov = fbx_strndup(c.p, m);
    if (!ov) return fbx_status_nomem();
    s->overload = ov;
    c.p += m;
  }
  if (!eat(&c, "(")) goto bad;
  bool kw = false;
  if (!eat(&c, ")")) {
    for (;;) {
      if (eat(&c, "*")) {
        kw = true;
      } else if (eat(&c, "...")) {
        s->varargs = true;
      } else {
        if (s->nargs == FBX_SCHEMA_MAX_ARGS) {
          c.err = "too many arguments";
          goto bad;
        }
        if (!parse_arg(&c, &s->args[s->nargs++], kw, true)) goto bad;
      }
      if (eat(&c, ")")) break;
      if (!eat(&c, ",")) {
        c.err = "expected , or )";
        goto bad;
      }
    }
  }
  if (!eat(&c, "->")) goto bad;
  skip_ws(&c);
  if (eat(&c, "(")) {
    if (!eat(&c, ")")) {
      for (;;) {
        if (s->nrets == FBX_SCHEMA_MAX_RETS) {
          c.err = "too many returns";
          goto bad;
        }
        if (!parse_arg(&c, &s->rets[s->nrets++], false, false)) goto bad;
        if (eat(&c, ")")) break;
        if (!eat(&c, ",")) {
          c.err = "expected , or ) in returns";
          goto bad;
        }
      }
    }
  } else {
    if (!parse_arg(&c, &s->rets[s->nrets++], false, false)) goto bad;
    s->ret_list = s->rets[0].list;
  }
  skip_ws(&c);
  if (*c.p) {
    c.err = "trailing text";
    goto bad;
  }
  return NULL;
bad:
  return fbx_status_new(FBX_ERR_INTERNAL, "op table row %s: bad schema \"%s\" at column %d: %s",
                        op->id_name, op->schema_text, (int)(c.p - c.s) + 1,
                        c.err ? c.err : "syntax error");
}

static int cmp_by_name(const void *a, const void *b) {
  const fbx_op *x = *(const fbx_op *const *)a, *y = *(const fbx_op *const *)b;
  if (x->schema.name != y->schema.name) return x->schema.name < y->schema.name ? -1 : 1;
  return x->id - y->id;
}

static void init_table(void) {
  for (int i = 0; i < FBX_OP_COUNT; i++) {
    fbx_status *st = parse_schema(&table[i]);
    if (st) {
      init_status = st;
      return;
    }
  }
  by_name = fbx_malloc(sizeof *by_name * (FBX_OP_COUNT ? FBX_OP_COUNT : 1));
  if (!by_name) {
    init_status = fbx_status_nomem();
    return;
  }
  for (int i = 0; i < FBX_OP_COUNT; i++) by_name[i] = &table[i];
  qsort(by_name, FBX_OP_COUNT, sizeof *by_name, cmp_by_name);
}

fbx_status *fbx_op_table_init(void) {
  pthread_once(&init_once, init_table);
  if (!init_status) return NULL;
  return fbx_status_new(fbx_status_code(init_status), "%s", fbx_status_message(init_status));
}

static bool ready(void) {
  pthread_once(&init_once, init_table);
  return init_status == NULL;
}

const fbx_op *fbx_op_get(fbx_op_id id) {
  if (!ready() || (unsigned)id >= FBX_OP_COUNT) return NULL;
  return &table[id];
}

int fbx_op_overloads(fbx_sym kind, const fbx_op *const **first) {
  *first = NULL;
  if (!ready()) return 0;
  size_t lo = 0, hi = FBX_OP_COUNT;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (by_name[mid]->schema.name < kind) lo = mid + 1;
    else hi = mid;
  }
  size_t end = lo;
  while (end < FBX_OP_COUNT && by_name[end]->schema.name == kind) end++;
  *first = by_name + lo;
  return (int)(end - lo);
}

bool fbx_op_kind_known(fbx_sym kind) {
  const fbx_op *const *ops;
  return fbx_op_overloads(kind, &ops) > 0;
}

bool fbx_op_kind_has_flag(fbx_sym kind, unsigned f) {
  const fbx_op *const *ops;
  int n = fbx_op_overloads(kind, &ops);
  for (int i = 0; i < n; i++)
    if (ops[i]->flags & f) return true;
  return false;
}

/* ---- matching ----------------------------------------------------------------------------- */

/* strict: exact kinds only; lenient: int for float, bool for int. */
static bool scalar_matches(fbx_argtype t, fbx_iv_kind k, bool strict) {
  switch (t) {
    case FBX_ARG_TENSOR: return k == FBX_IV_TENSOR;
    case FBX_ARG_SCALAR: return k == FBX_IV_INT || k == FBX_IV_FLOAT || k == FBX_IV_BOOL;
    case FBX_ARG_NUMBER: return k == FBX_IV_INT || k == FBX_IV_FLOAT;
    case FBX_ARG_INT:
    case FBX_ARG_SCALARTYPE:
    case FBX_ARG_LAYOUT:
    case FBX_ARG_MEMFORMAT: return k == FBX_IV_INT || (!strict && k == FBX_IV_BOOL);
    case FBX_ARG_FLOAT: return k == FBX_IV_FLOAT || (!strict && k == FBX_IV_INT);
    case FBX_ARG_BOOL: return k == FBX_IV_BOOL || (!strict && k == FBX_IV_INT);
    case FBX_ARG_STR: return k == FBX_IV_STR;
    case FBX_ARG_DEVICE: return k == FBX_IV_DEVICE || k == FBX_IV_STR;
    case FBX_ARG_GENERATOR: return false;
    case FBX_ARG_ANY: return k != FBX_IV_UNINIT;
    case FBX_ARG_NONE: return k == FBX_IV_NONE;
    case FBX_ARG_TUPLE: return k == FBX_IV_TUPLE;
  }
  return false;
}

static bool arg_matches(const fbx_schema_arg *a, const fbx_ivalue *v, bool strict) {
  if (v->kind == FBX_IV_NONE && (a->optional || a->type == FBX_ARG_NONE || a->type == FBX_ARG_ANY))
    return true;
  if (a->list) {
    if (a->list_len > 0 && scalar_matches(a->type, v->kind, strict)) return true; /* int[2] given 3 */
    if (v->kind != FBX_IV_LIST && !(a->type == FBX_ARG_ANY && v->kind == FBX_IV_TUPLE)) return false;
    for (int i = 0; i < v->u.l->n; i++) {
      const fbx_ivalue *e = &v->u.l->items[i];
      if (e->kind == FBX_IV_NONE && a->elem_optional) continue;
      if (!scalar_matches(a->type, e->kind, strict)) return false;
    }
    return true;
  }
  return scalar_matches(a->type, v->kind, strict);
}

static bool op_matches(const fbx_op *op, const fbx_ivalue *args, int nargs, bool strict) {
  const fbx_schema *s = &op->schema;
  if (s->varargs) return true;
  if (nargs > s->nargs) return false;
  for (int i = 0; i < s->nargs; i++) {
    if (i >= nargs) {
      if (!s->args[i].has_default) return false;
      continue;
    }
    if (!arg_matches(&s->args[i], &args[i], strict)) return false;
  }
  return true;
}

fbx_status *fbx_op_resolve(const fbx_op **out, fbx_sym kind, const fbx_ivalue *args, int nargs) {
  const fbx_op *const *ops;
  int n = fbx_op_overloads(kind, &ops);
  if (!ready()) return fbx_op_table_init();
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++)
      if (op_matches(ops[i], args, nargs, pass == 0)) {
        *out = ops[i];
        return NULL;
      }
  fbx_strbuf b = {0};
  if (!n) {
    fbx_strbuf_printf(&b, "unknown op %s: fusebox's op table has no schema of that name", fbx_sym_str(kind));
  } else {
    fbx_strbuf_printf(&b, "no overload of %s accepts (", fbx_sym_str(kind));
    for (int i = 0; i < nargs; i++)
      fbx_strbuf_printf(&b, "%s%s", i ? ", " : "", fbx_iv_kind_name(args[i].kind));
    fbx_strbuf_puts(&b, "); known schemas:");
    for (int i = 0; i < n; i++) fbx_strbuf_printf(&b, "\n    %s", ops[i]->schema_text);
  }
  fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_UNSUPPORTED, "%s", b.data);
  fbx_strbuf_free(&b);
  return st;
}

/* Static matching from IR types: a type that is too vague (Any, number,
 * unknown element types, Scalar against int/float/bool) matches loosely;
 * ambiguity means NULL. */
static int type_match(const fbx_schema_arg *a, const fbx_type *t) {
  /* 2: exact, 1: possible, 0: impossible */
  if (!t) return 1;
  if (t->kind == FBX_TYPE_NONE) return (a->optional || a->type == FBX_ARG_ANY || a->type == FBX_ARG_NONE) ? 2 : 0;
  if (t->kind == FBX_TYPE_OPTIONAL) {
    if (!a->optional && a->type != FBX_ARG_ANY) return 0;
    t = t->elems[0];
  }
  if (a->list) {
    if (t->kind == FBX_TYPE_LIST) {
      fbx_schema_arg e = *a;
      e.list = false;
      e.optional = a->elem_optional;
      return type_match(&e, t->elems[0]);
    }
    if (a->list_len == 0) return 0;
  }
  if (a->type == FBX_ARG_ANY) return 2;
  switch (t->kind) {
    case FBX_TYPE_TENSOR: return a->type == FBX_ARG_TENSOR ? 2 : 0;
    case FBX_TYPE_INT:
      return (a->type == FBX_ARG_INT || a->type == FBX_ARG_SCALARTYPE || a->type == FBX_ARG_LAYOUT ||
              a->type == FBX_ARG_MEMFORMAT || a->type == FBX_ARG_SCALAR || a->type == FBX_ARG_NUMBER)
                 ? 2
                 : 0;
    case FBX_TYPE_FLOAT:
      return (a->type == FBX_ARG_FLOAT || a->type == FBX_ARG_SCALAR || a->type == FBX_ARG_NUMBER) ? 2 : 0;
    case FBX_TYPE_BOOL: return (a->type == FBX_ARG_BOOL || a->type == FBX_ARG_SCALAR) ? 2 : 0;
    case FBX_TYPE_STR: return a->type == FBX_ARG_STR ? 2 : 0;
    case FBX_TYPE_DEVICE: return a->type == FBX_ARG_DEVICE ? 2 : 0;
    case FBX_TYPE_NUMBER:
      return (a->type == FBX_ARG_SCALAR || a->type == FBX_ARG_NUMBER) ? 2
             : (a->type == FBX_ARG_INT || a->type == FBX_ARG_FLOAT) ? 1 : 0;
    case FBX_TYPE_TUPLE: return a->type == FBX_ARG_TUPLE ? 2 : 0;
    case FBX_TYPE_NAMED:
      /* A `Scalar` (what prim::unchecked_cast gives a backward graph's
       * saved numbers) is an int, float, bool or complex at run time, never
       * a tensor, string or container: exact against Scalar, possible against
       * number and the number types, impossible otherwise. Without this,
       * aten::ge(%t, %s : Scalar) saw ge.Tensor as possible and resolved to
       * nothing. */
      if (t->name && !strcmp(t->name, "Scalar")) {
        switch (a->type) {
          case FBX_ARG_SCALAR: return 2;
          case FBX_ARG_NUMBER: case FBX_ARG_INT: case FBX_ARG_FLOAT: case FBX_ARG_BOOL:
          case FBX_ARG_SCALARTYPE: case FBX_ARG_LAYOUT: case FBX_ARG_MEMFORMAT: return 1;
          default: return 0;
        }
      }
      return 1;
    default: return 0;
  }
}

const fbx_op *fbx_op_resolve_types(fbx_sym kind, fbx_type *const *types, int ntypes) {
  const fbx_op *const *ops;
  int n = fbx_op_overloads(kind, &ops);
  for (int i = 0; i < n; i++) {
    const fbx_schema *s = &ops[i]->schema;
    if (s->varargs) return ops[i];
    if (ntypes > s->nargs) continue;
    int worst = 2;
    for (int k = 0; k < s->nargs && worst; k++) {
      int m = k < ntypes ? type_match(&s->args[k], types[k]) : (s->args[k].has_default ? 2 : 0);
      if (m < worst) worst = m;
    }
    if (worst == 2) return ops[i];
    if (worst == 1) return NULL; /* could match at run time: let the values decide */
  }
  return NULL;
}

fbx_status *fbx_op_normalize_args(const fbx_op *op, const fbx_ivalue *args, int nargs, fbx_ivalue *out) {
  const fbx_schema *s = &op->schema;
  if (s->varargs) {
    for (int i = 0; i < nargs; i++) out[i] = args[i];
    return NULL;
  }
  for (int i = 0; i < s->nargs; i++) {
    if (i < nargs) {
      out[i] = args[i];
    } else if (s->args[i].has_default) {
      out[i] = s->args[i].def;
    } else {
      return fbx_status_new(FBX_ERR_RUNTIME, "%s: missing argument '%s'", op->schema_text,
                            s->args[i].name ? s->args[i].name : "?");
    }
  }
  return NULL;
}

int fbx_arg_int_list(const fbx_op *op, int argi, const fbx_ivalue *arg, int64_t *out, int cap, fbx_status **st) {
  const fbx_schema_arg *a = &op->schema.args[argi];
  if (arg->kind == FBX_IV_INT || arg->kind == FBX_IV_BOOL) {
    int n = a->list_len > 0 ? a->list_len : 1;
    if (n > cap) n = cap;
    for (int i = 0; i < n; i++) out[i] = fbx_iv_to_int(arg);
    return n;
  }
  if (arg->kind != FBX_IV_LIST && arg->kind != FBX_IV_TUPLE) {
    *st = fbx_status_new(FBX_ERR_RUNTIME, "%s: argument '%s' must be a list of ints, got %s",
                         op->schema_text, a->name ? a->name : "?", fbx_iv_kind_name(arg->kind));
    return -1;
  }
  int n = arg->u.l->n;
  if (n > cap) {
    *st = fbx_status_new(FBX_ERR_RUNTIME, "%s: argument '%s' has %d entries, at most %d are supported",
                         op->schema_text, a->name ? a->name : "?", n, cap);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    const fbx_ivalue *e = &arg->u.l->items[i];
    if (e->kind != FBX_IV_INT && e->kind != FBX_IV_BOOL) {
      *st = fbx_status_new(FBX_ERR_RUNTIME, "%s: argument '%s' must hold ints, entry %d is %s",
                           op->schema_text, a->name ? a->name : "?", i, fbx_iv_kind_name(e->kind));
      return -1;
    }
    out[i] = fbx_iv_to_int(e);
  }
  return n;
}

fbx_status *fbx_kernel_error(const fbx_kctx *ctx, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *name = ctx && ctx->op ? fbx_sym_str(ctx->op->schema.name) : "kernel";
  return fbx_status_new(FBX_ERR_RUNTIME, "%s: %s", name, msg);
}
