/* Proposes every kind of invalid group the host must reject, plus one valid
 * group. Written for the graph in tests/unit/test_host_partition.c
 * (BAD_GRAPH); nodes are found by the name of their first output:
 *
 *   0  {a, e}        not convex: a -> b -> e leaves and re-enters
 *   1  {a, b}        valid (the only one accepted)
 *   2  {b, d}        b is already in the accepted group
 *   3  {g, h}        g is inside the prim::If's block, h outside
 *   4  {}            empty
 *   5  {k, raise}    prim::RaiseException has side effects
 *   6  {f}           the prim::If itself (control flow)
 *   7  {d, d}        duplicate
 *   8  {d, NULL}     NULL node
 *   9  huge count    more nodes than the graph has (must not be read)
 *  10  NULL array
 *
 * Missing nodes (another graph) are proposed as NULL and rejected too.
 */
#include "pointwise.h"

static const fbxp_node *find(const fbxp_block *b, const char *name, const char *kind) {
  for (const fbxp_node *n = H->block_first(b); n; n = H->node_next(n)) {
    if (kind ? !strcmp(H->node_kind(n), kind)
             : H->node_num_outputs(n) > 0 && !strcmp(H->value_name(H->node_output(n, 0)), name))
      return n;
    for (int i = 0; i < H->node_num_blocks(n); i++) {
      const fbxp_node *r = find(H->node_block(n, i), name, kind);
      if (r) return r;
    }
  }
  return NULL;
}

static fbxp_status *partition(void *state, const fbxp_graph *g, fbxp_proposals *p) {
  (void)state;
  const fbxp_block *top = H->graph_block(g);
#define N(x) find(top, x, NULL)
  const fbxp_node *a = N("a"), *b = N("b"), *d = N("d"), *e = N("e"), *f = N("f"), *gg = N("g"), *h = N("h"),
                  *k = N("k"), *raise = find(top, NULL, "prim::RaiseException");
#undef N
  const fbxp_node *nonconvex[] = {a, e}, *valid[] = {a, b}, *overlap[] = {b, d}, *span[] = {gg, h},
                  *effect[] = {k, raise}, *ctrl[] = {f}, *dup[] = {d, d}, *withnull[] = {d, NULL};
  H->propose(p, nonconvex, 2);
  H->propose(p, valid, 2);
  H->propose(p, overlap, 2);
  H->propose(p, span, 2);
  H->propose(p, valid, 0);
  H->propose(p, effect, 2);
  H->propose(p, ctrl, 1);
  H->propose(p, dup, 2);
  H->propose(p, withnull, 2);
  H->propose(p, valid, 1 << 30);
  H->propose(p, NULL, 3);
  return NULL;
}

static fbxp_status *compile(void *state, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t nin,
                            fbxp_compile_result *res, fbxp_kernel **out) {
  (void)state, (void)g, (void)in, (void)nin, (void)res, (void)out;
  return H->status_new(FBXP_ERR_UNSUPPORTED, "bad_proposals only partitions");
}

static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0,
    .abi_major = FBXP_ABI_MAJOR,
    .abi_minor = FBXP_ABI_MINOR,
    .name = "bad_proposals",
    .version = "0.1",
    .vendor = "fusebox tests",
    .flags = FBXP_GUARDS_OUTSIDE,
    .devices = FBXP_DEVICE_CPU,
    .partition = partition,
    .compile = compile,
    .run = pw_run,
    .release = pw_release,
};

PW_ENTRY(API)
