/* embed: run a TorchScript-IR graph from C through fusebox's embedding API.
 *
 *   build/examples/embed [GRAPH.ir] [N]
 *
 * Parses the ratio-IoU graph (examples/ratio_iou.ir by default), makes an
 * executor with the fuser named by FUSEBOX_FUSER (none when unset), runs it
 * five times on N random boxes held in plain malloc'd DLPack tensors, and
 * prints a summary of the output and the executor's statistics. Only
 * <fusebox/fusebox.h> is used, as in any program that embeds fusebox. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fusebox.h>

#ifndef FBX_EXAMPLES_DIR
#define FBX_EXAMPLES_DIR "examples"
#endif

/* A float32 vector the program owns; fusebox only borrows it. */
typedef struct vec {
  DLManagedTensor m;
  int64_t n;
} vec;

static void vec_delete(DLManagedTensor *m) {
  free(m->dl_tensor.data);
  free(m->manager_ctx);
}

static DLManagedTensor *vec_new(int64_t n, float lo, float hi, unsigned *seed) {
  vec *v = calloc(1, sizeof *v);
  float *p = malloc(sizeof *p * (size_t)n);
  if (!v || !p) {
    free(v);
    free(p);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    p[i] = lo + (hi - lo) * (float)((*seed >> 8) & 0xffff) / 65535.0f;
  }
  v->n = n;
  v->m.dl_tensor = (DLTensor){.data = p, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1},
                              .shape = &v->n};
  v->m.manager_ctx = v;
  v->m.deleter = vec_delete;
  return &v->m;
}

static void summarize(const DLManagedTensor *t) {
  const DLTensor *d = &t->dl_tensor;
  int64_t n = 1;
  for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
  if (d->dtype.code != kDLFloat || d->dtype.bits != 32 || n == 0) {
    printf("output: %lld elements (dtype code %d, %d bits)\n", (long long)n, d->dtype.code, d->dtype.bits);
    return;
  }
  const float *p = (const float *)((const char *)d->data + d->byte_offset);
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; i++) {
    lo = p[i] < lo ? p[i] : lo;
    hi = p[i] > hi ? p[i] : hi;
    sum += p[i];
  }
  printf("output: float32[%lld] min=%.4f max=%.4f mean=%.4f\n", (long long)n, lo, hi, sum / (double)n);
}

static int fail(fbx_status *st) {
  fprintf(stderr, "embed: %s\n", fbx_status_message(st));
  fbx_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : FBX_EXAMPLES_DIR "/ratio_iou.ir";
  int64_t n = argc > 2 ? atoll(argv[2]) : 100000;
  if (n <= 0) {
    fprintf(stderr, "usage: embed [GRAPH.ir] [N > 0]\n");
    return 2;
  }

  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (st) return fail(st);
  fbx_executor *ex = NULL;
  fbx_executor_opts opts = {.struct_size = sizeof opts}; /* fuser: FUSEBOX_FUSER; strategy: default */
  st = fbx_executor_create(&ex, g, &opts);
  fbx_graph_destroy(g); /* the executor keeps its own copy */
  if (st) return fail(st);
  int nin = fbx_executor_num_inputs(ex), nout = fbx_executor_num_outputs(ex);
  if (nin != 8 || nout != 1) {
    fprintf(stderr, "embed: expected a graph of 8 box inputs and 1 output, got %d and %d\n", nin, nout);
    fbx_executor_destroy(ex);
    return 1;
  }

  /* boxes (x, y, w, h) and (x, y, w, h) */
  unsigned seed = 42;
  DLManagedTensor *in[8];
  for (int i = 0; i < 8; i++) in[i] = vec_new(n, i % 4 < 2 ? 0.0f : 1.0f, i % 4 < 2 ? 10.0f : 5.0f, &seed);
  for (int i = 0; i < 8; i++)
    if (!in[i]) {
      fprintf(stderr, "embed: out of memory\n");
      return 1;
    }
  int rc = 0;
  for (int run = 0; run < 5 && !rc; run++) {
    DLManagedTensor *out[1] = {NULL};
    st = fbx_executor_run(ex, in, 8, out, 1);
    if (st) {
      rc = fail(st);
      break;
    }
    printf("run %d: ", run + 1);
    summarize(out[0]);
    out[0]->deleter(out[0]);
  }
  char *report = fbx_executor_report(ex);
  if (report) fputs(report, stdout);
  fbx_free(report);
  for (int i = 0; i < 8; i++) in[i]->deleter(in[i]);
  fbx_executor_destroy(ex);
  return rc;
}
