/* `fusebox ab --report DIR`: DIR/index.html, a self-contained page (inline
 * CSS, no script, nothing fetched) that shows
 *   speedup.svg       per workload, per fuser other than the baseline: the
 *                     speedup over the baseline as a bar from 1x on a log2
 *                     axis, with its 95% interval as a whisker; WRONG and
 *                     FAILED fusers get a label instead of a bar
 *   sweep-GROUP.svg   per size sweep (manifest GROUP with two or more
 *                     workloads): median time against input elements, log-log,
 *                     one line per fuser, 95% intervals as whiskers
 * and the table (every figure of the Markdown table). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ab.h"
#include "base/alloc.h"
#include "base/strbuf.h"

static const char *const COLORS[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NCOLORS (int)(sizeof COLORS / sizeof COLORS[0])

/* Text escaped for XML/HTML. */
static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default:
      if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t') fputc(*s, f);
    }
}

static bool shown(const ab_result *r) { return !r->skipped && !r->error; }

static fbx_status *open_in(const char *dir, const char *name, FILE **f) {
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "%s/%s", dir, name);
  char *path = fbx_strbuf_take(&b);
  if (!path) return fbx_status_nomem();
  *f = fopen(path, "w");
  fbx_status *st = *f ? NULL : fbx_status_new(FBX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  fbx_free(path);
  return st;
}

static fbx_status *close_file(FILE *f, const char *dir, const char *name) {
  if (fclose(f)) return fbx_status_new(FBX_ERR_IO, "cannot write %s/%s: %s", dir, name, strerror(errno));
  return NULL;
}

/* ---- speedup chart ------------------------------------------------------- */

#define SP_LABEL_W 180
#define SP_PLOT_W 520
#define SP_ROW_H 14
#define SP_GAP 10
#define SP_TOP 44

static fbx_status *write_speedup_svg(const char *dir, const ab_run *run) {
  /* axis: powers of 2 around every interval shown, within [1/64, 64] */
  double lo = 0.5, hi = 2;
  int rows = 0, groups = 0;
  for (int w = 0; w < run->nw; w++) {
    const ab_result *r = &run->r[w];
    if (!shown(r)) continue;
    groups++;
    for (int i = 0; i < run->nf; i++) {
      if (i == run->baseline) continue;
      rows++;
      const ab_cell *c = &r->cells[i];
      double a = isfinite(c->sp_lo) ? c->sp_lo : c->speedup, b = isfinite(c->sp_hi) ? c->sp_hi : c->speedup;
      if (isfinite(a) && a < lo) lo = a;
      if (isfinite(b) && b > hi) hi = b;
    }
  }
  double l2lo = floor(log2(fmax(lo, 1.0 / 64))), l2hi = ceil(log2(fmin(hi, 64)));
  if (l2hi <= l2lo) l2hi = l2lo + 1;
  int height = SP_TOP + rows * SP_ROW_H + groups * SP_GAP + 30;
  int width = SP_LABEL_W + SP_PLOT_W + 20;
  FILE *f;
  fbx_status *st = open_in(dir, "speedup.svg", &f);
  if (st) return st;
#define X(v) (SP_LABEL_W + SP_PLOT_W * ((log2(v) - l2lo) / (l2hi - l2lo)))
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
          "font-family=\"sans-serif\" font-size=\"11\">\n"
          "<title>Speedup over ",
          width, height, width, height);
  esc(f, ab_fuser_label(run, run->baseline));
  fputs(" per workload, 95% bootstrap intervals</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", f);
  /* legend */
  int lx = SP_LABEL_W;
  for (int i = 0; i < run->nf; i++) {
    if (i == run->baseline) continue;
    fprintf(f, "<rect x=\"%d\" y=\"8\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"17\">", lx,
            COLORS[i % NCOLORS], lx + 16);
    esc(f, ab_fuser_label(run, i));
    fputs("</text>\n", f);
    lx += 24 + 7 * (int)strlen(ab_fuser_label(run, i));
  }
  fputs("<text x=\"8\" y=\"17\" font-weight=\"bold\">speedup over ", f);
  esc(f, ab_fuser_label(run, run->baseline));
  fputs("</text>\n", f);
  /* grid */
  int bottom = height - 24;
  for (double e = l2lo; e <= l2hi; e++) {
    double x = X(pow(2, e));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x, SP_TOP - 6, x, bottom,
            e == 0 ? "#000" : "#ddd");
    if (e >= 0) fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gx</text>\n", x, bottom + 14, pow(2, e));
    else fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1/%gx</text>\n", x, bottom + 14, pow(2, -e));
  }
  int y = SP_TOP;
  for (int w = 0; w < run->nw; w++) {
    const ab_result *r = &run->r[w];
    if (!shown(r)) continue;
    int nrow = run->nf - 1;
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", SP_LABEL_W - 6, y + nrow * SP_ROW_H / 2 + 4);
    esc(f, r->w->name);
    fputs("</text>\n", f);
    for (int i = 0; i < run->nf; i++) {
      if (i == run->baseline) continue;
      const ab_cell *c = &r->cells[i];
      double x1 = X(1.0);
      if (!c->ran || c->wrong || !isfinite(c->speedup)) {
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#c00\">%s</text>\n", x1 + 4, y + SP_ROW_H - 3,
                !c->ran ? "FAILED" : c->wrong ? "WRONG (not ranked)" : "no baseline");
      } else {
        double s = fmin(fmax(c->speedup, pow(2, l2lo)), pow(2, l2hi));
        double xs = X(s);
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", fmin(x1, xs), y + 2,
                fabs(xs - x1) < 1 ? 1 : fabs(xs - x1), SP_ROW_H - 4, COLORS[i % NCOLORS]);
        esc(f, r->w->name);
        fputs(", ", f);
        esc(f, ab_fuser_label(run, i));
        fprintf(f, ": %.2fx [%.2f, %.2f]</title></rect>\n", c->speedup, c->sp_lo, c->sp_hi);
        if (isfinite(c->sp_lo) && isfinite(c->sp_hi)) {
          double a = X(fmin(fmax(c->sp_lo, pow(2, l2lo)), pow(2, l2hi)));
          double b = X(fmin(fmax(c->sp_hi, pow(2, l2lo)), pow(2, l2hi)));
          int ym = y + SP_ROW_H / 2;
          fprintf(f,
                  "<path d=\"M%.1f %dH%.1fM%.1f %dV%dM%.1f %dV%d\" stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\"/>\n",
                  a, ym, b, a, ym - 4, ym + 4, b, ym - 4, ym + 4);
        }
      }
      y += SP_ROW_H;
    }
    y += SP_GAP;
  }
#undef X
  fputs("</svg>\n", f);
  return close_file(f, dir, "speedup.svg");
}

/* ---- size sweeps --------------------------------------------------------- */

#define SW_W 560
#define SW_H 320
#define SW_L 70
#define SW_R 140
#define SW_T 30
#define SW_B 44

/* Workloads of group g shown, in order; returns how many. */
static int sweep_members(const ab_run *run, const char *g, int *idx) {
  int n = 0;
  for (int w = 0; w < run->nw; w++)
    if (shown(&run->r[w]) && run->r[w].w->group && !strcmp(run->r[w].w->group, g)) idx[n++] = w;
  return n;
}

static fbx_status *write_sweep_svg(const char *dir, const ab_run *run, const char *group, const char *file) {
  int idx[256];
  int n = sweep_members(run, group, idx);
  double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
  for (int k = 0; k < n; k++) {
    const ab_result *r = &run->r[idx[k]];
    if (r->elements > 0) {
      xlo = fmin(xlo, r->elements);
      xhi = fmax(xhi, r->elements);
    }
    for (int i = 0; i < run->nf; i++) {
      const ab_cell *c = &r->cells[i];
      if (!c->ran || !(c->lo > 0)) continue;
      ylo = fmin(ylo, c->lo);
      yhi = fmax(yhi, c->hi);
    }
  }
  if (!isfinite(xlo) || !isfinite(ylo)) {
    xlo = ylo = 1;
    xhi = yhi = 10;
  }
  double lxlo = floor(log2(xlo)), lxhi = ceil(log2(xhi)), lylo = floor(log10(ylo)), lyhi = ceil(log10(yhi));
  if (lxhi <= lxlo) lxhi = lxlo + 1;
  if (lyhi <= lylo) lyhi = lylo + 1;
  int pw = SW_W - SW_L - SW_R, ph = SW_H - SW_T - SW_B;
  FILE *f;
  fbx_status *st = open_in(dir, file, &f);
  if (st) return st;
#define SX(v) (SW_L + pw * ((log2(v) - lxlo) / (lxhi - lxlo)))
#define SY(v) (SW_T + ph * (1 - (log10(v) - lylo) / (lyhi - lylo)))
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
          "font-family=\"sans-serif\" font-size=\"11\">\n<title>",
          SW_W, SW_H, SW_W, SW_H);
  esc(f, group);
  fputs(": median time per run against input size (log-log), 95% bootstrap intervals</title>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"8\" y=\"18\" font-weight=\"bold\">",
        f);
  esc(f, group);
  fputs(": time per run vs size</text>\n", f);
  for (double e = lxlo; e <= lxhi; e++) {
    double x = SX(pow(2, e));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, SW_T, x, SW_T + ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">2^%g</text>\n", x, SW_T + ph + 14, e);
  }
  for (double e = lylo; e <= lyhi; e++) {
    double yv = SY(pow(10, e));
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", SW_L, yv, SW_L + pw, yv);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g ms</text>\n", SW_L - 4, yv + 4, pow(10, e));
  }
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\"/>\n", SW_L, SW_T, pw, ph);
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">elements of the largest input</text>\n", SW_L + pw / 2,
          SW_H - 8);
  for (int i = 0; i < run->nf; i++) {
    const char *col = COLORS[i % NCOLORS];
    fbx_strbuf path = {0};
    int pts = 0;
    for (int k = 0; k < n; k++) {
      const ab_result *r = &run->r[idx[k]];
      const ab_cell *c = &r->cells[i];
      if (!c->ran || !(c->median > 0) || !(r->elements > 0)) continue;
      double x = SX(r->elements), yv = SY(c->median);
      fbx_strbuf_printf(&path, "%s%.1f %.1f", pts++ ? "L" : "M", x, yv);
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", x, yv, col);
      esc(f, ab_fuser_label(run, i));
      fprintf(f, " at %.0f elements: %.4g ms [%.4g, %.4g]%s</title></circle>\n", r->elements, c->median, c->lo, c->hi,
              c->wrong ? " WRONG" : "");
      if (c->lo > 0 && c->hi > 0)
        fprintf(f, "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" fill=\"none\"/>\n", x,
                SY(c->lo), SY(c->hi), x - 3, SY(c->lo), x + 3, x - 3, SY(c->hi), x + 3, col);
    }
    if (pts > 1)
      fprintf(f, "<path d=\"%s\" stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"%s/>\n", path.data ? path.data : "",
              col, i == run->baseline ? " stroke-dasharray=\"4 3\"" : "");
    fbx_strbuf_free(&path);
    int ly = SW_T + 10 + 16 * i;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", SW_L + pw + 10,
            ly - 9, col, SW_L + pw + 26, ly);
    esc(f, ab_fuser_label(run, i));
    fputs("</text>\n", f);
  }
#undef SX
#undef SY
  fputs("</svg>\n", f);
  return close_file(f, dir, file);
}

/* ---- the page ------------------------------------------------------------ */

static void html_num(FILE *f, const char *fmt, double v) {
  fputs("<td>", f);
  if (isfinite(v)) fprintf(f, fmt, v);
  else fputs("-", f);
  fputs("</td>", f);
}

static void write_table(FILE *f, const ab_run *run) {
  fputs("<table>\n<tr><th>workload</th><th>fuser</th><th>median ms</th><th>95% CI ms</th><th>speedup</th>"
        "<th>95% CI</th><th>GB/s</th><th>kernels/run</th><th>ops interpreted/run</th><th>compile cold ms</th>"
        "<th>compile from disk ms</th><th>peak MB</th><th>fallbacks/run</th><th>max abs err</th><th>max rel err</th>"
        "<th>status</th></tr>\n",
        f);
  for (int w = 0; w < run->nw; w++) {
    const ab_result *r = &run->r[w];
    if (!shown(r)) {
      fputs("<tr><td>", f);
      esc(f, r->w->name);
      fputs("</td><td colspan=\"15\" class=\"bad\">", f);
      esc(f, r->skipped ? "skipped: forward only" : r->error);
      fputs("</td></tr>\n", f);
      continue;
    }
    for (int i = 0; i < run->nf; i++) {
      const ab_cell *c = &r->cells[i];
      fprintf(f, "<tr%s><td>", i == 0 ? " class=\"first\"" : "");
      if (i == 0) esc(f, r->w->name);
      fputs("</td><td>", f);
      esc(f, ab_fuser_label(run, i));
      fputs("</td>", f);
      if (!c->ran) {
        fputs("<td colspan=\"13\"></td><td class=\"bad\">FAILED: ", f);
        esc(f, c->note);
        fputs("</td></tr>\n", f);
        continue;
      }
      char a[16], b[16];
      html_num(f, "%.4g", c->median);
      ab_fmt_ms(a, sizeof a, c->lo);
      ab_fmt_ms(b, sizeof b, c->hi);
      fprintf(f, "<td>%s – %s</td>", a, b);
      if (c->wrong) {
        fputs("<td>-</td><td>-</td>", f);
      } else {
        html_num(f, "%.2fx", c->speedup);
        if (isfinite(c->sp_lo)) fprintf(f, "<td>%.2f – %.2f</td>", c->sp_lo, c->sp_hi);
        else fputs("<td>-</td>", f);
      }
      html_num(f, "%.2f", c->gbs);
      html_num(f, "%.1f", c->launches + c->bwd_launches);
      html_num(f, "%.1f", c->interp + c->bwd_interp);
      html_num(f, "%.1f", c->cold_ms);
      html_num(f, "%.1f", c->disk_ms);
      html_num(f, "%.0f", c->peak_mb);
      html_num(f, "%.2f", (double)c->fallbacks / ((double)run->rounds * c->loops));
      html_num(f, "%.2g", c->max_abs);
      html_num(f, "%.2g", c->max_rel);
      if (c->wrong) {
        fputs("<td class=\"bad\">WRONG: ", f);
        esc(f, c->note);
        fputs("</td>", f);
      } else {
        fputs("<td>ok</td>", f);
      }
      fputs("</tr>\n", f);
    }
  }
  fputs("</table>\n", f);
}

fbx_status *ab_write_report(const char *dir, const ab_run *run) {
  if (mkdir(dir, 0777) && errno != EEXIST)
    return fbx_status_new(FBX_ERR_IO, "cannot make %s: %s", dir, strerror(errno));
  fbx_status *st = write_speedup_svg(dir, run);
  /* size sweeps: each group once, with two or more workloads shown */
  char **files = fbx_calloc((size_t)run->nw + 1, sizeof *files);
  const char **groups = fbx_calloc((size_t)run->nw + 1, sizeof *groups);
  int ng = 0;
  if (!st && (!files || !groups)) st = fbx_status_nomem();
  for (int w = 0; w < run->nw && !st; w++) {
    const char *g = run->r[w].w->group;
    bool seen = false;
    for (int k = 0; k < ng && g; k++) seen |= !strcmp(groups[k], g);
    int idx[256];
    if (!g || seen || sweep_members(run, g, idx) < 2) continue;
    fbx_strbuf b = {0};
    fbx_strbuf_printf(&b, "sweep-");
    for (const char *p = g; *p; p++) fbx_strbuf_printf(&b, "%c", (*p == '/' || *p == '^') ? '_' : *p);
    fbx_strbuf_printf(&b, ".svg");
    files[ng] = fbx_strbuf_take(&b);
    groups[ng] = g;
    if (!files[ng]) st = fbx_status_nomem();
    else st = write_sweep_svg(dir, run, g, files[ng++]);
  }
  FILE *f = NULL;
  if (!st) st = open_in(dir, "index.html", &f);
  if (!st) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>fusebox ab report</title>\n"
          "<style>\nbody{font-family:sans-serif;margin:2em;max-width:1400px;color:#222}\n"
          "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;white-space:nowrap;border-bottom:1px solid #eee;"
          "text-align:right}td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}tr.first td{border-top:1px solid #999}"
          "\n.bad{color:#c00;text-align:left}img{display:block;margin:1em 0;border:1px solid #ddd}"
          "\ndt{font-weight:bold}code{background:#f4f4f4}\n</style>\n</head>\n<body>\n<h1>fusebox ab</h1>\n<p>",
          f);
    fprintf(f, "%d workload%s of <code>", run->nw, run->nw == 1 ? "" : "s");
    esc(f, run->suite);
    fprintf(f, "</code>, %s, %d rounds, fusers: ", run->backward ? "forward + backward" : "forward", run->rounds);
    for (int i = 0; i < run->nf; i++) {
      fputs(i ? ", <code>" : "<code>", f);
      esc(f, ab_fuser_label(run, i));
      fputs("</code>", f);
    }
    fputs("; speedups over <code>", f);
    esc(f, ab_fuser_label(run, run->baseline));
    fputs("</code>; ", f);
    esc(f, run->when);
    fputs(".</p>\n<h2>Speedup per workload</h2>\n<p>Bars start at 1x (log scale); whiskers are 95% bootstrap "
          "intervals (rounds resampled in pairs). A fuser whose outputs differ from the reference interpreter's "
          "beyond tolerance is marked WRONG and not ranked.</p>\n<img src=\"speedup.svg\" alt=\"speedup per "
          "workload with 95% intervals\">\n",
          f);
    if (ng) fputs("<h2>Time against size</h2>\n", f);
    for (int k = 0; k < ng; k++) {
      fprintf(f, "<img src=\"%s\" alt=\"", files[k]);
      esc(f, groups[k]);
      fputs(": time per run against size\">\n", f);
    }
    fputs("<h2>Table</h2>\n", f);
    write_table(f, run);
    fputs("<h2>How this was measured</h2>\n<p>Every (workload, fuser) has its own executor, warmed past "
          "profiling and compiling; warm-up runs are not samples. In each round every fuser runs in turn (order "
          "reversed every other round), next to a memcpy of the largest tensor; a sample is one run, or the mean of "
          "a short loop when one run is under a millisecond. Compile cold: a fresh fuser handle compiling into a "
          "new cache directory; from disk: a second fresh handle reading that directory. Peak MB: the process's "
          "resident high-water mark over the timed executor's warm-up. Kernels and ops per run include the "
          "backward's when timing forward + backward.</p>\n</body>\n</html>\n",
          f);
    st = close_file(f, dir, "index.html");
  }
  for (int k = 0; files && k < run->nw; k++) fbx_free(files[k]);
  fbx_free(files);
  fbx_free(groups);
  return st;
}
