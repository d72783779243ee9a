/* The conformance corpus: every case under tests/corpus/cases/ run through the
 * reference interpreter and compared with PyTorch's own outputs.
 *
 * A case directory holds graph.ir, args (one line per graph input: a .npy
 * file name or a scalar literal 3, 0.5, true, false, None), out0.npy...
 * (the outputs flattened depth-first), and optionally tol ("rtol atol") and
 * notes. Outputs must have PyTorch's dtype and shape, and values within the
 * per-dtype tolerance (NaN exactly where PyTorch has NaN, infinities equal).
 *
 * Every case is run; one line per case is printed, then a count and, when
 * cases fail because the op table lacks an op, which ops those are. A failing
 * case is never skipped: the test passes only when every case does. A sample
 * of the cases also goes through `fusebox run --out` to cover the CLI, and
 * every graph under tests/corpus/graphs/ must at least be plannable. Reading
 * the cases and comparing is corpus_case.h's. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/interp.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

/* The corpus generator writes ~80 cases; far fewer means it is missing or broken. */
#define MIN_CASES 50
#define CLI_SAMPLE_EVERY 5
#define MAX_ARGS 32

static char **case_names;
static int ncases;

static void list_cases(void) {
  if (!case_names) ncases = cc_list(&case_names);
}

/* ---- missing ops ---------------------------------------------------------------------------- */

typedef struct missing {
  char *names[256];
  int counts[256];
  int n;
} missing;

static void note_missing(missing *m, const char *kind) {
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->names[i], kind)) {
      m->counts[i]++;
      return;
    }
  if (m->n < 256) {
    m->names[m->n] = strdup(kind);
    m->counts[m->n++] = 1;
  }
}

/* Node kinds of block b (recursively) that the op table does not have. */
static void unknown_kinds(const fbx_block *b, fbx_strbuf *out, missing *per_case) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (!fbx_op_kind_known(n->kind)) {
      bool seen = false;
      for (int i = 0; i < per_case->n; i++) seen |= !strcmp(per_case->names[i], fbx_sym_str(n->kind));
      if (!seen) {
        note_missing(per_case, fbx_sym_str(n->kind));
        fbx_strbuf_printf(out, "%s%s", out->len ? ", " : "", fbx_sym_str(n->kind));
      }
    }
    for (int k = 0; k < n->nblocks; k++) unknown_kinds(n->blocks[k], out, per_case);
  }
}

/* ---- running a case ---------------------------------------------------------------------------- */

typedef enum verdict { V_PASS, V_FAIL, V_MISSING } verdict;

static verdict run_case(const char *name, fbx_strbuf *why, missing *all_missing) {
  fbx_graph *g = NULL;
  fbx_interp *it = NULL;
  fbx_ivalue in[MAX_ARGS] = {0}, out[64] = {0};
  int nargs = 0, nout = 0;
  verdict v = V_FAIL;
  fbx_status *st = fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  if (st) {
    fbx_strbuf_printf(why, "parse: %s", fbx_status_message(st));
    goto done;
  }
  if ((nargs = cc_load_inputs(name, in, MAX_ARGS, why)) < 0) {
    nargs = 0;
    goto done;
  }
  if ((st = fbx_interp_create(&it, g))) {
    fbx_strbuf_printf(why, "%s", fbx_status_message(st));
    goto done;
  }
  nout = fbx_interp_noutputs(it);
  if (nout > 64) {
    fbx_strbuf_puts(why, "too many outputs");
    goto done;
  }
  if ((st = fbx_interp_run(it, in, nargs, out, NULL))) {
    const char *m = fbx_status_message(st), *p = strstr(m, "no overload of ");
    fbx_strbuf_printf(why, "%s", m);
    /* the op the run stopped at is not in the table: name every unknown op of the graph */
    missing here = {0};
    fbx_strbuf kinds = {0};
    unknown_kinds(g->block, &kinds, &here);
    if (strstr(m, " is not in fusebox's op table")) {
      fbx_strbuf_free(why);
      *why = (fbx_strbuf){0};
      fbx_strbuf_printf(why, "missing op%s: %s", here.n == 1 ? "" : "s", kinds.data ? kinds.data : "?");
      for (int i = 0; i < here.n; i++) note_missing(all_missing, here.names[i]);
      v = V_MISSING;
    }
    for (int i = 0; i < here.n; i++) free(here.names[i]);
    fbx_strbuf_free(&kinds);
    if (p && v != V_MISSING) { /* the op is known, but not for these arguments (e.g. its Tensor form is missing) */
      char kind[128];
      if (sscanf(p, "no overload of %127s", kind) == 1) {
        char *paren = strstr(p, " accepts (");
        char key[256];
        size_t n = paren ? strcspn(paren + 9, ")") + 1 : 0;
        snprintf(key, sizeof key, "%s%.*s", kind, (int)n, paren ? paren + 9 : "");
        note_missing(all_missing, key);
        v = V_MISSING;
      }
    }
    goto done;
  }
  v = cc_compare_outputs(name, out, nout, why) ? V_PASS : V_FAIL;
done:
  fbx_status_free(st);
  for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
  for (int i = 0; i < nargs; i++) fbx_iv_release(&in[i]);
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
  return v;
}

/* The first two lines of a message, indented, for the per-case line. */
static void print_reason(const char *why) {
  const char *nl = strchr(why, '\n');
  if (!nl) {
    printf("    %s\n", why);
    return;
  }
  printf("    %.*s\n", (int)(nl - why), why);
  const char *nl2 = strchr(nl + 1, '\n');
  printf("    %.*s\n", nl2 ? (int)(nl2 - nl - 1) : (int)strlen(nl + 1), nl + 1);
}

START_TEST(corpus_cases) {
  ck_assert(!fbx_op_table_init());
  list_cases();
  int pass = 0, fail = 0, miss = 0;
  missing all = {0};
  printf("conformance: %d cases in tests/corpus/cases\n", ncases);
  for (int c = 0; c < ncases; c++) {
    fbx_strbuf why = {0};
    verdict v = run_case(case_names[c], &why, &all);
    if (v == V_PASS) {
      pass++;
      printf("  PASS %s\n", case_names[c]);
    } else {
      v == V_MISSING ? miss++ : fail++;
      printf("  FAIL %s\n", case_names[c]);
      print_reason(why.data ? why.data : "?");
    }
    fbx_strbuf_free(&why);
  }
  printf("conformance: %d/%d cases pass, %d fail, %d of them for missing ops\n", pass, ncases, fail + miss, miss);
  if (all.n) {
    printf("ops missing from the op table (cases needing them):");
    for (int i = 0; i < all.n; i++) {
      printf("%s %s (%d)", i ? "," : "", all.names[i], all.counts[i]);
      free(all.names[i]);
    }
    printf("\n");
  }
  fflush(stdout);
  ck_assert_msg(ncases >= MIN_CASES || cc_list_filtered(), "only %d corpus cases (expected at least %d): regenerate the corpus", ncases,
                MIN_CASES);
  ck_assert_msg(fail + miss == 0, "%d of %d corpus cases fail (%d for missing ops); see the lines above",
                fail + miss, ncases, miss);
}
END_TEST

/* A sample of the cases through `fusebox run --out`, compared the same way. */
START_TEST(corpus_through_cli) {
  ck_assert(!fbx_op_table_init());
  list_cases();
  char tmp[] = "/tmp/fbx_conformance_XXXXXX";
  ck_assert(mkdtemp(tmp));
  int tried = 0, passed = 0;
  missing ignore = {0};
  int passing = 0;
  for (int c = 0; c < ncases; c++) {
    const char *name = case_names[c];
    fbx_strbuf why = {0};
    verdict api = run_case(name, &why, &ignore);
    fbx_strbuf_free(&why);
    if (api != V_PASS) continue; /* reported by corpus_cases */
    if (passing++ % CLI_SAMPLE_EVERY) continue; /* every 5th passing case, starting with the first */
    tried++;
    char *lines[MAX_ARGS];
    int nargs = cc_args_lines(name, lines, MAX_ARGS);
    fbx_strbuf cmd = {0};
    fbx_strbuf_printf(&cmd, "%s run %s --out %s/%s", FBX_CLI, cc_path(name, "graph.ir"), tmp, name);
    for (int i = 0; i < nargs; i++) {
      fbx_strbuf_printf(&cmd, " --input '%s'", cc_arg_is_npy(lines[i]) ? cc_path(name, lines[i]) : lines[i]);
    }
    cc_free_lines(lines, nargs);
    char *out = NULL;
    int rc = tu_run(cmd.data, &out);
    fbx_strbuf_free(&cmd);
    ck_assert_msg(rc == 0, "%s: fusebox run exited %d:\n%s", name, rc, out);
    free(out);
    int nout = cc_count_outputs(name);
    fbx_ivalue got[64];
    int k = 0;
    for (; k < nout && k < 64; k++) {
      char p[4096];
      fbx_tensor *t = NULL;
      snprintf(p, sizeof p, "%s/%s/out%d.npy", tmp, name, k);
      fbx_status *st = fbx_npy_read_file(&t, p);
      ck_assert_msg(!st, "%s: %s", name, fbx_status_message(st));
      got[k] = fbx_iv_tensor(t);
    }
    fbx_strbuf w = {0};
    bool ok = cc_compare_outputs(name, got, k, &w);
    ck_assert_msg(ok, "%s through the CLI: %s", name, w.data);
    fbx_strbuf_free(&w);
    for (int i = 0; i < k; i++) fbx_iv_release(&got[i]);
    passed++;
  }
  for (int i = 0; i < ignore.n; i++) free(ignore.names[i]);
  printf("conformance through `fusebox run`: %d sampled cases pass\n", passed);
  char rm[256];
  snprintf(rm, sizeof rm, "rm -rf %s", tmp);
  ck_assert_int_eq(system(rm), 0);
  ck_assert_msg(tried > 0 || ncases == 0, "no sampled case passes through the C API, so none went through the CLI");
}
END_TEST

/* Every graph of the corpus (script, trace and fused graphs) can be planned:
 * its constants materialize and its structure is understood. Ops the table
 * lacks only fail when a run reaches them, so they do not count here. */
START_TEST(corpus_graphs_plan) {
  ck_assert(!fbx_op_table_init());
  DIR *d = opendir(tu_src_path("tests/corpus/graphs"));
  ck_assert_msg(d, "no tests/corpus/graphs directory");
  struct dirent *e;
  int n = 0, bad = 0;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".ir")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", tu_src_path("tests/corpus/graphs"), e->d_name);
    fbx_graph *g = NULL;
    fbx_interp *it = NULL;
    fbx_status *st = fbx_graph_parse_file(&g, p);
    if (!st) st = fbx_interp_create(&it, g);
    if (st) {
      printf("  cannot plan %s: %s\n", e->d_name, fbx_status_message(st));
      bad++;
    }
    n++;
    fbx_status_free(st);
    fbx_interp_destroy(it);
    fbx_graph_destroy(g);
  }
  closedir(d);
  printf("corpus graphs: %d of %d can be planned\n", n - bad, n);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_gt(n, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, corpus_cases);
  tcase_add_test(tc, corpus_through_cli);
  tcase_add_test(tc, corpus_graphs_plan);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  cc_free_names(case_names, ncases);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
