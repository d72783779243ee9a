/* `fusebox ab --compare OLD.json NEW.json`: per (workload, fuser) present in
 * both files (fusers matched by plugin name, so that two builds' plugin paths
 * may differ), the change of the median time and the two-sided Mann-Whitney
 * U test of the two sets of samples. A change is significant when p < alpha
 * and the medians differ by at least noise percent; others are "within
 * noise". With fail_pct >= 0 the exit status is 1 when a significant slowdown
 * reaches fail_pct percent, or a fuser that was right became WRONG or FAILED. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ab.h"
#include "base/alloc.h"

/* samples_ms of a result as a new array (fbx_free it); *n their count. */
static double *samples(const ab_json *res, int *n) {
  const ab_json *s = ab_json_get(res, "samples_ms");
  *n = 0;
  if (!s || s->kind != AB_J_ARR || !s->n) return NULL;
  double *v = fbx_malloc((size_t)s->n * sizeof *v);
  if (!v) return NULL;
  for (int i = 0; i < s->n; i++)
    if (s->items[i].kind == AB_J_NUM) v[(*n)++] = s->items[i].num;
  return v;
}

static const char *jstr(const ab_json *o, const char *key) {
  const ab_json *v = ab_json_get(o, key);
  return v && v->kind == AB_J_STR ? v->str : NULL;
}

static bool jtrue(const ab_json *o, const char *key) {
  const ab_json *v = ab_json_get(o, key);
  return v && v->kind == AB_J_BOOL && v->num != 0;
}

static const ab_json *find_named(const ab_json *arr, const char *key, const char *name) {
  if (!arr || arr->kind != AB_J_ARR || !name) return NULL;
  for (int i = 0; i < arr->n; i++) {
    const char *v = jstr(&arr->items[i], key);
    if (v && !strcmp(v, name)) return &arr->items[i];
  }
  return NULL;
}

static const ab_json *find_result(const ab_json *results, const ab_json *want) {
  const ab_json *r = find_named(results, "name", jstr(want, "name"));
  return r ? r : find_named(results, "fuser", jstr(want, "fuser"));
}

static fbx_status *check_format(const char *path, const ab_json *j) {
  const char *fmt = jstr(j, "format");
  const ab_json *w = ab_json_get(j, "workloads");
  if (!fmt || strcmp(fmt, "fusebox-ab 1") || !w || w->kind != AB_J_ARR)
    return fbx_status_new(FBX_ERR_PARSE, "%s: not a `fusebox ab --json` file (format \"fusebox-ab 1\")", path);
  return NULL;
}

int ab_compare(const char *old_path, const char *new_path, double fail_pct, double noise_pct, double alpha) {
  ab_json old = {0}, neu = {0};
  fbx_status *st = ab_json_parse_file(old_path, &old);
  if (!st) st = check_format(old_path, &old);
  if (!st) st = ab_json_parse_file(new_path, &neu);
  if (!st) st = check_format(new_path, &neu);
  if (st) {
    fprintf(stderr, "fusebox ab: %s\n", fbx_status_message(st));
    fbx_status_free(st);
    ab_json_free(&old);
    ab_json_free(&neu);
    return 2;
  }
  printf("# fusebox ab --compare %s %s\n# significant: Mann-Whitney U p < %g and |change| >= %g%%\n", old_path,
         new_path, alpha, noise_pct);
  printf("%-22s %-12s %10s %10s %8s %9s  %s\n", "workload", "fuser", "old ms", "new ms", "change", "p", "verdict");
  int slower = 0, faster = 0, same = 0, broke = 0, missing = 0, rc = 0;
  const ab_json *nw = ab_json_get(&neu, "workloads"), *ow = ab_json_get(&old, "workloads");
  for (int w = 0; w < nw->n; w++) {
    const ab_json *wn = &nw->items[w];
    const char *name = jstr(wn, "name");
    const ab_json *wo = find_named(ow, "name", name);
    const ab_json *rn = ab_json_get(wn, "results"), *ro = wo ? ab_json_get(wo, "results") : NULL;
    if (!name || !rn || rn->kind != AB_J_ARR) continue;
    for (int i = 0; i < rn->n; i++) {
      const ab_json *cn = &rn->items[i];
      const ab_json *co = ro ? find_result(ro, cn) : NULL;
      const char *fuser = jstr(cn, "name") ? jstr(cn, "name") : jstr(cn, "fuser");
      if (!co) {
        printf("%-22.22s %-12.12s %10s %10s %8s %9s  only in new\n", name, fuser ? fuser : "?", "-", "-", "-", "-");
        missing++;
        continue;
      }
      bool ok_old = jtrue(co, "ran") && !jtrue(co, "wrong"), ok_new = jtrue(cn, "ran") && !jtrue(cn, "wrong");
      if (!ok_new) {
        printf("%-22.22s %-12.12s %10s %10s %8s %9s  %s in new%s\n", name, fuser ? fuser : "?", "-", "-", "-", "-",
               jtrue(cn, "ran") ? "WRONG" : "FAILED", ok_old ? " (REGRESSION)" : "");
        if (ok_old) {
          broke++;
          if (fail_pct >= 0) rc = 1;
        }
        continue;
      }
      int n_old = 0, n_new = 0;
      double *a = samples(co, &n_old), *b = samples(cn, &n_new);
      double mo = ab_median(a, n_old), mn = ab_median(b, n_new);
      double change = 100.0 * (mn / mo - 1.0);
      double p = ab_mann_whitney(a, n_old, b, n_new);
      const char *verdict = "within noise";
      if (!ok_old) {
        verdict = "was not comparable in old";
      } else if (p < alpha && fabs(change) >= noise_pct && isfinite(change)) {
        if (change > 0) {
          slower++;
          verdict = "SLOWER";
          if (fail_pct >= 0 && change >= fail_pct) {
            verdict = "SLOWER (REGRESSION)";
            rc = 1;
          }
        } else {
          faster++;
          verdict = "faster";
        }
      } else {
        same++;
      }
      char so[16], sn[16];
      ab_fmt_ms(so, sizeof so, mo);
      ab_fmt_ms(sn, sizeof sn, mn);
      printf("%-22.22s %-12.12s %10s %10s %+7.1f%% %9.2g  %s\n", name, fuser ? fuser : "?", so, sn, change, p, verdict);
      fbx_free(a);
      fbx_free(b);
    }
  }
  printf("# %d slower, %d faster, %d within noise", slower, faster, same);
  if (broke) printf(", %d became WRONG or FAILED", broke);
  if (missing) printf(", %d only in new", missing);
  printf("\n");
  if (rc) fprintf(stderr, "fusebox ab: regression past --fail-on-regression %g%%\n", fail_pct);
  ab_json_free(&old);
  ab_json_free(&neu);
  return rc;
}
