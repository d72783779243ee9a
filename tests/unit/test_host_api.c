/* The host table a plugin sees (fbxp_host_api): every graph accessor on a
 * parsed graph, constants, tensor types (honouring the caller's
 * struct_size), uses, schemas, NULL handles, statuses, memory and
 * parallel_for. An in-process plugin runs the checks inside partition,
 * where the handles are valid. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fuser_abi.h>

#include "host/host.h"
#include "base/parallel.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ir/text.h"

static const fbxp_host_api *H;
static void (*probe)(const fbxp_graph *g, fbxp_proposals *p);
static int probed;

static fbxp_status *t_partition(void *s, const fbxp_graph *g, fbxp_proposals *p) {
  (void)s;
  probe(g, p);
  probed++;
  return NULL;
}
static fbxp_status *t_compile(void *s, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t n,
                              fbxp_compile_result *r, fbxp_kernel **k) {
  (void)s, (void)g, (void)in, (void)n, (void)r, (void)k;
  fbx_svc_count_disk_hit(); /* what services_cc does when the disk cache answers */
  return H->status_new(FBXP_ERR_UNSUPPORTED, "no");
}
static fbxp_status *t_run(void *s, fbxp_kernel *k, const fbxp_arg *in, int32_t n, DLTensor *const *o, int32_t no) {
  (void)s, (void)k, (void)in, (void)n, (void)o, (void)no;
  return NULL;
}
static void t_release(void *s, fbxp_kernel *k) { (void)s, (void)k; }
static const fbxp_plugin_api API = {
    .struct_size = FBXP_PLUGIN_API_SIZE_V1_0, .abi_major = FBXP_ABI_MAJOR, .abi_minor = FBXP_ABI_MINOR,
    .name = "probe", .flags = FBXP_GUARDS_OUTSIDE, .partition = t_partition, .compile = t_compile,
    .run = t_run, .release = t_release,
};
static const fbxp_plugin_api *entry(const fbxp_host_api *h, uint32_t major, uint32_t minor, const char **why) {
  (void)major, (void)minor, (void)why;
  H = h;
  return &API;
}

/* Parse text and run `fn` inside a partition call. */
static fbx_partition_report run_probe(const char *text, void (*fn)(const fbxp_graph *, fbxp_proposals *)) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "probe.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_from_entry(&f, entry, "probe"));
  probe = fn;
  probed = 0;
  fbx_partition_report rep = {0};
  st = fbx_fuser_partition(f, g, &rep);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_int_eq(probed, 1);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
  return rep;
}

static const fbxp_node *find(const fbxp_block *b, const char *name) {
  for (const fbxp_node *n = H->block_first(b); n; n = H->node_next(n)) {
    for (int i = 0; i < H->node_num_outputs(n); i++)
      if (!strcmp(H->value_name(H->node_output(n, i)), name)) return n;
    for (int i = 0; i < H->node_num_blocks(n); i++) {
      const fbxp_node *r = find(H->node_block(n, i), name);
      if (r) return r;
    }
  }
  return NULL;
}
static const fbxp_value *val(const fbxp_graph *g, const char *name) {
  const fbxp_node *n = find(H->graph_block(g), name);
  ck_assert_msg(n != NULL, "no %s", name);
  return H->node_output(n, 0);
}

static const char *TEXT =
    "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
    "      %n : int,\n"
    "      %c : bool):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %half : float = prim::Constant[value=0.5]()\n"
    "  %s : str = prim::Constant[value=\"hi\"]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %l : int[] = prim::Constant[value=[2, 3]]()\n"
    "  %lc : int[] = prim::ListConstruct(%one, %one, %one)\n"
    "  %ln : int[] = prim::ListConstruct(%n, %one)\n"
    "  %y : Tensor = aten::add(%x.1, %x.1, %one) # model.py:3:8\n"
    "  %v : Tensor = aten::view(%y, %l)\n"
    "  %z : Tensor = prim::If(%c)\n"
    "    block0():\n"
    "      %w : Tensor = aten::neg(%v)\n"
    "      -> (%w)\n"
    "    block1():\n"
    "      -> (%y)\n"
    "  return (%z, %y)\n";

static void check_structure(const fbxp_graph *g, fbxp_proposals *p) {
  (void)p;
  ck_assert_int_eq(H->graph_num_inputs(g), 3);
  ck_assert_int_eq(H->graph_num_outputs(g), 2);
  const fbxp_value *x = H->graph_input(g, 0);
  ck_assert_str_eq(H->value_name(x), "x.1");
  ck_assert_ptr_null(H->graph_input(g, 3));
  ck_assert_ptr_null(H->graph_input(g, -1));
  ck_assert_ptr_null(H->graph_output(g, 2));
  ck_assert_ptr_null(H->value_producer(x));
  const fbxp_block *top = H->graph_block(g);
  ck_assert_ptr_null(H->block_owner(top));
  ck_assert_str_eq(H->node_kind(H->block_first(top)), "prim::Constant");

  const fbxp_node *add = find(top, "y");
  ck_assert_str_eq(H->node_kind(add), "aten::add");
  ck_assert_str_eq(H->node_srcloc(add), "model.py:3:8");
  ck_assert_ptr_null(H->node_srcloc(find(top, "v")));
  ck_assert_int_eq(H->node_num_inputs(add), 3);
  ck_assert_ptr_eq(H->node_input(add, 0), x);
  ck_assert_ptr_null(H->node_input(add, 3));
  ck_assert_int_eq(H->node_num_outputs(add), 1);
  ck_assert_ptr_null(H->node_output(add, 1));
  ck_assert_int_eq(H->node_num_blocks(add), 0);
  ck_assert_ptr_null(H->node_block(add, 0));
  const char *schema = H->node_schema(add);
  ck_assert_ptr_nonnull(schema);
  ck_assert_msg(!strncmp(schema, "aten::add.Tensor(", 17), "%s", schema);

  /* uses: %y feeds aten::view, the If's block1 return and the graph return */
  const fbxp_value *y = H->node_output(add, 0);
  ck_assert_ptr_eq(H->value_producer(y), add);
  ck_assert_int_eq(H->value_num_uses(y), 3);
  int returns = 0, views = 0;
  for (int i = 0; i < 3; i++) {
    int32_t idx = -5;
    const fbxp_node *u = H->value_use(y, i, &idx);
    if (!u) {
      returns++;
      ck_assert_int_ge(idx, 0);
    } else {
      ck_assert_str_eq(H->node_kind(u), "aten::view");
      ck_assert_int_eq(idx, 0);
      views++;
    }
  }
  ck_assert_int_eq(returns, 2);
  ck_assert_int_eq(views, 1);
  int32_t idx = 7;
  ck_assert_ptr_null(H->value_use(y, 3, &idx));
  ck_assert_int_eq(idx, -1);
  (void)H->value_use(y, 0, NULL); /* input_index is optional */

  /* blocks */
  const fbxp_node *iff = find(top, "z");
  ck_assert_int_eq(H->node_num_blocks(iff), 2);
  const fbxp_block *b0 = H->node_block(iff, 0);
  ck_assert_ptr_eq(H->block_owner(b0), iff);
  ck_assert_str_eq(H->node_kind(H->block_first(b0)), "aten::neg");
  ck_assert_ptr_null(H->node_next(H->block_first(b0)));
  ck_assert_ptr_null(H->block_first(H->node_block(iff, 1)));
}

static void check_values(const fbxp_graph *g, fbxp_proposals *p) {
  (void)p;
  const fbxp_value *x = H->graph_input(g, 0), *n = H->graph_input(g, 1), *c = H->graph_input(g, 2);
  ck_assert_int_eq(H->value_kind(x), FBXP_TYPE_TENSOR);
  ck_assert_int_eq(H->value_kind(n), FBXP_TYPE_INT);
  ck_assert_int_eq(H->value_kind(c), FBXP_TYPE_BOOL);
  ck_assert_int_eq(H->value_kind(val(g, "half")), FBXP_TYPE_FLOAT);
  ck_assert_int_eq(H->value_kind(val(g, "s")), FBXP_TYPE_STR);
  ck_assert_int_eq(H->value_kind(val(g, "none")), FBXP_TYPE_NONE);
  ck_assert_int_eq(H->value_kind(val(g, "l")), FBXP_TYPE_LIST);

  fbxp_tensor_type tt;
  memset(&tt, 0x5a, sizeof tt);
  tt.struct_size = sizeof tt;
  ck_assert_int_eq(H->value_tensor_type(x, &tt), 0);
  ck_assert_uint_eq(tt.struct_size, sizeof tt);
  ck_assert_int_eq(tt.dtype, 6);
  ck_assert_int_eq(tt.ndim, 2);
  ck_assert_int_eq(tt.sizes[0], 2);
  ck_assert_int_eq(tt.sizes[1], 3);
  ck_assert_int_eq(tt.strides[0], 3);
  ck_assert_int_eq(tt.strides[1], 1);
  ck_assert_int_eq(tt.sizes[2], FBXP_DIM_UNKNOWN);
  ck_assert_int_eq(tt.requires_grad, 0);
  ck_assert_int_eq(tt.device_type, kDLCPU);
  ck_assert_int_eq(tt.device_id, 0);
  /* an untyped Tensor */
  ck_assert_int_eq(H->value_tensor_type(val(g, "y"), &tt), 0);
  ck_assert_int_eq(tt.dtype, -1);
  ck_assert_int_eq(tt.ndim, -1);
  ck_assert_int_eq(tt.requires_grad, -1);
  ck_assert_int_eq(tt.device_type, 0);
  /* an older caller's smaller struct: nothing beyond its size is written */
  memset(&tt, 0x5a, sizeof tt);
  tt.struct_size = FBXP_SIZE_UPTO(fbxp_tensor_type, ndim);
  ck_assert_int_eq(H->value_tensor_type(x, &tt), 0);
  ck_assert_int_eq(tt.ndim, 2);
  ck_assert_int_eq(tt.sizes[0], 0x5a5a5a5a5a5a5a5aLL);
  ck_assert_int_eq(H->value_tensor_type(n, &tt), -1);
  ck_assert_int_eq(H->value_tensor_type(x, NULL), -1);

  int64_t i = 0;
  double d = 0;
  const char *s = NULL;
  ck_assert_int_eq(H->value_const_int(val(g, "one"), &i), 1);
  ck_assert_int_eq(i, 1);
  ck_assert_int_eq(H->value_const_int(val(g, "t"), &i), 1); /* bools read as ints */
  ck_assert_int_eq(H->value_const_int(val(g, "half"), &i), 0);
  ck_assert_int_eq(H->value_const_int(n, &i), 0);
  ck_assert_int_eq(H->value_const_float(val(g, "half"), &d), 1);
  ck_assert(d == 0.5);
  ck_assert_int_eq(H->value_const_float(val(g, "one"), &d), 0);
  ck_assert_int_eq(H->value_const_str(val(g, "s"), &s), 1);
  ck_assert_str_eq(s, "hi");
  ck_assert_int_eq(H->value_const_str(val(g, "one"), &s), 0);
  ck_assert_int_eq(H->value_is_none(val(g, "none")), 1);
  ck_assert_int_eq(H->value_is_none(val(g, "one")), 0);
  int64_t list[4] = {0, 0, 0, 0};
  ck_assert_int_eq(H->value_const_int_list(val(g, "l"), list, 4), 2);
  ck_assert_int_eq(list[0], 2);
  ck_assert_int_eq(list[1], 3);
  ck_assert_int_eq(H->value_const_int_list(val(g, "lc"), list, 2), 3); /* length, at most cap filled */
  ck_assert_int_eq(list[0], 1);
  ck_assert_int_eq(list[1], 1);
  ck_assert_int_eq(list[2], 0);
  ck_assert_int_eq(H->value_const_int_list(val(g, "ln"), list, 4), -1);
  ck_assert_int_eq(H->value_const_int_list(val(g, "one"), list, 4), -1);
  ck_assert_int_eq(H->value_const_int_list(val(g, "l"), NULL, 0), 2);
}

static void check_null_handles(const fbxp_graph *g, fbxp_proposals *p) {
  (void)g;
  ck_assert_ptr_null(H->graph_block(NULL));
  ck_assert_int_eq(H->graph_num_inputs(NULL), 0);
  ck_assert_ptr_null(H->graph_input(NULL, 0));
  ck_assert_int_eq(H->graph_num_outputs(NULL), 0);
  ck_assert_ptr_null(H->graph_output(NULL, 0));
  ck_assert_ptr_null(H->block_first(NULL));
  ck_assert_ptr_null(H->node_next(NULL));
  ck_assert_ptr_null(H->block_owner(NULL));
  ck_assert_str_eq(H->node_kind(NULL), "");
  ck_assert_ptr_null(H->node_srcloc(NULL));
  ck_assert_int_eq(H->node_num_inputs(NULL), 0);
  ck_assert_ptr_null(H->node_input(NULL, 0));
  ck_assert_int_eq(H->node_num_outputs(NULL), 0);
  ck_assert_ptr_null(H->node_output(NULL, 0));
  ck_assert_int_eq(H->node_num_blocks(NULL), 0);
  ck_assert_ptr_null(H->node_block(NULL, 0));
  ck_assert_ptr_null(H->node_schema(NULL));
  ck_assert_int_eq(H->value_kind(NULL), FBXP_TYPE_OTHER);
  ck_assert_str_eq(H->value_name(NULL), "");
  ck_assert_ptr_null(H->value_producer(NULL));
  ck_assert_int_eq(H->value_num_uses(NULL), 0);
  ck_assert_ptr_null(H->value_use(NULL, 0, NULL));
  fbxp_tensor_type tt = {.struct_size = sizeof tt};
  ck_assert_int_eq(H->value_tensor_type(NULL, &tt), -1);
  ck_assert_int_eq(H->value_const_int(NULL, NULL), 0);
  ck_assert_int_eq(H->value_const_float(NULL, NULL), 0);
  ck_assert_int_eq(H->value_const_str(NULL, NULL), 0);
  ck_assert_int_eq(H->value_is_none(NULL), 0);
  ck_assert_int_eq(H->value_const_int_list(NULL, NULL, 0), -1);
  /* malformed proposals are refused (and counted as rejected) */
  ck_assert_int_eq(H->propose(NULL, NULL, 1), -1);
  ck_assert_int_eq(H->propose(p, NULL, 2), -1);
  ck_assert_int_eq(H->propose(p, NULL, -1), -1);
  const fbxp_node *none[1] = {NULL};
  ck_assert_int_eq(H->propose(p, none, 1), 0); /* recorded; validation rejects it */
}

static void sum_range(void *ctx, int64_t b, int64_t e) {
  atomic_llong *sum = ctx;
  for (int64_t i = b; i < e; i++) atomic_fetch_add(sum, i);
}

static void check_services(const fbxp_graph *g, fbxp_proposals *p) {
  (void)g, (void)p;
  char *mem = H->alloc(100);
  ck_assert_ptr_nonnull(mem);
  memset(mem, 1, 100);
  H->free(mem);
  H->free(NULL);
  atomic_llong sum = 0;
  H->parallel_for(100000, 1000, sum_range, &sum);
  ck_assert_int_eq(sum, (long long)100000 * 99999 / 2);
  H->parallel_for(0, 1, sum_range, &sum);
  H->parallel_for(5, 1, NULL, &sum);
  H->log(FBXP_LOG_DEBUG, "debug message from the probe");
  H->log(FBXP_LOG_INFO, NULL);
  fbxp_status *st = H->status_new(FBXP_ERR_COMPILE, "boom");
  ck_assert_int_eq(fbx_host_drop_status(st), FBXP_ERR_COMPILE);
  st = H->status_new(FBXP_ERR_RUN, NULL);
  fbx_status *hs = fbx_host_take_status(st, FBX_ERR_PLUGIN, "while %s", "testing");
  ck_assert_str_eq(fbx_status_message(hs), "while testing: [run error] (no message)");
  fbx_status_free(hs);
  st = fbx_svc_status(FBXP_ERR_INTERNAL, "n=%d", 42);
  hs = fbx_host_take_status(st, FBX_ERR_PLUGIN, "svc");
  ck_assert_str_eq(fbx_status_message(hs), "svc: [internal error] n=42");
  fbx_status_free(hs);
  /* services with bad arguments answer with a status, never crash */
  fbxp_shlib *lib = NULL;
  st = H->cc_compile(NULL, NULL, &lib);
  ck_assert_int_eq(fbx_host_drop_status(st), FBXP_ERR_INVALID);
  ck_assert_ptr_null(H->shlib_symbol(NULL, "x"));
  H->shlib_release(NULL);
  char *log = (char *)1;
  st = H->nvrtc_compile(NULL, NULL, NULL, NULL, &log);
  ck_assert_int_eq(fbx_host_drop_status(st), FBXP_ERR_INVALID);
  ck_assert_ptr_null(log);
  st = H->opencl_build(NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  ck_assert_int_eq(fbx_host_drop_status(st), FBXP_ERR_INVALID);
  /* a disk hit outside compile counts nowhere; inside compile, for the compiling fuser */
  fbx_svc_count_disk_hit();
}

START_TEST(structure) { run_probe(TEXT, check_structure); }
END_TEST

START_TEST(values_and_constants) { run_probe(TEXT, check_values); }
END_TEST

START_TEST(null_handles_and_bad_proposals) {
  fbx_partition_report rep = run_probe(TEXT, check_null_handles);
  ck_assert_int_eq(rep.proposed, 3);
  ck_assert_int_eq(rep.rejected, 3);
  ck_assert_int_eq(rep.accepted, 0);
}
END_TEST

START_TEST(services) { run_probe(TEXT, check_services); }
END_TEST

START_TEST(disk_hits_count_for_the_compiling_fuser) {
  const char *text =
      "graph(%x : Tensor):\n"
      "  %a : Tensor = aten::neg(%x)\n"
      "  return (%a)\n";
  fbx_graph *g = NULL;
  ck_assert_ptr_null(fbx_graph_parse(&g, text, strlen(text), "t.ir"));
  fbx_node *a = fbx_block_first(g->block);
  fbx_node *grp = fbx_graph_create_group(g, FBX_SYM_fusebox_FusionGroup, &a, 1);
  ck_assert_ptr_nonnull(grp);
  fbx_fuser *f = NULL, *other = NULL;
  ck_assert_ptr_null(fbx_fuser_from_entry(&f, entry, "probe"));
  ck_assert_ptr_null(fbx_fuser_from_entry(&other, entry, "probe2"));
  fbx_svc_count_disk_hit(); /* outside any compile: nobody's */
  fbx_ivalue in = fbx_iv_int(1);
  fbx_fkernel *k = NULL;
  for (int i = 0; i < 2; i++) {
    fbx_status *st = fbx_fuser_compile(f, grp, &in, 1, &k);
    ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED); /* the plugin answers FBXP_ERR_UNSUPPORTED */
    fbx_status_free(st);
  }
  fbx_fuser_stats s;
  fbx_fuser_get_stats(f, &s);
  ck_assert_int_eq(s.disk_cache_hits, 2);
  ck_assert_int_eq(s.compiles, 2);
  ck_assert_int_eq(s.compile_failures, 0);
  ck_assert_int_eq(s.compile_unsupported, 2);
  fbx_fuser_get_stats(other, &s);
  ck_assert_int_eq(s.disk_cache_hits, 0);
  fbx_fuser_release(other);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
}
END_TEST

/* A `Scalar`-typed value (backward graphs cast saved numbers to Scalar) is
 * never a tensor: aten::ge(%t, %s : Scalar) is ge.Scalar, not "maybe
 * ge.Tensor" (which made the whole resolution fail). Against int/float
 * arguments it stays only possible, so script arithmetic still resolves at
 * run time. */
static const char *SCALAR_TEXT =
    "graph(%x : Float(4, strides=[1], requires_grad=0, device=cpu),\n"
    "      %f : float):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %s : Scalar = prim::unchecked_cast(%f)\n"
    "  %ge : Tensor = aten::ge(%x, %s)\n"
    "  %mul : Tensor = aten::mul(%x, %s)\n"
    "  %add : Tensor = aten::add(%x, %s, %one)\n"
    "  %pow : Tensor = aten::pow(%x, %s)\n"
    "  %fl : float = aten::mul(%s, %f)\n"
    "  return (%ge, %mul, %add, %pow, %fl)\n";

static void check_scalar_typed(const fbxp_graph *g, fbxp_proposals *p) {
  (void)p;
  static const struct {
    const char *value, *schema;
  } want[] = {
      {"ge", "aten::ge.Scalar("},
      {"mul", "aten::mul.Scalar("},
      {"add", "aten::add.Scalar("},
      {"pow", "aten::pow.Tensor_Scalar("},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const char *schema = H->node_schema(H->value_producer(val(g, want[i].value)));
    ck_assert_msg(schema && !strncmp(schema, want[i].schema, strlen(want[i].schema)), "%%%s: %s, want %s",
                  want[i].value, schema ? schema : "(none)", want[i].schema);
  }
  /* Scalar * float: int or float overloads are possible, none certain */
  ck_assert_ptr_null(H->node_schema(H->value_producer(val(g, "fl"))));
}

START_TEST(scalar_typed_values_resolve) {
  run_probe(SCALAR_TEXT, check_scalar_typed);
}
END_TEST

START_TEST(host_table_header) {
  const fbxp_host_api *h = fbx_host_api_table();
  ck_assert_uint_eq(h->struct_size, FBXP_HOST_API_SIZE_V1_1);
  ck_assert_uint_eq(h->abi_major, FBXP_ABI_MAJOR);
  ck_assert_uint_eq(h->abi_minor, 1);
  /* a 1.0 host's table: the 1.0 prefix only */
  const fbxp_host_api *h0 = fbx_host_api_table_for(0);
  ck_assert_uint_eq(h0->struct_size, FBXP_HOST_API_SIZE_V1_0);
  ck_assert_uint_eq(h0->abi_minor, 0);
  ck_assert_ptr_eq(h0->opencl_build, h->opencl_build);
  ck_assert_ptr_eq(fbx_host_api_table_for(1), h);
  /* every v1.1 entry is filled */
  const char *p = (const char *)&h->status_new, *end = (const char *)h + FBXP_HOST_API_SIZE_V1_1;
  for (; p < end; p += sizeof(void (*)(void))) {
    void (*fn)(void);
    memcpy(&fn, p, sizeof fn);
    ck_assert_ptr_nonnull((void *)(uintptr_t)fn);
  }
}
END_TEST

/* ABI 1.1: statuses both ways, and the host queries (issue 17.6, 17.7). */
START_TEST(statuses_and_queries) {
  const fbxp_host_api *h = fbx_host_api_table();
  fbxp_status *s = h->status_new(FBXP_ERR_COMPILE, "cc: error: x.c:1: oops");
  ck_assert_int_eq(h->status_code(s), FBXP_ERR_COMPILE);
  ck_assert_str_eq(h->status_message(s), "cc: error: x.c:1: oops");
  h->status_free(s); /* ASan: nothing leaks */
  ck_assert_int_eq(h->status_code(NULL), FBXP_OK);
  ck_assert_str_eq(h->status_message(NULL), "");
  h->status_free(NULL);
  /* a status from a host service, read and freed by the plugin */
  fbxp_shlib *lib = NULL;
  s = h->cc_compile(NULL, NULL, &lib);
  ck_assert_int_eq(h->status_code(s), FBXP_ERR_INVALID);
  ck_assert(strstr(h->status_message(s), "cc_compile") != NULL);
  h->status_free(s);
  /* queries */
  ck_assert_int_eq(h->num_threads(), fbx_parallel_threads());
  const char *cpu = h->cpu_features();
  ck_assert_ptr_nonnull(cpu);
  ck_assert_ptr_eq(h->cpu_features(), cpu); /* process-lifetime */
#if defined(__x86_64__)
  ck_assert_msg(!strncmp(cpu, "x86_64 ", 7), "%s", cpu);
  ck_assert_msg(strstr(cpu, " sse2") != NULL, "%s", cpu); /* every x86-64 has it */
  ck_assert_int_eq(strstr(cpu, " avx2") != NULL, __builtin_cpu_supports("avx2") != 0);
#endif
  setenv("FUSEBOX_CACHE_DIR", "/some/cache/dir", 1);
  char buf[64];
  ck_assert_int_eq(h->cache_dir(buf, sizeof buf), 15);
  ck_assert_str_eq(buf, "/some/cache/dir");
  char small[5];
  ck_assert_int_eq(h->cache_dir(small, sizeof small), 15); /* truncated, full length returned */
  ck_assert_str_eq(small, "/som");
  ck_assert_int_eq(h->cache_dir(NULL, 0), 15);
  unsetenv("FUSEBOX_CACHE_DIR");
}
END_TEST

int main(void) {
  Suite *s = suite_create("host_api");
  TCase *tc = tcase_create("api");
  tcase_add_test(tc, structure);
  tcase_add_test(tc, values_and_constants);
  tcase_add_test(tc, null_handles_and_bad_proposals);
  tcase_add_test(tc, services);
  tcase_add_test(tc, disk_hits_count_for_the_compiling_fuser);
  tcase_add_test(tc, host_table_header);
  tcase_add_test(tc, statuses_and_queries);
  tcase_add_test(tc, scalar_typed_values_resolve);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
