/* The graph IR's mutation API and the verifier, built through the API alone. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/graph.h"
#include "ir/verify.h"

static fbx_sym sym(const char *s) {
  fbx_sym k;
  ck_assert_int_eq(fbx_sym_intern(&k, s, strlen(s)), 0);
  return k;
}

static fbx_node *add_node(fbx_graph *g, const char *kind, fbx_value *a, fbx_value *b) {
  fbx_node *n = fbx_node_create(g, sym(kind), 1);
  ck_assert_ptr_nonnull(n);
  if (a) ck_assert_int_eq(fbx_node_add_input(n, a), 0);
  if (b) ck_assert_int_eq(fbx_node_add_input(n, b), 0);
  fbx_node_append(g->block, n);
  return n;
}

static void assert_valid(const fbx_graph *g) {
  fbx_status *st = fbx_graph_verify(g);
  ck_assert_msg(st == NULL, "verify: %s", fbx_status_message(st));
}

static void assert_invalid(const fbx_graph *g, const char *needle) {
  fbx_status *st = fbx_graph_verify(g);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_VERIFY);
  ck_assert_msg(strstr(fbx_status_message(st), needle), "message '%s' lacks '%s'", fbx_status_message(st),
                needle);
  fbx_status_free(st);
}

START_TEST(symbols_intern) {
  ck_assert_str_eq(fbx_sym_str(FBX_SYM_prim_If), "prim::If");
  ck_assert_str_eq(fbx_sym_str(FBX_SYM_attr_value), "value");
  ck_assert_uint_eq(sym("prim::Loop"), FBX_SYM_prim_Loop);
  fbx_sym a = sym("aten::frobnicate"), b = sym("aten::frobnicate");
  ck_assert_uint_eq(a, b);
  ck_assert_str_eq(fbx_sym_str(a), "aten::frobnicate");
  ck_assert(fbx_sym_in_ns(a, "aten"));
  ck_assert(!fbx_sym_in_ns(a, "prim"));
  ck_assert_str_eq(fbx_sym_unqual(a), "frobnicate");
}
END_TEST

START_TEST(build_and_uses) {
  fbx_graph *g = fbx_graph_create();
  fbx_value *x = fbx_graph_add_input(g, fbx_type_tensor_any(), "x.1");
  fbx_value *y = fbx_graph_add_input(g, fbx_type_tensor_any(), "y");
  fbx_node *add = add_node(g, "aten::mul", x, y);
  fbx_node *neg = add_node(g, "aten::neg", add->outputs[0], NULL);
  ck_assert_int_eq(fbx_block_add_return(g->block, neg->outputs[0]), 0);
  assert_valid(g);
  ck_assert_int_eq(x->nuses, 1);
  ck_assert_ptr_eq(x->uses[0].user, add);
  ck_assert(fbx_node_is_before(add, neg));
  ck_assert(!fbx_node_is_before(neg, add));
  ck_assert_int_eq(fbx_graph_count_nodes(g), 2);
  /* Fresh names never collide with numeric names already in the graph. */
  ck_assert_int_eq(fbx_value_set_name(add->outputs[0], "41"), 0);
  fbx_node *other = add_node(g, "aten::relu", x, NULL);
  ck_assert_str_eq(other->outputs[0]->name, "42");
  fbx_node_destroy(other);
  /* replace all uses */
  fbx_value_replace_all_uses(add->outputs[0], y);
  ck_assert_int_eq(add->outputs[0]->nuses, 0);
  ck_assert_ptr_eq(neg->inputs[0], y);
  ck_assert_int_eq(y->nuses, 2);
  fbx_node_destroy(add);
  ck_assert_int_eq(x->nuses, 0);
  ck_assert_int_eq(y->nuses, 1);
  assert_valid(g);
  ck_assert_ptr_eq(fbx_graph_find_value(g, "y"), y);
  ck_assert_ptr_null(fbx_graph_find_value(g, "nope"));
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(input_insert_remove_keeps_uses) {
  fbx_graph *g = fbx_graph_create();
  fbx_value *a = fbx_graph_add_input(g, NULL, "a");
  fbx_value *b = fbx_graph_add_input(g, NULL, "b");
  fbx_node *n = add_node(g, "aten::cat3", a, b);
  ck_assert_int_eq(fbx_node_insert_input(n, 0, b), 0); /* (b, a, b) */
  ck_assert_ptr_eq(n->inputs[0], b);
  ck_assert_ptr_eq(n->inputs[1], a);
  ck_assert_ptr_eq(n->inputs[2], b);
  ck_assert_int_eq(b->nuses, 2);
  fbx_block_add_return(g->block, n->outputs[0]);
  assert_valid(g);
  fbx_node_remove_input(n, 1); /* (b, b) */
  ck_assert_int_eq(a->nuses, 0);
  ck_assert_int_eq(n->ninputs, 2);
  assert_valid(g);
  fbx_node_set_input(n, 0, a); /* (a, b) */
  ck_assert_int_eq(a->nuses, 1);
  ck_assert_int_eq(b->nuses, 1);
  assert_valid(g);
  fbx_graph_destroy(g);
}
END_TEST

/* Random rewiring of a few nodes reading three values, each several times:
 * after every step the inputs match a model kept here, every value's use
 * count is what the model counts, and the verifier (which checks each use
 * against its slot and each slot's position in its value's use list) passes. */
START_TEST(random_rewiring_keeps_uses_in_step) {
  enum { NV = 3, NN = 5, CAP = 12 };
  fbx_graph *g = fbx_graph_create();
  fbx_value *v[NV];
  for (int i = 0; i < NV; i++) v[i] = fbx_graph_add_input(g, NULL, NULL);
  fbx_node *n[NN];
  int model[NN][CAP], len[NN] = {0};
  for (int k = 0; k < NN; k++) {
    n[k] = add_node(g, "aten::cat3", NULL, NULL);
    ck_assert_int_eq(fbx_block_add_return(g->block, n[k]->outputs[0]), 0);
  }
  uint32_t seed = 12345;
  for (int step = 0; step < 4000; step++) {
    seed = seed * 1103515245u + 12345u;
    uint32_t r = seed >> 8;
    int k = (int)(r % NN), op = (int)(r / NN % 5), val = (int)(r / 25 % NV), pos = (int)(r / 75 % CAP);
    int *m = model[k];
    if (op <= 1 && len[k] < CAP) { /* insert (twice as likely, so lists grow) */
      pos %= len[k] + 1;
      ck_assert_int_eq(fbx_node_insert_input(n[k], pos, v[val]), 0);
      memmove(&m[pos + 1], &m[pos], sizeof *m * (size_t)(len[k] - pos));
      m[pos] = val;
      len[k]++;
    } else if (op == 2 && len[k]) {
      pos %= len[k];
      fbx_node_remove_input(n[k], pos);
      memmove(&m[pos], &m[pos + 1], sizeof *m * (size_t)(len[k] - pos - 1));
      len[k]--;
    } else if (op == 3 && len[k]) {
      pos %= len[k];
      ck_assert_int_eq(fbx_node_set_input(n[k], pos, v[val]), 0);
      m[pos] = val;
    } else if (op == 4 && len[k]) {
      unsigned char drop[CAP];
      int kept = 0;
      for (int j = 0; j < len[k]; j++) {
        drop[j] = (unsigned char)((r >> (j % 16)) & 1);
        if (!drop[j]) m[kept++] = m[j];
      }
      fbx_node_remove_inputs(n[k], drop);
      len[k] = kept;
    }
    int count[NV] = {0};
    for (int q = 0; q < NN; q++) {
      ck_assert_int_eq(n[q]->ninputs, len[q]);
      for (int j = 0; j < len[q]; j++) {
        ck_assert_ptr_eq(n[q]->inputs[j], v[model[q][j]]);
        count[model[q][j]]++;
      }
    }
    for (int i = 0; i < NV; i++) ck_assert_int_eq(v[i]->nuses, count[i]);
    assert_valid(g);
  }
  for (int k = 0; k < NN; k++) fbx_node_remove_all_inputs(n[k]);
  for (int i = 0; i < NV; i++) ck_assert_int_eq(v[i]->nuses, 0);
  assert_valid(g);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(checked_moves) {
  fbx_graph *g = fbx_graph_create();
  fbx_value *x = fbx_graph_add_input(g, NULL, "x");
  fbx_node *a = add_node(g, "aten::a", x, NULL);
  fbx_node *b = add_node(g, "aten::b", x, NULL);
  fbx_node *c = add_node(g, "aten::c", a->outputs[0], NULL);
  fbx_block_add_return(g->block, c->outputs[0]);
  fbx_block_add_return(g->block, b->outputs[0]);
  /* c uses a: c cannot go before a, a cannot go after c. */
  ck_assert(!fbx_node_move_before_checked(c, a));
  ck_assert(!fbx_node_move_after_checked(a, c));
  ck_assert_ptr_eq(a->next, b); /* unchanged */
  /* b is independent: it may move anywhere. */
  ck_assert(fbx_node_move_after_checked(b, c));
  ck_assert_ptr_eq(c->next, b);
  ck_assert(fbx_node_move_before_checked(b, a));
  ck_assert_ptr_eq(fbx_block_first(g->block), b);
  assert_valid(g);
  /* Many insertions at one spot force renumbering; order must stay valid. */
  for (int i = 0; i < 100; i++) {
    fbx_node *n = fbx_node_create(g, sym("aten::z"), 1);
    fbx_node_add_input(n, x);
    fbx_node_insert_after(n, b);
  }
  assert_valid(g);
  ck_assert(fbx_node_is_before(b, a));
  fbx_graph_destroy(g);
}
END_TEST

/* graph(%c : bool, %x):  %r = prim::If(%c) { block0: %n = neg(%x) -> (%n); block1: -> (%x) } */
static fbx_graph *if_graph(fbx_node **if_out, fbx_node **inner_out) {
  fbx_graph *g = fbx_graph_create();
  fbx_value *c = fbx_graph_add_input(g, fbx_type_simple(FBX_TYPE_BOOL), "c");
  fbx_value *x = fbx_graph_add_input(g, NULL, "x");
  fbx_node *n = fbx_node_create(g, FBX_SYM_prim_If, 1);
  fbx_node_add_input(n, c);
  fbx_node_append(g->block, n);
  fbx_block *b0 = fbx_node_add_block(n), *b1 = fbx_node_add_block(n);
  fbx_node *neg = fbx_node_create(g, sym("aten::neg"), 1);
  fbx_node_add_input(neg, x);
  fbx_node_append(b0, neg);
  fbx_block_add_return(b0, neg->outputs[0]);
  fbx_block_add_return(b1, x);
  fbx_block_add_return(g->block, n->outputs[0]);
  *if_out = n;
  *inner_out = neg;
  return g;
}

START_TEST(nested_order_and_scope) {
  fbx_node *n, *inner;
  fbx_graph *g = if_graph(&n, &inner);
  assert_valid(g);
  ck_assert(fbx_node_is_within(inner, n));
  ck_assert(fbx_node_is_before(inner, n)); /* contents run before the If's outputs exist */
  ck_assert(!fbx_node_is_before(n, inner));
  /* Using a value outside the block that defines it breaks dominance. */
  fbx_node *leak = add_node(g, "aten::relu", inner->outputs[0], NULL);
  assert_invalid(g, "not defined");
  fbx_node_destroy(leak);
  assert_valid(g);
  /* Wrong arity is caught. */
  fbx_block_add_return(n->blocks[1], fbx_graph_input(g, 1));
  assert_invalid(g, "prim::If block returns");
  fbx_block_erase_return(n->blocks[1], 1);
  assert_valid(g);
  /* A bad condition type is caught. */
  fbx_graph_input(g, 0)->type = fbx_type_simple(FBX_TYPE_INT);
  assert_invalid(g, "condition");
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(verifier_catches_loop_and_constant_errors) {
  fbx_graph *g = fbx_graph_create();
  fbx_value *n = fbx_graph_add_input(g, fbx_type_simple(FBX_TYPE_INT), "n");
  fbx_value *t = fbx_insert_const_bool(g->block, NULL, true);
  fbx_value *acc = fbx_insert_const_int(g->block, NULL, 0);
  fbx_node *loop = fbx_node_create(g, FBX_SYM_prim_Loop, 1);
  fbx_node_add_input(loop, n);
  fbx_node_add_input(loop, t);
  fbx_node_add_input(loop, acc);
  loop->outputs[0]->type = fbx_type_simple(FBX_TYPE_INT);
  fbx_node_append(g->block, loop);
  fbx_block *body = fbx_node_add_block(loop);
  fbx_value *i = fbx_block_add_param(body, fbx_type_simple(FBX_TYPE_INT), "i");
  fbx_block_add_param(body, fbx_type_simple(FBX_TYPE_INT), "acc.2");
  fbx_block_add_return(body, t);
  fbx_block_add_return(body, i);
  fbx_block_add_return(g->block, loop->outputs[0]);
  assert_valid(g);
  /* Returning the trip counter in the condition slot is a type error. */
  fbx_node_set_input(body->ret, 0, i);
  assert_invalid(g, "bool condition");
  fbx_node_set_input(body->ret, 0, t);
  /* A constant whose attribute does not fit its type. */
  acc->type = fbx_type_simple(FBX_TYPE_FLOAT);
  assert_invalid(g, "prim::Constant");
  acc->type = fbx_type_simple(FBX_TYPE_INT);
  assert_valid(g);
  int64_t v;
  ck_assert(fbx_value_const_int(acc, &v));
  ck_assert_int_eq(v, 0);
  /* Duplicate names are caught. */
  fbx_value_set_name(i, "n");
  assert_invalid(g, "defined twice");
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(attributes) {
  fbx_graph *g = fbx_graph_create();
  fbx_node *n = fbx_node_create(g, sym("aten::thing"), 1);
  fbx_node_append(g->block, n);
  fbx_sym k = sym("k");
  ck_assert_int_eq(fbx_node_set_i(n, k, 5), 0);
  ck_assert_int_eq(fbx_node_attr(n, k)->u.i, 5);
  int64_t is[3] = {1, 2, 3};
  ck_assert_int_eq(fbx_node_set_is(n, k, is, 3), 0); /* replaces */
  ck_assert_int_eq(n->nattrs, 1);
  ck_assert_int_eq(fbx_node_attr(n, k)->kind, FBX_ATTR_INTS);
  ck_assert_int_eq(fbx_node_attr(n, k)->u.is[2], 3);
  const char *ss[2] = {"a", "bc"};
  ck_assert_int_eq(fbx_node_set_ss(n, sym("s"), ss, 2), 0);
  ck_assert_str_eq(fbx_node_attr(n, sym("s"))->u.ss[1], "bc");
  fbx_graph *sub = fbx_graph_create();
  ck_assert_int_eq(fbx_node_set_g(n, FBX_SYM_attr_Subgraph, sub), 0);
  ck_assert_ptr_eq(fbx_node_subgraph(n), sub);
  fbx_node *m = fbx_node_create(g, sym("aten::thing"), 1);
  ck_assert_int_eq(fbx_node_copy_attrs(m, n), 0);
  ck_assert_ptr_nonnull(fbx_node_subgraph(m));
  ck_assert_ptr_ne(fbx_node_subgraph(m), sub); /* deep copy */
  fbx_node_remove_attr(n, k);
  ck_assert_ptr_null(fbx_node_attr(n, k));
  fbx_node_destroy(m); /* frees its subgraph copy */
  fbx_graph_destroy(g); /* frees sub */
}
END_TEST

START_TEST(group_and_inline) {
  /* x -> a=relu(x) -> b=neg(a) -> c=mul(b, a); return (c, a) */
  fbx_graph *g = fbx_graph_create();
  fbx_value *x = fbx_graph_add_input(g, NULL, "x");
  fbx_node *a = add_node(g, "aten::relu", x, NULL);
  fbx_node *b = add_node(g, "aten::neg", a->outputs[0], NULL);
  fbx_node *c = add_node(g, "aten::mul", b->outputs[0], a->outputs[0]);
  fbx_block_add_return(g->block, c->outputs[0]);
  fbx_block_add_return(g->block, a->outputs[0]);
  fbx_node *members[2] = {b, c};
  fbx_node *grp = fbx_graph_create_group(g, FBX_SYM_fusebox_FusionGroup, members, 2);
  ck_assert_ptr_nonnull(grp);
  assert_valid(g);
  ck_assert_int_eq(grp->ninputs, 1); /* a, used twice inside, is one input */
  ck_assert_ptr_eq(grp->inputs[0], a->outputs[0]);
  ck_assert_int_eq(grp->noutputs, 1); /* only c escapes */
  ck_assert_ptr_eq(fbx_graph_output(g, 0), grp->outputs[0]);
  ck_assert_ptr_eq(fbx_graph_output(g, 1), a->outputs[0]);
  fbx_graph *sub = fbx_node_subgraph(grp);
  ck_assert_int_eq(fbx_graph_count_nodes(sub), 2);
  ck_assert_int_eq(fbx_graph_count_nodes(g), 2);
  /* Inline it back: same structure as before. */
  ck_assert_int_eq(fbx_node_inline_group(grp), 0);
  assert_valid(g);
  ck_assert_int_eq(fbx_graph_count_nodes(g), 3);
  fbx_node *last = fbx_graph_output(g, 0)->node;
  ck_assert_str_eq(fbx_sym_str(last->kind), "aten::mul");
  ck_assert_str_eq(fbx_sym_str(last->inputs[0]->node->kind), "aten::neg");
  ck_assert_ptr_eq(last->inputs[1], a->outputs[0]);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(clone_graph_is_deep) {
  fbx_node *n, *inner;
  fbx_graph *g = if_graph(&n, &inner);
  fbx_graph *c = fbx_graph_clone(g);
  ck_assert_ptr_nonnull(c);
  assert_valid(c);
  ck_assert_int_eq(fbx_graph_count_nodes(c), fbx_graph_count_nodes(g));
  ck_assert_str_eq(fbx_graph_input(c, 1)->name, "x");
  fbx_graph_destroy(g);
  assert_valid(c); /* nothing shared */
  fbx_graph_destroy(c);
}
END_TEST

START_TEST(clone_survives_allocation_failures) {
  fbx_node *n, *inner;
  fbx_graph *g = if_graph(&n, &inner);
  int ok = 0;
  for (long k = 0; k < 500 && !ok; k++) {
    fbx_alloc_fail_after(k);
    fbx_graph *c = fbx_graph_clone(g);
    fbx_alloc_fail_after(-1);
    if (c) {
      assert_valid(c);
      fbx_graph_destroy(c);
      ok = 1;
    }
  }
  ck_assert(ok);
  fbx_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("graph");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, symbols_intern);
  tcase_add_test(tc, build_and_uses);
  tcase_add_test(tc, input_insert_remove_keeps_uses);
  tcase_add_test(tc, random_rewiring_keeps_uses_in_step);
  tcase_add_test(tc, checked_moves);
  tcase_add_test(tc, nested_order_and_scope);
  tcase_add_test(tc, verifier_catches_loop_and_constant_errors);
  tcase_add_test(tc, attributes);
  tcase_add_test(tc, group_and_inline);
  tcase_add_test(tc, clone_graph_is_deep);
  tcase_add_test(tc, clone_survives_allocation_failures);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
