/* fusebox — the embedding API: parse a TorchScript-IR graph, make an executor
 * for it (with the fuser of your choice), run it on DLPack tensors, read its
 * statistics.
 *
 *   #include <fusebox/fusebox.h>
 *
 *   fbx_graph *g = NULL;
 *   fbx_executor *ex = NULL;
 *   fbx_status *st = fbx_graph_parse_file(&g, "model.ir");
 *   fbx_executor_opts opts = {.struct_size = sizeof opts, .fuser = "tensorexpr"};
 *   if (!st) st = fbx_executor_create(&ex, g, &opts);     // ex keeps its own copy of g
 *   fbx_graph_destroy(g);
 *
 *   DLManagedTensor *in[2] = {x, y};                       // borrowed: yours to free
 *   DLManagedTensor *out[1] = {NULL};
 *   for (int i = 0; i < 10 && !st; i++) {
 *     st = fbx_executor_run(ex, in, 2, out, 1);            // thread-safe
 *     if (!st) { use(out[0]); out[0]->deleter(out[0]); }
 *   }
 *   if (st) { fprintf(stderr, "%s\n", fbx_status_message(st)); fbx_status_free(st); }
 *
 *   char *report = fbx_executor_report(ex);               // stats and events as text
 *   fputs(report, stderr);
 *   fbx_free(report);
 *   fbx_executor_destroy(ex);
 *
 * How an executor runs a graph (PyTorch's profiling executor): the first
 * runs (FUSEBOX_PROFILING_RUNS, default 1) interpret the graph and record the
 * type of every tensor it sees; then an optimized copy is built for what was
 * seen (passes, then the fuser's fusion groups, each compiled by the fuser
 * for its inputs' exact specs). Groups of a fuser that wants its guards
 * outside are guarded by the types seen; a failing guard runs the group's
 * own, unfused code, which is profiled and specialized again — first
 * `static` specializations (exact sizes), then `dynamic` ones (sizes free but
 * size-1 dims kept) — until FUSEBOX_FUSION_STRATEGY's budget (default
 * static:2,dynamic:10) is spent; after that the group runs unfused. A fuser
 * that fails to compile or run a group never loses a result: the group runs
 * in the interpreter, the failure is logged once and counted.
 *
 * Environment (read when an executor is created):
 *   FUSEBOX_FUSER             fuser when the options name none: `none` (default),
 *                             `legacy`, `tensorexpr`, `nvfuser_like`, a plugin name or path
 *   FUSEBOX_PROFILING_RUNS    profiling runs before optimizing (default 1, >= 0)
 *   FUSEBOX_FUSION_STRATEGY   specialization budget, e.g. static:2,dynamic:10
 *   FUSEBOX_LOG=exec,fusion   trace specializations, guard failures, fallbacks
 *
 * Every function that can fail returns an fbx_status (NULL: success); free a
 * non-NULL one with fbx_status_free. Nothing here aborts on bad input.
 */
#ifndef FUSEBOX_FUSEBOX_H
#define FUSEBOX_FUSEBOX_H
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>
#include <fusebox/dtype.h>
#include <fusebox/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- graphs ------------------------------------------------------------------------ */

typedef struct fbx_graph fbx_graph; /* a TorchScript-IR graph */

/* Parse text[0..len) as printed by PyTorch (`print(torch.jit.script(f).graph)`);
 * `filename` names it in errors ("model.ir:3:17: unknown value %q"). */
fbx_status *fbx_graph_parse(fbx_graph **out, const char *text, size_t len, const char *filename);
fbx_status *fbx_graph_parse_file(fbx_graph **out, const char *path);
/* The graph as text; free with fbx_free. NULL when out of memory. */
char *fbx_graph_print(const fbx_graph *g);
void fbx_graph_destroy(fbx_graph *g); /* NULL-safe */

/* Frees strings fusebox hands out. */
void fbx_free(void *p);

/* ---- executors -------------------------------------------------------------------- */

typedef struct fbx_executor fbx_executor;
typedef struct fbx_fuser fbx_fuser; /* a loaded fuser (internal API: host/host.h) */

typedef struct fbx_executor_opts {
  size_t struct_size;       /* sizeof(fbx_executor_opts); fields past it read as 0/NULL */
  /* The fuser: a selection name or path ("none", "legacy", "tensorexpr",
   * "nvfuser_like", "fuser1", "/path/libmine.so"). NULL: FUSEBOX_FUSER, else none. */
  const char *fuser;
  /* Or an already loaded fuser (takes precedence over `fuser`; retained). */
  fbx_fuser *fuser_handle;
  /* Where tensors live: NULL or "cpu" (the only one today). */
  const char *device;
  /* "static:N,dynamic:M" (any order and repetition, e.g. "dynamic:4"). NULL:
   * FUSEBOX_FUSION_STRATEGY, else "static:2,dynamic:10". */
  const char *strategy;
  /* Profiling runs before optimizing; 0: FUSEBOX_PROFILING_RUNS, else 1. */
  int profiling_runs;
} fbx_executor_opts;

/* An executor for g (copied: g may be destroyed right after). opts may be
 * NULL (all defaults). Fails on an unknown fuser, a malformed strategy, an
 * unsupported device, a bad value in a FUSEBOX_* variable of the library
 * (the status names it; see the README's environment section), a graph the
 * verifier rejects (a declared type that contradicts what produces the
 * value, e.g. `Tensor` for a 3-tuple), or a graph the interpreter cannot
 * plan. Dead code (nodes without side effects whose outputs are unused) is
 * removed from the copy first, so it never runs, whatever the fuser. */
fbx_status *fbx_executor_create(fbx_executor **out, const fbx_graph *g, const fbx_executor_opts *opts);
void fbx_executor_destroy(fbx_executor *ex); /* NULL-safe; no run may be in flight */

/* Inputs the graph takes, and outputs a run gives (a tuple output counts as
 * its elements, flattened depth-first). */
int fbx_executor_num_inputs(const fbx_executor *ex);
int fbx_executor_num_outputs(const fbx_executor *ex);

/* Run the graph. inputs[i] are borrowed for the call (CPU tensors, any
 * strides); a graph input of type int, float or bool takes a 0-d tensor,
 * and NULL stands for None. outputs[0..nout) receive new DLManagedTensors
 * (scalars as 0-d tensors) that the caller frees with their deleter; they
 * never alias an input's memory. nout must equal fbx_executor_num_outputs.
 * Safe to call from several threads at once. */
fbx_status *fbx_executor_run(fbx_executor *ex, DLManagedTensor *const *inputs, int nin, DLManagedTensor **outputs,
                             int nout);

/* ---- gradients ----------------------------------------------------------------------- */

/* Forward with a tape, then backward: TorchScript's AutoDiff.
 *
 *   int rg[2] = {1, 0};                                   // x requires grad, w does not
 *   fbx_grad_handle *h = NULL;
 *   DLManagedTensor *out[1], *gout[1] = {dy}, *gin[2];
 *   st = fbx_executor_forward(ex, in, 2, rg, out, 1, &h);  // outputs as fbx_executor_run's
 *   if (!st) st = fbx_executor_backward(h, gout, 1, gin, 2);
 *   // gin[0]: d(sum(out * dy))/dx; gin[1] is NULL (no gradient)
 *   fbx_grad_free(h);                                      // always, backward or not
 *
 * How it runs: per set of inputs requiring grad, the first runs
 * (FUSEBOX_PROFILING_RUNS) interpret the graph on an eager tape: every node
 * with a gradient formula that takes a tensor requiring grad records an
 * entry (nodes inside If/Loop bodies each time they run), and gradients
 * flow by tensor identity, so control flow needs no formulas. Then a plan is
 * built like PyTorch's profiling executor with DifferentiableGraphs:
 * differentiable regions (at least 2 nodes, no control flow) become
 * prim::DifferentiableGraph nodes, each split into a forward graph that also
 * outputs what the backward needs and a backward graph; both run through
 * executors with this executor's fuser and strategy, so the fuser fuses the
 * forward and the backward. The rest of the graph stays on the eager tape and
 * is not fused in gradient mode. A DifferentiableGraph whose inputs do not
 * match the (dtype, rank, size-1 dims) seen while profiling runs on the tape.
 * `fusebox explain --backward` shows the plan.
 *
 * Gradients of ops whose formula is missing: the forward still runs; the
 * backward fails ("no gradient: aten::foo has no formula (file:line:col)")
 * only if a defined gradient reaches such an op's output. In-place ops are
 * differentiated (the tape saves what they overwrite) except in-place writes
 * into views of tensors that require grad, which fail with a message naming
 * the op.
 */
typedef struct fbx_grad_handle fbx_grad_handle;

/* Like fbx_executor_run, recording what backward needs. requires_grad
 * (nin entries, nonzero: input i requires grad) may be NULL: every
 * floating-point tensor input does; a non-floating input that requires grad
 * is an error. Tensor inputs are borrowed for the call, as by
 * fbx_executor_run, and the caller may free or overwrite them as soon as it
 * returns: what the tape keeps of an input's memory for backward (the input,
 * or a view of it, saved by a gradient formula: x in d(x * w)/dw) is copied
 * before the call returns; an input that nothing saves (x in x * w when only
 * x requires grad) is not copied. A graph that writes into a tensor in place
 * (aten::add_, ...) gets copies of all its tensor inputs, so that the write
 * never reaches the caller's tensors. Do not write into the outputs before
 * backward. *handle receives the tape (free it with fbx_grad_free, whether
 * or not backward ran); it must not outlive the executor. Thread-safe like
 * fbx_executor_run. */
fbx_status *fbx_executor_forward(fbx_executor *ex, DLManagedTensor *const *inputs, int nin, const int *requires_grad,
                                 DLManagedTensor **outputs, int nout, fbx_grad_handle **handle);
/* Input gradients from output gradients. grad_outputs (n ==
 * fbx_executor_num_outputs, borrowed) are tensors of the outputs' shapes, or
 * NULL for an undefined (zero) gradient. grad_inputs[0..nin) receive new
 * tensors, NULL where an input gets no gradient (it does not require grad,
 * or nothing it feeds has a defined gradient). Frees the saved values: a
 * second backward on the same handle fails with FBX_ERR_INVALID_ARG.
 * Handles may be used from several threads, each from one at a time. */
fbx_status *fbx_executor_backward(fbx_grad_handle *h, DLManagedTensor *const *grad_outputs, int n,
                                  DLManagedTensor **grad_inputs, int nin);
void fbx_grad_free(fbx_grad_handle *h); /* NULL-safe */

/* Counters since create, summed over all threads. */
typedef struct fbx_executor_stats {
  size_t struct_size;         /* set by the caller: sizeof(fbx_executor_stats) */
  int64_t runs;
  int64_t profiling_runs;     /* runs (of the graph or of a group's fallback) that profiled */
  int64_t specializations;    /* optimized versions built for observed types ... */
  int64_t static_specializations;  /* ... of which with exact sizes */
  int64_t dynamic_specializations; /* ... and with free sizes (size-1 dims kept) */
  int64_t guard_failures;     /* group guards that rejected their inputs */
  int64_t fallbacks;          /* group executions that ran in the interpreter, by reason: */
  int64_t fallbacks_unfused;  /*   a guard failed and the specialization budget was spent */
  int64_t fallbacks_compile;  /*   the fuser failed to compile the group */
  int64_t fallbacks_run;      /*   the kernel failed at run time */
  int64_t fallbacks_declined; /*   a self-fallback fuser declined the inputs (not an error) */
  int64_t optimize_failures;  /* optimizations that failed (that code then runs unfused) */
  int64_t groups;             /* fusion groups in all specializations */
  int64_t kernels_compiled;   /* plugin compiles that succeeded */
  int64_t compile_failures;   /* plugin compiles that failed */
  int64_t memory_cache_hits;  /* compiles answered by the in-memory kernel cache */
  int64_t disk_cache_hits;    /* plugin compiles answered by the on-disk cache */
  double compile_seconds;     /* time inside plugin compiles */
  int64_t kernel_runs;        /* group executions by a compiled kernel */
  int64_t kernel_launches;    /* kernels those executions launched */
  /* gradient mode (fbx_executor_forward/backward); appended in 0.2 */
  int64_t forward_runs;       /* forward runs that recorded a tape */
  int64_t backward_runs;
  int64_t differentiable_graphs;    /* prim::DifferentiableGraph nodes in the gradient plans */
  int64_t backward_kernel_runs;     /* fused kernel executions of the backward graphs */
  int64_t backward_kernel_launches; /* kernels they launched */
  /* Op-table kernels the interpreter ran outside fused kernels: every op of
   * an unfused graph, the nodes a fuser left out of its groups (scalar ops
   * included). With the kernel launches above, what a run costs in kernels. */
  int64_t interpreted_ops;          /* graph and forward graphs */
  int64_t backward_interpreted_ops; /* backward graphs */
  /* Appended with ABI 1.1: compiles the fuser answered FBXP_ERR_UNSUPPORTED
   * (its normal "not this group": logged under FUSEBOX_LOG=fusion, no
   * warning, not in compile_failures; the group runs in the interpreter).
   * Forward graphs only. */
  int64_t compile_unsupported;
} fbx_executor_stats;

/* Fill *out (only the fields out->struct_size covers). */
void fbx_executor_stats_get(const fbx_executor *ex, fbx_executor_stats *out);
/* The counters and the log of notable events (each specialization and why,
 * guard failures with their reasons, fallbacks) as text; free with fbx_free. */
char *fbx_executor_report(const fbx_executor *ex);
/* The optimized graphs (the graph's and every specialization's) as text;
 * free with fbx_free. */
char *fbx_executor_explain_text(const fbx_executor *ex);

#ifdef __cplusplus
}
#endif
#endif
