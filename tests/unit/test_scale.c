/* Nothing super-linear (issue #12, item 9): large generated graphs through
 * the passes, autodiff and the legacy fuser, checked by structure and by
 * work counters (core/base/workcount.h), never by time. Each bound here is
 * a small multiple of the graph's size; the quadratic algorithms these
 * replace counted n^2/2 (or never finished within the test's timeout). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "base/alloc.h"
#include "base/strbuf.h"
#include "base/workcount.h"
#include "exec/executor.h"
#include "host/host.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "ops/optable.h"
#include "passes/passes.h"
#include "testutil.h"

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "scale.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  return g;
}

/* A chain of n pointwise nodes over x: sigmoid, mul x, tanh, add x, ... */
static char *chain_ir(int n) {
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n  %%one : int = prim::Constant[value=1]()\n");
  const char *ops[4] = {"aten::sigmoid(%%v%d)", "aten::mul(%%v%d, %%x.1)", "aten::tanh(%%v%d)",
                        "aten::add(%%v%d, %%x.1, %%one)"};
  fbx_strbuf_printf(&b, "  %%v0 : Tensor = aten::sigmoid(%%x.1)\n");
  for (int i = 1; i < n; i++) {
    fbx_strbuf_printf(&b, "  %%v%d : Tensor = ", i);
    fbx_strbuf_printf(&b, ops[i % 4], i - 1);
    fbx_strbuf_printf(&b, "\n");
  }
  fbx_strbuf_printf(&b, "  return (%%v%d)\n", n - 1);
  return b.data;
}

static int count_kind(const fbx_block *b, fbx_sym kind) {
  int n = 0;
  for (fbx_node *x = fbx_block_first(b); x; x = x->next) n += x->kind == kind;
  return n;
}

/* ---- passes ------------------------------------------------------------------------ */

/* 20,000 distinct float constants, each also written a second time: the pool
 * keeps 20,000 and merges 20,000, probing O(1) pooled constants per constant
 * (a linear pool probed 2 * 10^8). */
START_TEST(constpool_is_linear_in_distinct_constants) {
  const int n = 20000;
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n  %%one : int = prim::Constant[value=1]()\n  %%s0 : Tensor = aten::mul(%%x.1, %%one)\n");
  for (int i = 0; i < n; i++) {
    fbx_strbuf_printf(&b, "  %%a%d : float = prim::Constant[value=%d.5]()\n", i, i);
    fbx_strbuf_printf(&b, "  %%b%d : float = prim::Constant[value=%d.5]()\n", i, i);
    fbx_strbuf_printf(&b, "  %%p%d : Tensor = aten::add(%%s%d, %%a%d, %%b%d)\n", i, i, i, i);
    fbx_strbuf_printf(&b, "  %%s%d : Tensor = aten::mul(%%p%d, %%one)\n", i + 1, i);
  }
  fbx_strbuf_printf(&b, "  return (%%s%d)\n", n);
  fbx_graph *g = parse(b.data);
  fbx_strbuf_free(&b);
  uint64_t before = fbx_work_count(FBX_WORK_CONSTPOOL_PROBE);
  bool changed = false;
  fbx_status *st = fbx_pass_constpool(g, &changed);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  uint64_t probes = fbx_work_count(FBX_WORK_CONSTPOOL_PROBE) - before;
  ck_assert(changed);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_Constant), n + 1);
  ck_assert_msg(probes <= (uint64_t)8 * n, "%llu probes for %d constants", (unsigned long long)probes, 2 * n + 1);
  ck_assert_ptr_null(fbx_graph_verify(g));
  fbx_graph_destroy(g);
}
END_TEST

/* Pooling moves 20,000 constants, interleaved with their users, one after
 * the other to the top: the positions given when an insertion finds no room
 * stay O(n) in all (renumbering the block every ~20 moves gave 20,000 / 20
 * times the block's size). */
START_TEST(pooling_many_constants_respaces_locally) {
  const int n = 20000;
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n  %%one : int = prim::Constant[value=1]()\n  %%s0 : Tensor = aten::mul(%%x.1, %%one)\n");
  for (int i = 0; i < n; i++) {
    fbx_strbuf_printf(&b, "  %%c%d : float = prim::Constant[value=%d.25]()\n", i, i);
    fbx_strbuf_printf(&b, "  %%s%d : Tensor = aten::mul(%%s%d, %%c%d)\n", i + 1, i, i);
  }
  fbx_strbuf_printf(&b, "  return (%%s%d)\n", n);
  fbx_graph *g = parse(b.data);
  fbx_strbuf_free(&b);
  uint64_t before = fbx_work_count(FBX_WORK_TOPO_RESPACE);
  bool changed = false;
  fbx_status *st = fbx_pass_constpool(g, &changed);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  uint64_t moved = fbx_work_count(FBX_WORK_TOPO_RESPACE) - before;
  ck_assert(changed);
  ck_assert_msg(moved <= (uint64_t)20 * n, "%llu nodes renumbered for %d nodes", (unsigned long long)moved, 2 * n);
  /* the constants lead, in order, and positions still follow the list */
  int k = 0;
  int64_t prev = -1;
  for (fbx_node *x = fbx_block_first(g->block); x; x = x->next, k++) {
    ck_assert_int_gt(x->topo, prev);
    prev = x->topo;
    ck_assert_int_eq(x->kind == FBX_SYM_prim_Constant, k <= n);
  }
  ck_assert_ptr_null(fbx_graph_verify(g));
  fbx_graph_destroy(g);
}
END_TEST

/* 20,000 copies of one node, each feeding a chain of adds: CSE keeps one and
 * drops 19,999 uses of %x.1, touching O(1) use-list entries per drop (a
 * drop from the front moved every later entry: 2 * 10^8 moves). */
START_TEST(cse_is_linear_in_identical_nodes) {
  const int n = 20000;
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n  %%one : int = prim::Constant[value=1]()\n  %%c : float = prim::Constant[value=2.5]()\n  %%s0 : Tensor = aten::mul(%%x.1, %%one)\n");
  for (int i = 0; i < n; i++) {
    fbx_strbuf_printf(&b, "  %%m%d : Tensor = aten::mul(%%x.1, %%c)\n", i);
    fbx_strbuf_printf(&b, "  %%s%d : Tensor = aten::add(%%s%d, %%m%d, %%one)\n", i + 1, i, i);
  }
  fbx_strbuf_printf(&b, "  return (%%s%d)\n", n);
  fbx_graph *g = parse(b.data);
  fbx_strbuf_free(&b);
  uint64_t before = fbx_work_count(FBX_WORK_USE_SCAN);
  bool changed = false;
  fbx_status *st = fbx_pass_cse(g, &changed);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  uint64_t scans = fbx_work_count(FBX_WORK_USE_SCAN) - before;
  ck_assert(changed);
  ck_assert_int_eq(fbx_graph_find_value(g, "x.1")->nuses, 2);
  ck_assert_msg(scans <= (uint64_t)16 * n, "%llu use-list steps for %d nodes", (unsigned long long)scans, 2 * n);
  ck_assert_ptr_null(fbx_graph_verify(g));
  fbx_graph_destroy(g);
}
END_TEST

/* A node reading 20 constants that 5,000 other nodes also read (a new
 * fusion group reading pooled constants, which the host then pulls into its
 * subgraph one by one): removing its inputs renumbers its later uses, each
 * found through its input slot in O(1), not by searching each constant's
 * use list from the front (20 * 20 / 2 * 5,000 = 10^6 entries). */
START_TEST(removing_inputs_is_linear_in_shared_uses) {
  const int k = 20, users = 5000;
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n");
  for (int c = 0; c < k; c++) fbx_strbuf_printf(&b, "  %%c%d : float = prim::Constant[value=%d.5]()\n", c, c);
  for (int i = 0; i < users; i++) fbx_strbuf_printf(&b, "  %%m%d : Tensor = aten::mul(%%x.1, %%c%d)\n", i, i % k);
  fbx_strbuf_printf(&b, "  %%t : float[] = prim::ListConstruct(");
  for (int c = 0; c < k; c++) fbx_strbuf_printf(&b, "%s%%c%d", c ? ", " : "", c);
  fbx_strbuf_printf(&b, ")\n  return (%%t, %%m0)\n");
  fbx_graph *g = parse(b.data);
  fbx_strbuf_free(&b);
  fbx_node *list = fbx_graph_find_value(g, "t")->node;
  ck_assert_int_eq(list->ninputs, k);
  uint64_t before = fbx_work_count(FBX_WORK_USE_SCAN);
  for (int c = 0; c < k; c++) fbx_node_remove_input(list, 0);
  uint64_t scans = fbx_work_count(FBX_WORK_USE_SCAN) - before;
  ck_assert_int_eq(list->ninputs, 0);
  ck_assert_int_eq(fbx_graph_find_value(g, "c0")->nuses, users / k);
  ck_assert_msg(scans <= (uint64_t)4 * k * k, "%llu use-list steps for %d inputs", (unsigned long long)scans, k);
  fbx_graph_destroy(g);
}
END_TEST

/* A chain of 20,000 muls that all read one constant, grouped 100 nodes at a
 * time from the front, as a fuser's partition does: each group's members are
 * destroyed and drop their uses of the constant, which sit before the uses of
 * every later node. Each drop touches O(1) use-list entries (searching the
 * list from the end and closing the gap moved past every later user: about
 * 20,000^2 = 4 * 10^8 entries). */
START_TEST(grouping_users_of_a_shared_constant_is_linear) {
  const int n = 20000, per = 100;
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n  %%c : float = prim::Constant[value=2.5]()\n");
  fbx_strbuf_printf(&b, "  %%v0 : Tensor = aten::mul(%%x.1, %%c)\n");
  for (int i = 1; i < n; i++) fbx_strbuf_printf(&b, "  %%v%d : Tensor = aten::mul(%%v%d, %%c)\n", i, i - 1);
  fbx_strbuf_printf(&b, "  return (%%v%d)\n", n - 1);
  fbx_graph *g = parse(b.data);
  fbx_strbuf_free(&b);
  fbx_value *c = fbx_graph_find_value(g, "c");
  ck_assert_int_eq(c->nuses, n);
  fbx_node **members = fbx_malloc(sizeof *members * (size_t)per);
  ck_assert_ptr_nonnull(members);
  uint64_t before = fbx_work_count(FBX_WORK_USE_SCAN);
  fbx_node *x = fbx_block_first(g->block)->next; /* the first mul, after the constant */
  for (int k = 0; k < n / per; k++) {
    for (int i = 0; i < per; i++, x = x->next) members[i] = x;
    fbx_node *grp = fbx_graph_create_group(g, FBX_SYM_fusebox_FusionGroup, members, per);
    ck_assert_ptr_nonnull(grp);
    x = grp->next;
  }
  uint64_t scans = fbx_work_count(FBX_WORK_USE_SCAN) - before;
  fbx_free(members);
  ck_assert_ptr_null(x);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_fusebox_FusionGroup), n / per);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_Constant), 1);
  int top = 0;
  for (fbx_node *m = fbx_block_first(g->block); m; m = m->next) top++;
  ck_assert_int_eq(top, 1 + n / per); /* the constant and the groups, nothing else */
  ck_assert_int_eq(c->nuses, n / per); /* one per group */
  for (int u = 0; u < c->nuses; u++) {
    ck_assert(c->uses[u].user->kind == FBX_SYM_fusebox_FusionGroup);
    ck_assert_int_eq(fbx_graph_count_nodes(fbx_node_subgraph(c->uses[u].user)), per);
  }
  ck_assert_msg(scans <= (uint64_t)8 * n, "%llu use-list steps for %d nodes", (unsigned long long)scans, n);
  ck_assert_ptr_null(fbx_graph_verify(g));
  fbx_graph_destroy(g);
}
END_TEST

/* The verifier on a 20,000-node chain whose input is used by 10,000 nodes:
 * it looks at each input slot and use-list entry O(1) times (searching the
 * input's use list from each user looked at 10,000^2 entries; 64k-node
 * backward graphs spent most of their time there). */
START_TEST(verify_is_linear_in_uses) {
  const int n = 20000;
  char *ir = chain_ir(n);
  fbx_graph *g = parse(ir);
  free(ir);
  ck_assert_int_ge(fbx_graph_find_value(g, "x.1")->nuses, n / 2);
  uint64_t before = fbx_work_count(FBX_WORK_VERIFY_USE);
  ck_assert_ptr_null(fbx_graph_verify(g));
  uint64_t looked = fbx_work_count(FBX_WORK_VERIFY_USE) - before;
  ck_assert_msg(looked <= (uint64_t)8 * n, "%llu use-list entries and slots looked at for %d nodes",
                (unsigned long long)looked, n);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- autodiff ------------------------------------------------------------------------ */

/* Differentiating a 4,000-node chain names B's inputs without scanning B
 * (the scan visited ~n^2 nodes); the names stay unique. */
START_TEST(differentiate_names_without_scanning) {
  ck_assert(!fbx_op_table_init());
  const int n = 4000;
  char *ir = chain_ir(n);
  fbx_graph *S = parse(ir);
  free(ir);
  bool rg[1] = {true};
  uint64_t before = fbx_work_count(FBX_WORK_FIND_VALUE);
  fbx_gradient *gr = NULL;
  fbx_status *st = fbx_autodiff_differentiate(&gr, S, rg, NULL);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  uint64_t visits = fbx_work_count(FBX_WORK_FIND_VALUE) - before;
  ck_assert_msg(visits <= (uint64_t)4 * n, "%llu nodes visited by name lookups for %d nodes",
                (unsigned long long)visits, n);
  ck_assert_int_gt(gr->nsaved, n / 4);
  ck_assert_ptr_null(fbx_graph_verify(gr->backward)); /* checks that names are unique */
  fbx_gradient_free(gr);
  fbx_graph_destroy(S);
}
END_TEST

/* The DifferentiableGraph pass on a 20,000-node chain (one group, grown one
 * node at a time) and on a 20,000-node tree of adds (groups joined pairwise):
 * its convexity checks look at O(n log n) nodes (checking each union from
 * its first member looked at n^2/2). */
static void diffgraph_case(const char *ir, int n, int want_groups) {
  ck_assert(!fbx_op_table_init());
  fbx_graph *g = parse(ir);
  bool rg[1] = {true};
  uint64_t before = fbx_work_count(FBX_WORK_DIFFGRAPH_VISIT);
  int created = 0;
  fbx_status *st = fbx_autodiff_create_subgraphs(g, rg, 1, &created);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  uint64_t visits = fbx_work_count(FBX_WORK_DIFFGRAPH_VISIT) - before;
  ck_assert_int_eq(created, want_groups);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_DifferentiableGraph), want_groups);
  ck_assert_msg(visits <= (uint64_t)40 * n, "%llu nodes visited for %d nodes", (unsigned long long)visits, n);
  ck_assert_ptr_null(fbx_graph_verify(g));
  fbx_graph_destroy(g);
}

START_TEST(diffgraph_chain_is_near_linear) {
  char *ir = chain_ir(20000);
  diffgraph_case(ir, 20000, 1);
  free(ir);
}
END_TEST

START_TEST(diffgraph_tree_is_near_linear) {
  const int m = 8192; /* leaves: x * c_i, summed pairwise */
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : Tensor):\n  %%one : int = prim::Constant[value=1]()\n");
  for (int i = 0; i < m; i++) {
    fbx_strbuf_printf(&b, "  %%c%d : float = prim::Constant[value=%d.5]()\n", i, i);
    fbx_strbuf_printf(&b, "  %%t0_%d : Tensor = aten::mul(%%x.1, %%c%d)\n", i, i);
  }
  int level = 0;
  for (int w = m; w > 1; w /= 2, level++)
    for (int i = 0; i < w / 2; i++)
      fbx_strbuf_printf(&b, "  %%t%d_%d : Tensor = aten::add(%%t%d_%d, %%t%d_%d, %%one)\n", level + 1, i, level,
                        2 * i, level, 2 * i + 1);
  fbx_strbuf_printf(&b, "  return (%%t%d_0)\n", level);
  diffgraph_case(b.data, 3 * m, 1);
  fbx_strbuf_free(&b);
}
END_TEST

/* ---- the executor's gradient mode -------------------------------------------------------- */

/* Forward + backward of a 4,000-node chain: the profiling run runs every
 * node on the eager tape. Nodes alike (same op, constants, dtypes and ranks)
 * share one eager unit, so the run differentiates the chain's few distinct
 * nodes, not 4,000 (a unit per node cost ~59 KB and two executors each: a
 * 64k-node chain needed 3.8 GB). Each run's gradient is checked against the
 * chain's derivative computed here in double precision. */
START_TEST(eager_tape_shares_units_of_alike_nodes) {
  ck_assert(!fbx_op_table_init());
  const int n = 4000, len = 6;
  char *ir = chain_ir(n);
  fbx_graph *g = parse(ir);
  free(ir);
  fbx_executor *ex = NULL;
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .profiling_runs = 1};
  fbx_status *st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  int64_t sizes[1] = {len};
  fbx_tensor *x = NULL;
  ck_assert(!fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 1, sizes));
  for (int64_t i = 0; i < len; i++) fbx_tensor_set_f64(x, i, -0.9 + 0.35 * (double)i);
  /* d(chain)/dx by forward-mode differentiation: (v, dv) along the chain */
  double want[6];
  for (int i = 0; i < len; i++) {
    double xv = fbx_tensor_get_f64(x, i), s = 1 / (1 + exp(-xv)), v = s, dv = s * (1 - s);
    for (int k = 1; k < n; k++) {
      switch (k % 4) {
      case 0: s = 1 / (1 + exp(-v)), dv *= s * (1 - s), v = s; break;
      case 1: dv = dv * xv + v, v *= xv; break;
      case 2: v = tanh(v), dv *= 1 - v * v; break;
      default: v += xv, dv += 1; break;
      }
    }
    want[i] = dv;
  }
  fbx_ivalue in[1] = {fbx_iv_tensor(x)};
  uint64_t before = fbx_work_count(FBX_WORK_EAGER_UNIT);
  for (int run = 0; run < 2; run++) { /* the eager tape (profiling), then the DifferentiableGraph */
    fbx_ivalue out = {0}, gin = {0};
    fbx_grad_handle *h = NULL;
    st = fbx_executor_forward_values(ex, in, 1, NULL, &out, 1, 0, &h);
    ck_assert_msg(!st, "forward: %s", st ? fbx_status_message(st) : "");
    fbx_tensor *ones = NULL;
    ck_assert(!fbx_tensor_empty(&ones, FBX_DTYPE_FLOAT32, 1, sizes));
    for (int64_t i = 0; i < len; i++) fbx_tensor_set_f64(ones, i, 1.0);
    fbx_ivalue gout = fbx_iv_tensor(ones);
    st = fbx_executor_backward_values(h, &gout, 1, &gin, 1);
    ck_assert_msg(!st, "backward: %s", st ? fbx_status_message(st) : "");
    ck_assert_int_eq(gin.kind, FBX_IV_TENSOR);
    for (int i = 0; i < len; i++) {
      double a = fbx_tensor_get_f64(gin.u.t, i);
      ck_assert_msg(fabs(a - want[i]) <= 1e-4 + 1e-3 * fabs(want[i]), "run %d, grad[%d]: %.9g, expected %.9g", run,
                    i, a, want[i]);
    }
    fbx_iv_release(&gout);
    fbx_iv_release(&gin);
    fbx_iv_release(&out);
    fbx_grad_free(h);
  }
  uint64_t units = fbx_work_count(FBX_WORK_EAGER_UNIT) - before;
  ck_assert_msg(units >= 1 && units <= 8, "%llu eager units built for a chain of 4 distinct ops (%d nodes)",
                (unsigned long long)units, n);
  fbx_iv_release(&in[0]);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

/* ---- the legacy fuser ---------------------------------------------------------------- */

static fbx_fuser *load_legacy(void) {
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, FBX_BINARY_DIR "/plugins/libfbx_legacy.so");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  return f;
}

/* A 20,000-node chain partitions (the cubic partition did not finish in an
 * hour) into groups that all pass the host's validation and each fit one
 * kernel (at most 512 values: a node is at least one value). */
START_TEST(legacy_partitions_a_20k_chain_into_kernel_sized_groups) {
  ck_assert(!fbx_op_table_init());
  const int n = 20000;
  char *ir = chain_ir(n);
  fbx_graph *g = parse(ir);
  free(ir);
  fbx_fuser *f = load_legacy();
  fbx_partition_report rep = {0};
  fbx_status *st = fbx_fuser_partition(f, g, &rep);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  ck_assert_int_eq(rep.rejected, 0);
  ck_assert_int_eq(rep.accepted, rep.proposed);
  ck_assert_int_ge(rep.proposed, n / 512);
  int groups = 0, fused = 0;
  for (fbx_node *x = fbx_block_first(g->block); x; x = x->next) {
    if (x->kind != FBX_SYM_fusebox_FusionGroup) continue;
    int inside = 0;
    for (fbx_node *y = fbx_block_first(fbx_node_subgraph(x)->block); y; y = y->next)
      inside += y->kind != FBX_SYM_prim_Constant;
    ck_assert_int_le(inside, 512);
    groups++;
    fused += inside;
  }
  ck_assert_int_eq(groups, rep.accepted);
  ck_assert_int_eq(fused, n); /* every node of the chain is in a group */
  ck_assert_ptr_null(fbx_graph_verify(g));
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* bench/scale_gen's wide graph: m products of x with distinct constants
 * (i + 0.5), summed by a balanced tree of adds (an odd one out moves up as
 * a mul by 1). */
static char *wide_ir(int m, const char *T) {
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "graph(%%x.1 : %s):\n  %%one : int = prim::Constant[value=1]()\n", T);
  for (int i = 0; i < m; i++) {
    fbx_strbuf_printf(&b, "  %%c%d : float = prim::Constant[value=%d.5]()\n", i, i);
    fbx_strbuf_printf(&b, "  %%s0_%d : %s = aten::mul(%%x.1, %%c%d)\n", i, T, i);
  }
  int width = m, level = 0;
  while (width > 1) {
    int next = 0;
    for (int i = 0; i + 1 < width; i += 2, next++)
      fbx_strbuf_printf(&b, "  %%s%d_%d : %s = aten::add(%%s%d_%d, %%s%d_%d, %%one)\n", level + 1, next, T, level,
                        i, level, i + 1);
    if (width % 2) fbx_strbuf_printf(&b, "  %%s%d_%d : %s = aten::mul(%%s%d_%d, %%one)\n", level + 1, next++, T, level, width - 1);
    width = next;
    level++;
  }
  fbx_strbuf_printf(&b, "  return (%%s%d_0)\n", level);
  return b.data;
}

/* Partitions g with f; *groups and *fused (pointwise nodes inside groups). */
static void legacy_partition_counts(fbx_fuser *f, fbx_graph *g, int *groups, int *fused) {
  fbx_partition_report rep = {0};
  fbx_status *st = fbx_fuser_partition(f, g, &rep);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  ck_assert_int_eq(rep.rejected, 0);
  ck_assert_int_eq(rep.accepted, rep.proposed);
  *groups = *fused = 0;
  for (fbx_node *x = fbx_block_first(g->block); x; x = x->next) {
    if (x->kind != FBX_SYM_fusebox_FusionGroup) continue;
    int inside = 0;
    for (fbx_node *y = fbx_block_first(fbx_node_subgraph(x)->block); y; y = y->next)
      inside += y->kind != FBX_SYM_prim_Constant;
    ck_assert_int_le(inside, 512);
    (*groups)++;
    *fused += inside;
  }
  ck_assert_ptr_null(fbx_graph_verify(g));
}

/* bench/scale_gen's wide graph (N/3 products, N/3 adds) differentiated, as
 * the executor fuses it under `explain --backward`: the forward graph F and
 * the backward graph B (grad times each constant, summed by the same tree)
 * each become groups that fill a good part of a kernel (at most about 146
 * of these ops: 512 values), at every size, and every op is fused. Without
 * packing, each group that reached the kernel's limits stranded the
 * producers it could not take as groups of a mul, a mul and an add, or as
 * single unfused muls: F at 1k was 47 groups (14 ops each), B at 4k 18
 * groups and 37 unfused muls, F at 16k 1,231 groups, over a thousand of
 * them three-node kernels, and the cost per node of `explain --backward`
 * grew with the tree. */
START_TEST(legacy_packs_a_wide_tree_into_few_groups) {
  ck_assert(!fbx_op_table_init());
  fbx_fuser *f = load_legacy();
  const int sizes[] = {333, 1333, 5333};
  for (int k = 0; k < 3; k++) {
    int m = sizes[k];
    char *ir = wide_ir(m, "Float(16, strides=[1], requires_grad=0, device=cpu)");
    fbx_graph *g = parse(ir);
    free(ir);
    bool rg[1] = {true};
    fbx_gradient *gr = NULL;
    fbx_status *st = fbx_autodiff_differentiate(&gr, g, rg, NULL);
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
    fbx_graph *parts[2] = {gr->forward, gr->backward};
    for (int p = 0; p < 2; p++) {
      int ops = 0;
      for (fbx_node *x = fbx_block_first(parts[p]->block); x; x = x->next)
        ops += x->kind != FBX_SYM_prim_Constant;
      int groups = 0, fused = 0;
      legacy_partition_counts(f, parts[p], &groups, &fused);
      printf("wide tree of %d products, %s: %d ops in %d groups, %d fused\n", m, p ? "backward" : "forward", ops,
             groups, fused);
      ck_assert_int_eq(fused, ops);
      ck_assert_msg(groups * 40 <= ops, "%d groups for %d ops", groups, ops);
    }
    fbx_gradient_free(gr);
    fbx_graph_destroy(g);
  }
  fbx_fuser_release(f);
}
END_TEST

/* A 1,200-node chain runs as several kernels that all compile (one group was
 * refused: "more than 512 values in one kernel") and agree with the
 * interpreter. */
START_TEST(legacy_long_chain_runs_as_several_kernels) {
  ck_assert(!fbx_op_table_init());
  char *ir = chain_ir(1200);
  fbx_graph *g = parse(ir);
  free(ir);
  fbx_executor *legacy = NULL, *ref = NULL;
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "legacy", .profiling_runs = 1};
  fbx_status *st = fbx_executor_create(&legacy, g, &o);
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  fbx_executor_opts r = {.struct_size = sizeof r, .fuser = "none"};
  ck_assert(!fbx_executor_create(&ref, g, &r));
  int64_t sizes[1] = {37};
  fbx_tensor *x = NULL;
  ck_assert(!fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 1, sizes));
  for (int64_t i = 0; i < x->numel; i++) fbx_tensor_set_f64(x, i, (double)(i - 18) / 19.0);
  fbx_ivalue in[1] = {fbx_iv_tensor(x)}, got = {0}, want = {0};
  for (int run = 0; run < 3; run++) {
    fbx_iv_release(&got);
    st = fbx_executor_run_values(legacy, in, 1, &got, 1, 0);
    ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  }
  ck_assert(!fbx_executor_run_values(ref, in, 1, &want, 1, 0));
  for (int64_t i = 0; i < want.u.t->numel; i++) {
    double a = fbx_tensor_get_f64(got.u.t, i), e = fbx_tensor_get_f64(want.u.t, i);
    ck_assert_msg(fabs(a - e) <= 1e-5 + 1e-4 * fabs(e), "[%lld]: %.9g vs %.9g", (long long)i, a, e);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(legacy, &s);
  ck_assert_int_ge(s.groups, 3);
  ck_assert_int_eq(s.fallbacks, 0);
  ck_assert_int_eq(s.fallbacks_compile, 0);
  ck_assert_int_ge(s.kernel_runs, 2 * s.groups);
  fbx_iv_release(&got);
  fbx_iv_release(&want);
  fbx_iv_release(&in[0]);
  fbx_executor_destroy(legacy);
  fbx_executor_destroy(ref);
  fbx_graph_destroy(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("scale");
  TCase *t = tcase_create("core");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, constpool_is_linear_in_distinct_constants);
  tcase_add_test(t, cse_is_linear_in_identical_nodes);
  tcase_add_test(t, pooling_many_constants_respaces_locally);
  tcase_add_test(t, verify_is_linear_in_uses);
  tcase_add_test(t, removing_inputs_is_linear_in_shared_uses);
  tcase_add_test(t, grouping_users_of_a_shared_constant_is_linear);
  tcase_add_test(t, differentiate_names_without_scanning);
  tcase_add_test(t, diffgraph_chain_is_near_linear);
  tcase_add_test(t, diffgraph_tree_is_near_linear);
  tcase_add_test(t, eager_tape_shares_units_of_alike_nodes);
  tcase_add_test(t, legacy_partitions_a_20k_chain_into_kernel_sized_groups);
  tcase_add_test(t, legacy_long_chain_runs_as_several_kernels);
  tcase_add_test(t, legacy_packs_a_wide_tree_into_few_groups);
  suite_add_tcase(s, t);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
