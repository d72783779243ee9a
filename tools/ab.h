/* `fusebox ab`: A/B benchmarking of fusers over a suite of workloads.
 *
 *   cmd_ab.c          the command: options, the runs (interleaved rounds)
 *   cmd_ab_suite.c    the suite manifest (bench/suite/manifest.txt)
 *   cmd_ab_stats.c    median, bootstrap confidence intervals, Mann-Whitney U
 *   cmd_ab_out.c      the terminal table, --markdown, --json
 *   cmd_ab_report.c   --report DIR: an HTML page and its SVG charts
 *   cmd_ab_json.c     a small JSON reader (for --compare)
 *   cmd_ab_compare.c  --compare OLD.json NEW.json
 *
 * (Named cmd_ab_* so that the tools glob in CMakeLists.txt builds them.) */
#ifndef FBX_TOOLS_AB_H
#define FBX_TOOLS_AB_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"

/* ---- the suite ---------------------------------------------------------- */

typedef struct ab_workload {
  char *name;
  char *graph;    /* path (resolved against the manifest's directory) */
  bool backward;  /* forward + backward applies */
  char *group;    /* size sweep, or NULL */
  int ninputs;
  char **inputs;  /* D0,D1 | NAME=D0,D1 | NAME=FILE.npy (file paths resolved) */
} ab_workload;

typedef struct ab_suite {
  int n;
  ab_workload *w;
} ab_suite;

/* Add the workloads of a manifest file (a directory: its manifest.txt) or,
 * for a path ending in .ir, one workload of that graph (inputs from its IR
 * types; default_shape, if not NULL, for inputs without sizes). Errors name
 * file:line. */
fbx_status *ab_suite_add(ab_suite *s, const char *path, const char *default_shape);
/* Keep only the smallest workload (by position) of each size-sweep group. */
void ab_suite_quick(ab_suite *s);
void ab_suite_free(ab_suite *s);

/* ---- statistics --------------------------------------------------------- */

/* Median of v[0..n) (v unchanged). NAN for n == 0. */
double ab_median(const double *v, int n);
/* Bootstrap (nboot resamples, fixed seed) 95% percentile interval of the
 * median of v[0..n). */
void ab_boot_median(const double *v, int n, int nboot, double *lo, double *hi);
/* Speedup of b over a: median(a) / median(b), rounds paired (a[i] and b[i]
 * were timed in the same round): the bootstrap resamples round indices.
 * *lo, *hi: the 95% interval. */
double ab_boot_speedup(const double *a, const double *b, int n, int nboot, double *lo, double *hi);
/* Two-sided Mann-Whitney U test of x[0..nx) against y[0..ny) (normal
 * approximation with tie correction and continuity correction); returns
 * the p-value, 1 when either sample is empty or every value ties. */
double ab_mann_whitney(const double *x, int nx, const double *y, int ny);

/* ---- results ------------------------------------------------------------ */

typedef struct ab_cell {
  bool ran;         /* false: the run failed (note says why) */
  bool wrong;       /* outputs beyond tolerance: flagged, not ranked */
  char *note;       /* failure or mismatch, or NULL */
  double *t;        /* rounds samples, ms per run */
  double median, lo, hi;
  double speedup, sp_lo, sp_hi; /* vs the baseline; NAN when none */
  double gbs;
  double launches, interp, bwd_launches, bwd_interp; /* per run */
  long long groups, fallbacks;
  double cold_ms, disk_ms; /* compile time: fresh cache dir; from the disk cache */
  long long kernels, disk_hits;
  double peak_mb;
  double max_abs, max_rel;
  int loops;        /* runs per sample */
} ab_cell;

typedef struct ab_result {
  const ab_workload *w;
  bool skipped;       /* --backward on a forward-only workload */
  char *error;        /* the workload could not be set up (graph, inputs) */
  double elements;    /* of the largest input (the x axis of size sweeps) */
  double bytes;       /* moved per run */
  double memcpy_gbs;
  double *mc;         /* rounds samples of the memcpy, ms */
  ab_cell *cells;     /* one per fuser */
} ab_result;

typedef struct ab_run {
  int nf;
  char **fusers;      /* as given */
  char **fuser_names; /* the plugins' names (none for none) */
  int baseline;       /* index into fusers */
  int rounds;
  bool backward, quick;
  double rtol, atol;
  int nw;
  ab_result *r;
  char *suite;        /* as given (joined) */
  char *when;         /* UTC time stamp */
} ab_run;

void ab_run_free(ab_run *run);
/* How fuser i is shown: its selection name, or the plugin's name when it
 * was selected by path. */
const char *ab_fuser_label(const ab_run *run, int i);

/* Speedup text "1.23x" / "-" */
void ab_fmt_ms(char *buf, size_t n, double ms);

void ab_print_table(FILE *f, const ab_run *run);
void ab_print_markdown(FILE *f, const ab_run *run);
fbx_status *ab_write_json(const char *path, const ab_run *run);
fbx_status *ab_write_report(const char *dir, const ab_run *run);

/* ---- JSON reading ------------------------------------------------------- */

typedef enum { AB_J_NULL, AB_J_BOOL, AB_J_NUM, AB_J_STR, AB_J_ARR, AB_J_OBJ } ab_jkind;
typedef struct ab_json {
  ab_jkind kind;
  double num;           /* NUM; BOOL: 0/1 */
  char *str;            /* STR */
  int n;                /* ARR, OBJ */
  char **keys;          /* OBJ */
  struct ab_json *items;
} ab_json;
/* Parse a whole file. Errors name the file and the byte offset. */
fbx_status *ab_json_parse_file(const char *path, ab_json *out);
const ab_json *ab_json_get(const ab_json *obj, const char *key); /* NULL if absent or not an object */
void ab_json_free(ab_json *j);

/* --compare: returns the exit code (0, 1 on a regression past fail_pct
 * when fail_pct >= 0, 2 on unreadable files). */
int ab_compare(const char *old_path, const char *new_path, double fail_pct, double noise_pct, double alpha);

#endif
