/* The op table (kit_oplist.h) as code: rows, matching nodes, dtype rules,
 * printing templates. */
#include <string.h>

#include <fusebox/kit/kit_ops.h>

typedef struct opdef {
  const char *id, *name;
  const char *operands, *params;
  int rule;
  const char *tf, *ti, *tb;
} opdef;

static const opdef ops[FBXK_NOPS] = {
#define ROW(id, name, operands, params, rule, tf, ti, tb) {#id, name, operands, params, rule, tf, ti, tb},
    FBXK_OPS(ROW)
#undef ROW
};

static int valid(int op) { return op >= 0 && op < FBXK_NOPS; }

const char *fbxk_op_name(int op) { return valid(op) ? ops[op].name : "?"; }
const char *fbxk_op_id(int op) { return valid(op) ? ops[op].id : "?"; }
int fbxk_op_rule(int op) { return valid(op) ? ops[op].rule : -1; }
int fbxk_op_noperands(int op) { return valid(op) ? (int)strlen(ops[op].operands) : 0; }
int fbxk_op_nparams(int op) { return valid(op) ? (int)strlen(ops[op].params) : 0; }

/* ---- dtype rules ------------------------------------------------------------------- */

int fbxk_op_dtypes(int op, const fbxk_typed *a, int n, int *cd, int *rd) {
  *cd = *rd = -1;
  if (!valid(op) || n < 1) return -1;
  switch (ops[op].rule) {
    case FBXK_R_SAME: *cd = *rd = a[0].dtype; break;
    case FBXK_R_UFLOAT: *cd = *rd = fbxk_to_float(a[0].dtype); break;
    case FBXK_R_PROMOTE: *cd = *rd = fbxk_result_type(a, n); break;
    case FBXK_R_FLOAT: *cd = *rd = fbxk_to_float(fbxk_result_type(a, n)); break;
    case FBXK_R_BOOL: *cd = fbxk_result_type(a, n); *rd = FBXK_BOOL; break;
    case FBXK_R_BOOLSELF: *cd = a[0].dtype; *rd = FBXK_BOOL; break;
    case FBXK_R_SQUARE: *cd = *rd = a[0].dtype == FBXK_BOOL ? FBXK_I64 : a[0].dtype; break;
    case FBXK_R_WHERE: *cd = *rd = n > 1 ? fbxk_result_type(a + 1, n - 1) : -1; break;
    case FBXK_R_MASKED: *cd = *rd = a[0].dtype; break;
    default: return -1; /* FBXK_R_TO: the caller knows the dtype */
  }
  /* scalar-only results have no tensor to take the dtype from */
  return *cd < 0 || !fbxk_valid_dtype(*cd) ? -1 : 0;
}

int fbxk_op_is_bool_valued(int op) {
  return valid(op) && (ops[op].rule == FBXK_R_BOOL || ops[op].rule == FBXK_R_BOOLSELF);
}
int fbxk_op_selector(int op) {
  if (!valid(op)) return -1;
  return ops[op].rule == FBXK_R_WHERE ? 0 : ops[op].rule == FBXK_R_MASKED ? 1 : -1;
}

/* float16 templates where PyTorch's half kernel differs (FBXK_OPS_F16) */
static const char *const f16_template[FBXK_NOPS] = {
#define FBXK_F16_ROW_(id, t) [FBXK_OP_##id] = t,
    FBXK_OPS_F16(FBXK_F16_ROW_)
#undef FBXK_F16_ROW_
};

const char *fbxk_op_template(int op, int cd) {
  if (!valid(op)) return NULL;
  if (cd == FBXK_F16 && f16_template[op] && ops[op].tf) return f16_template[op];
  if (fbxk_is_float(cd)) return ops[op].tf;
  if (cd == FBXK_BOOL) return ops[op].tb;
  if (fbxk_is_int(cd)) return ops[op].ti;
  return NULL;
}

/* w > 1: OpenCL vector values of w lanes ($T the vector type, fbxk_v<w>...). */
static int op_print(fbxk_buf *b, int op, int cd, fbxk_dialect d, const char *const *args, int w, unsigned facts) {
  const char *t = fbxk_op_template(op, cd);
  if (!t) return -1;
  if (op == FBXK_OP_EXP && cd == FBXK_F32 && (facts & FBXK_FACT_NONPOS) && !strcmp(t, "$vexp$f($0)"))
    t = "$vexp$f_np($0)";
  int nargs = fbxk_op_noperands(op) + fbxk_op_nparams(op);
  int f64 = cd == FBXK_F64;
  for (const char *p = t; *p;) {
    const char *q = strchr(p, '$');
    if (!q || !q[1]) {
      fbxk_puts(b, p);
      break;
    }
    fbxk_putn(b, p, (size_t)(q - p));
    char c = q[1];
    p = q + 2;
    if (c == 'T') fbxk_puts(b, w > 1 ? fbxk_vector_type(cd, w) : fbxk_compute_type(cd, d));
    else if (c == 'f') fbxk_puts(b, f64 ? "" : "f");
    else if (c == 'v' && w > 1) fbxk_printf(b, "fbxk_v%d", w);
    else if (c == 'v') fbxk_puts(b, f64 ? "" : "fbxk_v");
    else if (c >= '0' && c <= '9' && c - '0' < nargs) fbxk_printf(b, "(%s)", args[c - '0'] ? args[c - '0'] : "?");
  }
  return 0;
}

int fbxk_op_print(fbxk_buf *b, int op, int cd, fbxk_dialect d, const char *const *args) {
  return op_print(b, op, cd, d, args, 1, 0);
}

/* Rows whose float template is arithmetic, comparisons feeding selects,
 * sqrt/fabs and (float32) the prelude's exp: OpenCL C applies each lane-wise
 * to vectors, a scalar operand widened, so a lane computes exactly what the
 * scalar template computes. */
int fbxk_op_vectorizable(int op, int cd) {
  static const int rows[] = {FBXK_OP_NEG,       FBXK_OP_ABS,         FBXK_OP_RECIPROCAL, FBXK_OP_SQRT,
                             FBXK_OP_RSQRT,     FBXK_OP_SQUARE,      FBXK_OP_EXP,        FBXK_OP_SIGMOID,
                             FBXK_OP_RELU,      FBXK_OP_SILU,        FBXK_OP_ADD_T,      FBXK_OP_ADD_S,
                             FBXK_OP_ADD_T_ALPHA, FBXK_OP_ADD_S_ALPHA, FBXK_OP_SUB_T,    FBXK_OP_SUB_S,
                             FBXK_OP_SUB_T_ALPHA, FBXK_OP_SUB_S_ALPHA, FBXK_OP_RSUB_T,   FBXK_OP_RSUB_S,
                             FBXK_OP_MUL_T,     FBXK_OP_MUL_S,       FBXK_OP_DIV_T,      FBXK_OP_DIV_TRUE,
                             FBXK_OP_POW_2,     FBXK_OP_POW_3,       FBXK_OP_POW_M1,     FBXK_OP_POW_M2,
                             FBXK_OP_POW_HALF,  FBXK_OP_POW_MHALF,   FBXK_OP_MAXIMUM,    FBXK_OP_MINIMUM};
  if (cd != FBXK_F32 && cd != FBXK_F64) return 0;
  int listed = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) listed |= rows[i] == op;
  const char *t = listed ? fbxk_op_template(op, cd) : NULL;
  if (!t || strstr(t, "pow")) return 0;
  /* the prelude has a vector form of exp only, and float64 uses libm's */
  for (const char *v = strstr(t, "$v"); v; v = strstr(v + 2, "$v"))
    if (cd == FBXK_F64 || strncmp(v, "$vexp$f(", 8)) return 0;
  return 1;
}

int fbxk_op_print_facts(fbxk_buf *b, int op, int cd, int w, fbxk_dialect d, const char *const *args, unsigned facts) {
  if (w > 1 && (d != FBXK_OPENCL || !fbxk_vector_type(cd, w) || !fbxk_op_vectorizable(op, cd))) return -1;
  return op_print(b, op, cd, d, args, w > 1 ? w : 1, facts);
}

int fbxk_op_print_vec(fbxk_buf *b, int op, int cd, int w, fbxk_dialect d, const char *const *args) {
  return w > 1 ? fbxk_op_print_facts(b, op, cd, w, d, args, 0) : -1;
}

/* ---- matching nodes -------------------------------------------------------------------- */

static int find(const char *qual, int from) {
  for (int i = from; i < FBXK_NOPS; i++)
    if (!strcmp(ops[i].name, qual)) return i;
  return -1;
}

static int is_const_num(const fbxp_host_api *host, const fbxp_value *v, double *out) {
  int64_t i;
  if (host->value_const_float(v, out)) return 1;
  if (host->value_const_int(v, &i)) {
    *out = (double)i;
    return 1;
  }
  return 0;
}

/* Is argument `idx` of the schema text "ns::name.overload(T a, U b, *, V c)
 * -> R" declared `Scalar`? (The IR passes keyword-only arguments
 * positionally, so the `*` marker is skipped.) */
static int schema_arg_is_scalar(const char *schema, int idx) {
  const char *p = strchr(schema, '(');
  if (!p) return 0;
  p++;
  for (int k = 0;;) {
    while (*p == ' ') p++;
    if (*p == ')' || !*p) return 0;
    if (*p == '*') {
      p++;
    } else if (k++ == idx) {
      return !strncmp(p, "Scalar", 6) && (p[6] == ' ' || p[6] == '?');
    }
    /* to the next top-level comma (defaults may hold lists and strings) */
    for (int depth = 0, quote = 0; *p; p++) {
      if (quote) quote = *p != '"';
      else if (*p == '"') quote = 1;
      else if (*p == '[' || *p == '(') depth++;
      else if ((*p == ']' || *p == ')') && depth) depth--;
      else if ((*p == ',' || *p == ')') && !depth) break;
    }
    if (*p != ',') return 0;
    p++;
  }
}

/* A scalar argument: a constant or a value of scalar type (a kernel input),
 * or a value typed `Scalar` where the overload takes a Scalar (a backward
 * graph's unchecked_cast of a saved number): the host passes it as an int
 * or a float at run time, and compile sees which. */
static int scalar_ok(const fbxp_host_api *host, const fbxp_value *v, const char *schema, int idx) {
  fbxp_type_kind k = host->value_kind(v);
  if (k == FBXP_TYPE_OTHER) return schema_arg_is_scalar(schema, idx);
  return k == FBXP_TYPE_INT || k == FBXP_TYPE_FLOAT || k == FBXP_TYPE_BOOL;
}

static void fill(fbxk_match *m, int op) {
  m->op = op;
  m->noperands = (int)strlen(ops[op].operands);
  for (int i = 0; i < m->noperands; i++) m->operand_input[i] = ops[op].operands[i] - '0';
  m->nparams = (int)strlen(ops[op].params);
  for (int i = 0; i < m->nparams; i++) m->param_input[i] = ops[op].params[i] - '0';
}

int fbxk_op_match(const fbxp_host_api *host, const fbxp_node *n, fbxk_match *m) {
  const char *schema = host->node_schema(n);
  if (!schema) return -1;
  char qual[96];
  size_t len = strcspn(schema, "(");
  if (len >= sizeof qual) return -1;
  memcpy(qual, schema, len);
  qual[len] = 0;
  int op = find(qual, 0);
  if (op < 0) return -1;
  int nin = host->node_num_inputs(n);
  double x;
  const char *s;
  /* variants picked by constant arguments */
  switch (op) {
    case FBXK_OP_GELU:
      if (nin > 1) {
        if (!host->value_const_str(host->node_input(n, 1), &s)) return -1;
        if (!strcmp(s, "tanh")) op = FBXK_OP_GELU_TANH;
        else if (strcmp(s, "none")) return -1;
      }
      break;
    case FBXK_OP_CLAMP: {
      int lo_none = nin < 2 || host->value_is_none(host->node_input(n, 1));
      int hi_none = nin < 3 || host->value_is_none(host->node_input(n, 2));
      if (lo_none && hi_none) return -1;
      op = lo_none ? FBXK_OP_CLAMP_HI : hi_none ? FBXK_OP_CLAMP_LO : FBXK_OP_CLAMP;
      break;
    }
    case FBXK_OP_CLAMP_T: {
      int lo_none = nin < 2 || host->value_is_none(host->node_input(n, 1));
      int hi_none = nin < 3 || host->value_is_none(host->node_input(n, 2));
      if (lo_none && hi_none) return -1;
      op = lo_none ? FBXK_OP_CLAMP_T_HI : hi_none ? FBXK_OP_CLAMP_T_LO : FBXK_OP_CLAMP_T;
      break;
    }
    case FBXK_OP_ADD_T: case FBXK_OP_ADD_S: case FBXK_OP_SUB_T: case FBXK_OP_SUB_S: case FBXK_OP_RSUB_T: case FBXK_OP_RSUB_S:
      if (nin < 3 || !is_const_num(host, host->node_input(n, 2), &x) || x != 1) {
        if (op == FBXK_OP_RSUB_T || op == FBXK_OP_RSUB_S) return -1;
        op = op == FBXK_OP_ADD_T ? FBXK_OP_ADD_T_ALPHA : op == FBXK_OP_ADD_S ? FBXK_OP_ADD_S_ALPHA
           : op == FBXK_OP_SUB_T ? FBXK_OP_SUB_T_ALPHA : FBXK_OP_SUB_S_ALPHA;
      }
      break;
    case FBXK_OP_DIV_TRUNC: case FBXK_OP_DIV_S_TRUNC: {
      int scal = op == FBXK_OP_DIV_S_TRUNC;
      const fbxp_value *mode = nin > 2 ? host->node_input(n, 2) : NULL;
      if (!mode || host->value_is_none(mode)) op = scal ? FBXK_OP_DIV_S_TRUE : FBXK_OP_DIV_TRUE;
      else if (!host->value_const_str(mode, &s)) return -1;
      else if (!strcmp(s, "floor")) op = scal ? FBXK_OP_DIV_S_FLOOR : FBXK_OP_DIV_FLOOR;
      else if (strcmp(s, "trunc")) return -1;
      break;
    }
    case FBXK_OP_POW_TS:
      if (nin > 1 && is_const_num(host, host->node_input(n, 1), &x)) {
        if (x == 2) op = FBXK_OP_POW_2;
        else if (x == 3) op = FBXK_OP_POW_3;
        else if (x == 0.5) op = FBXK_OP_POW_HALF;
        else if (x == -1) op = FBXK_OP_POW_M1;
        else if (x == -2) op = FBXK_OP_POW_M2;
        else if (x == -0.5) op = FBXK_OP_POW_MHALF;
      }
      break;
    case FBXK_OP_TO_DTYPE: {
      int64_t dt;
      if (nin < 2 || !host->value_const_int(host->node_input(n, 1), &dt) || !fbxk_valid_dtype((int)dt)) return -1;
      /* non_blocking/copy do not change the values; a memory format would */
      if (nin > 4 && !host->value_is_none(host->node_input(n, 4))) return -1;
      break;
    }
    default: break;
  }
  fill(m, op);
  /* every operand a tensor or a scalar; every parameter a scalar */
  for (int i = 0; i < m->noperands; i++) {
    if (m->operand_input[i] >= nin) return -1;
    const fbxp_value *v = host->node_input(n, m->operand_input[i]);
    if (host->value_kind(v) != FBXP_TYPE_TENSOR && !scalar_ok(host, v, schema, m->operand_input[i])) return -1;
  }
  for (int i = 0; i < m->nparams; i++) {
    if (m->param_input[i] >= nin || !scalar_ok(host, host->node_input(n, m->param_input[i]), schema, m->param_input[i]))
      return -1;
  }
  if (host->node_num_outputs(n) != 1 || host->value_kind(host->node_output(n, 0)) != FBXP_TYPE_TENSOR)
    return -1;
  return m->op;
}

