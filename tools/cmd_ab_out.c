/* `fusebox ab` outputs: the terminal table (at most 100 columns), the
 * Markdown table and the JSON file (every sample; read back by --compare). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "ab.h"
#include "benchrun.h"

void ab_fmt_ms(char *buf, size_t n, double ms) {
  if (!isfinite(ms)) snprintf(buf, n, "-");
  else if (ms < 10) snprintf(buf, n, "%.4f", ms);
  else if (ms < 1000) snprintf(buf, n, "%.2f", ms);
  else snprintf(buf, n, "%.0f", ms);
}

static void fmt_num(char *buf, size_t n, const char *fmt, double v) {
  if (isfinite(v)) snprintf(buf, n, fmt, v);
  else snprintf(buf, n, "-");
}

static void fmt_err(char *buf, size_t n, double v) {
  if (!isfinite(v)) snprintf(buf, n, "-");
  else if (v == 0) snprintf(buf, n, "0");
  else snprintf(buf, n, "%.1e", v);
}

/* The +-% of a median's interval: half its width over the median. */
static double ci_pct(const ab_cell *c) { return c->median > 0 ? 50.0 * (c->hi - c->lo) / c->median : NAN; }

static void print_workload_line(FILE *f, const ab_run *run, const ab_result *r) {
  fprintf(f, "%.40s", r->w->name);
  if (r->skipped) {
    fprintf(f, "  skipped: forward only\n");
    return;
  }
  if (r->error) {
    fprintf(f, "  ERROR: %.50s\n", r->error);
    return;
  }
  fprintf(f, "  %.0f elements, %.1f MB/run", r->elements, r->bytes / 1e6);
  if (isfinite(r->memcpy_gbs)) fprintf(f, ", memcpy %.1f GB/s", r->memcpy_gbs);
  (void)run;
  fputc('\n', f);
}

void ab_print_table(FILE *f, const ab_run *run) {
  fprintf(f, "# fusebox ab: %d workload%s, %d rounds%s, speedup over %s, 95%% bootstrap intervals\n", run->nw,
          run->nw == 1 ? "" : "s", run->rounds, run->backward ? ", forward+backward" : "", ab_fuser_label(run, run->baseline));
  fprintf(f, "  %-10s %9s %4s %6s %-11s %6s %6s %6s %7s %7s %6s %8s\n", "fuser", "median ms", "+-%", "speed",
          "95% CI", "GB/s", "kern/r", "ops/r", "cold ms", "disk ms", "peakMB", "max rel");
  for (int w = 0; w < run->nw; w++) {
    const ab_result *r = &run->r[w];
    print_workload_line(f, run, r);
    if (r->skipped || r->error) continue;
    for (int i = 0; i < run->nf; i++) {
      const ab_cell *c = &r->cells[i];
      if (!c->ran) {
        fprintf(f, "  %-10.10s FAILED: %.76s\n", ab_fuser_label(run, i), c->note ? c->note : "?");
        continue;
      }
      char med[16], pct[16], sp[16], ci[24], gbs[16], kern[16], ops[16], cold[16], disk[16], peak[16], err[16];
      ab_fmt_ms(med, sizeof med, c->median);
      fmt_num(pct, sizeof pct, "%.0f", ci_pct(c));
      if (c->wrong) {
        snprintf(sp, sizeof sp, "WRONG");
        snprintf(ci, sizeof ci, "-");
      } else {
        fmt_num(sp, sizeof sp, "%.2fx", c->speedup);
        if (isfinite(c->sp_lo) && isfinite(c->sp_hi)) snprintf(ci, sizeof ci, "%.2f-%.2f", c->sp_lo, c->sp_hi);
        else snprintf(ci, sizeof ci, "-");
      }
      fmt_num(gbs, sizeof gbs, "%.2f", c->gbs);
      fmt_num(kern, sizeof kern, "%.1f", c->launches + c->bwd_launches);
      fmt_num(ops, sizeof ops, "%.1f", c->interp + c->bwd_interp);
      fmt_num(cold, sizeof cold, "%.1f", c->cold_ms);
      fmt_num(disk, sizeof disk, "%.1f", c->disk_ms);
      fmt_num(peak, sizeof peak, "%.0f", c->peak_mb);
      fmt_err(err, sizeof err, c->max_rel);
      fprintf(f, "  %-10.10s %9s %4s %6s %-11s %6s %6s %6s %7s %7s %6s %8s\n", ab_fuser_label(run, i), med, pct, sp, ci, gbs,
              kern, ops, cold, disk, peak, err);
      if (c->fallbacks)
        fprintf(f, "    %.20s: %.2f fallbacks to the interpreter per run\n", ab_fuser_label(run, i),
                (double)c->fallbacks / ((double)run->rounds * c->loops));
    }
  }
}

void ab_print_markdown(FILE *f, const ab_run *run) {
  fprintf(f, "| workload | fuser | median ms | 95%% CI ms | speedup vs %s | 95%% CI | GB/s | kernels/run | "
             "ops interpreted/run | compile cold ms | compile from disk ms | peak MB | max abs err | max rel err | "
             "status |\n",
          ab_fuser_label(run, run->baseline));
  fprintf(f, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (int w = 0; w < run->nw; w++) {
    const ab_result *r = &run->r[w];
    if (r->skipped || r->error) {
      fprintf(f, "| %s | | | | | | | | | | | | | | %s |\n", r->w->name, r->skipped ? "skipped (forward only)" : "error");
      continue;
    }
    for (int i = 0; i < run->nf; i++) {
      const ab_cell *c = &r->cells[i];
      if (!c->ran) {
        fprintf(f, "| %s | %s | | | | | | | | | | | | | FAILED |\n", r->w->name, ab_fuser_label(run, i));
        continue;
      }
      char med[16], lo[16], hi[16];
      ab_fmt_ms(med, sizeof med, c->median);
      ab_fmt_ms(lo, sizeof lo, c->lo);
      ab_fmt_ms(hi, sizeof hi, c->hi);
      fprintf(f, "| %s | %s | %s | %s–%s | ", r->w->name, ab_fuser_label(run, i), med, lo, hi);
      if (c->wrong || !isfinite(c->speedup)) fprintf(f, "- | - | ");
      else fprintf(f, "%.2fx | %.2f–%.2f | ", c->speedup, c->sp_lo, c->sp_hi);
      fprintf(f, "%.2f | %.1f | %.1f | %.1f | %.1f | %.0f | %.2g | %.2g | %s |\n", c->gbs, c->launches + c->bwd_launches,
              c->interp + c->bwd_interp, c->cold_ms, c->disk_ms, c->peak_mb, c->max_abs, c->max_rel,
              c->wrong ? "**WRONG** (beyond tolerance)" : c->fallbacks ? "ok, fallbacks" : "ok");
    }
  }
}

static void jkey_num(FILE *f, const char *key, double v) {
  fprintf(f, ", \"%s\": ", key);
  fbx_br_json_num(f, v);
}

static void jsamples(FILE *f, const double *t, int n) {
  fputc('[', f);
  for (int k = 0; k < n; k++) {
    if (k) fputs(", ", f);
    fbx_br_json_num(f, t[k]);
  }
  fputc(']', f);
}

fbx_status *ab_write_json(const char *path, const ab_run *run) {
  FILE *f = fopen(path, "w");
  if (!f) return fbx_status_new(FBX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  fputs("{\n  \"format\": \"fusebox-ab 1\",\n  \"when\": ", f);
  fbx_br_json_str(f, run->when);
  fputs(",\n  \"suite\": ", f);
  fbx_br_json_str(f, run->suite);
  fprintf(f, ",\n  \"rounds\": %d,\n  \"backward\": %s,\n  \"quick\": %s,\n  \"baseline\": ", run->rounds,
          run->backward ? "true" : "false", run->quick ? "true" : "false");
  fbx_br_json_str(f, run->fusers[run->baseline]);
  fputs(",\n  \"fusers\": [", f);
  for (int i = 0; i < run->nf; i++) {
    fputs(i ? ", {\"selected_as\": " : "{\"selected_as\": ", f);
    fbx_br_json_str(f, run->fusers[i]);
    fputs(", \"name\": ", f);
    fbx_br_json_str(f, run->fuser_names[i]);
    fputc('}', f);
  }
  fputs("],\n  \"workloads\": [", f);
  for (int w = 0; w < run->nw; w++) {
    const ab_result *r = &run->r[w];
    fputs(w ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
    fbx_br_json_str(f, r->w->name);
    fputs(", \"graph\": ", f);
    fbx_br_json_str(f, r->w->graph);
    fputs(", \"group\": ", f);
    if (r->w->group) fbx_br_json_str(f, r->w->group);
    else fputs("null", f);
    fprintf(f, ", \"skipped\": %s, \"error\": ", r->skipped ? "true" : "false");
    if (r->error) fbx_br_json_str(f, r->error);
    else fputs("null", f);
    jkey_num(f, "elements", r->elements);
    jkey_num(f, "bytes_moved", r->bytes);
    jkey_num(f, "memcpy_gbs", r->memcpy_gbs);
    fputs(",\n     \"memcpy_ms\": ", f);
    jsamples(f, r->mc, r->skipped || r->error ? 0 : run->rounds);
    fputs(",\n     \"results\": [", f);
    for (int i = 0; i < run->nf && !r->skipped && !r->error; i++) {
      const ab_cell *c = &r->cells[i];
      fputs(i ? ",\n      {\"fuser\": " : "\n      {\"fuser\": ", f);
      fbx_br_json_str(f, run->fusers[i]);
      fputs(", \"name\": ", f);
      fbx_br_json_str(f, run->fuser_names[i]);
      fprintf(f, ", \"ran\": %s, \"wrong\": %s, \"note\": ", c->ran ? "true" : "false", c->wrong ? "true" : "false");
      if (c->note) fbx_br_json_str(f, c->note);
      else fputs("null", f);
      jkey_num(f, "median_ms", c->median);
      jkey_num(f, "median_ci_lo", c->lo);
      jkey_num(f, "median_ci_hi", c->hi);
      jkey_num(f, "speedup", c->speedup);
      jkey_num(f, "speedup_ci_lo", c->sp_lo);
      jkey_num(f, "speedup_ci_hi", c->sp_hi);
      jkey_num(f, "gbs", c->gbs);
      fputs(",\n       ", f);
      fputs("\"kernel_launches_per_run\": ", f);
      fbx_br_json_num(f, c->launches);
      jkey_num(f, "interpreted_ops_per_run", c->interp);
      jkey_num(f, "backward_kernel_launches_per_run", c->bwd_launches);
      jkey_num(f, "backward_interpreted_ops_per_run", c->bwd_interp);
      fprintf(f, ", \"runs_per_sample\": %d, \"groups\": %lld, \"fallbacks\": %lld", c->loops, c->groups, c->fallbacks);
      fputs(",\n       ", f);
      fputs("\"compile_cold_ms\": ", f);
      fbx_br_json_num(f, c->cold_ms);
      jkey_num(f, "compile_disk_ms", c->disk_ms);
      fprintf(f, ", \"kernels_compiled\": %lld, \"disk_cache_hits\": %lld", c->kernels, c->disk_hits);
      jkey_num(f, "peak_mb", c->peak_mb);
      jkey_num(f, "max_abs", c->max_abs);
      jkey_num(f, "max_rel", c->max_rel);
      fputs(",\n       \"samples_ms\": ", f);
      jsamples(f, c->t, c->ran ? run->rounds : 0);
      fputc('}', f);
    }
    fputs("]}", f);
  }
  fputs("\n  ]\n}\n", f);
  if (fclose(f)) return fbx_status_new(FBX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  return NULL;
}
