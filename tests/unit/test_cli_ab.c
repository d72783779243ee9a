/* `fusebox ab`: a small suite (a manifest with a size sweep and a
 * forward-only workload) with none against the `good` test plugin — the
 * table (100 columns, no progress bar off a terminal), --markdown, the JSON
 * file (checked by python3's json module), the report (its SVGs parse as XML
 * and the page shows them; rendered by headless Chromium when installed:
 * tests/unit/check_ab_report.py); --backward skipping forward-only
 * workloads; a fuser whose outputs are wrong is flagged WRONG and not ranked;
 * --compare on a planted 20% slowdown (the `sleeps` plugin,
 * FBX_TEST_SLEEP_US) and on two runs of the same build; usage errors. Shapes
 * are tiny and rounds few: no figure is asserted, only structure and the
 * significance verdicts. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fusebox/tensor.h>

#include "testutil.h"

#define GOOD FBX_TEST_PLUGIN_DIR "/libfbxtest_good.so"
#define SLEEPS FBX_TEST_PLUGIN_DIR "/libfbxtest_sleeps.so"
#define CHECKER FBX_SOURCE_DIR "/tests/unit/check_ab_report.py"

static char dir[256];

static const char *path_in(const char *name) {
  static char buf[4][512];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

static void write_file(const char *name, const char *text) {
  FILE *f = fopen(path_in(name), "w");
  ck_assert_msg(f, "%s", path_in(name));
  fputs(text, f);
  fclose(f);
}

static const char *G_CHAIN =
    "graph(%x.1 : Float(64, 32),\n"
    "      %y.1 : Float(64, 32)):\n"
    "  %a : Tensor = aten::relu(%x.1)\n"
    "  %b : Tensor = aten::mul(%a, %y.1)\n"
    "  %c : Tensor = aten::neg(%b)\n"
    "  return (%c)\n";

static const char *G_UNTYPED =
    "graph(%x.1 : Tensor,\n"
    "      %y.1 : Tensor):\n"
    "  %a : Tensor = aten::relu(%x.1)\n"
    "  %b : Tensor = aten::mul(%a, %y.1)\n"
    "  return (%b)\n";

static const char *MANIFEST =
    "# a test suite\n"
    "chain     chain.ir   yes -     \n"
    "sweep_64  sweep.ir   yes sweep 64\n"
    "sweep_256 sweep.ir   yes sweep x=256 y=256\n"
    "fwd_only  chain.ir   no  -\n";

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/fbx_ab_XXXXXX");
  ck_assert(mkdtemp(dir));
  write_file("chain.ir", G_CHAIN);
  write_file("sweep.ir", G_UNTYPED);
  ck_assert(!mkdir(path_in("suite"), 0700));
  write_file("suite/manifest.txt", MANIFEST);
  write_file("suite/chain.ir", G_CHAIN);
  write_file("suite/sweep.ir", G_UNTYPED);
}

static void teardown(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert(system(cmd) == 0);
}

static int ab(const char *env, const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd %s && %s %s ab %s", dir, env ? env : "", FBX_CLI, args);
  return tu_run(cmd, out);
}

static bool have_python(void) { return system("python3 -c 'import json, xml.etree.ElementTree' >/dev/null 2>&1") == 0; }

START_TEST(suite_table_json_report) {
  char *out = NULL;
  int rc = ab(NULL, "suite --fusers none," GOOD " --rounds 3 --json run.json --report rep --markdown", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  /* the table: every workload, the plugin by name, at most 100 columns */
  ck_assert_msg(strstr(out, "chain") && strstr(out, "sweep_64") && strstr(out, "sweep_256") && strstr(out, "fwd_only"),
                "%s", out);
  ck_assert_msg(strstr(out, "  good "), "%s", out);
  ck_assert_msg(!strchr(out, '\r') && !strchr(out, '\033'), "a progress bar off a terminal:\n%s", out);
  bool markdown = false;
  for (char *line = out; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    if (line[0] == '|') markdown = true;
    else ck_assert_msg(len <= 100, "line of %zu columns: %.*s", len, (int)len, line);
    line = nl ? nl + 1 : NULL;
  }
  ck_assert_msg(markdown && strstr(out, "| workload | fuser | median ms |"), "%s", out);
  free(out);
  if (!have_python()) {
    printf("test_cli_ab: SKIP the JSON and report checks: no python3\n");
    return;
  }
  /* the JSON: every sample; good launched one kernel a run for the chain,
   * none interpreted its three ops (counted from the graph above) */
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd %s && python3 -c '\n"
           "import json\n"
           "j = json.load(open(\"run.json\"))\n"
           "assert j[\"format\"] == \"fusebox-ab 1\" and j[\"rounds\"] == 3, j\n"
           "w = {x[\"name\"]: x for x in j[\"workloads\"]}\n"
           "assert sorted(w) == [\"chain\", \"fwd_only\", \"sweep_256\", \"sweep_64\"], sorted(w)\n"
           "assert w[\"sweep_256\"][\"elements\"] == 256 and w[\"sweep_256\"][\"group\"] == \"sweep\"\n"
           "for x in j[\"workloads\"]:\n"
           "  assert len(x[\"results\"]) == 2 and len(x[\"memcpy_ms\"]) == 3, x\n"
           "  for r in x[\"results\"]:\n"
           "    assert r[\"ran\"] and not r[\"wrong\"] and len(r[\"samples_ms\"]) == 3, r\n"
           "    assert all(t > 0 for t in r[\"samples_ms\"]), r\n"
           "    assert r[\"median_ci_lo\"] <= r[\"median_ms\"] <= r[\"median_ci_hi\"], r\n"
           "n, g = w[\"chain\"][\"results\"]\n"
           "assert n[\"fuser\"] == \"none\" and g[\"name\"] == \"good\", (n, g)\n"
           "assert n[\"interpreted_ops_per_run\"] == 3 and n[\"kernel_launches_per_run\"] == 0, n\n"
           "assert g[\"kernel_launches_per_run\"] == 1 and g[\"interpreted_ops_per_run\"] == 0, g\n"
           "assert n[\"speedup\"] == 1 and g[\"speedup_ci_lo\"] <= g[\"speedup\"] <= g[\"speedup_ci_hi\"], g\n"
           "assert g[\"max_abs\"] == 0, g\n"
           "' 2>&1",
           dir);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "JSON check failed:\n%s", out);
  free(out);
  /* the report: SVGs parse, the page shows them (and the sweep's), good's
   * bars are drawn (#ff7f0e: the second fuser's colour), in Chromium too */
  snprintf(cmd, sizeof cmd, "python3 %s %s/rep '#ff7f0e' --chromium 2>&1", CHECKER, dir);
  rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0 && strstr(out, "OK"), "report check failed:\n%s", out);
  printf("test_cli_ab: %s", out);
  free(out);
  char *page = tu_read_file(path_in("rep/index.html"), NULL);
  ck_assert(page);
  ck_assert_msg(strstr(page, "src=\"sweep-sweep.svg\""), "no size-sweep chart:\n%s", page);
  free(page);
}
END_TEST

START_TEST(backward_and_graphs) {
  char *out = NULL;
  int rc = ab(NULL, "suite --fusers none," GOOD " --rounds 2 --backward", &out);
  ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
  ck_assert_msg(strstr(out, "fwd_only  skipped: forward only") && strstr(out, "forward+backward"), "%s", out);
  free(out);
  /* inputs from .npy files (relative to the manifest); a mix with random ones is refused */
  fbx_tensor *t = NULL;
  int64_t sz[2] = {64, 32};
  ck_assert(!fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 2, sz));
  for (int i = 0; i < 64 * 32; i++) ((float *)t->data)[i] = (float)(i % 13) - 6.0f;
  ck_assert(!fbx_npy_write_file(path_in("suite/x.npy"), t));
  fbx_tensor_release(t);
  write_file("suite/npy.txt", "files chain.ir yes - x=x.npy y.1=x.npy\nmixed chain.ir yes - x=x.npy 64,32\n");
  rc = ab(NULL, "suite/npy.txt --fusers none," GOOD " --rounds 2 --json npy.json", &out);
  ck_assert_msg(rc == 1 && strstr(out, "files  2048 elements") && strstr(out, "mixed  ERROR") &&
                    strstr(out, "every input as a .npy file or none"),
                "exit %d:\n%s", rc, out);
  free(out);
  char *j = tu_read_file(path_in("npy.json"), NULL);
  ck_assert(j);
  /* bytes moved: two 64x32 float32 inputs read, one output written */
  ck_assert_msg(strstr(j, "\"name\": \"files\"") && strstr(j, "\"bytes_moved\": 24576"), "%s", j);
  free(j);
  /* graphs given directly, --shape for untyped inputs, --baseline */
  rc = ab(NULL, "chain.ir sweep.ir --shape 16 --fusers none," GOOD " --baseline good --rounds 2", &out);
  ck_assert_msg(rc == 0 && strstr(out, "speedup over good") && strstr(out, "sweep  16 elements"), "exit %d:\n%s", rc,
                out);
  free(out);
}
END_TEST

START_TEST(wrong_is_flagged) {
  char *out = NULL;
  int rc = ab("FBX_TEST_WRONG=1", "chain.ir --fusers none," SLEEPS " --rounds 2 --json w.json", &out);
  ck_assert_msg(rc == 1, "exit %d:\n%s", rc, out);
  ck_assert_msg(strstr(out, "sleeps") && strstr(out, "WRONG") && strstr(out, "beyond tolerance"), "%s", out);
  free(out);
  char *j = tu_read_file(path_in("w.json"), NULL);
  ck_assert(j);
  ck_assert_msg(strstr(j, "\"wrong\": true") && strstr(j, "\"speedup\": null"), "%s", j);
  free(j);
}
END_TEST

/* The planted slowdown: 50 ms a kernel run against 60 ms (20%), 30 rounds.
 * Sleeps are long so that the scheduler's wake-up delays on a loaded machine
 * (seen here: 5 ms sleeps taking up to 11 ms at a load average of 20 on 2
 * cores; 20 ms sleeps hid the slowdown three times under `ctest -j2`) stay
 * small against them. Every attempt must not flag the two runs of
 * the same build; the slowdown must be flagged, and where a loaded machine
 * hides it, up to two more attempts measure everything again (each printed). */
START_TEST(compare_planted_slowdown) {
  char *out = NULL;
  const char *args[3][2] = {{"FBX_TEST_SLEEP_US=50000", "chain.ir --fusers " SLEEPS " --rounds 30 --json a.json"},
                            {"FBX_TEST_SLEEP_US=50000", "chain.ir --fusers " SLEEPS " --rounds 30 --json b.json"},
                            {"FBX_TEST_SLEEP_US=60000", "chain.ir --fusers " SLEEPS " --rounds 30 --json c.json"}};
  bool detected = false;
  char seen[8192] = ""; /* every attempt's verdicts, for the failure message */
  for (int attempt = 0; attempt < 3 && !detected; attempt++) {
    for (int i = 0; i < 3; i++) {
      int rc = ab(args[i][0], args[i][1], &out);
      ck_assert_msg(rc == 0, "%s: exit %d:\n%s", args[i][1], rc, out);
      free(out);
    }
    /* the same build twice: no regression past 10%. (Load that drifts between
     * the two processes moved the median of one such pair by 3.9% here, p =
     * 0.0025: the default noise floor, 5%, calls that within noise; the gate
     * is what a CI relies on.) */
    int rc = ab(NULL, "--compare a.json b.json --fail-on-regression 10", &out);
    printf("test_cli_ab: attempt %d, same build:\n%s", attempt + 1, out);
    ck_assert_msg(rc == 0 && !strstr(out, "REGRESSION"), "exit %d:\n%s", rc, out);
    free(out);
    /* 20% slower: significant, a regression past 10% */
    rc = ab(NULL, "--compare a.json c.json --fail-on-regression 10", &out);
    printf("test_cli_ab: attempt %d, planted 20%% slowdown:\n%s", attempt + 1, out);
    size_t used = strlen(seen);
    snprintf(seen + used, sizeof seen - used, "attempt %d (exit %d):\n%s", attempt + 1, rc, out);
    ck_assert_msg(rc == 0 || rc == 1, "exit %d:\n%s", rc, out);
    detected = rc == 1;
    if (detected)
      ck_assert_msg(strstr(out, "sleeps") && strstr(out, "SLOWER (REGRESSION)") && strstr(out, "1 slower"), "%s", out);
    free(out);
  }
  ck_assert_msg(detected, "the planted 20%% slowdown was not flagged in 3 attempts:\n%s", seen);
  /* the other way round it is faster (exit 0); a gate past the change passes */
  int rc = ab(NULL, "--compare c.json a.json --fail-on-regression 10", &out);
  ck_assert_msg(rc == 0 && strstr(out, "faster") && strstr(out, "1 faster"), "exit %d:\n%s", rc, out);
  free(out);
  rc = ab(NULL, "--compare a.json c.json --fail-on-regression 80", &out);
  ck_assert_msg(rc == 0 && strstr(out, "SLOWER") && !strstr(out, "REGRESSION"), "exit %d:\n%s", rc, out);
  free(out);
}
END_TEST

START_TEST(usage_errors) {
  char *out = NULL;
  const char *usage[] = {"",
                         "--fusers none",
                         "suite",
                         "suite --fusers none --rounds 1",
                         "suite --fusers none --rounds x",
                         "suite --fusers none --baseline good",
                         "suite --fusers none,none",
                         "suite --fusers none --bogus",
                         "suite --fusers none --json",
                         "suite --fusers none --fail-on-regression 5",
                         "suite --fusers none --shape x",
                         "--compare a.json",
                         "--compare a.json b.json --alpha 2",
                         "--compare a.json b.json --fusers none",
                         NULL};
  for (int i = 0; usage[i]; i++) {
    int rc = ab(NULL, usage[i], &out);
    ck_assert_msg(rc == 2, "'%s': exit %d:\n%s", usage[i], rc, out);
    ck_assert_msg(strstr(out, "usage"), "'%s':\n%s", usage[i], out);
    free(out);
  }
  int rc = ab(NULL, "suite --fusers none,nosuchfuser", &out);
  ck_assert_msg(rc == 2 && strstr(out, "'nosuchfuser' cannot be used"), "exit %d:\n%s", rc, out);
  free(out);
  /* manifests: errors name file:line */
  const char *bad[][2] = {{"# c\n\nw1 chain.ir\n", "manifest.txt:3: expected NAME GRAPH BACKWARD GROUP"},
                          {"w1 chain.ir maybe -\n", "manifest.txt:1: BACKWARD must be yes or no"},
                          {"w/1 chain.ir yes -\n", "manifest.txt:1: workload name 'w/1'"},
                          {"w1 nope.ir yes -\n", "manifest.txt:1: graph"},
                          {"w1 chain.ir yes -\nw1 chain.ir yes -\n", "manifest.txt:2: workload 'w1' given twice"},
                          {"# nothing\n", "no workloads"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    FILE *f = fopen(path_in("manifest.txt"), "w");
    ck_assert(f);
    fputs(bad[i][0], f);
    fclose(f);
    rc = ab(NULL, "manifest.txt --fusers none", &out);
    ck_assert_msg(rc == 2 && strstr(out, bad[i][1]), "%s: exit %d:\n%s", bad[i][0], rc, out);
    free(out);
  }
  rc = ab(NULL, "nowhere --fusers none", &out);
  ck_assert_msg(rc == 2 && strstr(out, "nowhere"), "exit %d:\n%s", rc, out);
  free(out);
  /* a workload that cannot run (untyped inputs, no sizes): reported, exit 1 */
  rc = ab(NULL, "sweep.ir chain.ir --fusers none --rounds 2", &out);
  ck_assert_msg(rc == 1 && strstr(out, "sweep  ERROR") && strstr(out, "chain  2048 elements"), "exit %d:\n%s", rc, out);
  free(out);
  /* --compare on files that are not ab's JSON */
  write_file("a.json", "{\"format\": \"fusebox-ab 1\", \"workloads\": [}");
  write_file("b.json", "{\"x\": 1}");
  rc = ab(NULL, "--compare a.json b.json", &out);
  ck_assert_msg(rc == 2 && strstr(out, "a.json: byte"), "exit %d:\n%s", rc, out);
  free(out);
  write_file("a.json", "{\"format\": \"fusebox-ab 1\", \"workloads\": []}");
  rc = ab(NULL, "--compare a.json b.json", &out);
  ck_assert_msg(rc == 2 && strstr(out, "b.json: not a `fusebox ab --json` file"), "exit %d:\n%s", rc, out);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli_ab");
  TCase *tc = tcase_create("ab");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, suite_table_json_report);
  tcase_add_test(tc, backward_and_graphs);
  tcase_add_test(tc, wrong_is_flagged);
  tcase_add_test(tc, compare_planted_slowdown);
  tcase_add_test(tc, usage_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
