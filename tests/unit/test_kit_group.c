/* The kit's convex grouping (kit_group.h): which merges it keeps (convex,
 * one segment, within FBXK_GROUP_SPAN), the order it reports, and that its
 * cost stays linear in the block's size: it is run over parsed graphs
 * through the host's table, with node_num_inputs counted. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fuser_abi.h>
#include <fusebox/fusebox.h>
#include <fusebox/kit/kit_group.h>

#include "host/hostimpl.h"

static fbxp_host_api H;
static long input_visits;

static int32_t counting_num_inputs(const fbxp_node *n) {
  input_visits++;
  return fbx_host_api_table()->node_num_inputs(n);
}

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "group.ir");
  ck_assert_msg(!st, "%s", st ? fbx_status_message(st) : "");
  H = *fbx_host_api_table();
  H.node_num_inputs = counting_num_inputs;
  return g;
}

static fbxk_grouping *grouping(fbx_graph *g) {
  fbxk_grouping *gr = fbxk_grouping_new(&H, H.graph_block((const fbxp_graph *)g));
  ck_assert_ptr_nonnull(gr);
  return gr;
}

/* the index of the node defining %name */
static int node_of(const fbxk_grouping *gr, const char *name) {
  for (int i = 0; i < fbxk_grouping_size(gr); i++) {
    const fbxp_node *n = fbxk_grouping_node(gr, i);
    for (int o = 0; o < H.node_num_outputs(n); o++)
      if (!strcmp(H.value_name(H.node_output(n, o)), name)) return i;
  }
  ck_abort_msg("no node defines %%%s", name);
  return -1;
}

static const char *DIAMOND = "graph(%x : Tensor):\n"
                             "  %a : Tensor = aten::relu(%x)\n"
                             "  %b : Tensor = aten::neg(%a)\n"
                             "  %c : Tensor = aten::sigmoid(%x)\n"
                             "  %d : Tensor = aten::mul(%a, %b)\n"
                             "  return (%d, %c)\n";

START_TEST(path_through_a_non_member_refuses) {
  fbx_graph *g = parse(DIAMOND);
  fbxk_grouping *gr = grouping(g);
  int a = node_of(gr, "a"), b = node_of(gr, "b"), d = node_of(gr, "d");
  ck_assert_int_eq(fbxk_grouping_producer(gr, d, 0), a);
  ck_assert_int_eq(fbxk_grouping_producer(gr, d, 1), b);
  ck_assert_int_eq(fbxk_grouping_producer(gr, a, 0), -1); /* a graph input */
  fbxk_grouping_start(gr, a);
  fbxk_grouping_start(gr, d);
  /* a -> b -> d leaves {a, d} through b and comes back */
  ck_assert_int_eq(fbxk_grouping_merge(gr, d, a), 0);
  ck_assert_int_ne(fbxk_grouping_group(gr, a), fbxk_grouping_group(gr, d));
  ck_assert_int_eq(fbxk_grouping_merge(gr, d, b), 0); /* b is in no group */
  fbxk_grouping_start(gr, b);
  ck_assert_int_eq(fbxk_grouping_merge(gr, b, a), 1);
  ck_assert_int_eq(fbxk_grouping_merge(gr, d, b), 1);
  ck_assert_int_eq(fbxk_grouping_group(gr, a), fbxk_grouping_group(gr, d));
  ck_assert_int_eq(fbxk_grouping_merge(gr, d, a), 1); /* already one */
  /* c stays out; the order lists a, b, d */
  int out[8], starts[9];
  ck_assert_int_eq(fbxk_grouping_order(gr, out, starts), 1);
  ck_assert_int_eq(starts[0], 0);
  ck_assert_int_eq(starts[1], 3);
  ck_assert_int_eq(out[0], a);
  ck_assert_int_eq(out[1], b);
  ck_assert_int_eq(out[2], d);
  fbxk_grouping_free(gr);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(segments_and_merge_all) {
  fbx_graph *g = parse(DIAMOND);
  fbxk_grouping *gr = grouping(g);
  int a = node_of(gr, "a"), b = node_of(gr, "b"), c = node_of(gr, "c"), d = node_of(gr, "d");
  /* a barrier between b and c: b's segment differs from d's */
  fbxk_grouping_set_seg(gr, c, 1);
  fbxk_grouping_set_seg(gr, d, 2);
  for (int i = 0; i < fbxk_grouping_size(gr); i++) fbxk_grouping_start(gr, i);
  ck_assert_int_eq(fbxk_grouping_merge(gr, d, b), 0);
  ck_assert_int_eq(fbxk_grouping_merge(gr, b, a), 1);
  /* back to one segment: a, b and d merge all at once, or not at all */
  fbxk_grouping_set_seg(gr, c, 0);
  fbxk_grouping_set_seg(gr, d, 0);
  fbxk_grouping_reset(gr);
  ck_assert_int_eq(fbxk_grouping_group(gr, a), -1);
  fbxk_grouping_start(gr, a);
  fbxk_grouping_start(gr, d);
  int ad[2] = {a, d}, abd[3] = {a, b, d};
  ck_assert_int_eq(fbxk_grouping_merge_all(gr, ad, 2), 0);
  ck_assert_int_eq(fbxk_grouping_merge_all(gr, abd, 3), 0); /* b ungrouped */
  fbxk_grouping_start(gr, b);
  ck_assert_int_eq(fbxk_grouping_merge_all(gr, abd, 3), 1);
  ck_assert_int_eq(fbxk_grouping_group(gr, b), fbxk_grouping_group(gr, d));
  /* join: c into the group without tests */
  fbxk_grouping_join(gr, c, a);
  int out[8], starts[9];
  ck_assert_int_eq(fbxk_grouping_order(gr, out, starts), 1);
  ck_assert_int_eq(starts[1], 4);
  for (int i = 0; i < 4; i++) ck_assert_int_eq(out[i], i); /* block order */
  fbxk_grouping_free(gr);
  fbx_graph_destroy(g);
}
END_TEST

/* a chain of n unary ops on %x */
static char *chain(int n) {
  size_t cap = (size_t)n * 48 + 64;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "graph(%%x : Tensor):\n");
  for (int i = 0; i < n; i++)
    p += sprintf(p, "  %%v%d : Tensor = aten::%s(%s%d)\n", i, i % 2 ? "neg" : "relu", i ? "%v" : "%x", i ? i - 1 : 0);
  sprintf(p, "  return (%%v%d)\n", n - 1);
  /* the first node reads %x, not %v0: fix the "%x0" spelling */
  char *x0 = strstr(s, "(%x0)");
  memmove(x0 + 3, x0 + 4, strlen(x0 + 4) + 1);
  return s;
}

START_TEST(span_bounds_groups_and_cost) {
  const int n = 20000;
  char *text = chain(n);
  fbx_graph *g = parse(text);
  free(text);
  fbxk_grouping *gr = grouping(g);
  ck_assert_int_eq(fbxk_grouping_size(gr), n);
  input_visits = 0;
  for (int i = 0; i < n; i++) {
    fbxk_grouping_start(gr, i);
    if (i) ck_assert_int_eq(fbxk_grouping_producer(gr, i, 0), i - 1);
    fbxk_grouping_merge(gr, i, i - 1 >= 0 ? i - 1 : i);
  }
  int *out = malloc(sizeof(int) * (size_t)n), *starts = malloc(sizeof(int) * (size_t)(n + 1));
  int ng = fbxk_grouping_order(gr, out, starts);
  /* consecutive groups of FBXK_GROUP_SPAN nodes, the last one shorter */
  ck_assert_int_eq(ng, (n + FBXK_GROUP_SPAN - 1) / FBXK_GROUP_SPAN);
  for (int q = 0; q < ng; q++) {
    ck_assert_int_eq(starts[q], q * FBXK_GROUP_SPAN);
    ck_assert_int_le(starts[q + 1] - starts[q], FBXK_GROUP_SPAN);
  }
  /* the convexity walks: at most a span per merge (an unbounded walk over
   * the union would visit n^2 / 2 = 2e8 nodes' inputs) */
  ck_assert_msg(input_visits <= (long)n * (FBXK_GROUP_SPAN + 2), "%ld input visits for %d nodes", input_visits, n);
  free(out);
  free(starts);
  fbxk_grouping_free(gr);
  fbx_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kit_group");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, path_through_a_non_member_refuses);
  tcase_add_test(tc, segments_and_merge_all);
  tcase_add_test(tc, span_bounds_groups_and_cost);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
