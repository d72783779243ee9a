/* Gradient formulas as data: linalg ops. Format and rules: formula.c. */
#ifndef FBX_AUTODIFF_FORMULAS_LINALG_H
#define FBX_AUTODIFF_FORMULAS_LINALG_H

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_FORMULAS_LINALG(G)

#endif
