/* Partition and group validation: graphs parsed from IR text, partitioned
 * with the `good` and `bad_proposals` test plugins (exact counts, resulting
 * graph text, verifier, constants pulled into subgraphs, logged reasons),
 * and fbx_group_validate on each rule directly. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/fuser_abi.h>

#include "base/alloc.h"
#include "base/log.h"
#include "host/host.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "testutil.h"

#define ASSERT_HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected '%s' in:\n%s", (sub), (s))
#define ASSERT_LACKS(s, sub) ck_assert_msg(strstr((s), (sub)) == NULL, "unexpected '%s' in:\n%s", (sub), (s))

static const char *plug(const char *name) {
  static char buf[4][512];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 512, "%s/libfbxtest_%s.so", FBX_TEST_PLUGIN_DIR, name);
  return p;
}

static fbx_fuser *load(const char *name) {
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, plug(name));
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return f;
}

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return g;
}

static void verify(const fbx_graph *g) {
  fbx_status *st = fbx_graph_verify(g);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
}

static fbx_node *node_of(const fbx_graph *g, const char *value_name) {
  fbx_value *v = fbx_graph_find_value(g, value_name);
  ck_assert_msg(v != NULL, "no value %%%s", value_name);
  return v->node;
}

static int count_kind(const fbx_block *b, fbx_sym kind) {
  int n = 0;
  for (fbx_node *x = fbx_block_first(b); x; x = x->next) n += x->kind == kind;
  return n;
}

static fbx_node *nth_group(const fbx_graph *g, int k) {
  for (fbx_node *n = fbx_block_first(g->block); n; n = n->next)
    if (n->kind == FBX_SYM_fusebox_FusionGroup && k-- == 0) return n;
  return NULL;
}

/* Capture what fn writes to stderr (the fusion log). */
static char *capture_stderr(void (*fn)(void *), void *ctx) {
  char path[] = "/tmp/fbx_host_logXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  fn(ctx);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  char *text = tu_read_file(path, NULL);
  unlink(path);
  ck_assert_ptr_nonnull(text);
  return text;
}

/* ---- the good plugin -------------------------------------------------------------- */

static const char *GOOD_GRAPH =
    "graph(%x : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu),\n"
    "      %y : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu)):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %two : float = prim::Constant[value=2.]()\n"
    "  %a : Tensor = aten::mul(%x, %y)\n"
    "  %b : Tensor = aten::add(%a, %x, %one)\n"
    "  %c : Tensor = aten::relu(%b)\n"
    "  %d : Tensor = aten::mul(%c, %two)\n"
    "  %s : Tensor = aten::sigmoid(%d)\n"
    "  %e : Tensor = aten::neg(%s)\n"
    "  %f : Tensor = aten::add(%e, %c, %one)\n"
    "  return (%d, %f)\n";

START_TEST(good_fuses_maximal_chains) {
  fbx_fuser *f = load("good");
  fbx_graph *g = parse(GOOD_GRAPH);
  fbx_partition_report rep = {.proposed = -1, .accepted = -1, .rejected = -1};
  ck_assert_ptr_null(fbx_fuser_partition(f, g, &rep));
  ck_assert_int_eq(rep.proposed, 2);
  ck_assert_int_eq(rep.accepted, 2);
  ck_assert_int_eq(rep.rejected, 0);
  verify(g);
  char *text = fbx_graph_print(g);
  /* The top level: two groups around the sigmoid; the constants are gone. */
  ASSERT_HAS(text, " = fusebox::FusionGroup_0[fuser=\"good\"](%x, %y)\n");
  ASSERT_HAS(text, "%s : Tensor = aten::sigmoid(");
  ASSERT_HAS(text, " = fusebox::FusionGroup_1[fuser=\"good\"](%s, ");
  char *with = strstr(text, "with ");
  ck_assert_ptr_nonnull(with);
  *with = 0;
  ASSERT_LACKS(text, "prim::Constant");
  ASSERT_LACKS(text, "aten::mul");
  *with = 'w';
  fbx_free(text);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_Constant), 0);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_fusebox_FusionGroup), 2);

  /* Group 0: mul, add, relu, mul, with both constants inside, x and y in, c and d out. */
  fbx_node *g0 = nth_group(g, 0);
  ck_assert_int_eq(g0->ninputs, 2);
  ck_assert_int_eq(g0->noutputs, 2);
  fbx_graph *sub = fbx_node_subgraph(g0);
  ck_assert_ptr_nonnull(sub);
  verify(sub);
  ck_assert_int_eq(fbx_graph_ninputs(sub), 2);
  ck_assert_int_eq(count_kind(sub->block, FBX_SYM_prim_Constant), 2);
  char *st = fbx_graph_print(sub);
  ASSERT_HAS(st, "int = prim::Constant[value=1]()");
  ASSERT_HAS(st, "float = prim::Constant[value=2.]()");
  ASSERT_HAS(st, "= aten::mul(%0, %1)");
  ASSERT_HAS(st, "aten::add(");
  ASSERT_HAS(st, "aten::relu(");
  fbx_free(st);
  fbx_sym fuser_sym;
  ck_assert_int_eq(fbx_sym_intern(&fuser_sym, "fuser", 5), 0);
  fbx_attr *a = fbx_node_attr(g0, fuser_sym);
  ck_assert_ptr_nonnull(a);
  ck_assert_int_eq(a->kind, FBX_ATTR_STR);
  ck_assert_str_eq(a->u.s, "good");
  /* Group 1: neg, add (with its own copy of the constant 1). */
  fbx_node *g1 = nth_group(g, 1);
  ck_assert_int_eq(g1->ninputs, 2);
  ck_assert_int_eq(g1->noutputs, 1);
  ck_assert_int_eq(count_kind(fbx_node_subgraph(g1)->block, FBX_SYM_prim_Constant), 1);
  /* The graph outputs are the groups' outputs. */
  ck_assert_ptr_eq(fbx_graph_output(g, 0)->node, g0);
  ck_assert_ptr_eq(fbx_graph_output(g, 1)->node, g1);

  /* Partitioning again finds nothing new (groups are never re-fused). */
  ck_assert_ptr_null(fbx_fuser_partition(f, g, &rep));
  ck_assert_int_eq(rep.proposed, 0);
  verify(g);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(good_in_nested_blocks_and_shared_constants) {
  /* A chain inside an If branch; a constant also used outside stays. */
  const char *text =
      "graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu), %c : bool):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %y : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %a : Tensor = aten::neg(%x)\n"
      "      %b : Tensor = aten::add(%a, %x, %one)\n"
      "      -> (%b)\n"
      "    block1():\n"
      "      -> (%x)\n"
      "  %n : int = aten::add(%one, %one)\n"
      "  %z : Tensor = aten::mul(%y, %n)\n"
      "  return (%z)\n";
  fbx_fuser *f = load("good");
  fbx_graph *g = parse(text);
  fbx_partition_report rep = {0};
  ck_assert_ptr_null(fbx_fuser_partition(f, g, &rep));
  ck_assert_int_eq(rep.proposed, 1);
  ck_assert_int_eq(rep.accepted, 1);
  verify(g);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_Constant), 1); /* still used by the int add */
  fbx_node *iff = node_of(g, "y");
  ck_assert_int_eq(count_kind(iff->blocks[0], FBX_SYM_fusebox_FusionGroup), 1);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(nothing_to_fuse) {
  const char *text =
      "graph(%x : Tensor):\n"
      "  %a : Tensor = aten::sigmoid(%x)\n"
      "  %b : Tensor = aten::relu(%a)\n"
      "  return (%b)\n";
  fbx_fuser *f = load("good");
  fbx_graph *g = parse(text);
  fbx_partition_report rep = {0};
  ck_assert_ptr_null(fbx_fuser_partition(f, g, &rep));
  ck_assert_int_eq(rep.proposed + rep.accepted + rep.rejected, 0);
  ck_assert_ptr_null(fbx_fuser_partition(f, g, NULL));
  fbx_status *st = fbx_fuser_partition(NULL, g, &rep);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  fbx_status_free(st);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

/* ---- the bad_proposals plugin --------------------------------------------------------- */

static const char *BAD_GRAPH =
    "graph(%x : Float(4, strides=[1], requires_grad=0, device=cpu),\n"
    "      %cond : bool):\n"
    "  %msg : str = prim::Constant[value=\"boom\"]()\n"
    "  %a : Tensor = aten::relu(%x)\n"
    "  %b : Tensor = aten::neg(%a)\n"
    "  %d : Tensor = aten::sigmoid(%a)\n"
    "  %e : Tensor = aten::mul(%b, %d)\n"
    "  %f : Tensor = prim::If(%cond)\n"
    "    block0():\n"
    "      %g : Tensor = aten::relu(%e)\n"
    "      -> (%g)\n"
    "    block1():\n"
    "      %k : Tensor = aten::neg(%e)\n"
    "       = prim::RaiseException(%msg)\n"
    "      -> (%k)\n"
    "  %h : Tensor = aten::neg(%f)\n"
    "  return (%h)\n";

typedef struct part_ctx {
  fbx_fuser *f;
  fbx_graph *g;
  fbx_partition_report rep;
  fbx_status *st;
} part_ctx;

static void do_partition(void *vctx) {
  part_ctx *c = vctx;
  c->st = fbx_fuser_partition(c->f, c->g, &c->rep);
}

/* What the report's listener heard: how many nodes, and the first reason
 * given for the prim::If node. */
typedef struct reject_log {
  int calls;
  char if_reason[512];
} reject_log;

static void collect_reject(void *ctx, const fbx_node *node, const char *why) {
  reject_log *r = ctx;
  r->calls++;
  if (node->kind == FBX_SYM_prim_If && !r->if_reason[0]) snprintf(r->if_reason, sizeof r->if_reason, "%s", why);
}

START_TEST(bad_proposals_are_rejected_with_reasons) {
  setenv("FUSEBOX_LOG", "fusion", 1);
  fbx_log_reload();
  reject_log heard = {0};
  part_ctx c = {.f = load("bad_proposals"),
                .g = parse(BAD_GRAPH),
                .rep = {.on_reject = collect_reject, .on_reject_ctx = &heard}};
  char *log = capture_stderr(do_partition, &c);
  ck_assert_msg(!c.st, "%s", fbx_status_message(c.st));
  ck_assert_int_eq(c.rep.proposed, 11);
  ck_assert_int_eq(c.rep.accepted, 1);
  ck_assert_int_eq(c.rep.rejected, 10);
  verify(c.g);
  ASSERT_HAS(log, "rejected proposal 0 (2 nodes): group is not convex: a path leaves it at (%a : Tensor = aten::relu(%x)), "
                  "goes through (%b : Tensor = aten::neg(%a)) and comes back");
  ASSERT_HAS(log, "accepted proposal 1: 2 nodes");
  ASSERT_HAS(log, "rejected proposal 2 (2 nodes): node 0 is already in another accepted group");
  ASSERT_HAS(log, "rejected proposal 3 (2 nodes): node 1 (%h : Tensor = aten::neg(%f)) is in the top-level block, but "
                  "node 0 is in a block of prim::If %f: a group's nodes must share one block");
  ASSERT_HAS(log, "rejected proposal 4 (0 nodes): empty group");
  ASSERT_HAS(log, "rejected proposal 5 (2 nodes): node 1 ( = prim::RaiseException(%msg)) has side effects");
  ASSERT_HAS(log, "rejected proposal 6 (1 nodes): node 0 (%f : Tensor = prim::If(%cond)) is control flow");
  ASSERT_HAS(log, "rejected proposal 7 (2 nodes): node 1 (%d : Tensor = aten::sigmoid(");
  ASSERT_HAS(log, "appears twice in the group");
  ASSERT_HAS(log, "rejected proposal 8 (2 nodes): node 1 is NULL");
  ASSERT_HAS(log, "rejected proposal 9 (1073741824 nodes): more nodes than the graph has");
  ASSERT_HAS(log, "rejected proposal 10 (3 nodes): NULL node array");
  ASSERT_HAS(log, "partition: 11 proposed, 1 accepted, 10 rejected");
  free(log);
  /* The listener hears each real node of the rejected proposals (not the
   * NULL or made-up ones), with the same reasons as the log. */
  ck_assert_int_gt(heard.calls, 5);
  ASSERT_HAS(heard.if_reason, "is control flow");

  char *text = fbx_graph_print(c.g);
  ASSERT_HAS(text, "= fusebox::FusionGroup_0[fuser=\"bad_proposals\"](%x)\n");
  ASSERT_HAS(text, "%d : Tensor = aten::sigmoid(");
  ASSERT_HAS(text, "= prim::RaiseException(%msg)");
  ASSERT_HAS(text, "with fusebox::FusionGroup_0 = graph(%0 : Float(4, strides=[1], requires_grad=0, device=cpu)):\n"
                   "  %1 : Tensor = aten::relu(%0)\n"
                   "  %2 : Tensor = aten::neg(%1)\n"
                   "  return (%1, %2)");
  fbx_free(text);
  fbx_graph_destroy(c.g);
  fbx_fuser_release(c.f);
}
END_TEST

/* ---- fbx_group_validate, rule by rule ------------------------------------------------------ */

static void expect_invalid(const fbx_graph *g, fbx_node *const *nodes, int n, const char *sub) {
  fbx_status *st = fbx_group_validate(g, nodes, n);
  ck_assert_msg(st != NULL, "expected invalid: %s", sub);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  ASSERT_HAS(fbx_status_message(st), sub);
  fbx_status_free(st);
}

static void expect_valid(const fbx_graph *g, fbx_node *const *nodes, int n) {
  fbx_status *st = fbx_group_validate(g, nodes, n);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
}

START_TEST(validate_rules) {
  fbx_graph *g = parse(BAD_GRAPH), *other = parse(BAD_GRAPH);
  fbx_node *a = node_of(g, "a"), *b = node_of(g, "b"), *d = node_of(g, "d"), *e = node_of(g, "e"),
           *f = node_of(g, "f"), *gg = node_of(g, "g"), *h = node_of(g, "h"), *k = node_of(g, "k"),
           *msg = node_of(g, "msg");
  fbx_node *raise = k->next;
  ck_assert_int_eq(raise->kind, FBX_SYM_prim_RaiseException);

  expect_valid(g, (fbx_node *[]){a, b}, 2);
  expect_valid(g, (fbx_node *[]){b, a}, 2); /* any order */
  expect_valid(g, (fbx_node *[]){a, b, d, e}, 4);
  expect_valid(g, (fbx_node *[]){e}, 1);
  expect_valid(g, (fbx_node *[]){msg}, 1);
  expect_valid(g, (fbx_node *[]){gg}, 1);

  expect_invalid(g, NULL, 0, "empty group");
  expect_invalid(g, (fbx_node *[]){a}, 0, "empty group");
  expect_invalid(NULL, (fbx_node *[]){a}, 1, "no graph");
  expect_invalid(g, (fbx_node *[]){a, NULL}, 2, "node 1 is NULL");
  expect_invalid(g, (fbx_node *[]){a, node_of(other, "b")}, 2, "node 1 (%b : Tensor = aten::neg(%a)) belongs to another graph");
  expect_invalid(g, (fbx_node *[]){gg, h}, 2, "must share one block");
  expect_invalid(g, (fbx_node *[]){gg, k}, 2, "is in a block of prim::If %f, but node 0 is in a block of prim::If %f");
  expect_invalid(g, (fbx_node *[]){a, b, a}, 3, "node 2 (%a : Tensor = aten::relu(%x)) appears twice");
  expect_invalid(g, (fbx_node *[]){f}, 1, "is control flow and cannot be fused");
  expect_invalid(g, (fbx_node *[]){k, raise}, 2, "node 1 ( = prim::RaiseException(%msg)) has side effects");
  expect_invalid(g, (fbx_node *[]){g->block->param}, 1, "parameter/return node");
  expect_invalid(g, (fbx_node *[]){g->block->ret}, 1, "parameter/return node");
  /* a -> b -> e with b outside; also a -> d -> e */
  expect_invalid(g, (fbx_node *[]){a, e}, 2, "group is not convex");
  expect_invalid(g, (fbx_node *[]){a, b, e}, 3, "goes through (%d : Tensor = aten::sigmoid(%a))");
  /* e -> If -> h: the path runs through the If (a use inside its block counts) */
  expect_invalid(g, (fbx_node *[]){e, h}, 2, "goes through (%f : Tensor = prim::If(%cond))");
  fbx_graph_destroy(other);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(validate_nested_use_and_groups) {
  /* p's only path back to s runs through a use inside the If's block. */
  const char *text =
      "graph(%x : Tensor, %c : bool):\n"
      "  %p : Tensor = aten::relu(%x)\n"
      "  %q : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %r : Tensor = aten::neg(%p)\n"
      "      -> (%r)\n"
      "    block1():\n"
      "      -> (%x)\n"
      "  %s : Tensor = aten::mul(%x, %q)\n"
      "  %t : Tensor = aten::mul(%p, %x)\n"
      "  return (%s, %t)\n";
  fbx_graph *g = parse(text);
  fbx_node *p = node_of(g, "p"), *s = node_of(g, "s"), *t = node_of(g, "t");
  expect_invalid(g, (fbx_node *[]){p, s}, 2, "goes through (%q : Tensor = prim::If(%c))");
  expect_valid(g, (fbx_node *[]){p, t}, 2); /* the If moves after the group (see scheduling test) */
  expect_valid(g, (fbx_node *[]){s, t}, 2);
  /* a group node cannot join another group */
  fbx_node *grp = fbx_graph_create_group(g, FBX_SYM_fusebox_FusionGroup, (fbx_node *[]){s, t}, 2);
  ck_assert_ptr_nonnull(grp);
  verify(g);
  expect_invalid(g, (fbx_node *[]){grp}, 1, "is already a group");
  expect_invalid(g, (fbx_node *[]){grp, p}, 2, "is already a group");
  fbx_graph_destroy(g);
}
END_TEST

/* ---- an in-process plugin proposing groups by value name ------------------------------ */

static const fbxp_host_api *host;
static const char *const *want; /* NULL-separated groups, "" ends: {"p", "t", NULL, NULL} */

static const fbxp_node *by_name(const fbxp_block *b, const char *name) {
  for (const fbxp_node *n = host->block_first(b); n; n = host->node_next(n)) {
    if (host->node_num_outputs(n) && !strcmp(host->value_name(host->node_output(n, 0)), name)) return n;
    for (int i = 0; i < host->node_num_blocks(n); i++) {
      const fbxp_node *r = by_name(host->node_block(n, i), name);
      if (r) return r;
    }
  }
  return NULL;
}

static fbxp_status *names_partition(void *st, const fbxp_graph *g, fbxp_proposals *p) {
  (void)st;
  const fbxp_node *group[16];
  int n = 0;
  for (const char *const *w = want; *w || n; w++) {
    if (*w) {
      group[n++] = by_name(host->graph_block(g), *w);
    } else {
      host->propose(p, group, n);
      n = 0;
    }
  }
  return NULL;
}
static fbxp_status *no_compile(void *s, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t n,
                               fbxp_compile_result *r, fbxp_kernel **k) {
  (void)s, (void)g, (void)in, (void)n, (void)r, (void)k;
  return host->status_new(FBXP_ERR_UNSUPPORTED, "no");
}
static fbxp_status *no_run(void *s, fbxp_kernel *k, const fbxp_arg *in, int32_t n, DLTensor *const *o, int32_t no) {
  (void)s, (void)k, (void)in, (void)n, (void)o, (void)no;
  return NULL;
}
static void no_release(void *s, fbxp_kernel *k) { (void)s, (void)k; }
static const fbxp_plugin_api names_api = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0, .abi_major = FBXP_ABI_MAJOR, .abi_minor = FBXP_ABI_MINOR,
    .name = "names", .flags = FBXP_GUARDS_OUTSIDE, .partition = names_partition, .compile = no_compile,
    .run = no_run, .release = no_release,
};
static const fbxp_plugin_api *names_entry(const fbxp_host_api *h, uint32_t major, uint32_t minor, const char **why) {
  (void)major, (void)minor, (void)why;
  host = h;
  return &names_api;
}

static fbx_partition_report partition_names(fbx_graph *g, const char *const *groups) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_from_entry(&f, names_entry, "names"));
  want = groups;
  fbx_partition_report rep = {0};
  fbx_status *st = fbx_fuser_partition(f, g, &rep);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_fuser_release(f);
  return rep;
}

START_TEST(users_between_members_move_after_the_group) {
  const char *text =
      "graph(%x : Tensor, %c : bool):\n"
      "  %p : Tensor = aten::relu(%x)\n"
      "  %q : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %r : Tensor = aten::neg(%p)\n"
      "      -> (%r)\n"
      "    block1():\n"
      "      -> (%x)\n"
      "  %u : Tensor = aten::sigmoid(%q)\n"
      "  %t : Tensor = aten::mul(%p, %x)\n"
      "  %s : Tensor = aten::mul(%u, %t)\n"
      "  return (%s)\n";
  fbx_graph *g = parse(text);
  fbx_partition_report rep = partition_names(g, (const char *[]){"p", "t", NULL, NULL});
  ck_assert_int_eq(rep.accepted, 1);
  verify(g);
  char *out = fbx_graph_print(g);
  char *grp = strstr(out, "fusebox::FusionGroup_0"), *iff = strstr(out, "prim::If"), *u = strstr(out, "aten::sigmoid");
  ck_assert(grp && iff && u && grp < iff && iff < u);
  fbx_free(out);
  fbx_graph_destroy(g);

  /* An effect between the members that uses the group's result stays put. */
  const char *effect =
      "graph(%x : Tensor):\n"
      "  %p : Tensor = aten::relu(%x)\n"
      "   = prim::Print(%p)\n"
      "  %t : Tensor = aten::mul(%p, %x)\n"
      "  return (%t)\n";
  g = parse(effect);
  rep = partition_names(g, (const char *[]){"p", "t", NULL, NULL});
  ck_assert_int_eq(rep.rejected, 1);
  verify(g);
  fbx_node *pn = node_of(g, "p");
  expect_invalid(g, (fbx_node *[]){pn, node_of(g, "t")}, 2, "( = prim::Print(%p)) lies between the group's nodes");
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(partition_survives_allocation_failures) {
  fbx_fuser *f = load("good");
  for (long n = 0; n < 400; n++) {
    fbx_graph *g = parse(GOOD_GRAPH);
    fbx_partition_report rep = {0};
    fbx_alloc_fail_after(n);
    fbx_status *st = fbx_fuser_partition(f, g, &rep);
    long failures = fbx_alloc_failures();
    fbx_alloc_fail_after(-1);
    if (st) ck_assert_int_eq(fbx_status_code(st), FBX_ERR_NOMEM);
    fbx_status_free(st);
    verify(g); /* half-partitioned is fine; broken is not */
    fbx_graph_destroy(g);
    if (!failures) {
      ck_assert_ptr_null(st);
      ck_assert_int_eq(rep.accepted, 2);
      break;
    }
  }
  fbx_fuser_release(f);
}
END_TEST

/* Issue 17.4: a constant int[] shared (after CSE) by two means in two
 * groups is cloned into both, with its constants, whether a proposal names
 * the list or not; no group gets a list input or output. */
START_TEST(constant_lists_are_cloned_into_every_group) {
  const char *text =
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %d0 : int = prim::Constant[value=-1]()\n"
      "  %dims : int[] = prim::ListConstruct(%d0)\n"
      "  %keep : bool = prim::Constant[value=0]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %a : Tensor = aten::relu(%x)\n"
      "  %m1 : Tensor = aten::mean(%a, %dims, %keep, %none)\n"
      "  %b : Tensor = aten::neg(%y)\n"
      "  %m2 : Tensor = aten::mean(%b, %dims, %keep, %none)\n"
      "  return (%m1, %m2, %dims)\n";
  for (int named = 0; named < 2; named++) {
    fbx_graph *g = parse(text);
    fbx_partition_report rep = partition_names(
        g, named ? (const char *[]){"dims", "a", "m1", NULL, "b", "m2", "d0", NULL, NULL}
                 : (const char *[]){"a", "m1", NULL, "b", "m2", NULL, NULL});
    ck_assert_int_eq(rep.proposed, 2);
    ck_assert_int_eq(rep.accepted, 2);
    verify(g);
    int groups = 0;
    for (fbx_node *n = fbx_block_first(g->block); n; n = n->next) {
      if (n->kind != FBX_SYM_fusebox_FusionGroup) continue;
      groups++;
      ck_assert_int_eq(n->ninputs, 1); /* the tensor only */
      ck_assert_int_eq(n->noutputs, 1);
      ck_assert_int_eq(n->inputs[0]->type->kind, FBX_TYPE_TENSOR);
      const fbx_graph *sub = fbx_node_subgraph(n);
      ck_assert_int_eq(count_kind(sub->block, FBX_SYM_prim_ListConstruct), 1);
      char *st = fbx_graph_print(sub);
      ASSERT_HAS(st, "prim::Constant[value=-1]()");
      ASSERT_HAS(st, "aten::mean(");
      fbx_free(st);
    }
    ck_assert_int_eq(groups, 2);
    /* the graph still returns the list itself: one copy stays outside */
    ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_ListConstruct), 1);
    fbx_graph_destroy(g);
  }
  /* a list only the groups used is gone from the outer graph */
  const char *text2 =
      "graph(%x : Tensor):\n"
      "  %d0 : int = prim::Constant[value=1]()\n"
      "  %dims : int[] = prim::ListConstruct(%d0)\n"
      "  %keep : bool = prim::Constant[value=1]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %a : Tensor = aten::relu(%x)\n"
      "  %m1 : Tensor = aten::sum(%a, %dims, %keep, %none)\n"
      "  return (%m1)\n";
  fbx_graph *g = parse(text2);
  fbx_partition_report rep = partition_names(g, (const char *[]){"a", "m1", NULL, NULL});
  ck_assert_int_eq(rep.accepted, 1);
  verify(g);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_ListConstruct), 0);
  ck_assert_int_eq(count_kind(g->block, FBX_SYM_prim_Constant), 0);
  fbx_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("host_partition");
  TCase *tc = tcase_create("partition");
  tcase_add_test(tc, good_fuses_maximal_chains);
  tcase_add_test(tc, good_in_nested_blocks_and_shared_constants);
  tcase_add_test(tc, nothing_to_fuse);
  tcase_add_test(tc, bad_proposals_are_rejected_with_reasons);
  tcase_add_test(tc, validate_rules);
  tcase_add_test(tc, validate_nested_use_and_groups);
  tcase_add_test(tc, users_between_members_move_after_the_group);
  tcase_add_test(tc, constant_lists_are_cloned_into_every_group);
  tcase_add_test(tc, partition_survives_allocation_failures);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
