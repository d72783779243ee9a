/* The timing machinery shared by `fusebox bench` (one graph) and `fusebox
 * ab` (a suite): the memcpy reference timed in the same rounds as the
 * fusers, the bytes a run moves, the inputs of one run (fresh copies of what
 * the graph writes), one timed step (a run, or a forward + backward through
 * the gradient API with gradients of ones), the gradient check against the
 * eager tape, and JSON scalars. Implemented in tools/cmd_benchrun.c. */
#ifndef FBX_TOOLS_BENCHRUN_H
#define FBX_TOOLS_BENCHRUN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exec/executor.h"
#include "inputs.h"

/* The memcpy reference, timed once per round next to the fusers: a buffer
 * the size of the largest tensor, copied with one thread and split over the
 * kernel thread pool (fbx_parallel_for); memcpy moves 2x its size. */
typedef struct fbx_br_memcpy {
  size_t bytes; /* buffer size; 0: nothing to copy (no tensors) */
  char *src, *dst;
  double *t1, *tn; /* per round: one thread, the pool */
  double gbs1, gbsn, gbs; /* GB/s of the medians; gbs the better */
  int threads;
} fbx_br_memcpy;
/* Buffers (touched, so no round pays for page faults) and room for `rounds`
 * rounds, for m->bytes (set by the caller; 0 allocates nothing). */
fbx_status *fbx_br_memcpy_alloc(fbx_br_memcpy *m, long long rounds);
/* Time round k. */
void fbx_br_memcpy_round(fbx_br_memcpy *m, long long k);
/* The pool's copy, untimed: before every timed sample, so that each fuser
 * of a round starts with the inputs out of the last-level cache (the copy
 * moves 2x the largest tensor) rather than the first one cold and the
 * others finding what it just read. Nothing when m->bytes is 0. */
void fbx_br_evict(const fbx_br_memcpy *m);
/* The bandwidths from rounds 0..n (sorts the samples). */
void fbx_br_memcpy_finish(fbx_br_memcpy *m, long long n);
void fbx_br_memcpy_free(fbx_br_memcpy *m);

/* Bytes of the tensors among vals[0..n) (flattened): *sum += their sum,
 * *largest = max(*largest, the largest). */
fbx_status *fbx_br_tensor_bytes(const fbx_ivalue *vals, int n, double *sum, size_t *largest);

/* Gradient mode: the flat output count, the output gradients (ones for the
 * floating tensors of the reference's outputs, tuples flattened like the
 * executor's), and room for the input gradients. */
typedef struct fbx_br_grad {
  int nflat, nin;
  fbx_ivalue *gout; /* nflat */
  fbx_ivalue *gin;  /* nin: the last run's */
  fbx_ivalue *ref;  /* nin: the eager tape's */
} fbx_br_grad;
fbx_status *fbx_br_grad_init(fbx_br_grad *bg, const fbx_ivalue *want, int nout, int nin);
void fbx_br_grad_free(fbx_br_grad *bg);
/* The gradients' largest errors against the eager tape's, folded into
 * *max_abs / *max_rel; on a structural mismatch *ok = false and *mismatch
 * says why (fbx_free it). Nothing is done when *ok is already false. */
void fbx_br_grad_errors(const fbx_br_grad *bg, bool *ok, double *max_abs, double *max_rel, char **mismatch);

/* The inputs of one run: vals itself, or fresh copies of the inputs the
 * graph writes (aten::relu_ on an input), so that no run, the reference's
 * included, sees what an earlier one wrote (issue #12). */
typedef struct fbx_br_inputs {
  const fbx_ivalue *vals;
  int nin;
  const bool *written; /* NULL: the graph writes none */
  fbx_ivalue *run;     /* nin: this run's */
} fbx_br_inputs;
/* Fresh inputs for the next run (before its clock starts). */
fbx_status *fbx_br_fresh(fbx_br_inputs *bi);
/* One timed unit: a run, or (bg) a forward and a backward into gin. The
 * inputs are bi->run (fbx_br_fresh before each). */
fbx_status *fbx_br_step(fbx_executor *ex, const fbx_br_inputs *bi, fbx_ivalue *outs, int nout, uint64_t seed,
                        fbx_br_grad *bg, fbx_ivalue *gin);
/* Runs that take an executor past profiling and compiling, plus one warm
 * run: FUSEBOX_PROFILING_RUNS + 2, twice the profiling runs with backward
 * (the plan's, then its forward and backward executors'). */
int fbx_br_warmup_runs(bool backward);

/* A JSON string (escaped) and a number (null when not finite). */
void fbx_br_json_str(FILE *f, const char *s);
void fbx_br_json_num(FILE *f, double v);

#endif
