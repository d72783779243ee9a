/* Internals of the profiling executor shared by executor.c, function.c,
 * group.c, profile.c and guard.c (see executor.h for the design). */
#ifndef FBX_EXEC_EXECIMPL_H
#define FBX_EXEC_EXECIMPL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "base/ptrmap.h"
#include "base/strmap.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include <fusebox/fuser_abi.h>

#include "host/host.h"

/* ---- observed types (profile.c) ------------------------------------------------------- */

typedef enum fbx_obs_kind {
  FBX_OBS_UNSEEN = 0, /* never observed: nothing known, nothing checked */
  FBX_OBS_TENSOR,
  FBX_OBS_INT,
  FBX_OBS_FLOAT,
  FBX_OBS_BOOL,
  FBX_OBS_OTHER,      /* something else, or different kinds in different runs */
} fbx_obs_kind;

/* What was seen of one value, merged over observations. */
typedef struct fbx_obs {
  fbx_obs_kind kind;
  fbx_dtype dtype;            /* FBX_DTYPE_UNDEFINED when observations differed */
  int ndim;                   /* -1 when they differed */
  bool strides_known;         /* every observation had the same strides */
  bool contiguous;            /* every observation was contiguous */
  int64_t sizes[FBX_MAX_DIMS]; /* -1 where observations differed (or generalized) */
  int64_t strides[FBX_MAX_DIMS];
} fbx_obs;

/* Merge one value into o. */
void fbx_obs_record(fbx_obs *o, const fbx_ivalue *v);
void fbx_obs_merge(fbx_obs *into, const fbx_obs *from);
/* For a dynamic specialization: sizes other than 1 become -1, strides are
 * forgotten (contiguity is kept). */
void fbx_obs_generalize(fbx_obs *o);
/* The IR type for what was seen (in arena a), or NULL when nothing better
 * than `declared` is known. */
fbx_type *fbx_obs_type(fbx_arena *a, const fbx_obs *o, const fbx_type *declared);

/* Per value id of one graph. */
typedef struct fbx_profile {
  int n;
  fbx_obs *obs;
} fbx_profile;

fbx_status *fbx_profile_init(fbx_profile *p, int n);
void fbx_profile_free(fbx_profile *p);
void fbx_profile_merge(fbx_profile *into, const fbx_profile *from);
/* An fbx_node_observer; ctx is the fbx_profile. */
void fbx_profile_observe(void *ctx, const fbx_node *node, const fbx_ivalue *outs, int nouts);

/* ---- guards (guard.c) ---------------------------------------------------------------- */

/* Does every input match its observed type? On a mismatch, *why (when not
 * NULL) gets the reason: "input 0: sizes [4, 5] vs guard [2, 3]". */
bool fbx_guard_check(const fbx_obs *guard, int n, const fbx_ivalue *inputs, fbx_strbuf *why);
/* "float32[2, 3]", "float32[*, 1] contiguous", "int" */
void fbx_guard_print(fbx_strbuf *b, const fbx_obs *o);

/* ---- functions and groups ----------------------------------------------------------- */

typedef enum fbx_fn_state { FBX_FN_PROFILING, FBX_FN_OPTIMIZED, FBX_FN_UNFUSED } fbx_fn_state;

typedef struct fbx_xgroup fbx_xgroup;
typedef struct fbx_xfn fbx_xfn;

struct fbx_xfn {
  fbx_executor *ex;
  int depth;                 /* 0: the whole graph; d: fallback of a group of level d - 1 */
  int index;                 /* creation order, for messages */
  fbx_spec_kind kind;        /* how it specializes (NONE: passes only) */
  const fbx_graph *graph;    /* what it runs (the executor's or a group's fallback graph) */
  fbx_interp *interp;        /* on graph: profiling and unfused runs (may be shared) */
  char *origin;              /* "the graph", "the fallback of group %c (aten::relu, ...) at level 0" */
  _Atomic int state;         /* fbx_fn_state */
  /* under ex->lock while profiling */
  int profiled;
  fbx_profile profile;
  /* immutable once state is OPTIMIZED */
  fbx_graph *opt;
  fbx_interp *opt_interp;
  fbx_xgroup **by_node;      /* by node id of opt */
  uint32_t nby_node;
  int ngroups;
  fbx_xgroup *groups;        /* list */
  fbx_ptrmap rejected;       /* node of opt -> why the host dropped its proposal (fbx_malloc'd) */
  fbx_xfn *next;             /* executor's list of all functions */
};

/* A spec as kernels are keyed: zeroed, then filled (memcmp-comparable). */
typedef struct fbx_kspec {
  int32_t kind; /* fbx_iv_kind */
  int32_t dtype;
  int32_t ndim;
  int64_t sizes[FBX_MAX_DIMS];
  int64_t strides[FBX_MAX_DIMS];
} fbx_kspec;

typedef struct fbx_kentry {
  int nin;
  fbx_kspec *specs;
  fbx_fkernel *kernel; /* NULL: the compile failed (the group then runs interpreted) */
} fbx_kentry;

#define FBX_GROUP_KERNEL_SLOTS 8

struct fbx_xgroup {
  fbx_xfn *fn;
  const fbx_node *node;       /* in fn->opt */
  char *desc;                 /* "group %c (aten::relu, aten::mul)" */
  int nin, nout;
  fbx_obs *guard;             /* nin; NULL when the fuser guards itself */
  fbx_graph *fallback_graph;  /* the subgraph with tensor types erased */
  fbx_interp *unfused;        /* on fallback_graph */
  _Atomic(fbx_xfn *) fallback;
  atomic_bool no_fallback;    /* the budget is spent for this group */
  _Atomic(fbx_kentry *) kernels[FBX_GROUP_KERNEL_SLOTS];
  atomic_bool warned_compile, warned_run;
  fbx_xgroup *next;
};

typedef struct fbx_xgplan fbx_xgplan; /* grad.c: a gradient-mode plan per requires-grad mask */

struct fbx_executor {
  fbx_graph *graph;
  fbx_fuser *fuser;     /* NULL: none */
  bool host_guards;     /* the fuser wants guards outside */
  fbx_strategy strategy;
  int profiling_runs;
  int nflat_outputs;
  pthread_mutex_t lock; /* profiles, optimization, fallbacks, compiles */
  fbx_xfn *top;
  fbx_xfn *fns;         /* all functions (under lock) */
  int nfns;
  /* counters */
  atomic_llong runs, profiling_runs_done, specs_static, specs_dynamic, guard_failures;
  atomic_llong fb_unfused, fb_compile, fb_run, fb_declined, optimize_failures, groups;
  atomic_llong kernels_compiled, compile_failures, compile_unsupported, mem_hits, disk_hits, compile_ns;
  atomic_llong kernel_runs, kernel_launches, interp_ops;
  /* gradient mode (grad.c) */
  fbx_xgplan *gplans;     /* under lock */
  pthread_mutex_t ad_lock; /* ad_eager, ad_units, the units of DifferentiableGraphs */
  fbx_ptrmap ad_eager;    /* node -> its eager entries (small; each points into ad_units) */
  fbx_strmap ad_units;    /* one-node subgraph's text -> its eager unit, shared by every node alike */
  int ad_recompute;       /* FUSEBOX_AUTODIFF_RECOMPUTE: 0 off, 1 with a fuser (default), 2 always */
  atomic_llong forward_runs, backward_runs, diff_graphs;
  /* the event log */
  pthread_mutex_t ev_lock;
  struct fbx_xevent {
    char *msg;
    int64_t count;
  } *events;
  int nevents, cap_events;
  int64_t events_dropped;
};

#define FBX_EXECUTOR_MAX_EVENTS 64

/* executor.c */
void fbx_executor_event(fbx_executor *ex, const char *fmt, ...) FBX_PRINTF(2, 3);

/* function.c */
fbx_status *fbx_xfn_new(fbx_xfn **out, fbx_executor *ex, int depth, const fbx_graph *graph, fbx_interp *interp,
                        const char *origin); /* ex->lock held */
void fbx_xfn_free(fbx_xfn *fn);
fbx_status *fbx_xfn_run(fbx_xfn *fn, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs, uint64_t seed);
/* Build the optimized version (ex->lock held); on failure the function runs unfused. */
void fbx_xfn_optimize_locked(fbx_xfn *fn);

/* group.c */
fbx_status *fbx_xgroup_new(fbx_xgroup **out, fbx_xfn *fn, const fbx_node *node, const fbx_obs *guard);
void fbx_xgroup_free(fbx_xgroup *g);
fbx_status *fbx_xgroup_run(void *fn, const fbx_node *node, const fbx_ivalue *inputs, int nin,
                           fbx_ivalue *outputs, int nout); /* an fbx_group_runner; ctx is the fbx_xfn */

/* grad.c */
void fbx_executor_grad_free_all(fbx_executor *ex);
/* Add the forward and backward sub-executors' counters to *s. */
void fbx_executor_grad_stats(const fbx_executor *ex, fbx_executor_stats *s);
void fbx_executor_grad_explain(const fbx_executor *ex, fbx_strbuf *b);
/* Calls visit for the forward and backward executors of every
 * DifferentiableGraph of the ready gradient plans, in the order
 * fbx_executor_grad_explain shows them: dg names the node's first output,
 * level its specialization, what is "forward", "backward" or "backward
 * respecialized for defined output gradients 0x..". Runs under ex->lock and
 * ex->ad_lock: visit may lock sub (never ex). For `fusebox explain`. */
typedef void (*fbx_grad_sub_visitor)(void *ctx, const char *dg, int level, const char *what, fbx_executor *sub);
void fbx_executor_grad_each_sub(const fbx_executor *ex, fbx_grad_sub_visitor visit, void *ctx);
/* The events of the gradient units' forward and backward executors (for stats_print). */
void fbx_executor_grad_events(const fbx_executor *ex, fbx_strbuf *b);

#endif
