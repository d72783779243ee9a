/* A finite-difference gradient checker for gradient formulas (autodiff/).
 *
 * A case is a small forward graph in TorchScript-IR text whose tensor inputs
 * are the graph's inputs and whose one interesting node (the last node that
 * is not a prim::Constant or prim::ListConstruct) is differentiated with
 * fbx_grad_build. The harness
 *   1. builds inputs from their specs (seeded uniform values),
 *   2. builds a backward graph: one input per gradient of the node's
 *      outputs, then the forward values the formula asked for (fwd_value
 *      adds a backward-graph input for graph inputs and the node's outputs,
 *      and copies constants and the nodes computing non-tensor arguments),
 *   3. runs forward and backward in the reference interpreter with a seeded
 *      random output gradient G (uniform in [-1, 1]),
 *   4. compares the gradient of every floating-point graph input with the
 *      central difference of sum(G * forward(x)) (eps per case; the
 *      forward runs in the inputs' own dtype), and checks the gradient's
 *      shape and dtype equal the input's. A formula returning no gradient
 *      for a floating input counts as zero.
 *
 *   static const gc_case c = {
 *     .graph = "graph(%x : Tensor, %y : Tensor):\n"
 *              "  %z : Tensor = aten::mul(%x, %y)\n"
 *              "  return (%z)\n",
 *     .inputs = {"3x1", "1x4:-2:2"},
 *   };
 *   char msg[2048];
 *   ck_assert_msg(gc_check(&c, msg, sizeof msg), "%s", msg);
 *
 * Input spec: SHAPE[:LO:HI][:DTYPE]. SHAPE is "3x1" ("-" for 0-d); values
 * uniform in [LO, HI] (default [-2, 2]); DTYPE f64 (default), f32, i64 or
 * bool (bool: random true/false; i64: integers in [LO, HI]). Only f64 and f32
 * inputs get gradients.
 *
 * On failure the message names the case, the op, the input, the worst
 * element (index, analytic, numeric) and the tolerance, then the backward
 * graph. */
#ifndef FBX_TESTS_GRADCHECK_H
#define FBX_TESTS_GRADCHECK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GC_MAX_INPUTS 8

typedef struct gc_case {
  const char *name;                    /* for messages; NULL: the op's name */
  const char *graph;                   /* forward graph text */
  const char *inputs[GC_MAX_INPUTS];   /* one spec per graph input */
  double eps;                          /* central-difference step; 0: 1e-6 */
  double rtol, atol;                   /* 0: 1e-5 and 1e-7 */
  uint64_t seed;                       /* 0: a fixed default */
} gc_case;

/* What a check saw, for tests that look further (optional). */
typedef struct gc_info {
  int nbackward_nodes;          /* nodes in the backward graph */
  int nsaved;                   /* forward values the formula asked for */
  char backward[8192];          /* the backward graph's text (truncated) */
} gc_info;

/* Run one case. True when every gradient matches; otherwise false with a
 * report in msg. info may be NULL. */
bool gc_check(const gc_case *c, char *msg, size_t msgn, gc_info *info);

#endif
