/* Which nodes the legacy fuser takes at partition time. The op table, its
 * overload matching (host->node_schema), dtype rules and expression
 * templates are the kit's (<fusebox/kit/kit_ops.h>, one row per op in
 * kit_oplist.h): a node is fusable when it matches a row and, with its
 * profiled dtypes, the row has a template for the compute dtype. */
#include <string.h>

#include "lf.h"

/* ---- fusability at partition time ---------------------------------------------------------- */

/* The dtype a value had when profiled: -1 unknown (also a `Scalar`, which
 * fbxk_op_match accepted: int or float is known at compile), -2 not a
 * tensor/number. */
static int profiled(const fbxp_value *v, int *prio, int *cpu) {
  fbxp_type_kind k = lf_host->value_kind(v);
  *prio = FBXK_PRIO_SCALAR;
  if (k == FBXP_TYPE_FLOAT) return FBXK_F64;
  if (k == FBXP_TYPE_INT) return FBXK_I64;
  if (k == FBXP_TYPE_BOOL) return FBXK_BOOL;
  if (k == FBXP_TYPE_OTHER) return -1;
  if (k != FBXP_TYPE_TENSOR) return -2;
  fbxp_tensor_type t;
  memset(&t, 0, sizeof t);
  t.struct_size = FBXP_TENSOR_TYPE_SIZE_V1_0;
  if (lf_host->value_tensor_type(v, &t)) return -2;
  *prio = t.ndim == 0 ? FBXK_PRIO_ZERODIM : FBXK_PRIO_TENSOR;
  if (t.device_type != 0 && t.device_type != kDLCPU) *cpu = 0;
  return t.dtype;
}

int lf_node_fusable(const fbxp_node *n) {
  fbxk_match m;
  if (fbxk_op_match(lf_host, n, &m) < 0) return 0;
  fbxk_typed vals[FBXK_MAX_OP_ARGS];
  int cpu = 1, unknown = 0;
  memset(vals, 0, sizeof vals);
  for (int i = 0; i < m.noperands; i++) {
    int dt = profiled(lf_host->node_input(n, m.operand_input[i]), &vals[i].prio, &cpu);
    if (dt == -2) return 0;
    if (dt < 0) unknown = 1;
    vals[i].dtype = dt;
  }
  int prio;
  profiled(lf_host->node_output(n, 0), &prio, &cpu);
  if (!cpu) return 0;
  if (m.op == FBXK_OP_TO_DTYPE) {
    /* a conversion to the same dtype returns its input (an alias): fusing
     * it would turn the alias into a copy */
    int64_t dt = -1;
    lf_host->value_const_int(lf_host->node_input(n, 1), &dt);
    return !unknown && vals[0].dtype != dt;
  }
  if (unknown) return 1; /* compile decides once the dtypes are known */
  int cd, rd;
  if (fbxk_op_dtypes(m.op, vals, m.noperands, &cd, &rd)) return 0;
  return fbxk_op_template(m.op, cd) != NULL;
}
