/* The minimizer of `fusebox fuzz`: see tools/fuzz.h.
 *
 * Greedy delta debugging on the case's data, each edit kept when the case
 * is still valid (fz_case_infer) and still fails with the same kind:
 *   0. outputs: keep a single output;
 *   1. nodes: replace a node by a new graph input of its dtype and shape
 *      (the nodes only it fed go with it), or bypass it (its users read
 *      its first operand), until no node can go;
 *   2. shapes: every input dim to 1, or to half its size; layouts to
 *      contiguous;
 *   3. values: special values (NaN, inf, -0.0, denormals, extremes) to
 *      plain random ones, random ones to ones.
 * Rounds repeat while something shrank and the run budget lasts.
 * A repro is written with its bfloat16 inputs as float32 .npy files (NumPy
 * has no bfloat16) and an aten::to per such input at the top of the graph
 * (fz_case_print_repro), so it runs as written. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "cli.h"
#include "fuzz.h"

typedef struct mctx {
  const fz_oracle_opts *o;
  fz_kind want;
  int runs, max_runs;
} mctx;

static bool still_fails(mctx *m, fz_case *t) {
  fz_case_prune(t);
  fz_vinfo info[FZ_NODE_ID + FZ_MAX_NODES];
  if (!fz_case_infer(t, info) || m->runs >= m->max_runs) return false;
  m->runs++;
  fz_result r;
  fz_oracle_run(t, m->o, &r);
  return r.kind == m->want;
}

static void rename_id(fz_case *c, int from, int to) {
  for (int k = 0; k < c->nnodes; k++)
    for (int i = 0; i < c->node[k].nargs; i++)
      if (c->node[k].arg[i] == from) c->node[k].arg[i] = to;
  for (int o = 0; o < c->nout; o++)
    if (c->out[o] == from) c->out[o] = to;
}

/* Node k's uses read `with` instead; node k goes. */
static void drop_node(fz_case *c, int k, int with) {
  rename_id(c, FZ_NODE_ID + k, with);
  for (int j = k + 1; j < c->nnodes; j++) c->node[j - 1] = c->node[j];
  c->nnodes--;
  for (int j = k + 1; j <= c->nnodes; j++) rename_id(c, FZ_NODE_ID + j, FZ_NODE_ID + j - 1);
}

static bool shrink_nodes(mctx *m, fz_case *best) {
  bool any = false;
  for (int k = best->nnodes - 1; k >= 0; k--) {
    if (k >= best->nnodes) continue;
    fz_vinfo info[FZ_NODE_ID + FZ_MAX_NODES];
    if (!fz_case_infer(best, info)) return any;
    const fz_vinfo *v = &info[FZ_NODE_ID + k];
    /* bypass: users read the node's first operand */
    fz_case t = *best;
    drop_node(&t, k, t.node[k].arg[0]);
    if (t.nnodes >= 1 && still_fails(m, &t)) {
      *best = t;
      any = true;
      continue;
    }
    if (best->nin >= FZ_MAX_IN) continue;
    /* cut: a new input holds what the node made */
    t = *best;
    fz_input *in = &t.in[t.nin];
    memset(in, 0, sizeof *in);
    in->dt = v->dt;
    in->rank = v->rank;
    memcpy(in->sizes, v->sizes, sizeof in->sizes);
    in->values = FZ_VAL_RANDOM;
    in->vseed = best->seed * 31 + (uint64_t)k + 7;
    t.nin++;
    drop_node(&t, k, t.nin - 1);
    if (t.nnodes >= 1 && still_fails(m, &t)) {
      *best = t;
      any = true;
    }
  }
  return any;
}

static bool shrink_shapes(mctx *m, fz_case *best) {
  bool any = false;
  for (int i = 0; i < best->nin; i++) {
    if (best->in[i].layout != FZ_CONTIG) {
      fz_case t = *best;
      t.in[i].layout = FZ_CONTIG;
      if (still_fails(m, &t)) {
        *best = t;
        any = true;
      }
    }
    for (int d = 0; d < best->in[i].rank; d++) {
      int64_t s = best->in[i].sizes[d];
      int64_t tries[2] = {1, s / 2};
      for (int j = 0; j < 2; j++) {
        if (tries[j] >= s || (j == 1 && tries[j] <= 1)) continue;
        fz_case t = *best;
        t.in[i].sizes[d] = tries[j];
        /* the same dim of the other inputs that had the same size follows */
        for (int o = 0; o < t.nin; o++) {
          int od = t.in[o].rank - t.in[i].rank + d;
          if (o != i && od >= 0 && od < t.in[o].rank && t.in[o].sizes[od] == s) t.in[o].sizes[od] = tries[j];
        }
        if (still_fails(m, &t)) {
          *best = t;
          any = true;
          break;
        }
      }
    }
  }
  return any;
}

static bool shrink_values(mctx *m, fz_case *best) {
  bool any = false;
  for (int i = 0; i < best->nin; i++)
    while (best->in[i].values > FZ_VAL_ONES) {
      fz_case t = *best;
      t.in[i].values--;
      if (!still_fails(m, &t)) break;
      *best = t;
      any = true;
    }
  return any;
}

int fz_minimize(fz_case *c, const fz_oracle_opts *o, const fz_result *want, int max_runs) {
  mctx m = {.o = o, .want = want->kind, .max_runs = max_runs};
  fz_case best = *c;
  if (best.nout > 1)
    for (int i = 0; i < best.nout; i++) {
      fz_case t = best;
      t.out[0] = best.out[i];
      t.nout = 1;
      if (still_fails(&m, &t)) {
        best = t;
        break;
      }
    }
  for (int round = 0; round < 4 && m.runs < max_runs; round++) {
    bool any = shrink_nodes(&m, &best);
    any |= shrink_shapes(&m, &best);
    any |= shrink_values(&m, &best);
    if (!any) break;
  }
  *c = best;
  return m.runs;
}

fbx_status *fz_write_repro(const fz_case *c, const fz_oracle_opts *o, const char *dir, const char *name,
                           const fz_result *r, char **repro_line) {
  FBX_TRY(fbx_cli_make_dirs(dir)); /* and the directories above it (build-test/fuzz-repros/<fuser>) */
  /* bfloat16 inputs go to .npy as float32 (exact), and the graph converts them back */
  unsigned widened = fz_repro_widened(c);
  char *text = fz_case_print_repro(c);
  if (!text) return fbx_status_new(FBX_ERR_INVALID_ARG, "the minimized case is not valid");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.ir", dir, name);
  FILE *f = fopen(path, "w");
  fbx_status *st = NULL;
  if (!f || fputs(text, f) < 0 || fclose(f)) st = fbx_status_new(FBX_ERR_IO, "cannot write %s", path);
  fbx_free(text);
  fbx_ivalue in[FZ_MAX_IN] = {0};
  if (!st) st = fz_case_inputs(c, in);
  fbx_strbuf line = {0};
  fbx_strbuf_printf(&line, "fusebox fuzz --fuser %s%s --replay %s/%s.ir", o->fuser, o->backward ? " --backward" : "",
                    dir, name);
  for (int i = 0; i < c->nin && !st; i++) {
    snprintf(path, sizeof path, "%s/%s_in%d.npy", dir, name, i);
    if (widened >> i & 1) {
      fbx_tensor *f32 = NULL;
      st = fbx_tensor_clone_as(&f32, in[i].u.t, FBX_DTYPE_FLOAT32);
      if (!st) st = fbx_npy_write_file(path, f32);
      fbx_tensor_release(f32);
    } else {
      st = fbx_npy_write_file(path, in[i].u.t);
    }
    fbx_strbuf_printf(&line, " --input %s", path);
  }
  for (int i = 0; i < c->nin; i++) fbx_iv_release(&in[i]);
  if (!st) {
    snprintf(path, sizeof path, "%s/%s.sh", dir, name);
    f = fopen(path, "w");
    bool layout = false;
    for (int i = 0; i < c->nin; i++) layout |= c->in[i].layout != FZ_CONTIG;
    if (!f || fprintf(f, "# %s: %s\n%s# the .npy inputs are contiguous; the case %s\n%s\n", fz_kind_name(r->kind),
                      r->why,
                      widened ? "# bfloat16 inputs are saved as float32 (NumPy has no bfloat16): the graph's "
                                "aten::to at the top makes them bfloat16 again\n"
                              : "",
                      layout ? "had transposed/expanded inputs (seed replays them exactly)"
                             : "had contiguous inputs only",
                      line.data) < 0 ||
        fclose(f))
      st = fbx_status_new(FBX_ERR_IO, "cannot write %s", path);
  }
  if (!st && repro_line) *repro_line = fbx_strbuf_take(&line);
  fbx_strbuf_free(&line);
  return st;
}
