/* The TorchScript-IR parser (see ir/text.h for the format).
 *
 * A hand-written recursive-descent parser over the raw text. It parses by
 * structure, not by indentation: newlines are whitespace except that a
 * node's trailing `# file:line:col` comment ends at the end of its line.
 * Names are looked up in one hash map per graph; a block's definitions are
 * a contiguous run of that map's entry array, so leaving a block hides them
 * in time linear in what the block defined. Everything is linear in the
 * input; recursion (blocks, types, `with` sections) is capped at MAX_DEPTH
 * so that no input can exhaust the stack.
 *
 * Group nodes (`prim::TensorExprGroup_0(...)`) are recorded as candidates
 * while parsing; a later `with prim::TensorExprGroup_0 = graph(...)` section
 * turns the candidate into a `prim::TensorExprGroup` node holding the
 * section as its Subgraph attribute. Candidates no section claims keep their
 * whole name as their kind.
 */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/text.h"
#include "tensor/half.h"

enum { MAX_DEPTH = 256, MAX_RANK = 64, MAX_LINE_SHOWN = 200 };
#define MAX_INPUT ((size_t)256 << 20)

typedef struct span {
  const char *s;
  size_t n;
} span;

static int span_is(span a, const char *lit) { return a.n == strlen(lit) && !memcmp(a.s, lit, a.n); }

/* ---- a map from spans of the input to indices --------------------------------- */

typedef struct smslot {
  const char *s; /* NULL: empty */
  uint32_t n, hash, idx;
} smslot;

typedef struct strmap {
  smslot *slots;
  size_t cap, count;
} strmap;

static uint32_t hash_span(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static int sm_get(const strmap *m, const char *s, size_t n, uint32_t *idx) {
  if (!m->cap) return 0;
  uint32_t h = hash_span(s, n);
  for (size_t j = h & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
    const smslot *e = &m->slots[j];
    if (!e->s) return 0;
    if (e->hash == h && e->n == n && !memcmp(e->s, s, n)) {
      *idx = e->idx;
      return 1;
    }
  }
}

static void sm_insert_slot(smslot *slots, size_t cap, smslot e) {
  size_t j = e.hash & (cap - 1);
  while (slots[j].s) j = (j + 1) & (cap - 1);
  slots[j] = e;
}

/* The key must not be present. 0 on success, -1 when out of memory. */
static int sm_put(strmap *m, const char *s, size_t n, uint32_t idx) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    smslot *ns = fbx_calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].s) sm_insert_slot(ns, ncap, m->slots[i]);
    fbx_free(m->slots);
    m->slots = ns;
    m->cap = ncap;
  }
  smslot e = {s, (uint32_t)n, hash_span(s, n), idx};
  sm_insert_slot(m->slots, m->cap, e);
  m->count++;
  return 0;
}

static void sm_free(strmap *m) {
  fbx_free(m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}

/* Grow a heap array (fbx_realloc) to hold `need` elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  void *n = fbx_realloc(*arr, ncap * elem);
  if (!n) return -1;
  *arr = n;
  *cap = ncap;
  return 0;
}
#define GROW(arr, cap, need) grow((void **)&(arr), &(cap), (need), sizeof *(arr))

/* ---- parser state ----------------------------------------------------------------- */

/* A defined value name. Entries are never removed (names are unique per
 * graph), only hidden when the block that defined them ends. */
typedef struct vent {
  span name;
  fbx_value *v;
  int state; /* VISIBLE, HIDDEN (its block ended) or PENDING (its node is not finished) */
} vent;

enum { VISIBLE, HIDDEN, PENDING };

/* A node whose kind ends in _N and may be claimed by a `with` section. */
typedef struct cand {
  fbx_node *node;
  span kind;     /* the whole spelling, "prim::TensorExprGroup_0" */
  size_t base;   /* length of the kind without "_N" */
  long dup;      /* another candidate with the same spelling, or -1 */
  int resolved;
} cand;

typedef struct gctx {
  fbx_graph *g;
  struct gctx *parent;
  strmap names;
  vent *ents;
  size_t nents, capents;
  strmap cmap;
  cand *cands;
  size_t ncands, capcands;
} gctx;

typedef struct parser {
  const char *src, *end, *p;
  const char *file;
  fbx_status *err;
  int depth;
  /* scratch for decoded strings and number lists */
  char *sbuf;
  size_t slen, scap;
  /* Group kinds that got a `with` section, and _N kinds that did not: an
   * unclaimed prim::FusionGroup_3 next to real prim::FusionGroup groups is
   * a missing section (and would print ambiguously), not an operator. */
  strmap group_bases;
  cand *orphans;
  size_t norphans, caporphans;
  /* where node_pos last counted lines: nodes are read in order, so the
   * line and column of each is found in time linear in the text */
  const char *lpos, *lstart;
  long lline;
} parser;

#define AT_END(P) ((P)->p >= (P)->end)
#define CUR(P) (AT_END(P) ? -1 : (unsigned char)*(P)->p)

static int is_id0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_id(int c) { return is_id0(c) || is_digit(c); }
static int is_name_char(int c) { return is_id(c) || c == '.'; }

/* ---- errors ------------------------------------------------------------------------- */

static int oom(parser *P) {
  if (!P->err) P->err = fbx_status_nomem();
  return -1;
}

/* Append the offending line and a caret under `pos`. */
static void show_line(fbx_strbuf *b, const char *ls, const char *le, const char *pos) {
  const char *from = ls, *to = le;
  int pre = 0, post = 0;
  if (le - ls > MAX_LINE_SHOWN) {
    from = pos - MAX_LINE_SHOWN / 2 < ls ? ls : pos - MAX_LINE_SHOWN / 2;
    to = from + MAX_LINE_SHOWN > le ? le : from + MAX_LINE_SHOWN;
    if (to == le && le - MAX_LINE_SHOWN > ls) from = le - MAX_LINE_SHOWN;
    pre = from > ls;
    post = to < le;
  }
  fbx_strbuf_putc(b, '\n');
  if (pre) fbx_strbuf_puts(b, "...");
  for (const char *q = from; q < to; q++) {
    unsigned char c = (unsigned char)*q;
    fbx_strbuf_putc(b, c == '\t' || (c >= 0x20 && c != 0x7f) ? (char)c : '?');
  }
  if (post) fbx_strbuf_puts(b, "...");
  fbx_strbuf_putc(b, '\n');
  if (pre) fbx_strbuf_puts(b, "   ");
  for (const char *q = from; q < pos && q < to; q++) fbx_strbuf_putc(b, *q == '\t' ? '\t' : ' ');
  fbx_strbuf_putc(b, '^');
}

static int verror(parser *P, const char *pos, fbx_code code, const char *fmt, va_list ap) {
  if (P->err) return -1;
  if (pos >= P->end) {
    /* End of input: point just after the last thing that was there. */
    pos = P->end;
    while (pos > P->src && (pos[-1] == ' ' || pos[-1] == '\t' || pos[-1] == '\n' || pos[-1] == '\r'))
      pos--;
  }
  if (pos < P->src) pos = P->src;
  long line = 1;
  const char *ls = P->src;
  for (const char *q = P->src; q < pos; q++)
    if (*q == '\n') {
      line++;
      ls = q + 1;
    }
  const char *le = pos;
  while (le < P->end && *le != '\n') le++;
  if (le > ls && le[-1] == '\r' && pos < le) le--;
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "%s:%ld:%ld: ", P->file, line, (long)(pos - ls) + 1);
  fbx_strbuf_vprintf(&b, fmt, ap);
  show_line(&b, ls, le, pos);
  if (b.oom) {
    fbx_strbuf_free(&b);
    return oom(P);
  }
  P->err = fbx_status_new(code, "%s", b.data);
  fbx_strbuf_free(&b);
  return -1;
}

static int FBX_PRINTF(3, 4) error_at(parser *P, const char *pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(P, pos, FBX_ERR_PARSE, fmt, ap);
  va_end(ap);
  return -1;
}

static int FBX_PRINTF(3, 4) unsupported_at(parser *P, const char *pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(P, pos, FBX_ERR_UNSUPPORTED, fmt, ap);
  va_end(ap);
  return -1;
}

/* A short description of what is at pos, for "expected X, found Y". */
static const char *found(parser *P, const char *pos, char *buf, size_t cap) {
  if (pos >= P->end) return "end of input";
  unsigned char c = (unsigned char)*pos;
  if (c == '\n' || c == '\r') return "end of line";
  if (c == ' ' || c == '\t') return "whitespace";
  if (is_name_char(c) || c == '%' || c == '-') {
    const char *q = pos + 1;
    while (q < P->end && q - pos < 40 && (is_name_char((unsigned char)*q) || *q == ':')) q++;
    snprintf(buf, cap, "'%.*s%s'", (int)(q - pos), pos,
             q < P->end && (is_name_char((unsigned char)*q) || *q == ':') ? "..." : "");
  } else if (c >= 0x20 && c < 0x7f) {
    snprintf(buf, cap, "'%c'", c);
  } else {
    snprintf(buf, cap, "byte 0x%02x", c);
  }
  return buf;
}

#define FOUND(P) found((P), (P)->p, fbuf_, sizeof fbuf_)
#define FOUND_BUF char fbuf_[64]

/* ---- lexing helpers ---------------------------------------------------------------- */

static void ws(parser *P) {
  for (;;) {
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\r' || *P->p == '\n')) P->p++;
    if (P->p < P->end && *P->p == '#') {
      while (P->p < P->end && *P->p != '\n') P->p++;
      continue;
    }
    return;
  }
}

static int peek(parser *P) {
  ws(P);
  return CUR(P);
}

static int accept(parser *P, char c) {
  if (peek(P) != (unsigned char)c) return 0;
  P->p++;
  return 1;
}

static int expect(parser *P, char c, const char *what) {
  FOUND_BUF;
  if (accept(P, c)) return 0;
  return error_at(P, P->p, "expected '%c' %s, found %s", c, what, FOUND(P));
}

/* An identifier [A-Za-z_][A-Za-z0-9_]* at the cursor (no whitespace skipped). */
static span lex_ident(parser *P) {
  span s = {P->p, 0};
  if (AT_END(P) || !is_id0(CUR(P))) return s;
  while (P->p < P->end && is_id((unsigned char)*P->p)) P->p++;
  s.n = (size_t)(P->p - s.s);
  return s;
}

/* Is the text at the cursor the keyword `kw` (not followed by a name character)? */
static int at_keyword(parser *P, const char *kw) {
  size_t n = strlen(kw);
  return (size_t)(P->end - P->p) >= n && !memcmp(P->p, kw, n) &&
         (P->p + n == P->end || !is_name_char((unsigned char)P->p[n]));
}

static int enter(parser *P) {
  if (++P->depth > MAX_DEPTH) return error_at(P, P->p, "nesting too deep (more than %d levels)", MAX_DEPTH);
  return 0;
}

static void leave(parser *P) { P->depth--; }

/* A decimal integer with optional '-' at the cursor. */
static int lex_int(parser *P, int64_t *out, const char *what) {
  FOUND_BUF;
  const char *start = P->p;
  int neg = 0;
  if (CUR(P) == '-') {
    neg = 1;
    P->p++;
  }
  if (!is_digit(CUR(P))) {
    P->p = start;
    return error_at(P, start, "expected %s, found %s", what, FOUND(P));
  }
  uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  while (is_digit(CUR(P))) {
    unsigned d = (unsigned)(*P->p - '0');
    if (v > (lim - d) / 10) {
      while (is_digit(CUR(P))) P->p++;
      return error_at(P, start, "integer literal '%.*s' is out of range for a 64-bit integer",
                      (int)(P->p - start > 60 ? 60 : P->p - start), start);
    }
    v = v * 10 + d;
    P->p++;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

/* A number: integer, or float in TorchScript's spellings ("1.", "0.5",
 * "1e-05", "inf", "-inf", "nan"). *is_float says which. */
static int lex_number(parser *P, int *is_float, int64_t *iv, double *fv) {
  FOUND_BUF;
  const char *start = P->p, *q = P->p;
  if (q < P->end && (*q == '-' || *q == '+')) q++;
  size_t left = (size_t)(P->end - q);
  if (left >= 3 && (!memcmp(q, "inf", 3) || !memcmp(q, "nan", 3)) &&
      (left == 3 || !is_name_char((unsigned char)q[3]))) {
    int nan = q[0] == 'n';
    double v = nan ? NAN : INFINITY;
    if (*start == '-') v = -v;
    P->p = q + 3;
    *is_float = 1;
    *fv = v;
    return 0;
  }
  if (q >= P->end || !is_digit((unsigned char)*q))
    return error_at(P, start, "expected a number, found %s", FOUND(P));
  int flt = 0;
  while (q < P->end && is_digit((unsigned char)*q)) q++;
  if (q < P->end && *q == '.') {
    flt = 1;
    q++;
    while (q < P->end && is_digit((unsigned char)*q)) q++;
  }
  if (q < P->end && (*q == 'e' || *q == 'E')) {
    flt = 1;
    q++;
    if (q < P->end && (*q == '+' || *q == '-')) q++;
    if (q >= P->end || !is_digit((unsigned char)*q))
      return error_at(P, start, "malformed number '%.*s' (missing exponent digits)", (int)(q - start), start);
    while (q < P->end && is_digit((unsigned char)*q)) q++;
  }
  if (q < P->end && (is_name_char((unsigned char)*q))) {
    const char *r = q;
    while (r < P->end && r - start < 40 && is_name_char((unsigned char)*r)) r++;
    return error_at(P, start, "malformed number '%.*s'", (int)(r - start), start);
  }
  if (!flt) {
    if (*start == '+') P->p++;
    if (lex_int(P, iv, "an integer")) return -1;
    *is_float = 0;
    return 0;
  }
  char buf[128];
  if ((size_t)(q - start) >= sizeof buf)
    return error_at(P, start, "numeric literal is too long (%d characters)", (int)(q - start));
  memcpy(buf, start, (size_t)(q - start));
  buf[q - start] = '\0';
  errno = 0;
  double v = strtod(buf, NULL);
  if (errno == ERANGE && isinf(v))
    return error_at(P, start, "float literal '%s' is out of range for a double", buf);
  P->p = q;
  *is_float = 1;
  *fv = v;
  return 0;
}

/* ---- names ----------------------------------------------------------------------------- */

/* `%name` at the cursor. */
static int lex_value_name(parser *P, span *out) {
  FOUND_BUF;
  const char *start = P->p;
  if (CUR(P) != '%') return error_at(P, P->p, "expected a value name like '%%x', found %s", FOUND(P));
  P->p++;
  while (P->p < P->end && is_name_char((unsigned char)*P->p)) P->p++;
  if (P->p == start + 1) return error_at(P, P->p, "expected a value name after '%%', found %s", FOUND(P));
  if (P->p < P->end && !strchr(" \t\r\n,):", *P->p)) {
    unsigned char c = (unsigned char)*P->p;
    if (c >= 0x20 && c < 0x7f)
      return error_at(P, P->p, "invalid character '%c' in value name '%.*s' (names use [A-Za-z0-9_.])", c,
                      (int)(P->p - start), start);
    return error_at(P, P->p, "invalid byte 0x%02x in value name '%.*s' (names use [A-Za-z0-9_.])", c,
                    (int)(P->p - start), start);
  }
  out->s = start + 1;
  out->n = (size_t)(P->p - start - 1);
  return 0;
}

static int set_value_name(parser *P, fbx_value *v, span name) {
  char small[128];
  char *buf = name.n < sizeof small ? small : fbx_malloc(name.n + 1);
  if (!buf) return oom(P);
  memcpy(buf, name.s, name.n);
  buf[name.n] = '\0';
  int rc = fbx_value_set_name(v, buf);
  if (buf != small) fbx_free(buf);
  return rc ? oom(P) : 0;
}

static long line_of(parser *P, const char *pos) {
  long line = 1;
  for (const char *q = P->src; q < pos && q < P->end; q++) line += *q == '\n';
  return line;
}

/* Define a value name in the graph (names are unique per graph). */
static int define(parser *P, gctx *gc, span name, fbx_value *v, int state) {
  uint32_t idx;
  if (sm_get(&gc->names, name.s, name.n, &idx))
    return error_at(P, name.s - 1, "duplicate definition of value %%%.*s (first defined on line %ld)",
                    (int)name.n, name.s, line_of(P, gc->ents[idx].name.s));
  if (gc->nents >= UINT32_MAX - 1 || GROW(gc->ents, gc->capents, gc->nents + 1)) return oom(P);
  if (sm_put(&gc->names, name.s, name.n, (uint32_t)gc->nents)) return oom(P);
  gc->ents[gc->nents++] = (vent){name, v, state};
  return set_value_name(P, v, name);
}

static int lookup(parser *P, gctx *gc, fbx_value **out) {
  span name;
  const char *pos = P->p;
  if (lex_value_name(P, &name)) return -1;
  uint32_t idx;
  if (!sm_get(&gc->names, name.s, name.n, &idx))
    return error_at(P, pos, "unknown value %%%.*s (used before it is defined, or never defined)", (int)name.n,
                    name.s);
  if (gc->ents[idx].state == HIDDEN)
    return error_at(P, pos, "unknown value %%%.*s here: it is defined on line %ld inside a block and is not in scope "
                    "after that block", (int)name.n, name.s, line_of(P, gc->ents[idx].name.s));
  if (gc->ents[idx].state == PENDING)
    return error_at(P, pos, "unknown value %%%.*s here: it is an output of the node on line %ld and cannot be used "
                    "by that node or inside its blocks", (int)name.n, name.s, line_of(P, gc->ents[idx].name.s));
  *out = gc->ents[idx].v;
  return 0;
}

/* `(%a, %b)`: add each value as an input of `user`. */
static int parse_refs(parser *P, gctx *gc, fbx_node *user, const char *what) {
  FOUND_BUF;
  if (!accept(P, '(')) {
    if (AT_END(P)) return error_at(P, P->p, "unexpected end of input: expected '(' to start %s", what);
    return error_at(P, P->p, "expected '(' to start %s, found %s", what, FOUND(P));
  }
  if (accept(P, ')')) return 0;
  for (;;) {
    fbx_value *v = NULL;
    ws(P);
    if (AT_END(P)) return error_at(P, P->p, "unexpected end of input in %s (missing ')')", what);
    if (lookup(P, gc, &v)) return -1;
    if (fbx_node_add_input(user, v)) return oom(P);
    if (accept(P, ',')) continue;
    if (accept(P, ')')) return 0;
    if (AT_END(P)) return error_at(P, P->p, "unexpected end of input in %s (missing ')')", what);
    return error_at(P, P->p, "expected ',' or ')' in %s, found %s", what, FOUND(P));
  }
}

/* ---- types ------------------------------------------------------------------------------- */

static const char *const unsupported_dtypes[] = {
    "ComplexHalf", "ComplexFloat", "ComplexDouble", "ComplexChalf", "QInt8", "QUInt8", "QInt32",
    "QUInt4x2", "QUInt2x4", "Bits1x8", "Bits2x4", "Bits4x2", "Bits8", "Bits16", "Float8_e5m2",
    "Float8_e4m3fn", "Float8_e5m2fnuz", "Float8_e4m3fnuz", "Float8_e8m0fnu", "Float4_e2m1fn_x2",
    "UInt16", "UInt32", "UInt64", "UInt1", "UInt2", "UInt3", "UInt4", "UInt5", "UInt6", "UInt7",
    "Int1", "Int2", "Int3", "Int4", "Int5", "Int6", "Int7",
};

static int is_unsupported_dtype(span name) {
  for (size_t i = 0; i < sizeof unsupported_dtypes / sizeof *unsupported_dtypes; i++) {
    size_t n = strlen(unsupported_dtypes[i]);
    if (name.n >= n && !memcmp(name.s, unsupported_dtypes[i], n) &&
        (name.n == n || (name.n == n + 6 && !memcmp(name.s + n, "Tensor", 6))))
      return 1;
  }
  return 0;
}

static int parse_type(parser *P, gctx *gc, fbx_type **out);

/* The parenthesized part of a tensor type, cursor just after '('.
 * `sizes_ok`: whether sizes may appear (not for FloatTensor(...)). */
static int parse_tensor_args(parser *P, gctx *gc, fbx_dtype dtype, int sizes_ok, int dtype_known,
                             const char *tname_pos, size_t tname_len, fbx_type **out) {
  FOUND_BUF;
  int64_t sizes[MAX_RANK], strides[MAX_RANK];
  int rank = 0, nstrides = -1, rg = -1, kw = 0;
  char device[64];
  int have_device = 0;
  if (!accept(P, ')')) {
    for (;;) {
      ws(P);
      const char *item = P->p;
      int c = CUR(P);
      if (c == -1)
        return error_at(P, P->p, "unexpected end of input in tensor type '%.*s(' (missing ')')", (int)tname_len,
                        tname_pos);
      if (is_digit(c) || c == '*' || c == '-' || (c == 'S' && P->end - P->p >= 3 && !memcmp(P->p, "SS(", 3))) {
        if (!sizes_ok)
          return error_at(P, item, "malformed tensor type: sizes are not allowed in '%.*s(...)' (its rank is unknown)",
                          (int)tname_len, tname_pos);
        if (kw) return error_at(P, item, "malformed tensor type: a size after strides=/requires_grad=/device=");
        if (rank >= MAX_RANK) return error_at(P, item, "malformed tensor type: more than %d dimensions", MAX_RANK);
        int64_t s;
        if (c == '*') {
          P->p++;
          s = FBX_SIZE_UNKNOWN;
        } else if (c == 'S') {
          P->p += 3;
          if (lex_int(P, &s, "a symbolic size like SS(-2)")) return -1;
          if (s >= FBX_SIZE_UNKNOWN)
            return error_at(P, item, "malformed tensor type: symbolic size SS(%" PRId64 ") must be below -1", s);
          if (CUR(P) != ')') return error_at(P, P->p, "expected ')' to close SS(, found %s", FOUND(P));
          P->p++;
        } else {
          if (lex_int(P, &s, "a size")) return -1;
          if (s < 0)
            return error_at(P, item, "malformed tensor type: size %" PRId64 " is negative (use '*' or SS(n))", s);
        }
        sizes[rank++] = s;
      } else if (is_id0(c)) {
        span k = lex_ident(P);
        if (CUR(P) != '=')
          return error_at(P, item,
                          "malformed tensor type: expected a size (integer, '*' or SS(n)) or "
                          "strides=/requires_grad=/device=, found '%.*s'",
                          (int)k.n, k.s);
        P->p++;
        kw = 1;
        if (span_is(k, "strides")) {
          if (nstrides >= 0) return error_at(P, item, "malformed tensor type: strides given twice");
          if (CUR(P) != '[') return error_at(P, P->p, "expected '[' after 'strides=', found %s", FOUND(P));
          P->p++;
          nstrides = 0;
          if (!accept(P, ']')) {
            for (;;) {
              ws(P);
              int64_t st;
              if (nstrides >= MAX_RANK)
                return error_at(P, P->p, "malformed tensor type: more than %d strides", MAX_RANK);
              if (lex_int(P, &st, "a stride")) return -1;
              strides[nstrides++] = st;
              if (accept(P, ',')) continue;
              if (accept(P, ']')) break;
              return error_at(P, P->p, "expected ',' or ']' in strides=[...], found %s", FOUND(P));
            }
          }
        } else if (span_is(k, "requires_grad")) {
          int64_t v;
          if (rg >= 0) return error_at(P, item, "malformed tensor type: requires_grad given twice");
          if (lex_int(P, &v, "0 or 1 after 'requires_grad='")) return -1;
          if (v != 0 && v != 1) return error_at(P, item, "malformed tensor type: requires_grad must be 0 or 1");
          rg = (int)v;
        } else if (span_is(k, "device")) {
          if (have_device) return error_at(P, item, "malformed tensor type: device given twice");
          const char *d = P->p;
          while (P->p < P->end && (is_id((unsigned char)*P->p) || *P->p == ':')) P->p++;
          size_t dn = (size_t)(P->p - d);
          if (!dn) return error_at(P, d, "expected a device like 'cpu' or 'cuda:0' after 'device=', found %s", FOUND(P));
          if (dn >= sizeof device) return error_at(P, d, "device name is too long");
          memcpy(device, d, dn);
          device[dn] = '\0';
          have_device = 1;
        } else {
          return error_at(P, item, "malformed tensor type: unknown property '%.*s' (expected strides, requires_grad "
                          "or device)", (int)k.n, k.s);
        }
      } else {
        return error_at(P, item,
                        "malformed tensor type: expected a size (integer, '*' or SS(n)) or "
                        "strides=/requires_grad=/device=, found %s",
                        FOUND(P));
      }
      if (accept(P, ',')) continue;
      if (accept(P, ')')) break;
      if (AT_END(P))
        return error_at(P, P->p, "unexpected end of input in tensor type '%.*s(' (missing ')')", (int)tname_len,
                        tname_pos);
      return error_at(P, P->p, "expected ',' or ')' in tensor type '%.*s(...)', found %s", (int)tname_len, tname_pos,
                      FOUND(P));
    }
  }
  /* Tensor(requires_grad=0) (no sizes, dtype unknown) reads as rank unknown:
   * PyTorch prints rank-0 and rank-unknown the same way there. */
  if (!sizes_ok || (!dtype_known && rank == 0 && kw)) rank = -1;
  if (nstrides >= 0 && nstrides != (rank < 0 ? 0 : rank))
    return error_at(P, tname_pos, "malformed tensor type: strides has %d entries but the type has rank %d", nstrides,
                    rank < 0 ? 0 : rank);
  fbx_type *t = fbx_type_tensor(gc->g->arena, dtype, rank, rank > 0 ? sizes : NULL,
                                nstrides > 0 ? strides : NULL, rg, have_device ? device : NULL);
  if (!t) return oom(P);
  *out = t;
  return 0;
}

/* Make a named type whose printed name is exactly `text` (for spellings the
 * type structure cannot reproduce: NamedTuple(a : int), Future[int], Enum<X>). */
static int verbatim_named(parser *P, gctx *gc, const char *text, size_t n, fbx_type **elems, int nelems,
                          fbx_type **out) {
  fbx_type *t = fbx_type_container(gc->g->arena, FBX_TYPE_NAMED, nelems, elems);
  if (!t || !(t->name = fbx_arena_strndup(gc->g->arena, text, n))) return oom(P);
  *out = t;
  return 0;
}

/* Comma-separated types up to `close`, cursor after the opening bracket. */
static int parse_type_list(parser *P, gctx *gc, char close, const char *what, fbx_type ***elems, int *n) {
  FOUND_BUF;
  fbx_type **arr = NULL;
  size_t cap = 0, cnt = 0;
  if (!accept(P, close)) {
    for (;;) {
      fbx_type *t;
      if (parse_type(P, gc, &t)) goto fail;
      if (cnt >= INT32_MAX || GROW(arr, cap, cnt + 1)) {
        oom(P);
        goto fail;
      }
      arr[cnt++] = t;
      if (accept(P, ',')) continue;
      if (accept(P, close)) break;
      if (AT_END(P))
        error_at(P, P->p, "unexpected end of input in %s (missing '%c')", what, close);
      else
        error_at(P, P->p, "expected ',' or '%c' in %s, found %s", close, what, FOUND(P));
      goto fail;
    }
  }
  *elems = arr;
  *n = (int)cnt;
  return 0;
fail:
  fbx_free(arr);
  return -1;
}

static int make_container(parser *P, gctx *gc, fbx_type_kind kind, fbx_type **elems, int n, fbx_type **out) {
  fbx_type *t = fbx_type_container(gc->g->arena, kind, n, elems);
  fbx_free(elems);
  if (!t) return oom(P);
  *out = t;
  return 0;
}

/* The named types TorchScript prints besides the ones parsed above: schema
 * types, class types (qualified names such as __torch__.M or
 * __torch__.torch.classes.ns.C) and the parenthesized generic forms. Any
 * other name is a typo or a type fusebox cannot know, and is an error. */
static bool known_named_type(span name, int paren) {
  static const char *const plain[] = {"Scalar", "Layout", "ScalarType", "MemoryFormat", "QScheme", "Any",
                                      "AnyType", "AnyEnumType", "AnyClassType", "AnyTupleType", "AnyListType",
                                      "Generator", "Storage", "Stream", "Capsule", "Quantizer", "Object",
                                      "Dimname", "ConstQuantizerPtr", "SymInt", "SymFloat", "SymBool",
                                      "Interface", "Module", "Function", "complex", "Event", "tKey", "tVal"};
  static const char *const generic[] = {"Union", "Future", "RRef", "Await", "Optional", "List", "Tuple"};
  if (memchr(name.s, '.', name.n)) return true;
  if (!paren && name.s[0] == 't') { /* schema type variables: t, t1, t2 */
    size_t i = 1;
    while (i < name.n && is_digit((unsigned char)name.s[i])) i++;
    if (i == name.n) return true;
  }
  const char *const *tab = paren ? generic : plain;
  size_t n = paren ? sizeof generic / sizeof *generic : sizeof plain / sizeof *plain;
  for (size_t i = 0; i < n; i++)
    if (span_is(name, tab[i])) return true;
  return false;
}

/* A hint for an unknown type name that differs from a tensor or scalar type
 * name only in case or by one edit. */
static const char *type_hint(span name) {
  static const char *const common[] = {"Tensor", "int", "float", "bool", "str", "NoneType", "Device", "Scalar",
                                       "Float", "Double", "Long", "Int", "Half", "Bool", "BFloat16"};
  for (size_t i = 0; i < sizeof common / sizeof *common; i++) {
    size_t m = strlen(common[i]), a = 0, b = 0;
    size_t n = name.n;
    if (n + 1 < m || m + 1 < n) continue;
    int edits = 0;
    while (a < n && b < m && edits < 2) {
      if (name.s[a] == common[i][b] || (name.s[a] ^ 32) == common[i][b]) {
        a++, b++;
      } else {
        edits++;
        if (n > m) a++;
        else if (m > n) b++;
        else a++, b++;
      }
    }
    edits += (int)((n - a) + (m - b));
    if (edits <= 1) {
      static _Thread_local char buf[48];
      snprintf(buf, sizeof buf, " (did you mean %s?)", common[i]);
      return buf;
    }
  }
  return " (expected Tensor, a tensor type like Float(2, 3), int, float, bool, str, a list, tuple or "
         "optional of them, or a class type like __torch__.M)";
}

static int parse_type_inner(parser *P, gctx *gc, fbx_type **out) {
  FOUND_BUF;
  fbx_arena *ar = gc->g->arena;
  ws(P);
  const char *start = P->p;
  int c = CUR(P);
  fbx_type *t = NULL;
  if (c == '(') {
    P->p++;
    fbx_type **elems;
    int n;
    if (parse_type_list(P, gc, ')', "tuple type", &elems, &n)) return -1;
    if (make_container(P, gc, FBX_TYPE_TUPLE, elems, n, &t)) return -1;
  } else if (is_id0(c)) {
    while (P->p < P->end && is_name_char((unsigned char)*P->p)) P->p++;
    span name = {start, (size_t)(P->p - start)};
    int paren = CUR(P) == '(';
    fbx_dtype dt = fbx_dtype_from_torch_name(name.s, name.n);
    fbx_dtype dtt = name.n > 6 && !memcmp(name.s + name.n - 6, "Tensor", 6)
                        ? fbx_dtype_from_torch_name(name.s, name.n - 6)
                        : FBX_DTYPE_UNDEFINED;
    if (span_is(name, "Tensor") || dt != FBX_DTYPE_UNDEFINED || dtt != FBX_DTYPE_UNDEFINED) {
      int is_any = span_is(name, "Tensor");
      fbx_dtype d = is_any ? FBX_DTYPE_UNDEFINED : dt != FBX_DTYPE_UNDEFINED ? dt : dtt;
      int rank_unknown_form = dtt != FBX_DTYPE_UNDEFINED || (dt != FBX_DTYPE_UNDEFINED && !paren);
      if (paren) {
        P->p++;
        if (parse_tensor_args(P, gc, d, !rank_unknown_form, !is_any, name.s, name.n, &t)) return -1;
      } else if (is_any) {
        t = fbx_type_tensor_any();
      } else if (!(t = fbx_type_tensor(ar, d, -1, NULL, NULL, -1, NULL))) {
        return oom(P);
      }
      if (P->end - P->p >= 11 && !memcmp(P->p, "[Undefined]", 11)) {
        P->p += 11;
        if (t == fbx_type_tensor_any() && !(t = fbx_type_tensor(ar, FBX_DTYPE_UNDEFINED, -1, NULL, NULL, -1, NULL)))
          return oom(P);
        t->undefined = 1;
      }
    } else if (is_unsupported_dtype(name)) {
      return unsupported_at(P, start, "unsupported dtype '%.*s' in tensor type (fusebox supports Byte, Char, Short, "
                            "Int, Long, Half, Float, Double, Bool, BFloat16)", (int)name.n, name.s);
    } else if (span_is(name, "int")) {
      t = fbx_type_simple(FBX_TYPE_INT);
    } else if (span_is(name, "float")) {
      t = fbx_type_simple(FBX_TYPE_FLOAT);
    } else if (span_is(name, "bool")) {
      t = fbx_type_simple(FBX_TYPE_BOOL);
    } else if (span_is(name, "str")) {
      t = fbx_type_simple(FBX_TYPE_STR);
    } else if (span_is(name, "NoneType")) {
      t = fbx_type_simple(FBX_TYPE_NONE);
    } else if (span_is(name, "Device")) {
      t = fbx_type_simple(FBX_TYPE_DEVICE);
    } else if (span_is(name, "number")) {
      t = fbx_type_simple(FBX_TYPE_NUMBER);
    } else if (span_is(name, "Dict") && paren) {
      P->p++;
      fbx_type **elems;
      int n;
      if (parse_type_list(P, gc, ')', "Dict(...) type", &elems, &n)) return -1;
      if (n != 2) {
        fbx_free(elems);
        return error_at(P, start, "Dict type needs a key and a value type, found %d types", n);
      }
      if (make_container(P, gc, FBX_TYPE_DICT, elems, n, &t)) return -1;
    } else if (span_is(name, "NamedTuple") && paren) {
      /* NamedTuple(a : int, b : Tensor): kept as a named type spelled as printed. */
      P->p++;
      fbx_strbuf b = {0};
      fbx_type **elems = NULL;
      size_t cap = 0, n = 0;
      fbx_strbuf_puts(&b, "NamedTuple(");
      if (!accept(P, ')')) {
        for (;;) {
          ws(P);
          span field = lex_ident(P);
          fbx_type *ft;
          if (!field.n) {
            error_at(P, P->p, "expected a field name in NamedTuple(...), found %s", FOUND(P));
            goto nt_fail;
          }
          if (expect(P, ':', "after a NamedTuple field name") || parse_type(P, gc, &ft)) goto nt_fail;
          if (n >= INT32_MAX || GROW(elems, cap, n + 1)) {
            oom(P);
            goto nt_fail;
          }
          elems[n++] = ft;
          fbx_strbuf_printf(&b, "%s%.*s : ", n > 1 ? ", " : "", (int)field.n, field.s);
          fbx_type_print(&b, ft);
          if (accept(P, ',')) continue;
          if (accept(P, ')')) break;
          error_at(P, P->p, "expected ',' or ')' in NamedTuple(...), found %s", FOUND(P));
          goto nt_fail;
        }
      }
      fbx_strbuf_putc(&b, ')');
      if (b.oom) {
        oom(P);
        goto nt_fail;
      }
      int rc = verbatim_named(P, gc, b.data, b.len, elems, (int)n, &t);
      fbx_strbuf_free(&b);
      fbx_free(elems);
      if (rc) return -1;
      goto postfix;
    nt_fail:
      fbx_strbuf_free(&b);
      fbx_free(elems);
      return -1;
    } else if ((span_is(name, "Future") || span_is(name, "RRef")) && CUR(P) == '[') {
      P->p++;
      fbx_type *et;
      if (parse_type(P, gc, &et)) return -1;
      if (expect(P, ']', "to close the element type")) return -1;
      fbx_strbuf b = {0};
      fbx_strbuf_printf(&b, "%.*s[", (int)name.n, name.s);
      fbx_type_print(&b, et);
      fbx_strbuf_putc(&b, ']');
      int rc = b.oom ? oom(P) : verbatim_named(P, gc, b.data, b.len, &et, 1, &t);
      fbx_strbuf_free(&b);
      if (rc) return -1;
    } else if (span_is(name, "Enum") && CUR(P) == '<') {
      P->p++;
      while (P->p < P->end && is_name_char((unsigned char)*P->p)) P->p++;
      if (CUR(P) != '>') return error_at(P, P->p, "expected '>' to close Enum<...>, found %s", FOUND(P));
      P->p++;
      if (verbatim_named(P, gc, start, (size_t)(P->p - start), NULL, 0, &t)) return -1;
    } else {
      const char *q = P->p + 1;
      while (paren && q < P->end && (*q == ' ' || *q == '\t')) q++;
      int sizes_follow = paren && q < P->end && (is_digit((unsigned char)*q) || *q == '*');
      if (!sizes_follow && !known_named_type(name, paren))
        return error_at(P, start, "unknown type '%.*s'%s", (int)name.n, name.s, type_hint(name));
      char *nm = fbx_arena_strndup(ar, name.s, name.n);
      if (!nm) return oom(P);
      if (paren) {
        P->p++;
        ws(P);
        if (is_digit(CUR(P)) || CUR(P) == '*')
          return error_at(P, start, "unknown tensor dtype '%.*s' (expected Float, Double, Half, BFloat16, Long, "
                          "Int, Short, Char, Byte, Bool or Tensor)", (int)name.n, name.s);
        fbx_type **elems;
        int n;
        if (parse_type_list(P, gc, ')', "type arguments", &elems, &n)) return -1;
        if (make_container(P, gc, FBX_TYPE_NAMED, elems, n, &t)) return -1;
        t->parenthesized = true;
      } else if (!(t = fbx_type_new(ar, FBX_TYPE_NAMED))) {
        return oom(P);
      }
      t->name = nm;
    }
  } else if (c == -1) {
    return error_at(P, P->p, "unexpected end of input: expected a type");
  } else {
    return error_at(P, P->p, "expected a type, found %s", FOUND(P));
  }
postfix:
  for (;;) {
    if (CUR(P) == '?') {
      P->p++;
      if (!(t = fbx_type_container(ar, FBX_TYPE_OPTIONAL, 1, &t))) return oom(P);
    } else if (CUR(P) == '[' && P->p + 1 < P->end && P->p[1] == ']') {
      P->p += 2;
      if (!(t = fbx_type_container(ar, FBX_TYPE_LIST, 1, &t))) return oom(P);
    } else {
      break;
    }
  }
  *out = t;
  return 0;
}

static int parse_type(parser *P, gctx *gc, fbx_type **out) {
  if (enter(P)) return -1;
  int rc = parse_type_inner(P, gc, out);
  leave(P);
  return rc;
}

/* ---- attribute values ------------------------------------------------------------------ */

static void sreset(parser *P) { P->slen = 0; }

static int sput(parser *P, const void *d, size_t n) {
  if (GROW(P->sbuf, P->scap, P->slen + n + 1)) return oom(P);
  memcpy(P->sbuf + P->slen, d, n);
  P->slen += n;
  return 0;
}

/* A "..." literal at the cursor, decoded and NUL-terminated into the scratch
 * buffer (appended; *off gets its start). */
static int lex_string(parser *P, size_t *off) {
  const char *start = P->p;
  P->p++;
  *off = P->slen;
  for (;;) {
    if (AT_END(P)) return error_at(P, start, "unterminated string literal (missing closing '\"')");
    unsigned char c = (unsigned char)*P->p;
    if (c == '"') {
      P->p++;
      break;
    }
    if (c == '\n') return error_at(P, start, "unterminated string literal (end of line before the closing '\"')");
    if (c < 0x20 && c != '\t') return error_at(P, P->p, "invalid control byte 0x%02x in string literal", c);
    if (c != '\\') {
      if (sput(P, &c, 1)) return -1;
      P->p++;
      continue;
    }
    const char *esc = P->p++;
    if (AT_END(P)) return error_at(P, start, "unterminated string literal (input ends after '\\')");
    char e = *P->p++, d;
    switch (e) {
      case '\\': d = '\\'; break;
      case '\'': d = '\''; break;
      case '"': d = '"'; break;
      case '?': d = '?'; break;
      case 'a': d = '\a'; break;
      case 'b': d = '\b'; break;
      case 'f': d = '\f'; break;
      case 'n': d = '\n'; break;
      case 'r': d = '\r'; break;
      case 't': d = '\t'; break;
      case 'v': d = '\v'; break;
      default:
        if (e >= '0' && e <= '7') {
          unsigned v = (unsigned)(e - '0');
          for (int k = 0; k < 2 && P->p < P->end && *P->p >= '0' && *P->p <= '7'; k++)
            v = v * 8 + (unsigned)(*P->p++ - '0');
          if (v > 255) return error_at(P, esc, "octal escape '%.*s' is out of range (above \\377)", (int)(P->p - esc), esc);
          d = (char)v;
        } else if (e == 'x') {
          unsigned v = 0;
          int k = 0;
          for (; k < 2 && P->p < P->end && strchr("0123456789abcdefABCDEF", *P->p) && *P->p; k++) {
            char h = *P->p++;
            v = v * 16 + (unsigned)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          }
          if (!k) return error_at(P, esc, "invalid escape '\\x' in string literal (expected hex digits)");
          d = (char)v;
        } else if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f) {
          return error_at(P, esc, "invalid escape sequence '\\%c' in string literal", e);
        } else {
          return error_at(P, esc, "invalid escape sequence (backslash followed by byte 0x%02x) in string literal",
                          (unsigned char)e);
        }
    }
    if (sput(P, &d, 1)) return -1;
  }
  char z = '\0';
  return sput(P, &z, 1);
}

static float to_f32(double d) {
  if (d > FLT_MAX) return INFINITY;
  if (d < -FLT_MAX) return -INFINITY;
  return (float)d;
}

static int64_t to_i64(double d) {
  if (isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

/* Store element k of a tensor constant. */
static void store_elem(fbx_dtype dt, void *data, size_t k, int is_float, int64_t iv, double fv) {
  double d = is_float ? fv : (double)iv;
  int64_t i = is_float ? to_i64(fv) : iv;
  switch (dt) {
    case FBX_DTYPE_UINT8: ((uint8_t *)data)[k] = (uint8_t)(uint64_t)i; break;
    case FBX_DTYPE_INT8: ((int8_t *)data)[k] = (int8_t)(uint8_t)(uint64_t)i; break;
    case FBX_DTYPE_INT16: ((int16_t *)data)[k] = (int16_t)(uint16_t)(uint64_t)i; break;
    case FBX_DTYPE_INT32: ((int32_t *)data)[k] = (int32_t)(uint32_t)(uint64_t)i; break;
    case FBX_DTYPE_INT64: ((int64_t *)data)[k] = i; break;
    case FBX_DTYPE_FLOAT16: ((uint16_t *)data)[k] = fbx_float_to_half(to_f32(d)); break;
    case FBX_DTYPE_BFLOAT16: ((uint16_t *)data)[k] = fbx_float_to_bf16(to_f32(d)); break;
    case FBX_DTYPE_FLOAT32: ((float *)data)[k] = to_f32(d); break;
    case FBX_DTYPE_FLOAT64: ((double *)data)[k] = d; break;
    case FBX_DTYPE_BOOL: ((uint8_t *)data)[k] = d != 0; break;
    default: break;
  }
}

/* The dtype and shape the node's (first) output type gives a tensor constant. */
static void const_type_hint(const fbx_node *n, fbx_dtype *dt, int *rank, const int64_t **sizes, int64_t numel) {
  *dt = FBX_DTYPE_UNDEFINED;
  *rank = -1;
  *sizes = NULL;
  if (n->noutputs < 1 || n->outputs[0]->type->kind != FBX_TYPE_TENSOR) return;
  const fbx_type *t = n->outputs[0]->type;
  *dt = t->dtype;
  if (t->rank < 0) return;
  int64_t p = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->sizes[i] < 0) return;
    p *= t->sizes[i] > 0 && p > INT64_MAX / t->sizes[i] ? 0 : t->sizes[i];
  }
  if (p == numel) {
    *rank = t->rank;
    *sizes = t->sizes;
  }
}

/* `{2}` / `{2.5}` / `{-inf}`: a one-element tensor, cursor after '{'. */
static int parse_scalar_tensor(parser *P, fbx_node *n, fbx_sym name, fbx_tensor_const *tc) {
  FOUND_BUF;
  int is_float;
  int64_t iv = 0;
  double fv = 0;
  ws(P);
  if (lex_number(P, &is_float, &iv, &fv)) return -1;
  if (!accept(P, '}')) return error_at(P, P->p, "expected '}' to close the tensor constant, found %s", FOUND(P));
  fbx_dtype dt;
  int rank;
  const int64_t *sizes;
  const_type_hint(n, &dt, &rank, &sizes, 1);
  if (dt == FBX_DTYPE_UNDEFINED) dt = is_float ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_INT64;
  unsigned char data[16] = {0};
  store_elem(dt, data, 0, is_float, iv, fv);
  tc->dtype = dt;
  tc->rank = rank < 0 ? 0 : rank;
  tc->sizes = (int64_t *)sizes;
  tc->data = data;
  tc->spelling = 0;
  if (fbx_node_set_t(n, name, tc)) return oom(P);
  return 0;
}

/* PyTorch's inline printout of a small tensor, `value= 1  2  3 [ CPULongType{3} ]`
 * (newlines in it were turned into spaces). Cursor at its first byte. */
static int parse_inline_tensor(parser *P, gctx *gc, fbx_node *n, fbx_sym name) {
  FOUND_BUF;
  const char *start = P->p;
  double scale = 1;
  size_t nvals = 0, capvals = 0;
  double *vals = NULL;
  int rc = -1;
  for (;;) {
    while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r')) P->p++;
    if (AT_END(P)) {
      error_at(P, start, "unterminated inline tensor constant (expected a '[ CPU<Type>Type{sizes} ]' footer)");
      goto out;
    }
    if (*P->p == '[') break;
    const char *tok = P->p;
    int is_float;
    int64_t iv;
    double fv;
    if (!(is_digit(CUR(P)) || CUR(P) == '-' || CUR(P) == '+' || CUR(P) == 'n' || CUR(P) == 'i')) {
      const char *q = P->p;
      while (q < P->end && q - tok < 30 && !strchr(" \t\r\n[", *q)) q++;
      unsupported_at(P, tok, "unsupported inline tensor printout: unexpected '%.*s' (only tensors printed as a plain "
                     "list of numbers are supported)", (int)(q - tok), tok);
      goto out;
    }
    if (lex_number(P, &is_float, &iv, &fv)) goto out;
    double v = is_float ? fv : (double)iv;
    const char *q = P->p;
    while (q < P->end && (*q == ' ' || *q == '\t')) q++;
    if (q < P->end && *q == '*') {
      if (nvals) {
        unsupported_at(P, q, "unsupported inline tensor printout: a scale factor after the values");
        goto out;
      }
      scale = v;
      P->p = q + 1;
      continue;
    }
    if (P->p < P->end && !strchr(" \t\r\n[", *P->p)) {
      error_at(P, P->p, "malformed inline tensor constant: unexpected %s", FOUND(P));
      goto out;
    }
    if (GROW(vals, capvals, nvals + 1)) {
      oom(P);
      goto out;
    }
    vals[nvals++] = v;
  }
  /* footer: [ CPUFloatType{2,3} ] */
  const char *footer = P->p;
  P->p++;
  while (P->p < P->end && *P->p == ' ') P->p++;
  span ty = lex_ident(P);
  static const char *const devs[] = {"CPU", "CUDA", "MPS", "XPU", "Meta", "HIP"};
  span dname = {0, 0};
  for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) {
    size_t dl = strlen(devs[i]);
    if (ty.n > dl + 4 && !memcmp(ty.s, devs[i], dl) && !memcmp(ty.s + ty.n - 4, "Type", 4)) {
      dname.s = ty.s + dl;
      dname.n = ty.n - dl - 4;
      break;
    }
  }
  if (!dname.s || CUR(P) != '{') {
    error_at(P, ty.n ? ty.s : P->p, "malformed inline tensor constant: expected a footer like '[ CPUFloatType{3} ]'");
    goto out;
  }
  fbx_dtype dt = fbx_dtype_from_torch_name(dname.s, dname.n);
  if (dt == FBX_DTYPE_UNDEFINED) {
    if (is_unsupported_dtype(dname))
      unsupported_at(P, dname.s, "unsupported dtype '%.*s' in tensor constant", (int)dname.n, dname.s);
    else
      error_at(P, dname.s, "unknown dtype '%.*s' in tensor constant", (int)dname.n, dname.s);
    goto out;
  }
  P->p++;
  int64_t sizes[MAX_RANK];
  int rank = 0;
  int64_t numel = 1;
  while (CUR(P) == ' ') P->p++;
  if (CUR(P) != '}') {
    for (;;) {
      while (CUR(P) == ' ') P->p++;
      int64_t s;
      if (rank >= MAX_RANK) {
        error_at(P, P->p, "tensor constant has more than %d dimensions", MAX_RANK);
        goto out;
      }
      if (lex_int(P, &s, "a size")) goto out;
      if (s < 0 || (s > 0 && numel > (INT64_C(1) << 40) / s)) {
        error_at(P, P->p, "bad size %" PRId64 " in tensor constant", s);
        goto out;
      }
      sizes[rank++] = s;
      numel *= s;
      while (CUR(P) == ' ') P->p++;
      if (CUR(P) == ',') {
        P->p++;
        continue;
      }
      if (CUR(P) == '}') break;
      error_at(P, P->p, "expected ',' or '}' in the sizes of a tensor constant, found %s", FOUND(P));
      goto out;
    }
  }
  P->p++;
  while (CUR(P) == ' ') P->p++;
  if (CUR(P) != ']') {
    error_at(P, P->p, "expected ']' to close the tensor constant's footer, found %s", FOUND(P));
    goto out;
  }
  P->p++;
  if ((int64_t)nvals != numel) {
    unsupported_at(P, footer, "inline tensor constant has %zu values but its shape needs %" PRId64
                   " (only plain value lists are supported)", nvals, numel);
    goto out;
  }
  size_t esz = fbx_dtype_size(dt);
  void *data = fbx_malloc(esz * (nvals ? nvals : 1));
  if (!data) {
    oom(P);
    goto out;
  }
  for (size_t i = 0; i < nvals; i++) store_elem(dt, data, i, 1, 0, vals[i] * scale);
  char *text = fbx_arena_strndup(gc->g->arena, start, (size_t)(P->p - start));
  fbx_tensor_const tc = {dt, rank, sizes, data, 2, text};
  if (!text || fbx_node_set_t(n, name, &tc))
    oom(P);
  else
    rc = 0;
  fbx_free(data);
out:
  fbx_free(vals);
  return rc;
}

/* A value fusebox has no attribute kind for: PyTorch's IValue attributes
 * such as nested lists (`[["TENSOR_CONT"]]`), tuples (`(1, 2)`), dicts and
 * True/False/None. It is kept verbatim as a named type, so that it prints
 * back unchanged (the IR has no opaque attribute kind; see the report).
 * Cursor at its first byte; it ends at a ',' or ']' outside brackets. */
static int parse_opaque(parser *P, gctx *gc, fbx_node *n, fbx_sym name) {
  FOUND_BUF;
  const char *start = P->p;
  char stack[MAX_DEPTH];
  int sp = 0;
  for (;;) {
    if (AT_END(P)) return error_at(P, start, "unexpected end of input in an attribute value");
    char c = *P->p;
    if (sp == 0 && (c == ',' || c == ']' || c == ')')) break;
    if (c == '"') {
      size_t off;
      if (lex_string(P, &off)) return -1;
      sreset(P);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (sp >= MAX_DEPTH) return error_at(P, P->p, "nesting too deep (more than %d levels)", MAX_DEPTH);
      stack[sp++] = c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (c == ')' || c == ']' || c == '}') {
      if (!sp || c != stack[sp - 1])
        return error_at(P, P->p, "unbalanced '%c' in an attribute value", c);
      sp--;
    } else if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f || c == '#') {
      return error_at(P, P->p, "unexpected %s in an attribute value", FOUND(P));
    }
    P->p++;
  }
  const char *e = P->p;
  while (e > start && e[-1] == ' ') e--;
  if (e == start) return error_at(P, start, "expected an attribute value, found %s", FOUND(P));
  fbx_type *t;
  if (verbatim_named(P, gc, start, (size_t)(e - start), NULL, 0, &t)) return -1;
  return fbx_node_set_ty(n, name, t) ? oom(P) : 0;
}

/* Does a literal (not a type) follow the bracket at q? */
static int literal_after(parser *P, const char *q) {
  q++;
  while (q < P->end && *q == ' ') q++;
  return q < P->end && (is_digit((unsigned char)*q) || *q == '"' || *q == '-' || *q == '[' || *q == '{' ||
                        (*q == '(' && literal_after(P, q)));
}

enum { LIST_ANY, LIST_INTS, LIST_FLOATS, LIST_STRS };
static const char *const list_names[] = {"", "List[int]", "List[float]", "List[str]"};

/* `[...]` attribute value, cursor after '['. `force`: the element kind an
 * `annotate(List[T], [...])` requires; `hint`: what the output type of a
 * prim::Constant suggests (for `[]` and for integral floats). A bare `[]`
 * otherwise is an empty list of types: PyTorch writes empty int, float and
 * string lists as annotate(List[T], []). */
static int parse_list_attr(parser *P, gctx *gc, fbx_node *n, fbx_sym name, int force, int hint) {
  FOUND_BUF;
  const char *start = P->p - 1;
  int c = peek(P);
  if (c == ']') {
    P->p++;
    int k = force ? force : hint;
    int rc = k == LIST_INTS     ? fbx_node_set_is(n, name, NULL, 0)
             : k == LIST_FLOATS ? fbx_node_set_fs(n, name, NULL, 0)
             : k == LIST_STRS   ? fbx_node_set_ss(n, name, NULL, 0)
                                : -2;
    if (rc == -2) {
      fbx_type *t = fbx_type_container(gc->g->arena, FBX_TYPE_TUPLE, 0, NULL);
      rc = t ? fbx_node_set_ty(n, name, t) : -1;
    }
    return rc ? oom(P) : 0;
  }
  if (force && ((force == LIST_STRS) != (c == '"')))
    return error_at(P, P->p, "bad attribute value: expected %s in annotate(%s, [...]), found %s",
                    force == LIST_STRS ? "strings" : "numbers", list_names[force], FOUND(P));
  if (c == '<') return unsupported_at(P, P->p, "unsupported attribute value: a list of tensors or graphs");
  if (c == '[' || c == '{' || (c == '(' && literal_after(P, P->p))) {
    P->p = start; /* a list of lists or tuples: keep the whole list verbatim */
    return parse_opaque(P, gc, n, name);
  }
  int rc = -1;
  if (c == '"') {
    size_t *offs = NULL, noffs = 0, capoffs = 0;
    const char **ptrs = NULL;
    sreset(P);
    for (;;) {
      ws(P);
      if (CUR(P) != '"') {
        error_at(P, P->p, "expected a string in a string list, found %s", FOUND(P));
        goto sfail;
      }
      size_t off;
      if (lex_string(P, &off)) goto sfail;
      if (noffs >= INT32_MAX || GROW(offs, capoffs, noffs + 1)) {
        oom(P);
        goto sfail;
      }
      offs[noffs++] = off;
      if (accept(P, ',')) continue;
      if (accept(P, ']')) break;
      if (AT_END(P))
        error_at(P, P->p, "unexpected end of input in a list attribute (missing ']')");
      else
        error_at(P, P->p, "expected ',' or ']' in a list attribute, found %s", FOUND(P));
      goto sfail;
    }
    if (!(ptrs = fbx_malloc(sizeof *ptrs * noffs))) {
      oom(P);
      goto sfail;
    }
    for (size_t i = 0; i < noffs; i++) ptrs[i] = P->sbuf + offs[i];
    rc = fbx_node_set_ss(n, name, ptrs, (int)noffs) ? oom(P) : 0;
  sfail:
    fbx_free(offs);
    fbx_free(ptrs);
    return rc;
  }
  if (is_digit(c) || c == '-' || c == '+' || at_keyword(P, "inf") || at_keyword(P, "nan")) {
    int64_t *is = NULL;
    double *fs = NULL;
    size_t cnt = 0, capi = 0, capf = 0;
    int any_float = force == LIST_FLOATS || hint == LIST_FLOATS;
    for (;;) {
      ws(P);
      int is_float;
      int64_t iv = 0;
      double fv = 0;
      if (lex_number(P, &is_float, &iv, &fv)) goto nfail;
      if (cnt >= INT32_MAX || GROW(is, capi, cnt + 1) || GROW(fs, capf, cnt + 1)) {
        oom(P);
        goto nfail;
      }
      is[cnt] = is_float ? 0 : iv;
      fs[cnt] = is_float ? fv : (double)iv;
      any_float |= is_float;
      cnt++;
      if (accept(P, ',')) continue;
      if (accept(P, ']')) break;
      if (AT_END(P))
        error_at(P, P->p, "unexpected end of input in a list attribute (missing ']')");
      else
        error_at(P, P->p, "expected ',' or ']' in a list attribute, found %s", FOUND(P));
      goto nfail;
    }
    if (force == LIST_INTS && any_float) {
      error_at(P, start, "bad attribute value: a float in annotate(List[int], [...])");
      goto nfail;
    }
    rc = (any_float ? fbx_node_set_fs(n, name, fs, (int)cnt) : fbx_node_set_is(n, name, is, (int)cnt)) ? oom(P) : 0;
  nfail:
    fbx_free(is);
    fbx_free(fs);
    return rc;
  }
  if (force)
    return error_at(P, P->p, "bad attribute value: expected numbers in annotate(%s, [...]), found %s",
                    list_names[force], FOUND(P));
  if (is_id0(c) || c == '(') {
    /* A list of types (prim::TypeCheck[types=[...]]), stored as a tuple type. */
    fbx_type **elems;
    int cnt;
    if (parse_type_list(P, gc, ']', "a list of types", &elems, &cnt)) return -1;
    fbx_type *t = fbx_type_container(gc->g->arena, FBX_TYPE_TUPLE, cnt, elems);
    fbx_free(elems);
    if (!t || fbx_node_set_ty(n, name, t)) return oom(P);
    return 0;
  }
  if (c == -1) return error_at(P, start, "unexpected end of input in a list attribute (missing ']')");
  return error_at(P, P->p, "bad attribute value: expected a number, a string or a type in the list, found %s",
                  FOUND(P));
}

/* Does an inline tensor printout start here: numbers separated by blanks,
 * then the '[ CPUFloatType{...} ]' footer? (A negative first value has no
 * blank before it: `value=-0.5717  0.5188 [ CPUFloatType{2} ]`.) */
static bool inline_tensor_ahead(const parser *P) {
  const char *q = P->p;
  bool blank = false;
  while (q < P->end && q - P->p < 4096) {
    char ch = *q;
    if (ch == ' ' || ch == '\t') {
      blank = true;
    } else if (ch == '[') {
      return blank && q + 2 < P->end && q[1] == ' ' && is_id0((unsigned char)q[2]);
    } else if (!(is_digit((unsigned char)ch) || strchr("+-.eEnaifNI*", ch))) {
      return false;
    }
    q++;
  }
  return false;
}

static int parse_attr_value(parser *P, gctx *gc, fbx_node *n, fbx_sym name, span aname) {
  FOUND_BUF;
  int c = CUR(P);
  /* PyTorch prints a small tensor as `value= 1  2 [ CPULongType{2} ]` and an
   * empty one as `value=[ CPUFloatType{0} ]`. */
  if (c == ' ' || ((is_digit(c) || c == '-' || c == '+') && inline_tensor_ahead(P)) ||
      (c == '[' && P->p + 2 < P->end && P->p[1] == ' ' && is_id0((unsigned char)P->p[2])))
    return parse_inline_tensor(P, gc, n, name);
  int is_value_const = n->kind == FBX_SYM_prim_Constant && name == FBX_SYM_attr_value && n->noutputs == 1;
  const fbx_type *out_t = is_value_const ? n->outputs[0]->type : NULL;
  if (c == '"') {
    size_t off;
    sreset(P);
    if (lex_string(P, &off)) return -1;
    return fbx_node_set_s(n, name, P->sbuf + off) ? oom(P) : 0;
  }
  if (c == '[') {
    P->p++;
    int hint = LIST_ANY;
    if (out_t && out_t->kind == FBX_TYPE_LIST) {
      fbx_type_kind ek = out_t->elems[0]->kind;
      hint = ek == FBX_TYPE_INT || ek == FBX_TYPE_BOOL ? LIST_INTS
             : ek == FBX_TYPE_FLOAT                   ? LIST_FLOATS
             : ek == FBX_TYPE_STR                     ? LIST_STRS
                                                      : LIST_ANY;
    }
    return parse_list_attr(P, gc, n, name, LIST_ANY, hint);
  }
  if (at_keyword(P, "annotate") && P->end - P->p > 8 && P->p[8] == '(') {
    /* annotate(List[int], []): how PyTorch prints empty lists. */
    const char *start = P->p;
    P->p += 9;
    ws(P);
    span l = lex_ident(P);
    if (!span_is(l, "List") || CUR(P) != '[')
      return unsupported_at(P, start, "unsupported attribute value: annotate(...) of anything but List[int], "
                            "List[float] or List[str]");
    P->p++;
    span e = lex_ident(P);
    int force = span_is(e, "int") || span_is(e, "bool") ? LIST_INTS
                : span_is(e, "float")                    ? LIST_FLOATS
                : span_is(e, "str")                      ? LIST_STRS
                                                         : LIST_ANY;
    if (!force || CUR(P) != ']')
      return unsupported_at(P, start, "unsupported attribute value: annotate(...) of anything but List[int], "
                            "List[float] or List[str]");
    P->p++;
    if (expect(P, ',', "after the type in annotate(...)")) return -1;
    if (!accept(P, '['))
      return error_at(P, P->p, "expected '[' and a list in annotate(...), found %s", FOUND(P));
    if (parse_list_attr(P, gc, n, name, force, LIST_ANY)) return -1;
    return expect(P, ')', "to close annotate(...)");
  }
  if (c == '{') {
    const char *q = P->p + 1;
    while (q < P->end && !strchr("}:,\"\n", *q)) q++;
    if (q >= P->end || *q != '}' || q == P->p + 1) return parse_opaque(P, gc, n, name); /* a dict */
    P->p++;
    fbx_tensor_const tc = {0};
    return parse_scalar_tensor(P, n, name, &tc);
  }
  if (c == '<') {
    if (P->end - P->p >= 8 && !memcmp(P->p, "<Tensor>", 8)) {
      P->p += 8;
      /* The value is unknown; dtype and shape are what the output type says. */
      fbx_tensor_const tc = {FBX_DTYPE_UNDEFINED, 0, NULL, NULL, 1, NULL};
      const fbx_type *ot = n->noutputs >= 1 ? n->outputs[0]->type : NULL;
      if (ot && ot->kind == FBX_TYPE_TENSOR) {
        tc.dtype = ot->dtype;
        if (ot->rank > 0) {
          tc.rank = ot->rank;
          tc.sizes = ot->sizes;
        }
      }
      return fbx_node_set_t(n, name, &tc) ? oom(P) : 0;
    }
    if (P->end - P->p >= 7 && !memcmp(P->p, "<Graph>", 7)) {
      P->p += 7;
      fbx_graph *sub = fbx_graph_create();
      if (!sub) return oom(P);
      if (fbx_node_set_g(n, name, sub)) {
        fbx_graph_destroy(sub);
        return oom(P);
      }
      return 0;
    }
    return unsupported_at(P, P->p, "unsupported attribute value %s (expected <Tensor> or <Graph>)", FOUND(P));
  }
  if (is_digit(c) || c == '-' || c == '+' ||
      ((at_keyword(P, "inf") || at_keyword(P, "nan")))) {
    int is_float;
    int64_t iv = 0;
    double fv = 0;
    if (lex_number(P, &is_float, &iv, &fv)) return -1;
    /* A float constant that prints without a '.' (integral, 1e10 or more). */
    if (!is_float && out_t && out_t->kind == FBX_TYPE_FLOAT) {
      is_float = 1;
      fv = (double)iv;
    }
    return (is_float ? fbx_node_set_f(n, name, fv) : fbx_node_set_i(n, name, iv)) ? oom(P) : 0;
  }
  if (is_id0(c) || c == '(') {
    if ((c == '(' && literal_after(P, P->p)) || at_keyword(P, "True") || at_keyword(P, "False") ||
        at_keyword(P, "None"))
      return parse_opaque(P, gc, n, name);
    fbx_type *t;
    if (parse_type(P, gc, &t)) return -1;
    return fbx_node_set_ty(n, name, t) ? oom(P) : 0;
  }
  if (c == -1) return error_at(P, P->p, "unexpected end of input: expected a value for attribute '%.*s'", (int)aname.n, aname.s);
  return error_at(P, P->p, "bad attribute value for '%.*s': expected a number, string, list, tensor or type, found %s",
                  (int)aname.n, aname.s, FOUND(P));
}

static int parse_attrs(parser *P, gctx *gc, fbx_node *n, span kind) {
  FOUND_BUF;
  const char *open = P->p;
  P->p++;
  if (accept(P, ']')) return 0;
  for (;;) {
    ws(P);
    const char *apos = P->p;
    span an = lex_ident(P);
    if (!an.n) {
      if (AT_END(P))
        return error_at(P, open, "unexpected end of input in the attribute list of %.*s (missing ']')", (int)kind.n,
                        kind.s);
      return error_at(P, P->p, "expected an attribute name in the attribute list of %.*s, found %s", (int)kind.n,
                      kind.s, FOUND(P));
    }
    if (CUR(P) != '=') return error_at(P, P->p, "expected '=' after attribute name '%.*s', found %s", (int)an.n, an.s, FOUND(P));
    P->p++;
    fbx_sym sym;
    if (fbx_sym_intern(&sym, an.s, an.n)) return oom(P);
    if (sym == FBX_SYM_attr_Subgraph)
      return error_at(P, apos, "a Subgraph attribute cannot be written inline; name the node %.*s_N and give a "
                      "`with %.*s_N = graph(...)` section", (int)kind.n, kind.s, (int)kind.n, kind.s);
    if (fbx_node_attr(n, sym)) return error_at(P, apos, "duplicate attribute '%.*s'", (int)an.n, an.s);
    if (parse_attr_value(P, gc, n, sym, an)) return -1;
    if (accept(P, ',')) continue;
    if (accept(P, ']')) return 0;
    if (AT_END(P))
      return error_at(P, P->p, "unexpected end of input in the attribute list of %.*s (missing ']')", (int)kind.n,
                      kind.s);
    return error_at(P, P->p, "expected ',' or ']' in the attribute list of %.*s, found %s", (int)kind.n, kind.s,
                    FOUND(P));
  }
}

/* ---- nodes and blocks ------------------------------------------------------------------- */

static int parse_node(parser *P, gctx *gc, fbx_block *b);

/* Nodes up to `return (...)` (graph) or `-> (...)` (block). */
static int parse_body(parser *P, gctx *gc, fbx_block *b, int is_graph, const char *what, const char **term) {
  FOUND_BUF;
  for (;;) {
    int c = peek(P);
    if (c == -1) {
      if (is_graph) return error_at(P, P->p, "unexpected end of input: the graph has no 'return (...)'");
      return error_at(P, P->p, "unexpected end of input in %s (missing '-> (...)')", what);
    }
    if (is_graph && at_keyword(P, "return")) {
      P->p += 6;
      return parse_refs(P, gc, b->ret, "the graph's return list");
    }
    if (!is_graph && c == '-' && P->p + 1 < P->end && P->p[1] == '>') {
      *term = P->p;
      P->p += 2;
      char rl[96];
      snprintf(rl, sizeof rl, "the return list of %s", what);
      return parse_refs(P, gc, b->ret, rl);
    }
    if (c == '%' || c == '=' || (is_id0(c) && !at_keyword(P, "return") && !at_keyword(P, "with"))) {
      if (parse_node(P, gc, b)) return -1;
      continue;
    }
    if (is_graph)
      return error_at(P, P->p, "expected a node or 'return (...)', found %s", FOUND(P));
    return error_at(P, P->p, "expected a node or '-> (...)' in %s, found %s", what, FOUND(P));
  }
}

/* `blockN(%p : T, ...):` nodes `-> (...)`, cursor at "block". */
static int parse_block(parser *P, gctx *gc, fbx_node *n, span kind, int index, const char **arrow) {
  FOUND_BUF;
  const char *hdr = P->p;
  P->p += 5;
  int64_t bi;
  if (lex_int(P, &bi, "a block number")) return -1;
  if (bi != index) return error_at(P, hdr, "expected block%d of %.*s, found block%" PRId64, index, (int)kind.n, kind.s, bi);
  if (CUR(P) != '(') return error_at(P, P->p, "expected '(' after block%d, found %s", index, FOUND(P));
  P->p++;
  if (enter(P)) return -1;
  fbx_block *blk = fbx_node_add_block(n);
  if (!blk) return oom(P);
  size_t first = gc->nents;
  if (!accept(P, ')')) {
    for (;;) {
      span pname;
      fbx_type *t;
      ws(P);
      if (lex_value_name(P, &pname)) return -1;
      if (expect(P, ':', "and a type after a block parameter") || parse_type(P, gc, &t)) return -1;
      fbx_value *v = fbx_block_add_param(blk, t, NULL);
      if (!v) return oom(P);
      if (define(P, gc, pname, v, VISIBLE)) return -1;
      if (accept(P, ',')) continue;
      if (accept(P, ')')) break;
      if (AT_END(P)) return error_at(P, P->p, "unexpected end of input in the parameters of block%d (missing ')')", index);
      return error_at(P, P->p, "expected ',' or ')' in the parameters of block%d, found %s", index, FOUND(P));
    }
  }
  if (expect(P, ':', "after the block header")) return -1;
  char what[64];
  snprintf(what, sizeof what, "block%d of %.*s", index, (int)(kind.n > 40 ? 40 : kind.n), kind.s);
  ws(P);
  if (parse_body(P, gc, blk, 0, what, arrow)) return -1;
  for (size_t i = first; i < gc->nents; i++) gc->ents[i].state = HIDDEN;
  leave(P);
  return 0;
}

/* The line and column of pos, counting on from the last position asked
 * about (from the start when pos is before it). */
static void node_pos(parser *P, const char *pos, uint32_t *line, uint32_t *col) {
  if (!P->lpos || pos < P->lpos) P->lpos = P->lstart = P->src, P->lline = 1;
  for (const char *q = P->lpos; q < pos && q < P->end; q++)
    if (*q == '\n') P->lline++, P->lstart = q + 1;
  P->lpos = pos;
  *line = P->lline > UINT32_MAX ? UINT32_MAX : (uint32_t)P->lline;
  *col = pos - P->lstart + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(pos - P->lstart + 1);
}

static int parse_node(parser *P, gctx *gc, fbx_block *b) {
  FOUND_BUF;
  fbx_graph *g = gc->g;
  fbx_node *n = fbx_node_create(g, FBX_SYM_prim_Param, 0);
  if (!n) return oom(P);
  fbx_node_append(b, n);
  node_pos(P, P->p, &n->line, &n->col);
  size_t first_out = gc->nents;
  if (CUR(P) == '%') {
    for (;;) {
      span name;
      fbx_type *t;
      if (lex_value_name(P, &name)) return -1;
      ws(P);
      if (CUR(P) != ':') {
        if (CUR(P) == ',' || CUR(P) == '=')
          return error_at(P, P->p, "output %%%.*s has no type: every output needs ': type' (outputs and types "
                          "must match one to one)", (int)name.n, name.s);
        return error_at(P, P->p, "expected ':' and a type after output %%%.*s, found %s", (int)name.n, name.s,
                        FOUND(P));
      }
      P->p++;
      if (parse_type(P, gc, &t)) return -1;
      fbx_value *v = fbx_node_add_output(n, t);
      if (!v) return oom(P);
      if (define(P, gc, name, v, PENDING)) return -1;
      ws(P);
      if (CUR(P) == ',') {
        P->p++;
        ws(P);
        if (CUR(P) != '%')
          return error_at(P, P->p, "expected another output '%%name : type' after ',', found %s", FOUND(P));
        continue;
      }
      if (CUR(P) == '=') {
        P->p++;
        break;
      }
      if (AT_END(P)) return error_at(P, P->p, "unexpected end of input after the outputs of a node (missing '= kind(...)')");
      return error_at(P, P->p, "expected ',' or '=' after the type of output %%%.*s, found %s", (int)name.n, name.s,
                      FOUND(P));
    }
  } else if (CUR(P) == '=') {
    P->p++;
  }
  ws(P);
  const char *kpos = P->p;
  span ns = lex_ident(P);
  if (!ns.n) {
    if (AT_END(P)) return error_at(P, P->p, "unexpected end of input: expected an operator kind like 'aten::add'");
    return error_at(P, P->p, "expected an operator kind like 'aten::add', found %s", FOUND(P));
  }
  if (!(P->end - P->p >= 2 && P->p[0] == ':' && P->p[1] == ':'))
    return error_at(P, kpos, "expected an operator kind of the form 'namespace::name', found '%.*s'", (int)ns.n, ns.s);
  P->p += 2;
  const char *nm = P->p;
  while (P->p < P->end && is_id((unsigned char)*P->p)) P->p++;
  if (P->p == nm) return error_at(P, P->p, "expected an operator name after '%.*s::', found %s", (int)ns.n, ns.s, FOUND(P));
  span kind = {kpos, (size_t)(P->p - kpos)};
  /* prim::TensorExprGroup_0: a group if a `with` section names it. */
  const char *u = P->p;
  while (u > nm && is_digit((unsigned char)u[-1])) u--;
  int is_cand = u < P->p && u - 1 > nm && u[-1] == '_';
  if (is_cand) {
    uint32_t prev;
    if (gc->ncands >= UINT32_MAX - 1 || GROW(gc->cands, gc->capcands, gc->ncands + 1)) return oom(P);
    long dup = -1;
    if (sm_get(&gc->cmap, kind.s, kind.n, &prev)) {
      dup = (long)prev;
    } else if (sm_put(&gc->cmap, kind.s, kind.n, (uint32_t)gc->ncands)) {
      return oom(P);
    }
    if (dup >= 0) gc->cands[dup].dup = (long)gc->ncands;
    gc->cands[gc->ncands++] = (cand){n, kind, (size_t)(u - 1 - kpos), -1, 0};
  } else if (fbx_sym_intern(&n->kind, kind.s, kind.n)) {
    return oom(P);
  }
  ws(P);
  if (CUR(P) == '[' && parse_attrs(P, gc, n, kind)) return -1;
  ws(P);
  if (CUR(P) != '(') {
    if (AT_END(P)) return error_at(P, P->p, "unexpected end of input: expected '(' and the inputs of %.*s", (int)kind.n, kind.s);
    return error_at(P, P->p, "expected '(' to start the input list of %.*s, found %s", (int)kind.n, kind.s, FOUND(P));
  }
  char what[96];
  snprintf(what, sizeof what, "the input list of %.*s", (int)(kind.n > 60 ? 60 : kind.n), kind.s);
  if (parse_refs(P, gc, n, what)) return -1;
  /* Rest of the line: `, scope: ...` (dropped) and `# srcloc`. */
  const char *q = P->p;
  while (q < P->end && (*q == ' ' || *q == '\t')) q++;
  if (q + 7 < P->end && q[0] == ',' && !memcmp(q + 1, " scope:", 7)) {
    while (q < P->end && *q != '\n' && !(*q == ' ' && q + 1 < P->end && q[1] == '#')) q++;
    while (q < P->end && (*q == ' ' || *q == '\t')) q++;
  }
  if (q < P->end && *q == '#') {
    q++;
    if (q < P->end && *q == ' ') q++;
    const char *e = q;
    while (e < P->end && *e != '\n') e++;
    P->p = e;
    e = memchr(q, '\0', (size_t)(e - q)) ? memchr(q, '\0', (size_t)(e - q)) : e; /* it becomes a C string */
    while (e > q && e[-1] == '\r') e--;
    if (!(n->srcloc = fbx_arena_strndup(g->arena, q, (size_t)(e - q)))) return oom(P);
  }
  ws(P);
  for (int bi = 0; P->end - P->p > 5 && !memcmp(P->p, "block", 5) && is_digit((unsigned char)P->p[5]); bi++) {
    const char *hdr = P->p, *arrow;
    if (parse_block(P, gc, n, kind, bi, &arrow)) return -1;
    fbx_block *blk = n->blocks[bi];
    if (!arrow) arrow = hdr;
    if (n->kind == FBX_SYM_prim_If && !is_cand) {
      if (fbx_block_nreturns(blk) != n->noutputs)
        return error_at(P, arrow, "block%d of prim::If returns %d value%s but the node has %d output%s", bi,
                        fbx_block_nreturns(blk), fbx_block_nreturns(blk) == 1 ? "" : "s", n->noutputs,
                        n->noutputs == 1 ? "" : "s");
      if (fbx_block_nparams(blk))
        return error_at(P, hdr, "block%d of prim::If must have no parameters, found %d", bi, fbx_block_nparams(blk));
    } else if (n->kind == FBX_SYM_prim_Loop && !is_cand) {
      if (fbx_block_nreturns(blk) != n->noutputs + 1)
        return error_at(P, arrow, "block%d of prim::Loop returns %d value%s but needs %d (the loop condition and one "
                        "per output)", bi, fbx_block_nreturns(blk), fbx_block_nreturns(blk) == 1 ? "" : "s",
                        n->noutputs + 1);
      if (fbx_block_nparams(blk) != n->noutputs + 1)
        return error_at(P, hdr, "block%d of prim::Loop has %d parameter%s but needs %d (the iteration counter and "
                        "one per output)", bi, fbx_block_nparams(blk), fbx_block_nparams(blk) == 1 ? "" : "s",
                        n->noutputs + 1);
    }
    ws(P);
  }
  if (n->kind == FBX_SYM_prim_If && !is_cand) {
    if (n->nblocks != 2) return error_at(P, kpos, "prim::If must have exactly 2 blocks, found %d", n->nblocks);
    if (n->ninputs != 1) return error_at(P, kpos, "prim::If takes exactly 1 input (the condition), found %d", n->ninputs);
  } else if (n->kind == FBX_SYM_prim_Loop && !is_cand) {
    if (n->nblocks != 1) return error_at(P, kpos, "prim::Loop must have exactly 1 block, found %d", n->nblocks);
    if (n->ninputs != n->noutputs + 2)
      return error_at(P, kpos, "prim::Loop has %d inputs but needs %d (trip count, condition, and one per output)",
                      n->ninputs, n->noutputs + 2);
  }
  for (size_t i = first_out; i < first_out + (size_t)n->noutputs; i++) gc->ents[i].state = VISIBLE;
  return 0;
}

/* `graph(%x : T, ...):` nodes `return (...)`. */
static int parse_graph(parser *P, gctx *gc) {
  FOUND_BUF;
  ws(P);
  if (!at_keyword(P, "graph")) {
    if (AT_END(P)) return error_at(P, P->p, "empty input: expected 'graph(' to start a graph");
    return error_at(P, P->p, "expected 'graph(' to start a graph, found %s", FOUND(P));
  }
  P->p += 5;
  if (CUR(P) != '(') return error_at(P, P->p, "expected '(' after 'graph', found %s", FOUND(P));
  P->p++;
  if (!accept(P, ')')) {
    for (;;) {
      span pname;
      fbx_type *t;
      ws(P);
      if (AT_END(P)) return error_at(P, P->p, "unexpected end of input in the graph's input list (missing ')')");
      if (lex_value_name(P, &pname)) return -1;
      if (expect(P, ':', "and a type after a graph input") || parse_type(P, gc, &t)) return -1;
      fbx_value *v = fbx_graph_add_input(gc->g, t, NULL);
      if (!v) return oom(P);
      if (define(P, gc, pname, v, VISIBLE)) return -1;
      if (accept(P, ',')) continue;
      if (accept(P, ')')) break;
      if (AT_END(P)) return error_at(P, P->p, "unexpected end of input in the graph's input list (missing ')')");
      return error_at(P, P->p, "expected ',' or ')' in the graph's input list, found %s", FOUND(P));
    }
  }
  if (expect(P, ':', "after the graph's input list")) return -1;
  const char *term;
  return parse_body(P, gc, gc->g->block, 1, "graph", &term);
}

static void gctx_free(gctx *gc) {
  sm_free(&gc->names);
  sm_free(&gc->cmap);
  fbx_free(gc->ents);
  fbx_free(gc->cands);
}

static int cand_lookup(gctx *gc, span k, cand **out) {
  uint32_t idx;
  if (!sm_get(&gc->cmap, k.s, k.n, &idx)) return 0;
  *out = &gc->cands[idx];
  return 1;
}

static int parse_withs(parser *P, gctx *gc);

/* One `with KIND_N = graph(...)` section for candidate c; cursor after '='. */
static int parse_group_section(parser *P, gctx *gc, cand *c, const char *with_pos) {
  if (enter(P)) return -1;
  fbx_graph *sub = fbx_graph_create();
  if (!sub) return oom(P);
  if (fbx_node_set_g(c->node, FBX_SYM_attr_Subgraph, sub)) {
    fbx_graph_destroy(sub);
    return oom(P);
  }
  gctx child = {.g = sub, .parent = gc};
  int rc = parse_graph(P, &child);
  if (!rc) rc = parse_withs(P, &child);
  gctx_free(&child);
  if (rc) return -1;
  fbx_node *n = c->node;
  if (fbx_graph_ninputs(sub) != n->ninputs)
    return error_at(P, c->kind.s, "group %.*s has %d input%s but its subgraph (the `with` section on line %ld) takes %d",
                    (int)c->kind.n, c->kind.s, n->ninputs, n->ninputs == 1 ? "" : "s", line_of(P, with_pos),
                    fbx_graph_ninputs(sub));
  /* PyTorch's autodiff adds the values the backward needs to a
   * DifferentiableGraph's forward subgraph, not to the node. */
  int is_dg = c->base == strlen("prim::DifferentiableGraph") && !memcmp(c->kind.s, "prim::DifferentiableGraph", c->base);
  if (is_dg ? fbx_graph_noutputs(sub) < n->noutputs : fbx_graph_noutputs(sub) != n->noutputs)
    return error_at(P, c->kind.s, "group %.*s has %d output%s but its subgraph (the `with` section on line %ld) "
                    "returns %d", (int)c->kind.n, c->kind.s, n->noutputs, n->noutputs == 1 ? "" : "s",
                    line_of(P, with_pos), fbx_graph_noutputs(sub));
  if (fbx_sym_intern(&n->kind, c->kind.s, c->base)) return oom(P);
  uint32_t dummy;
  if (!sm_get(&P->group_bases, c->kind.s, c->base, &dummy) && sm_put(&P->group_bases, c->kind.s, c->base, 0))
    return oom(P);
  c->resolved = 1;
  leave(P);
  return 0;
}

/* The `with` sections that belong to gc's graph; then give unclaimed
 * candidates their whole spelling as kind. */
static int parse_withs(parser *P, gctx *gc) {
  FOUND_BUF;
  for (;;) {
    ws(P);
    if (!at_keyword(P, "with")) break;
    const char *with_pos = P->p;
    P->p += 4;
    ws(P);
    const char *kpos = P->p;
    span ns = lex_ident(P);
    if (!ns.n || !(P->end - P->p >= 2 && P->p[0] == ':' && P->p[1] == ':'))
      return error_at(P, kpos, "expected a group kind like 'prim::FusionGroup_0' after 'with', found %s",
                      found(P, kpos, fbuf_, sizeof fbuf_));
    P->p += 2;
    while (P->p < P->end && is_id((unsigned char)*P->p)) P->p++;
    span k = {kpos, (size_t)(P->p - kpos)};
    cand *c = NULL;
    if (!cand_lookup(gc, k, &c) || c->resolved) {
      /* Maybe it belongs to an enclosing graph (after this subgraph's own sections). */
      for (gctx *a = gc->parent; a; a = a->parent) {
        cand *ac;
        if (cand_lookup(a, k, &ac) && !ac->resolved) {
          P->p = with_pos;
          goto done;
        }
      }
      if (c) return error_at(P, kpos, "duplicate `with %.*s` section (that group already has one)", (int)k.n, k.s);
      return error_at(P, kpos, "`with %.*s` section does not match any group node (no node of kind %.*s in this graph)",
                      (int)k.n, k.s, (int)k.n, k.s);
    }
    if (c->dup >= 0)
      return error_at(P, gc->cands[c->dup].kind.s, "group %.*s is used by more than one node (first on line %ld)",
                      (int)k.n, k.s, line_of(P, c->kind.s));
    if (expect(P, '=', "after the group name in a `with` section")) return -1;
    if (parse_group_section(P, gc, c, with_pos)) return -1;
  }
done:
  for (size_t i = 0; i < gc->ncands; i++) {
    cand *c = &gc->cands[i];
    if (c->resolved) continue;
    if (fbx_sym_intern(&c->node->kind, c->kind.s, c->kind.n)) return oom(P);
    if (GROW(P->orphans, P->caporphans, P->norphans + 1)) return oom(P);
    P->orphans[P->norphans++] = *c;
  }
  return 0;
}

/* ---- entry points ------------------------------------------------------------------------- */

fbx_status *fbx_graph_parse(fbx_graph **out, const char *text, size_t len, const char *filename) {
  *out = NULL;
  if (!filename) filename = "<input>";
  if (!text && len) return fbx_status_new(FBX_ERR_INVALID_ARG, "fbx_graph_parse: text is NULL");
  if (!text) text = "";
  parser P = {.src = text, .end = text + (len > MAX_INPUT ? 4096 : len), .p = text, .file = filename};
  if (len > MAX_INPUT) {
    /* Only the first line is read, to show it in the message. */
    error_at(&P, text, "input is too large (%zu bytes; the limit is %zu bytes)", len, MAX_INPUT);
    return P.err;
  }
  fbx_graph *g = fbx_graph_create();
  if (!g) return fbx_status_nomem();
  if (!(g->source = fbx_arena_strdup(g->arena, filename))) {
    fbx_graph_destroy(g);
    return fbx_status_nomem();
  }
  gctx top = {.g = g};
  FOUND_BUF;
  if (!parse_graph(&P, &top) && !parse_withs(&P, &top)) {
    ws(&P);
    if (!AT_END(&P)) {
      if (at_keyword(&P, "with"))
        error_at(&P, P.p, "unexpected `with` section here");
      else
        error_at(&P, P.p, "unexpected %s after the end of the graph", found(&P, P.p, fbuf_, sizeof fbuf_));
    }
    for (size_t i = 0; i < P.norphans && !P.err; i++) {
      cand *c = &P.orphans[i];
      uint32_t dummy;
      if (sm_get(&P.group_bases, c->kind.s, c->base, &dummy))
        error_at(&P, c->kind.s, "group node %.*s has no `with %.*s = graph(...)` section", (int)c->kind.n, c->kind.s,
                 (int)c->kind.n, c->kind.s);
    }
  }
  sm_free(&P.group_bases);
  fbx_free(P.orphans);
  gctx_free(&top);
  fbx_free(P.sbuf);
  if (P.err) {
    fbx_graph_destroy(g);
    return P.err;
  }
  *out = g;
  return NULL;
}

fbx_status *fbx_graph_parse_file(fbx_graph **out, const char *path) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return fbx_status_new(FBX_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      if (cap > MAX_INPUT) break; /* too large: fbx_graph_parse says so */
      size_t ncap = cap ? cap * 2 : 65536;
      if (ncap > MAX_INPUT + 1) ncap = MAX_INPUT + 1;
      char *nb = fbx_realloc(buf, ncap);
      if (!nb) {
        fbx_free(buf);
        fclose(f);
        return fbx_status_nomem();
      }
      buf = nb;
      cap = ncap;
    }
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fbx_free(buf);
    return fbx_status_new(FBX_ERR_IO, "cannot read '%s'", path);
  }
  fbx_status *st = fbx_graph_parse(out, buf, len, path);
  fbx_free(buf);
  return st;
}
