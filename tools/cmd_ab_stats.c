/* Statistics of `fusebox ab` (see ab.h): medians, bootstrap percentile
 * intervals, and the Mann-Whitney U test. The bootstrap's generator is a
 * fixed-seed xorshift, so that a report is reproducible from its samples. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab.h"
#include "base/alloc.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double sorted_median(const double *s, int n) { return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]); }

double ab_median(const double *v, int n) {
  if (n <= 0) return NAN;
  double *s = fbx_malloc((size_t)n * sizeof *s);
  if (!s) return NAN;
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  double m = sorted_median(s, n);
  fbx_free(s);
  return m;
}

static uint64_t next_rand(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* The 2.5% and 97.5% points of est[0..nboot) (sorts it). */
static void percentiles(double *est, int nboot, double *lo, double *hi) {
  qsort(est, (size_t)nboot, sizeof *est, cmp_double);
  int a = (int)floor(0.025 * (nboot - 1)), b = (int)ceil(0.975 * (nboot - 1));
  *lo = est[a];
  *hi = est[b];
}

void ab_boot_median(const double *v, int n, int nboot, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (n <= 0 || nboot <= 0) return;
  double *est = fbx_malloc((size_t)nboot * sizeof *est), *s = fbx_malloc((size_t)n * sizeof *s);
  if (est && s) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int b = 0; b < nboot; b++) {
      for (int i = 0; i < n; i++) s[i] = v[next_rand(&x) % (uint64_t)n];
      qsort(s, (size_t)n, sizeof *s, cmp_double);
      est[b] = sorted_median(s, n);
    }
    percentiles(est, nboot, lo, hi);
  }
  fbx_free(est);
  fbx_free(s);
}

double ab_boot_speedup(const double *a, const double *b, int n, int nboot, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (n <= 0) return NAN;
  double mb = ab_median(b, n);
  double sp = mb > 0 ? ab_median(a, n) / mb : NAN;
  if (nboot <= 0) return sp;
  double *est = fbx_malloc((size_t)nboot * sizeof *est);
  double *sa = fbx_malloc((size_t)n * sizeof *sa), *sb = fbx_malloc((size_t)n * sizeof *sb);
  if (est && sa && sb) {
    uint64_t x = 0xD1B54A32D192ED03ull;
    for (int k = 0; k < nboot; k++) {
      for (int i = 0; i < n; i++) {
        int r = (int)(next_rand(&x) % (uint64_t)n); /* one round: both fusers' samples */
        sa[i] = a[r];
        sb[i] = b[r];
      }
      qsort(sa, (size_t)n, sizeof *sa, cmp_double);
      qsort(sb, (size_t)n, sizeof *sb, cmp_double);
      double d = sorted_median(sb, n);
      est[k] = d > 0 ? sorted_median(sa, n) / d : INFINITY;
    }
    percentiles(est, nboot, lo, hi);
  }
  fbx_free(est);
  fbx_free(sa);
  fbx_free(sb);
  return sp;
}

typedef struct ranked {
  double v;
  int from_x;
} ranked;

static int cmp_ranked(const void *a, const void *b) { return cmp_double(&((const ranked *)a)->v, &((const ranked *)b)->v); }

double ab_mann_whitney(const double *x, int nx, const double *y, int ny) {
  if (nx <= 0 || ny <= 0) return 1.0;
  int n = nx + ny;
  ranked *all = fbx_malloc((size_t)n * sizeof *all);
  if (!all) return 1.0;
  for (int i = 0; i < nx; i++) all[i] = (ranked){x[i], 1};
  for (int i = 0; i < ny; i++) all[nx + i] = (ranked){y[i], 0};
  qsort(all, (size_t)n, sizeof *all, cmp_ranked);
  /* midranks; tie correction sum(t^3 - t) */
  double rank_x = 0, ties = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && all[j].v == all[i].v) j++;
    double mid = 0.5 * ((double)(i + 1) + (double)j), t = (double)(j - i);
    for (int k = i; k < j; k++)
      if (all[k].from_x) rank_x += mid;
    ties += t * t * t - t;
    i = j;
  }
  fbx_free(all);
  double u = rank_x - (double)nx * (nx + 1) / 2.0;
  double mu = (double)nx * ny / 2.0;
  double var = (double)nx * ny / 12.0 * (((double)n + 1) - ties / ((double)n * (n - 1)));
  if (!(var > 0)) return 1.0;
  double d = fabs(u - mu) - 0.5;
  if (d < 0) d = 0;
  double z = d / sqrt(var);
  return erfc(z / sqrt(2.0));
}
