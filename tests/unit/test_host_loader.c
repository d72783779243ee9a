/* The plugin loader: selection names, every documented rejection with its
 * message, version negotiation both ways, lifetime (no dlclose while a
 * kernel lives), discovery, and `fusebox plugins` through the CLI. The
 * test plugins live in FBX_TEST_PLUGIN_DIR (tests/plugins). */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fusebox/fuser_abi.h>

#include "base/log.h"
#include "host/host.h"
#include "host/hostimpl.h"
#include "ir/text.h"
#include "testutil.h"

static const char *plug(const char *name) {
  static char buf[4][512];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 512, "%s/libfbxtest_%s.so", FBX_TEST_PLUGIN_DIR, name);
  return p;
}

#define ASSERT_HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected '%s' in:\n%s", (sub), (s))

/* Load by path and expect an error containing each of the substrings. */
static void expect_load_error(const char *path, const char *const *subs, int n) {
  fbx_fuser *f = (fbx_fuser *)0x1;
  fbx_status *st = fbx_fuser_load(&f, path);
  ck_assert_msg(st != NULL, "%s loaded", path);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_PLUGIN);
  ck_assert_ptr_eq(f, (fbx_fuser *)0x1); /* untouched on failure */
  for (int i = 0; i < n; i++) ASSERT_HAS(fbx_status_message(st), subs[i]);
  fbx_status_free(st);
}

static bool is_mapped(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}

START_TEST(load_good_by_path) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("good")));
  ck_assert_ptr_nonnull(f);
  ck_assert_str_eq(fbx_fuser_name(f), "good");
  ck_assert_str_eq(fbx_fuser_version(f), "1.0.0");
  ck_assert_str_eq(fbx_fuser_path(f), plug("good"));
  ck_assert_uint_eq(fbx_fuser_flags(f), FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE);
  ck_assert_uint_eq(fbx_fuser_devices(f), FBXP_DEVICE_CPU);
  ck_assert_ptr_nonnull(fbx_fuser_api(f));
  ck_assert_ptr_eq(fbx_fuser_retain(f), f);
  fbx_fuser_release(f);
  ck_assert(is_mapped(plug("good")));
  fbx_fuser_release(f);
  ck_assert(!is_mapped(plug("good")));
}
END_TEST

START_TEST(none_means_no_fuser) {
  const char *names[] = {"none", "", NULL};
  for (int i = 0; i < 3; i++) {
    fbx_fuser *f = (fbx_fuser *)0x1;
    ck_assert_ptr_null(fbx_fuser_load(&f, names[i]));
    ck_assert_ptr_null(f);
  }
  fbx_fuser_release(NULL);
}
END_TEST

START_TEST(builtins_and_aliases) {
  setenv("FUSEBOX_PLUGIN_PATH", FBX_TEST_PLUGIN_DIR, 1);
  const char *names[][2] = {{"legacy", "legacy"},       {"fuser0", "legacy"},       {"tensorexpr", "tensorexpr"},
                            {"fuser1", "tensorexpr"},   {"nvfuser_like", "nvfuser_like"}, {"fuser2", "nvfuser_like"}};
  for (int i = 0; i < 6; i++) {
    char built[512], msg[256];
    snprintf(built, sizeof built, "%s/plugins/libfbx_%s.so", FBX_BINARY_DIR, names[i][1]);
    fbx_fuser *f = NULL;
    fbx_status *st = fbx_fuser_load(&f, names[i][0]);
    struct stat sb;
    if (stat(built, &sb) == 0) { /* the built-in exists in this tree: it must load */
      ck_assert_msg(!st, "%s: %s", names[i][0], fbx_status_message(st));
      fbx_fuser_release(f);
      continue;
    }
    ck_assert_ptr_nonnull(st);
    snprintf(msg, sizeof msg, "fuser '%s' is not built in this tree: no libfbx_%s.so in %s", names[i][1],
             names[i][1], FBX_TEST_PLUGIN_DIR);
    ASSERT_HAS(fbx_status_message(st), msg);
    ASSERT_HAS(fbx_status_message(st), FBX_BINARY_DIR "/plugins");
    fbx_status_free(st);
  }
}
END_TEST

START_TEST(names_through_search_path) {
  setenv("FUSEBOX_PLUGIN_PATH", "/nonexistent/dir:" FBX_TEST_PLUGIN_DIR, 1);
  fbx_fuser *f = NULL;
  /* lib<name>.so */
  ck_assert_ptr_null(fbx_fuser_load(&f, "fbxtest_good"));
  ck_assert_str_eq(fbx_fuser_name(f), "good");
  ck_assert_str_eq(fbx_fuser_path(f), plug("good"));
  fbx_fuser_release(f);
  /* the name a plugin declares */
  f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, "declines"));
  ck_assert_str_eq(fbx_fuser_name(f), "declines");
  fbx_fuser_release(f);
  const char *dirs[8];
  int n = fbx_fuser_search_dirs(dirs, 8);
  ck_assert_int_ge(n, 3);
  ck_assert_str_eq(dirs[0], "/nonexistent/dir");
  ck_assert_str_eq(dirs[1], FBX_TEST_PLUGIN_DIR);
  ck_assert_str_eq(dirs[2], FBX_BINARY_DIR "/plugins");
}
END_TEST

START_TEST(unknown_name_lists_what_exists) {
  setenv("FUSEBOX_PLUGIN_PATH", FBX_TEST_PLUGIN_DIR, 1);
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, "no_such_fuser");
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  const char *m = fbx_status_message(st);
  ASSERT_HAS(m, "unknown fuser 'no_such_fuser'");
  ASSERT_HAS(m, "legacy (alias fuser0)");
  ASSERT_HAS(m, "tensorexpr (alias fuser1)");
  ASSERT_HAS(m, "nvfuser_like (alias fuser2)");
  ASSERT_HAS(m, "none");
  ASSERT_HAS(m, "good (");
  ASSERT_HAS(m, "fbxtest_wrong_major (");
  ASSERT_HAS(m, "[rejected]");
  fbx_status_free(st);
}
END_TEST

START_TEST(rejections_name_their_reason) {
  char buf[256];
  expect_load_error("/nonexistent/libnothing.so", (const char *[]){"cannot load fuser plugin /nonexistent/libnothing.so"}, 1);
  expect_load_error(plug("no_entry"), (const char *[]){plug("no_entry"), "does not export the entry symbol 'fbxp_plugin_entry'"}, 2);
  expect_load_error(plug("null_table"),
                    (const char *[]){plug("null_table"), "refused to load: null_table refuses every host (test plugin)"}, 2);
  expect_load_error(plug("wrong_major"),
                    (const char *[]){plug("wrong_major"), "plugin built for fusebox ABI 2.0, this host speaks 1.1"}, 2);
  snprintf(buf, sizeof buf, "undersized: struct_size %zu, this host needs at least %zu",
           (size_t)FBXP_SIZE_UPTO(fbxp_plugin_api, flags), (size_t)FBXP_SIZE_UPTO(fbxp_plugin_api, release));
  expect_load_error(plug("undersized"), (const char *[]){plug("undersized"), buf}, 2);
  /* a failed load leaves nothing mapped */
  ck_assert(!is_mapped(plug("wrong_major")));
  ck_assert(!is_mapped(plug("undersized")));
}
END_TEST

/* ---- in-process tables: the table checks one by one ---------------------------- */

static fbxp_status *nop_partition(void *s, const fbxp_graph *g, fbxp_proposals *p) {
  (void)s, (void)g, (void)p;
  return NULL;
}
static fbxp_status *nop_compile(void *s, const fbxp_graph *g, const fbxp_arg_spec *in, int32_t n,
                                fbxp_compile_result *r, fbxp_kernel **k) {
  (void)s, (void)g, (void)in, (void)n, (void)r, (void)k;
  return NULL;
}
static fbxp_status *nop_run(void *s, fbxp_kernel *k, const fbxp_arg *in, int32_t n, DLTensor *const *o, int32_t no) {
  (void)s, (void)k, (void)in, (void)n, (void)o, (void)no;
  return NULL;
}
static void nop_release(void *s, fbxp_kernel *k) { (void)s, (void)k; }

static int init_calls, shutdown_calls;
static const fbxp_host_api *seen_host;
static uint32_t seen_major, seen_minor;
static fbxp_status *t_init(void **state) {
  init_calls++;
  *state = &init_calls;
  return NULL;
}
static void t_shutdown(void *state) {
  ck_assert_ptr_eq(state, &init_calls);
  shutdown_calls++;
}
static fbxp_status *t_init_fails(void **state) {
  (void)state;
  return seen_host->status_new(FBXP_ERR_UNSUPPORTED, "no device here");
}

static fbxp_plugin_api table;
static const fbxp_plugin_api *t_entry(const fbxp_host_api *host, uint32_t major, uint32_t minor, const char **reason) {
  (void)reason;
  seen_host = host;
  seen_major = major;
  seen_minor = minor;
  return &table;
}

static void reset_table(void) {
  memset(&table, 0, sizeof table);
  table.struct_size = FBXP_PLUGIN_API_SIZE_V1_0;
  table.abi_major = FBXP_ABI_MAJOR;
  table.abi_minor = FBXP_ABI_MINOR;
  table.name = "inproc";
  table.flags = FBXP_SELF_FALLBACK;
  table.partition = nop_partition;
  table.compile = nop_compile;
  table.run = nop_run;
  table.release = nop_release;
}

static void expect_entry_error(const char *sub) {
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_from_entry(&f, t_entry, "test-table");
  ck_assert_msg(st != NULL, "expected rejection: %s", sub);
  ASSERT_HAS(fbx_status_message(st), "test-table");
  ASSERT_HAS(fbx_status_message(st), sub);
  fbx_status_free(st);
}

START_TEST(table_checks) {
  reset_table();
  table.init = t_init;
  table.shutdown = t_shutdown;
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_from_entry(&f, t_entry, "test-table"));
  ck_assert_str_eq(fbx_fuser_path(f), "test-table");
  ck_assert_int_eq(init_calls, 1);
  ck_assert_uint_eq(seen_major, FBXP_ABI_MAJOR);
  ck_assert_uint_eq(seen_minor, FBXP_ABI_MINOR);
  ck_assert_uint_eq(seen_host->struct_size, FBXP_HOST_API_SIZE_V1_1);
  ck_assert_uint_eq(seen_host->abi_major, FBXP_ABI_MAJOR);
  fbx_fuser_release(f);
  ck_assert_int_eq(shutdown_calls, 1);

  const char *fns[] = {"partition", "compile", "run", "release"};
  for (int i = 0; i < 4; i++) {
    reset_table();
    if (i == 0) table.partition = NULL;
    if (i == 1) table.compile = NULL;
    if (i == 2) table.run = NULL;
    if (i == 3) table.release = NULL;
    char msg[96];
    snprintf(msg, sizeof msg, "lacks the required function '%s'", fns[i]);
    expect_entry_error(msg);
  }
  reset_table();
  table.name = "";
  expect_entry_error("has no name");
  reset_table();
  table.name = NULL;
  expect_entry_error("has no name");
  reset_table();
  table.flags = FBXP_GUARDS_OUTSIDE | FBXP_SELF_FALLBACK;
  expect_entry_error("exactly one of FBXP_GUARDS_OUTSIDE and FBXP_SELF_FALLBACK");
  reset_table();
  table.flags = FBXP_RUN_THREAD_SAFE;
  expect_entry_error("exactly one of FBXP_GUARDS_OUTSIDE and FBXP_SELF_FALLBACK");
  reset_table();
  table.abi_major = 0;
  table.abi_minor = 9;
  expect_entry_error("plugin built for fusebox ABI 0.9, this host speaks 1.1");
  reset_table();
  table.struct_size = 8;
  expect_entry_error("undersized: struct_size 8");
  reset_table();
  table.init = t_init_fails;
  expect_entry_error("failed to initialize: [unsupported] no device here");
}
END_TEST

/* ---- versions --------------------------------------------------------------------- */

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return g;
}

static const char *CHAIN =
    "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
    "  %a : Tensor = aten::neg(%x)\n"
    "  %b : Tensor = aten::relu(%a)\n"
    "  return (%b)\n";

/* Partition CHAIN with f, compile and run its group on [-1, 2, -3, 4, -5, 6]. */
static fbx_fkernel *compile_and_run(fbx_fuser *f) {
  fbx_graph *g = parse(CHAIN);
  fbx_partition_report rep = {0};
  ck_assert_ptr_null(fbx_fuser_partition(f, g, &rep));
  ck_assert_int_eq(rep.accepted, 1);
  fbx_node *group = fbx_block_first(g->block);
  while (group && group->kind != FBX_SYM_fusebox_FusionGroup) group = group->next;
  ck_assert_ptr_nonnull(group);
  float data[6] = {-1, 2, -3, 4, -5, 6};
  int64_t sizes[2] = {2, 3};
  fbx_tensor *x = NULL;
  ck_assert_ptr_null(fbx_tensor_from_data(&x, FBX_DTYPE_FLOAT32, 2, sizes, data));
  fbx_ivalue in = fbx_iv_tensor(x), out;
  fbx_fkernel *k = NULL;
  fbx_status *st = fbx_fuser_compile(f, group, &in, 1, &k);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  bool declined = true;
  st = fbx_fkernel_run(k, &in, 1, &out, 1, &declined);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert(!declined);
  ck_assert_int_eq(out.kind, FBX_IV_TENSOR);
  for (int i = 0; i < 6; i++) ck_assert_float_eq(fbx_tensor_get_f64(out.u.t, i), data[i] > 0 ? 0 : -data[i]);
  fbx_iv_release(&out);
  fbx_iv_release(&in);
  fbx_graph_destroy(g);
  return k;
}

START_TEST(older_minor_plugin_works) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("old_minor")));
  const fbxp_plugin_api *api = fbx_fuser_api(f);
  ck_assert_uint_eq(api->abi_minor, 0);
  ck_assert_uint_lt(api->struct_size, FBXP_PLUGIN_API_SIZE_V1_0);
  fbx_fkernel *k = compile_and_run(f);
  /* kernel_source lies beyond its struct_size: read as NULL, never called */
  ck_assert_ptr_null(fbx_fkernel_source(k));
  ck_assert_int_eq(fbx_fkernel_launches(k), 1);
  fbx_fkernel_release(k);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(newer_minor_plugin_works) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("new_minor")));
  const fbxp_plugin_api *api = fbx_fuser_api(f);
  ck_assert_uint_eq(api->abi_minor, FBXP_ABI_MINOR + 3);
  ck_assert_uint_gt(api->struct_size, FBXP_PLUGIN_API_SIZE_V1_0);
  fbx_fkernel *k = compile_and_run(f);
  ck_assert_ptr_nonnull(fbx_fkernel_source(k));
  ASSERT_HAS(fbx_fkernel_source(k), "pointwise");
  fbx_fkernel_release(k);
  fbx_fuser_release(f);
}
END_TEST

START_TEST(newer_host_minor_and_other_major) {
  /* A future 1.7 host: the 1.0 plugin loads and works. */
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load_path_as(&f, plug("old_minor"), 1, 7));
  fbx_fkernel_release(compile_and_run(f));
  fbx_fuser_release(f);
  /* A 2.0 host: the plugin itself refuses, and says why. */
  fbx_status *st = fbx_fuser_load_path_as(&f, plug("good"), 2, 0);
  ck_assert_ptr_nonnull(st);
  ASSERT_HAS(fbx_status_message(st), "refused to load: built for fusebox ABI 1.x");
  fbx_status_free(st);
}
END_TEST

START_TEST(crash_plugin_loads) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("crash")));
  ck_assert_str_eq(fbx_fuser_name(f), "crash");
  fbx_fuser_release(f);
}
END_TEST

START_TEST(kernels_keep_the_plugin_loaded) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("good")));
  fbx_fkernel *k = compile_and_run(f);
  fbx_fuser_release(f); /* the user's last fuser reference */
  ck_assert(is_mapped(plug("good")));
  /* the kernel still runs */
  float data[6] = {1, -2, 3, -4, 5, -6};
  int64_t sizes[2] = {2, 3};
  fbx_tensor *x = NULL;
  ck_assert_ptr_null(fbx_tensor_from_data(&x, FBX_DTYPE_FLOAT32, 2, sizes, data));
  fbx_ivalue in = fbx_iv_tensor(x), out;
  ck_assert_ptr_null(fbx_fkernel_run(k, &in, 1, &out, 1, NULL));
  ck_assert_float_eq(fbx_tensor_get_f64(out.u.t, 1), 2);
  fbx_iv_release(&out);
  fbx_iv_release(&in);
  fbx_fkernel_release(k);
  ck_assert(!is_mapped(plug("good")));
}
END_TEST

/* ---- discovery and the CLI ---------------------------------------------------------- */

static const fbx_fuser_candidate *find_cand(const fbx_fuser_candidate *c, int n, const char *file) {
  for (int i = 0; i < n; i++)
    if (!strcmp(c[i].path, plug(file))) return &c[i];
  return NULL;
}

START_TEST(discovery) {
  setenv("FUSEBOX_PLUGIN_PATH", FBX_TEST_PLUGIN_DIR ":" FBX_TEST_PLUGIN_DIR, 1);
  fbx_fuser_candidate *c = NULL;
  int n = 0;
  ck_assert_ptr_null(fbx_fuser_discover(&c, &n));
  const char *ok[] = {"good", "old_minor", "new_minor", "bad_proposals", "compile_fails", "run_fails",
                      "bad_specs", "declines", "crash", "wrong_dtype_spec", "short_shape_spec", "zeroed_spec",
                      "declines_guarded", "abi10", "abi11", "compiles_nothing", "symbolic", "sleeps",
                      "planted"};
  const char *bad[] = {"wrong_major", "no_entry", "null_table", "undersized"};
  int total = 0;
  for (int i = 0; i < n; i++) total += !strncmp(c[i].path, FBX_TEST_PLUGIN_DIR "/", strlen(FBX_TEST_PLUGIN_DIR) + 1);
  ck_assert_int_eq(total, 23); /* listed twice in the path, found once */
  for (int i = 0; i < 19; i++) {
    const fbx_fuser_candidate *x = find_cand(c, n, ok[i]);
    ck_assert_msg(x && !x->rejected, "%s: %s", ok[i], x && x->rejected ? x->rejected : "missing");
    ck_assert_str_eq(x->name, ok[i]);
    ck_assert_str_eq(x->vendor, "fusebox tests");
    ck_assert_uint_eq(x->abi_major, 1);
  }
  const fbx_fuser_candidate *g = find_cand(c, n, "good");
  ck_assert_str_eq(g->version, "1.0.0");
  ck_assert_uint_eq(g->flags, FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE);
  ck_assert_uint_eq(g->devices, FBXP_DEVICE_CPU);
  ck_assert_str_eq(g->description, "pointwise relu/neg/mul/add chains, plain C loops");
  for (int i = 0; i < 4; i++) {
    const fbx_fuser_candidate *x = find_cand(c, n, bad[i]);
    ck_assert_msg(x && x->rejected, "%s should be rejected", bad[i]);
    char stem[64];
    snprintf(stem, sizeof stem, "fbxtest_%s", bad[i]);
    ck_assert_str_eq(x->name, stem);
  }
  ASSERT_HAS(find_cand(c, n, "wrong_major")->rejected, "plugin built for fusebox ABI 2.0, this host speaks 1.1");
  fbx_fuser_candidates_free(c, n);
}
END_TEST

START_TEST(cli_plugins) {
  char *out = NULL;
  int rc = tu_run("FUSEBOX_PLUGIN_PATH=" FBX_TEST_PLUGIN_DIR " " FBX_CLI " plugins", &out);
  ck_assert_msg(rc == 0, "rc %d:\n%s", rc, out);
  ASSERT_HAS(out, "search dirs:\n  " FBX_TEST_PLUGIN_DIR "\n");
  ASSERT_HAS(out, FBX_BINARY_DIR "/plugins");
  /* the 23 test plugins (4 refused) and the built-in legacy, tensorexpr and nvfuser_like fusers */
  ASSERT_HAS(out, "26 found, 22 loadable, 4 rejected");
  ASSERT_HAS(out, "self-fallback,thread-safe-run");
  ASSERT_HAS(out, FBX_BINARY_DIR "/plugins/libfbx_legacy.so");
  ASSERT_HAS(out, "good ");
  ASSERT_HAS(out, "1.0.0");
  ASSERT_HAS(out, "ABI 1.0");
  ASSERT_HAS(out, "ABI 1.4"); /* new_minor: this header's minor + 3 */
  ASSERT_HAS(out, "guards-outside,thread-safe-run");
  ASSERT_HAS(out, "self-fallback");
  ASSERT_HAS(out, "cpu");
  ASSERT_HAS(out, plug("good"));
  ASSERT_HAS(out, "fbxtest_wrong_major");
  ASSERT_HAS(out, "REJECTED " FBX_TEST_PLUGIN_DIR "/libfbxtest_wrong_major.so");
  ASSERT_HAS(out, "reason: plugin built for fusebox ABI 2.0, this host speaks 1.1");
  ASSERT_HAS(out, "reason: not a fuser plugin: it does not export the entry symbol 'fbxp_plugin_entry'");
  ASSERT_HAS(out, "reason: the plugin refused to load: null_table refuses every host");
  ASSERT_HAS(out, "reason: plugin table is undersized");
  free(out);

  rc = tu_run("FUSEBOX_LOG=loader FUSEBOX_PLUGIN_PATH=" FBX_TEST_PLUGIN_DIR " " FBX_CLI " plugins", &out);
  ck_assert_int_eq(rc, 0);
  ASSERT_HAS(out, "[fusebox:loader] dlopen " FBX_TEST_PLUGIN_DIR "/libfbxtest_good.so");
  ASSERT_HAS(out, "[fusebox:loader] loaded 'good'");
  ASSERT_HAS(out, "[fusebox:loader] rejected: ");
  free(out);

  rc = tu_run(FBX_CLI " plugins --bogus", &out);
  ck_assert_int_eq(rc, 2);
  free(out);
  rc = tu_run(FBX_CLI " plugins --help", &out);
  ck_assert_int_eq(rc, 0);
  ASSERT_HAS(out, "usage: fusebox plugins");
  free(out);
}
END_TEST

START_TEST(plugins_export_only_the_entry) {
  const char *all[] = {"good", "old_minor", "new_minor", "bad_proposals", "compile_fails", "run_fails", "bad_specs",
                       "declines", "crash", "wrong_major", "null_table", "undersized", "no_entry",
                       "wrong_dtype_spec", "short_shape_spec", "zeroed_spec", "declines_guarded",
                       "abi10", "abi11", "compiles_nothing", "symbolic", "sleeps", "planted"};
  for (int i = 0; i < 23; i++) {
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s", plug(all[i]));
    int rc = tu_run(cmd, &out);
    if (rc == 127) { /* no binutils: nothing to check with */
      free(out);
      return;
    }
    ck_assert_int_eq(rc, 0);
    int symbols = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
      const char *name = strrchr(line, ' ') ? strrchr(line, ' ') + 1 : line;
      ck_assert_msg(!strcmp(name, "fbxp_plugin_entry"), "%s exports %s", all[i], name);
      symbols++;
    }
    ck_assert_int_eq(symbols, strcmp(all[i], "no_entry") ? 1 : 0);
    free(out);
  }
}
END_TEST


/* ---- candidates checked before dlopen (issue 12 item 2) ------------------------------- */

static void copy_prefix(const char *from, const char *to, long n) {
  size_t len = 0;
  char *data = tu_read_file(from, &len);
  ck_assert_ptr_nonnull(data);
  if (n < 0 || (size_t)n > len) n = (long)len;
  FILE *f = fopen(to, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  free(data);
}

static void patch_u16(const char *path, long off, unsigned v) {
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  fseek(f, off, SEEK_SET);
  unsigned char b[2] = {(unsigned char)(v & 0xff), (unsigned char)(v >> 8)}; /* little-endian hosts */
  fwrite(b, 1, 2, f);
  fclose(f);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

START_TEST(bad_candidates_never_reach_dlopen) {
  char dir[] = "/tmp/fbx-cand-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char p[8][600];
  const char *names[8] = {"libtrunc.so", "libtrunc2.so", "junk.so", "empty.so", "libmachine.so", "loop.so",
                          "fifo.so", "libokcopy.so"};
  for (int i = 0; i < 8; i++) snprintf(p[i], sizeof p[i], "%s/%s", dir, names[i]);
  size_t full = 0;
  char *whole = tu_read_file(plug("good"), &full);
  ck_assert_ptr_nonnull(whole);
  free(whole);
  copy_prefix(plug("good"), p[0], (long)full / 2);   /* headers intact, segments cut off */
  copy_prefix(plug("good"), p[1], 200);              /* ELF header, part of the program headers */
  write_text(p[2], "this is not a shared object, only some text long enough to hold an ELF header\n");
  write_text(p[3], "");
  copy_prefix(plug("good"), p[4], -1);
  patch_u16(p[4], 18, 0xb7 + 1);                      /* e_machine: some other machine */
  ck_assert_int_eq(symlink(p[5], p[5]), 0);           /* a symlink loop */
  ck_assert_int_eq(mkfifo(p[6], 0600), 0);
  copy_prefix(plug("good"), p[7], -1);                /* an intact copy still loads */
  /* a tenth of the legacy fuser: dlopen of this one dies of SIGBUS unchecked */
  char legacy_cut[600];
  snprintf(legacy_cut, sizeof legacy_cut, "%s/liblegacycut.so", dir);
  size_t legacy_size = 0;
  char *legacy = tu_read_file(FBX_BINARY_DIR "/plugins/libfbx_legacy.so", &legacy_size);
  ck_assert_ptr_nonnull(legacy);
  free(legacy);
  copy_prefix(FBX_BINARY_DIR "/plugins/libfbx_legacy.so", legacy_cut, (long)legacy_size / 10);
  expect_load_error(legacy_cut, (const char *[]){legacy_cut, "truncated"}, 2);

  const char *why[7] = {"truncated", "truncated", "no ELF magic", "shorter than an ELF header",
                        "built for ELF machine", "symlink loop", "not a regular file"};
  for (int i = 0; i < 7; i++) expect_load_error(p[i], (const char *[]){p[i], why[i]}, 2);
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, p[7]));
  ck_assert_str_eq(fbx_fuser_name(f), "good");
  fbx_fuser_release(f);

  /* discovery lists the bad ones as rejected, with the reason */
  setenv("FUSEBOX_PLUGIN_PATH", dir, 1);
  fbx_fuser_candidate *c = NULL;
  int n = 0;
  ck_assert_ptr_null(fbx_fuser_discover(&c, &n));
  int rejected = 0, found_ok = 0;
  for (int i = 0; i < n; i++) {
    if (strncmp(c[i].path, dir, strlen(dir))) continue;
    if (c[i].rejected) rejected++;
    else found_ok += !strcmp(c[i].name, "good");
  }
  ck_assert_int_eq(rejected, 6); /* the loop and the FIFO are not regular files: not candidates */
  ck_assert_int_eq(found_ok, 1);
  fbx_fuser_candidates_free(c, n);
  /* by name: a clean error, not a fault */
  fbx_status *st = fbx_fuser_load(&f, "trunc");
  ck_assert_ptr_nonnull(st);
  ASSERT_HAS(fbx_status_message(st), "truncated");
  fbx_status_free(st);

  /* the CLI: plugins, run --fuser NAME, plugin-check without --isolate */
  char cmd[2048], *out = NULL;
  snprintf(cmd, sizeof cmd, "FUSEBOX_PLUGIN_PATH=%s %s plugins", dir, FBX_CLI);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "rc %d:\n%s", rc, out);
  ASSERT_HAS(out, "REJECTED");
  ASSERT_HAS(out, "truncated");
  free(out);
  char ir[700];
  snprintf(ir, sizeof ir, "%s/g.ir", dir);
  write_text(ir, "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n");
  snprintf(cmd, sizeof cmd, "FUSEBOX_PLUGIN_PATH=%s %s run %s --fuser trunc --input 1.5", dir, FBX_CLI, ir);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc > 0 && rc < 128, "rc %d:\n%s", rc, out);
  ASSERT_HAS(out, "truncated");
  free(out);
  snprintf(cmd, sizeof cmd, "%s plugin-check %s", FBX_CLI, p[0]);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc > 0 && rc < 128, "rc %d:\n%s", rc, out);
  ASSERT_HAS(out, "truncated");
  free(out);

  for (int i = 0; i < 8; i++) unlink(p[i]);
  unlink(legacy_cut);
  unlink(ir);
  rmdir(dir);
}
END_TEST

/* ---- ABI 1.1 against 1.0, both ways ------------------------------------------------- */

static void run_chain_with(const char *plugin, const char *want_launches) {
  char dir[] = "/tmp/fbx-abi-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char ir[600], cmd[2048], *out = NULL;
  snprintf(ir, sizeof ir, "%s/g.ir", dir);
  FILE *f = fopen(ir, "w");
  ck_assert_ptr_nonnull(f);
  fputs("graph(%x : Tensor, %y : Tensor):\n  %a : Tensor = aten::mul(%x, %y)\n  %b : Tensor = aten::relu(%a)\n"
        "  %c : Tensor = aten::neg(%b)\n  return (%c)\n", f);
  fclose(f);
  char x[600];
  snprintf(x, sizeof x, "%s/x.npy", dir);
  int64_t sizes[2] = {3, 7};
  fbx_tensor *t = NULL;
  ck_assert_ptr_null(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, sizes));
  for (int64_t i = 0; i < t->numel; i++) fbx_tensor_set_f64(t, i, (double)(i % 5) - 2.0);
  ck_assert_ptr_null(fbx_npy_write_file(x, t));
  fbx_tensor_release(t);
  snprintf(cmd, sizeof cmd, "%s run %s --input %s --input %s --fuser %s --iters 3 --stats", FBX_CLI, ir, x, x, plugin);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "rc %d:\n%s", rc, out);
  ASSERT_HAS(out, want_launches);
  free(out);
  unlink(ir);
  unlink(x);
  rmdir(dir);
}

START_TEST(abi_1_0_plugin_on_1_1_host) {
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("abi10")));
  ck_assert_str_eq(fbx_fuser_name(f), "abi10");
  ck_assert_uint_eq(fbx_fuser_api(f)->abi_minor, 0);
  ck_assert_uint_eq(fbx_fuser_api(f)->struct_size, FBXP_PLUGIN_API_SIZE_V1_0);
  fbx_fuser_release(f);
  run_chain_with(plug("abi10"), "kernels compiled    1 (0 failed");
}
END_TEST

START_TEST(abi_1_1_plugin_on_both_hosts) {
  setenv("FUSEBOX_CACHE_DIR", "/tmp/fbx-abi11-cache-dir", 1);
  fbx_fuser *f = NULL;
  ck_assert_ptr_null(fbx_fuser_load(&f, plug("abi11")));
  const char *d = fbx_fuser_api(f)->description;
  char want[128];
  snprintf(want, sizeof want, "1.1 host: threads %d; status 3 'probe'; cache /tmp/fbx-abi11-cache-dir; cpu ",
           fbx_host_num_threads());
  ASSERT_HAS(d, want);
  ASSERT_HAS(d, fbx_host_cpu_features());
  fbx_fuser_release(f);
  /* a host that speaks 1.0 hands out the 1.0 table: the plugin does without */
  f = NULL;
  ck_assert_ptr_null(fbx_fuser_load_path_as(&f, plug("abi11"), 1, 0));
  snprintf(want, sizeof want, "1.0 host (table of %zu bytes): no queries", (size_t)FBXP_HOST_API_SIZE_V1_0);
  ASSERT_HAS(fbx_fuser_api(f)->description, want);
  fbx_fuser_release(f);
  unsetenv("FUSEBOX_CACHE_DIR");
  run_chain_with(plug("abi11"), "kernels compiled    1 (0 failed");
}
END_TEST

/* Issue 17.8: a crash inside a plugin call names the plugin, the stage and
 * the group, and the process still dies of the signal. */
START_TEST(crash_names_plugin_stage_group) {
  char dir[] = "/tmp/fbx-crash-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char ir[600], x[600], cmd[2048], *out = NULL;
  snprintf(ir, sizeof ir, "%s/g.ir", dir);
  snprintf(x, sizeof x, "%s/x.npy", dir);
  FILE *f = fopen(ir, "w");
  ck_assert_ptr_nonnull(f);
  fputs("graph(%x : Tensor):\n  %a : Tensor = aten::relu(%x)\n  %b : Tensor = aten::neg(%a)\n  return (%b)\n", f);
  fclose(f);
  int64_t sizes[1] = {10};
  fbx_tensor *t = NULL;
  ck_assert_ptr_null(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 1, sizes));
  for (int64_t i = 0; i < 10; i++) fbx_tensor_set_f64(t, i, (double)i - 4.5);
  ck_assert_ptr_null(fbx_npy_write_file(x, t));
  fbx_tensor_release(t);
  const struct {
    const char *env, *sig, *stage;
    int rc;
  } cases[] = {{"", "SIGSEGV", "run", 139},
               {"FBXTEST_CRASH_STAGE=compile", "SIGSEGV", "compile", 139},
               {"FBXTEST_CRASH_HOW=abort", "SIGABRT", "run", 134}};
  for (int i = 0; i < 3; i++) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
    /* the sanitizers catch the plugin's null store before it faults */
    if (strcmp(cases[i].sig, "SIGABRT")) continue;
#endif
    snprintf(cmd, sizeof cmd, "ulimit -c 0; %s %s run %s --input %s --fuser %s --iters 3", cases[i].env, FBX_CLI, ir, x,
             plug("crash"));
    int rc = tu_run(cmd, &out);
    ck_assert_msg(rc == cases[i].rc, "%s: rc %d:\n%s", cases[i].env, rc, out);
    char want[1024];
    snprintf(want, sizeof want, "fusebox: fuser plugin 'crash' (%s) crashed with %s in %s of group %%", plug("crash"),
             cases[i].sig, cases[i].stage);
    ASSERT_HAS(out, want);
    ASSERT_HAS(strstr(out, want), " (aten::relu, aten::neg)\n");
    free(out);
  }
  unlink(ir);
  unlink(x);
  rmdir(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("host_loader");
  TCase *tc = tcase_create("loader");
  tcase_add_test(tc, load_good_by_path);
  tcase_add_test(tc, none_means_no_fuser);
  tcase_add_test(tc, builtins_and_aliases);
  tcase_add_test(tc, names_through_search_path);
  tcase_add_test(tc, unknown_name_lists_what_exists);
  tcase_add_test(tc, rejections_name_their_reason);
  tcase_add_test(tc, table_checks);
  tcase_add_test(tc, older_minor_plugin_works);
  tcase_add_test(tc, newer_minor_plugin_works);
  tcase_add_test(tc, newer_host_minor_and_other_major);
  tcase_add_test(tc, crash_plugin_loads);
  tcase_add_test(tc, kernels_keep_the_plugin_loaded);
  tcase_add_test(tc, discovery);
  tcase_add_test(tc, cli_plugins);
  tcase_add_test(tc, plugins_export_only_the_entry);
  tcase_add_test(tc, bad_candidates_never_reach_dlopen);
  tcase_add_test(tc, abi_1_0_plugin_on_1_1_host);
  tcase_add_test(tc, abi_1_1_plugin_on_both_hosts);
  tcase_add_test(tc, crash_names_plugin_stage_group);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
