/* `fusebox bench`: none against the `good` test plugin on a relu/mul chain;
 * the table, the JSON file (checked by a small JSON parser) and errors. */
#include <check.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/tensor.h>

#include "testutil.h"

#define GOOD FBX_TEST_PLUGIN_DIR "/libfbxtest_good.so"

static char dir[256];

static const char *path_in(const char *name) {
  static char buf[4][512];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

static const char *G_CHAIN =
    "graph(%x.1 : Float(64, 32),\n"
    "      %y.1 : Float(64, 32)):\n"
    "  %a : Tensor = aten::relu(%x.1)\n"
    "  %b : Tensor = aten::mul(%a, %y.1)\n"
    "  %c : Tensor = aten::neg(%b)\n"
    "  return (%c)\n";

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fbx_bench_XXXXXX");
  ck_assert(mkdtemp(dir));
  FILE *f = fopen(path_in("chain.ir"), "w");
  ck_assert(f);
  fputs(G_CHAIN, f);
  fclose(f);
  fbx_tensor *t = NULL;
  int64_t sz[2] = {64, 32};
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 2, sz));
  for (int i = 0; i < 64 * 32; i++) ((float *)t->data)[i] = (float)(i % 13) - 6.0f;
  ck_assert(!fbx_npy_write_file(path_in("x.npy"), t));
  fbx_tensor_release(t);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert(system(cmd) == 0);
}

static int bench(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && %s bench %s", dir, FBX_CLI, args);
  return tu_run(cmd, out);
}

/* ---- a minimal JSON parser: validates, and finds keys ------------------------------------- */

typedef struct js {
  const char *p;
  bool ok;
} js;

static void ws(js *j) {
  while (isspace((unsigned char)*j->p)) j->p++;
}
static void value(js *j);

static void string(js *j) {
  if (*j->p != '"') {
    j->ok = false;
    return;
  }
  for (j->p++; *j->p && *j->p != '"'; j->p++)
    if (*j->p == '\\' && j->p[1]) j->p++;
    else if ((unsigned char)*j->p < 0x20) j->ok = false;
  if (*j->p != '"') j->ok = false;
  else j->p++;
}

static void value(js *j) {
  ws(j);
  if (!j->ok) return;
  char c = *j->p;
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->p++;
    ws(j);
    if (*j->p == close) {
      j->p++;
      return;
    }
    for (;;) {
      if (c == '{') {
        ws(j);
        string(j);
        ws(j);
        if (*j->p++ != ':') j->ok = false;
      }
      value(j);
      ws(j);
      if (!j->ok) return;
      if (*j->p == ',') {
        j->p++;
        continue;
      }
      if (*j->p++ != close) j->ok = false;
      return;
    }
  } else if (c == '"') {
    string(j);
  } else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
    j->p += 4;
  } else if (!strncmp(j->p, "false", 5)) {
    j->p += 5;
  } else {
    char *end;
    strtod(j->p, &end);
    if (end == j->p) j->ok = false;
    j->p = end;
  }
}

static bool valid_json(const char *text) {
  js j = {text, true};
  value(&j);
  ws(&j);
  return j.ok && !*j.p;
}

/* ---- tests ------------------------------------------------------------------------------- */

START_TEST(none_vs_good) {
  char *out = NULL;
  int rc = bench("chain.ir --input x.npy --input y=x.npy --fusers none," GOOD " --iters 7 --json res.json", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  ck_assert_msg(strstr(out, "fuser ") && strstr(out, "compile_ms") && strstr(out, "median_ms") &&
                    strstr(out, "min_ms") && strstr(out, "groups") && strstr(out, "launches/run") &&
                    strstr(out, "speedup") && strstr(out, "max_abs") && strstr(out, "max_rel"),
                "%s", out);
  ck_assert_msg(strstr(out, "\nnone "), "no none row:\n%s", out);
  const char *good = strstr(out, "\ngood ");
  ck_assert_msg(good, "no good row:\n%s", out);
  /* good: one group, one launch per run, exact answers */
  char name[32], speed[32], eabs[32], erel[32];
  double compile, med, min, launches;
  long long groups, fallbacks;
  ck_assert_msg(sscanf(good + 1, "%31s %lf %lf %lf %lld %lf %31s %31s %31s %lld", name, &compile, &med, &min, &groups,
                       &launches, speed, eabs, erel, &fallbacks) == 10,
                "%s", good);
  ck_assert_int_eq(groups, 1);
  ck_assert(launches == 1.0);
  ck_assert_str_eq(eabs, "0");
  ck_assert(min <= med);
  ck_assert_int_eq(fallbacks, 0);
  ck_assert_msg(strstr(out, "1.00x"), "none's speedup over itself:\n%s", out);
  free(out);

  char *json = tu_read_file(path_in("res.json"), NULL);
  ck_assert(json);
  ck_assert_msg(valid_json(json), "invalid JSON:\n%s", json);
  const char *keys[] = {"\"graph\"", "\"iters\": 7", "\"fusers\"", "\"name\": \"none\"", "\"name\": \"good\"",
                        "\"compile_ms\"", "\"median_ms\"", "\"min_ms\"", "\"groups\": 1", "\"kernel_launches_per_run\": 1",
                        "\"speedup\"", "\"max_abs_error\": 0", "\"max_rel_error\"", "\"outputs_match\": true", NULL};
  for (int i = 0; keys[i]; i++) ck_assert_msg(strstr(json, keys[i]), "no %s in:\n%s", keys[i], json);
  free(json);
}
END_TEST

START_TEST(random_and_errors) {
  char *out = NULL;
  int rc = bench("chain.ir --random --fusers " GOOD ",none --iters 3", &out);
  ck_assert_msg(rc == 0 && strstr(out, "\ngood ") && strstr(out, "\nnone "), "exit %d:\n%s", rc, out);
  free(out);
  ck_assert_int_eq(bench("chain.ir --random", &out), 2);
  ck_assert_msg(strstr(out, "no --fusers"), "%s", out);
  free(out);
  ck_assert_int_eq(bench("chain.ir --random --fusers none,no_such_fuser_xyz", &out), 2);
  ck_assert_msg(strstr(out, "no_such_fuser_xyz"), "%s", out);
  free(out);
  ck_assert_int_eq(bench("chain.ir --random --fusers none --iters 0", &out), 2);
  free(out);
  ck_assert_int_eq(bench("chain.ir --input x.npy --fusers none", &out), 1);
  ck_assert_msg(strstr(out, "missing: y.1"), "%s", out);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli_bench");
  TCase *tc = tcase_create("bench");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, none_vs_good);
  tcase_add_test(tc, random_and_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
