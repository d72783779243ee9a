/* The SDK as a third party gets it: `cmake --install` of this build tree into
 * a temporary prefix, then sdk/examples/hello_fuser configured and built out
 * of tree against that prefix (find_package(fusebox), and pkg-config), its
 * exports checked with nm, and the plugin loaded and used: through the
 * plugin host in this process (partition, compile with cc_compile, run,
 * compared with the reference interpreter and PyTorch's numbers), and
 * through the `fusebox` command (`plugins`, `run` with FUSEBOX_FUSER) when
 * this build's command has those features; the parts that need a missing
 * feature say so and are skipped.
 *
 * The install and the out-of-tree build happen once, in the parent process
 * (an unchecked fixture); each test asserts on what they left behind.
 * FBX_KEEP_SDK_TMP=1 keeps the temporary directory for a look afterwards. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fusebox/fuser_abi.h>

#include "exec/interp.h"
#include "host/host.h"
#include "ir/text.h"
#include "testutil.h"

#define ASSERT_HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "expected '%s' in:\n%s", (sub), (s))

static char tmp[256];            /* the temporary directory */
static char prefix[512];         /* tmp/prefix: the install */
static char plugin[512];         /* tmp/hb/libhello_fuser.so: the out-of-tree build */
static int install_rc = -1, build_rc = -1;
static char *install_log, *build_log;

static const char *at(const char *rel) {
  static char buf[4][1024];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 1024, "%s/%s", tmp, rel);
  return p;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void setup_once(void) {
  strcpy(tmp, "/tmp/fbx_sdk_XXXXXX");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return;
  }
  snprintf(prefix, sizeof prefix, "%s/prefix", tmp);
  snprintf(plugin, sizeof plugin, "%s/hb/libhello_fuser.so", tmp);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cmake --install '%s' --prefix '%s'", FBX_BINARY_DIR, prefix);
  install_rc = tu_run(cmd, &install_log);
  if (install_rc != 0) return;
  /* -Werror: the tutorial's code compiles cleanly with -Wall -Wextra. */
  snprintf(cmd, sizeof cmd,
           "cmake -S '%s/sdk/examples/hello_fuser' -B '%s/hb' -DCMAKE_PREFIX_PATH='%s' -DCMAKE_BUILD_TYPE=Release "
           "-DCMAKE_C_FLAGS='-Werror " FBX_OOT_FLAGS "' -DCMAKE_MODULE_LINKER_FLAGS='" FBX_OOT_FLAGS "' "
           "-DCMAKE_SHARED_LINKER_FLAGS='" FBX_OOT_FLAGS "' && cmake --build '%s/hb'",
           FBX_SOURCE_DIR, tmp, prefix, tmp);
  build_rc = tu_run(cmd, &build_log);
}

static void teardown_once(void) {
  const char *keep = getenv("FBX_KEEP_SDK_TMP");
  if (tmp[0] && !(keep && *keep == '1')) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    tu_run(cmd, NULL);
  } else if (tmp[0]) {
    printf("test_sdk_install: kept %s\n", tmp);
  }
  free(install_log);
  free(build_log);
}

/* The last 2000 bytes of a log: Check cannot report a longer message. */
static const char *tail(const char *s) {
  size_t n = s ? strlen(s) : 0;
  return !s ? "" : n > 2000 ? s + n - 2000 : s;
}

static void require_install(void) {
  ck_assert_msg(tmp[0], "no temporary directory");
  ck_assert_msg(install_rc == 0, "cmake --install failed (%d):\n%s", install_rc, tail(install_log));
}

static void require_plugin(void) {
  require_install();
  ck_assert_msg(build_rc == 0, "out-of-tree build of hello_fuser failed (%d):\n%s", build_rc, tail(build_log));
  ck_assert_msg(exists(plugin), "%s missing after the build:\n%s", plugin, tail(build_log));
}

/* ---- the install ------------------------------------------------------------------------ */

START_TEST(install_layout) {
  require_install();
  const char *files[] = {"include/fusebox/fuser_abi.h", "include/fusebox/fusebox.h",
                         "include/fusebox/tensor.h",    "include/fusebox/status.h",
                         "include/fusebox/dtype.h",     "lib/libfusebox.a",
                         "bin/fusebox",                 "lib/fusebox/plugins",
                         "lib/cmake/fusebox/fuseboxConfig.cmake", "lib/cmake/fusebox/fuseboxConfigVersion.cmake",
                         "lib/pkgconfig/fusebox-sdk.pc", "lib/pkgconfig/fusebox.pc",
                         "lib/pkgconfig/fusebox-kit.pc", "lib/libfusebox_kit.a",
                         "include/fusebox/kit/kit.h",    "include/fusebox/kit/kit_oplist.h",
                         "share/doc/fusebox/ABI_CHANGELOG.md", "share/doc/fusebox/writing-a-fuser.md",
                         "share/doc/fusebox/examples/hello_fuser/hello_fuser.c"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", prefix, files[i]);
    ck_assert_msg(exists(p), "not installed: %s\ninstall log:\n%s", p, install_log);
  }
  /* The installed SDK header is the one in the tree. */
  char p[1024];
  snprintf(p, sizeof p, "%s/include/fusebox/fuser_abi.h", prefix);
  char *a = tu_read_file(p, NULL), *b = tu_read_file(tu_src_path("sdk/include/fusebox/fuser_abi.h"), NULL);
  ck_assert(a && b && !strcmp(a, b));
  free(a);
  free(b);
}
END_TEST

/* pkg-config finds the SDK, and its flags (with the kit's) are enough to build hello. */
START_TEST(pkg_config_sdk) {
  require_install();
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags fusebox-sdk", prefix);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "pkg-config failed (%d):\n%s", rc, tail(out));
  ASSERT_HAS(out, "-I");
  ASSERT_HAS(out, "include");
  free(out);
  snprintf(cmd, sizeof cmd,
           "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --variable=abi_version fusebox-sdk", prefix);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ASSERT_HAS(out, "1.");
  free(out);
  /* A plugin built with nothing but the pkg-config flags, as the tutorial shows. */
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/lib/pkgconfig' && mkdir -p '%s/pc' && "
           "cc -std=c11 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror " FBX_OOT_FLAGS " "
           "$(pkg-config --cflags fusebox-kit) '%s/sdk/examples/hello_fuser/hello_fuser.c' "
           "-Wl,--version-script='%s/sdk/examples/hello_fuser/hello_fuser.map' $(pkg-config --libs fusebox-kit) "
           "-o '%s/pc/libhello_fuser.so'",
           prefix, tmp, FBX_SOURCE_DIR, FBX_SOURCE_DIR, tmp);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "building hello_fuser with pkg-config flags failed (%d):\n%s\n%s", rc, cmd, tail(out));
  free(out);
}
END_TEST

/* ---- the out-of-tree plugin ------------------------------------------------------------------ */

START_TEST(hello_builds_and_exports_one_symbol) {
  require_plugin();
  ASSERT_HAS(build_log, "libhello_fuser.so"); /* the output name */
  char cmd[2048], *out = NULL;
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s'", plugin);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "nm failed (%d):\n%s", rc, tail(out));
  int n = 0;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    const char *sym = strrchr(line, ' ');
    sym = sym ? sym + 1 : line;
    ck_assert_msg(!strcmp(sym, FBXP_ENTRY_SYMBOL), "hello_fuser exports '%s' besides %s", sym, FBXP_ENTRY_SYMBOL);
    n++;
  }
  ck_assert_int_eq(n, 1);
  free(out);
}
END_TEST

static fbx_graph *parse_text(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "sdk.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  return g;
}

static fbx_fuser *load_hello(void) {
  require_plugin();
  char env[600];
  snprintf(env, sizeof env, "%s/cache", tmp);
  setenv("FUSEBOX_CACHE_DIR", env, 1);
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, plugin);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_str_eq(fbx_fuser_name(f), "hello");
  ck_assert_uint_eq(fbx_fuser_flags(f), FBXP_GUARDS_OUTSIDE | FBXP_RUN_THREAD_SAFE);
  return f;
}

/* The only FusionGroup of g, after checking the partition report. */
static fbx_node *only_group(fbx_fuser *f, fbx_graph *g) {
  fbx_partition_report rep = {0};
  fbx_status *st = fbx_fuser_partition(f, g, &rep);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_int_eq(rep.rejected, 0);
  ck_assert_int_eq(rep.accepted, 1);
  fbx_node *group = NULL;
  for (fbx_node *n = fbx_block_first(g->block); n; n = n->next)
    if (n->kind == FBX_SYM_fusebox_FusionGroup) group = n;
  ck_assert_ptr_nonnull(group);
  return group;
}

/* The group's inputs, taken from the graph's inputs (new references). */
static void group_inputs(const fbx_graph *g, const fbx_node *group, const fbx_ivalue *graph_in, fbx_ivalue *out) {
  for (int i = 0; i < group->ninputs; i++) {
    int j = 0;
    while (j < fbx_graph_ninputs(g) && fbx_graph_input(g, j) != group->inputs[i]) j++;
    ck_assert_msg(j < fbx_graph_ninputs(g), "group input %d is not a graph input", i);
    out[i] = graph_in[j];
    if (out[i].kind == FBX_IV_TENSOR) fbx_tensor_retain(out[i].u.t);
  }
}

static void assert_close(const fbx_tensor *a, const fbx_tensor *b, double rtol, double atol, const char *what) {
  ck_assert_int_eq(a->dtype, b->dtype);
  ck_assert_msg(fbx_tensor_same_shape(a, b), "%s: shapes differ", what);
  for (int64_t i = 0; i < a->numel; i++) {
    double x = fbx_tensor_get_f64(a, i), y = fbx_tensor_get_f64(b, i);
    ck_assert_msg(fabs(x - y) <= atol + rtol * fabs(y) || (isnan(x) && isnan(y)), "%s[%lld]: %.9g vs %.9g", what,
                  (long long)i, x, y);
  }
}

static fbx_tensor *filled(int64_t r, int64_t c, double lo, double step) {
  int64_t sizes[2] = {r, c};
  fbx_tensor *t = NULL;
  ck_assert_ptr_null(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, sizes));
  for (int64_t i = 0; i < t->numel; i++) fbx_tensor_set_f64(t, i, lo + step * (double)((i * 7) % t->numel));
  return t;
}

/* All nine ops, a float graph input, constants and two outputs become one
 * group; the compiled kernel agrees with the interpreter on the subgraph. */
static const char *ALL_OPS =
    "graph(%x : Float(6, 50, strides=[50, 1], requires_grad=0, device=cpu),\n"
    "      %y : Tensor,\n"
    "      %s : float):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %half : float = prim::Constant[value=0.5]()\n"
    "  %a : Tensor = aten::add(%x, %y, %one)\n"
    "  %b : Tensor = aten::sub(%a, %half, %one)\n"
    "  %c : Tensor = aten::mul(%b, %s)\n"
    "  %d : Tensor = aten::div(%c, %y)\n"
    "  %e : Tensor = aten::neg(%d)\n"
    "  %f : Tensor = aten::relu(%e)\n"
    "  %g : Tensor = aten::sigmoid(%f)\n"
    "  %h : Tensor = aten::tanh(%g)\n"
    "  %i : Tensor = aten::exp(%h)\n"
    "  %j : Tensor = aten::mul(%i, %c)\n"
    "  return (%j, %e)\n";

START_TEST(hello_through_the_host) {
  fbx_fuser *f = load_hello();
  fbx_graph *g = parse_text(ALL_OPS);
  fbx_node *group = only_group(f, g);
  ck_assert_int_eq(fbx_graph_ninputs(fbx_node_subgraph(group)), 3);
  fbx_ivalue graph_in[3] = {fbx_iv_tensor(filled(6, 50, -3.0, 0.02)), fbx_iv_tensor(filled(6, 50, 0.5, 0.01)),
                            fbx_iv_float(1.5)};
  fbx_ivalue in[3], out[2], ref[2];
  group_inputs(g, group, graph_in, in);
  fbx_fkernel *k = NULL;
  fbx_status *st = fbx_fuser_compile(f, group, in, 3, &k);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  const char *src = fbx_fkernel_source(k);
  ck_assert_ptr_nonnull(src);
  ASSERT_HAS(src, "void hello_kernel(");
  ASSERT_HAS(src, "aten::sigmoid");
  ck_assert_ptr_null(fbx_fkernel_run(k, in, 3, out, 2, NULL));

  fbx_interp *it = NULL;
  ck_assert_ptr_null(fbx_interp_create(&it, fbx_node_subgraph(group)));
  ck_assert_ptr_null(fbx_interp_run(it, in, 3, ref, NULL));
  for (int o = 0; o < 2; o++) {
    assert_close(out[o].u.t, ref[o].u.t, 1e-5, 1e-6, "output");
    fbx_iv_release(&out[o]);
    fbx_iv_release(&ref[o]);
  }
  fbx_interp_destroy(it);

  /* Inputs it does not compile for (broadcasting) are refused with a
   * status, so the host falls back; nothing crashes. */
  fbx_ivalue bad[3];
  group_inputs(g, group, graph_in, bad);
  for (int i = 0; i < 3; i++)
    if (bad[i].kind == FBX_IV_TENSOR && bad[i].u.t == graph_in[1].u.t) {
      fbx_iv_release(&bad[i]);
      bad[i] = fbx_iv_tensor(filled(1, 50, 1.0, 0.01));
    }
  fbx_fkernel *k2 = NULL;
  st = fbx_fuser_compile(f, group, bad, 3, &k2);
  ck_assert_ptr_nonnull(st);
  ASSERT_HAS(fbx_status_message(st), "hello");
  fbx_status_free(st);

  for (int i = 0; i < 3; i++) {
    fbx_iv_release(&in[i]);
    fbx_iv_release(&bad[i]);
    fbx_iv_release(&graph_in[i]);
  }
  fbx_fkernel_release(k);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

/* A real graph from the corpus (PyTorch's gelu, tanh form): one group, and
 * PyTorch's own numbers. */
START_TEST(hello_matches_pytorch) {
  fbx_fuser *f = load_hello();
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, tu_src_path("tests/corpus/cases/gelu_tanh/graph.ir"));
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_node *group = only_group(f, g);
  fbx_tensor *x = NULL, *expect = NULL;
  ck_assert_ptr_null(fbx_npy_read_file(&x, tu_src_path("tests/corpus/cases/gelu_tanh/in0.npy")));
  ck_assert_ptr_null(fbx_npy_read_file(&expect, tu_src_path("tests/corpus/cases/gelu_tanh/out0.npy")));
  fbx_ivalue graph_in[1] = {fbx_iv_tensor(x)}, in[1], out[1];
  ck_assert_int_eq(group->ninputs, 1);
  group_inputs(g, group, graph_in, in);
  fbx_fkernel *k = NULL;
  st = fbx_fuser_compile(f, group, in, 1, &k);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_ptr_null(fbx_fkernel_run(k, in, 1, out, 1, NULL));
  assert_close(out[0].u.t, expect, 1e-5, 1e-6, "gelu_tanh");
  fbx_iv_release(&out[0]);
  fbx_iv_release(&in[0]);
  fbx_iv_release(&graph_in[0]);
  fbx_tensor_release(expect);
  fbx_fkernel_release(k);
  fbx_graph_destroy(g);
  fbx_fuser_release(f);
}
END_TEST

/* ---- through the `fusebox` command ---------------------------------------------------------- */

static int cli_has_command(const char *name) {
  char cmd[1024], *out = NULL;
  snprintf(cmd, sizeof cmd, "'%s' --help", FBX_CLI);
  tu_run(cmd, &out);
  char pat[64];
  snprintf(pat, sizeof pat, "  %s ", name);
  int has = out && strstr(out, pat) != NULL;
  free(out);
  return has;
}

START_TEST(cli_plugins_lists_hello) {
  require_plugin();
  ck_assert_msg(cli_has_command("plugins"), "`fusebox plugins` is missing from %s --help", FBX_CLI);
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "FUSEBOX_PLUGIN_PATH='%s/hb' FUSEBOX_CACHE_DIR='%s/cache' '%s' plugins", tmp, tmp, FBX_CLI);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "fusebox plugins failed (%d):\n%s", rc, tail(out));
  char *line = strstr(out, "\n  hello ");
  ck_assert_msg(line, "hello is not listed as loaded:\n%s", tail(out));
  char *eol = strchr(line + 1, '\n');
  if (eol) *eol = '\0';
  ck_assert_msg(!strstr(line, "REJECTED"), "hello rejected: %s", line);
  ASSERT_HAS(line, "ABI 1.");
  ASSERT_HAS(line, "libhello_fuser.so");
  free(out);
}
END_TEST

START_TEST(cli_run_with_hello) {
  require_plugin();
  char cmd[4096], *out = NULL;
  const char *cases = tu_src_path("tests/corpus/cases/gelu_tanh");
  snprintf(cmd, sizeof cmd,
           "FUSEBOX_FUSER='%s' FUSEBOX_CACHE_DIR='%s/cache' FUSEBOX_LOG=loader,fusion '%s' run '%s/graph.ir' "
           "--input '%s/in0.npy' --iters 3 --out '%s/run'",
           plugin, tmp, FBX_CLI, cases, cases, tmp);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s\nfailed (%d):\n%s", cmd, rc, tail(out));
  ASSERT_HAS(out, "hello");
  free(out);
  fbx_tensor *got = NULL, *expect = NULL;
  fbx_status *st = fbx_npy_read_file(&got, at("run/out0.npy"));
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ck_assert_ptr_null(fbx_npy_read_file(&expect, tu_src_path("tests/corpus/cases/gelu_tanh/out0.npy")));
  assert_close(got, expect, 1e-5, 1e-6, "fusebox run gelu_tanh");
  fbx_tensor_release(got);
  fbx_tensor_release(expect);
  /* The summary names the fuser that ran (not `none`). */
  snprintf(cmd, sizeof cmd, "FUSEBOX_FUSER='%s' FUSEBOX_CACHE_DIR='%s/cache' '%s' run '%s/graph.ir' --input '%s/in0.npy' --iters 3",
           plugin, tmp, FBX_CLI, cases, cases);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(!strstr(out, "fuser none"), "the plugin was not used:\n%s", tail(out));
  free(out);
}
END_TEST

/* The conformance checker passes the tutorial plugin, as built by a third party. */
START_TEST(plugin_check_passes_hello) {
  require_plugin();
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "FUSEBOX_CACHE_DIR='%s/cache' '%s' plugin-check '%s' --isolate --corpus '%s'", tmp,
           FBX_CLI, plugin, tu_src_path("tests/corpus/cases"));
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s\nfailed (%d):\n%s", cmd, rc, tail(out));
  ck_assert_msg(strstr(out, " passed, 0 failed\n"), "no clean closing line:\n%s", tail(out));
  ck_assert_msg(!strstr(out, "\nFAIL "), "a check failed:\n%s", tail(out));
  free(out);
}
END_TEST

/* ---- the installed prefix on its own (issue 17.2, 17.3, 17.12) ------------------------------ */

/* A copy of the install moved elsewhere (so neither the configured prefix
 * nor the build tree can be what it finds): its fusebox lists and runs the
 * built-in fusers installed next to it, and plugin-check finds the corpus
 * installed with it. */
START_TEST(relocated_prefix_finds_its_plugins_and_corpus) {
  require_install();
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd, "rm -rf '%s/moved' && cp -a '%s' '%s/moved'", tmp, prefix, tmp);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
  const char *env = "env -u FUSEBOX_PLUGIN_PATH -u FUSEBOX_CORPUS -u FUSEBOX_FUSER";
  snprintf(cmd, sizeof cmd, "cd '%s' && %s FUSEBOX_CACHE_DIR='%s/cache' ./moved/bin/fusebox plugins", tmp, env, tmp);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s\nfailed (%d):\n%s", cmd, rc, tail(out));
  char want[1024];
  snprintf(want, sizeof want, "%s/moved/lib/fusebox/plugins/libfbx_legacy.so", tmp);
  ASSERT_HAS(out, want);
  ck_assert_msg(!strstr(out, FBX_BINARY_DIR), "the installed fusebox looks into the build tree:\n%s", tail(out));
  free(out);
  /* every built-in fuser installed there runs, and gives PyTorch's answer */
  const char *builtins[] = {"legacy", "tensorexpr", "nvfuser_like"};
  int ran = 0;
  const char *cases = tu_src_path("tests/corpus/cases/gelu_tanh");
  for (int i = 0; i < 3; i++) {
    char so[1024];
    snprintf(so, sizeof so, "%s/moved/lib/fusebox/plugins/libfbx_%s.so", tmp, builtins[i]);
    if (!exists(so)) continue;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s FUSEBOX_CACHE_DIR='%s/cache' ./moved/bin/fusebox run '%s/graph.ir' --input '%s/in0.npy' "
             "--fuser %s --iters 3 --stats --out '%s/inst_%s'",
             tmp, env, tmp, cases, cases, builtins[i], tmp, builtins[i]);
    rc = tu_run(cmd, &out);
    ck_assert_msg(rc == 0, "%s\nfailed (%d):\n%s", cmd, rc, tail(out));
    ck_assert_msg(strstr(out, "kernel launches     0 ") == NULL, "%s fused nothing:\n%s", builtins[i], tail(out));
    free(out);
    char o[1024];
    snprintf(o, sizeof o, "%s/inst_%s/out0.npy", tmp, builtins[i]);
    fbx_tensor *got = NULL, *expect = NULL;
    fbx_status *st = fbx_npy_read_file(&got, o);
    ck_assert_msg(!st, "%s", fbx_status_message(st));
    ck_assert_ptr_null(fbx_npy_read_file(&expect, tu_src_path("tests/corpus/cases/gelu_tanh/out0.npy")));
    assert_close(got, expect, 1e-5, 1e-6, builtins[i]);
    fbx_tensor_release(got);
    fbx_tensor_release(expect);
    ran++;
  }
  ck_assert_int_ge(ran, 1); /* legacy at least */
  /* plugin-check with no --corpus: the installed one */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && %s FUSEBOX_CACHE_DIR='%s/cache' ./moved/bin/fusebox plugin-check legacy --case gelu_tanh "
           "--case ratio_iou",
           tmp, env, tmp);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s\nfailed (%d):\n%s", cmd, rc, tail(out));
  snprintf(want, sizeof want, "2 corpus cases from %s/moved/bin/../share/fusebox/corpus", tmp);
  ASSERT_HAS(out, want);
  ASSERT_HAS(out, " passed, 0 failed\n");
  free(out);
}
END_TEST

/* fusebox.pc links an embedding program without --static (libm, libdl,
 * pthreads are in Libs: the library is static). */
START_TEST(pkg_config_embedding_links) {
  require_install();
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/lib/pkgconfig' && cc -std=c11 -O1 " FBX_OOT_FLAGS " '%s/examples/embed.c' "
           "$(pkg-config --cflags --libs fusebox) -o '%s/embed'",
           prefix, FBX_SOURCE_DIR, tmp);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s\nfailed (%d):\n%s", cmd, rc, tail(out));
  free(out);
  ck_assert(exists(at("embed")));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("sdk_install");
  TCase *tc = tcase_create("sdk");
  tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, install_layout);
  tcase_add_test(tc, pkg_config_sdk);
  tcase_add_test(tc, hello_builds_and_exports_one_symbol);
  tcase_add_test(tc, hello_through_the_host);
  tcase_add_test(tc, hello_matches_pytorch);
  tcase_add_test(tc, cli_plugins_lists_hello);
  tcase_add_test(tc, cli_run_with_hello);
  tcase_add_test(tc, plugin_check_passes_hello);
  tcase_add_test(tc, relocated_prefix_finds_its_plugins_and_corpus);
  tcase_add_test(tc, pkg_config_embedding_links);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
