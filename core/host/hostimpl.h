/* Internals of the plugin host shared by loader.c, hostapi.c, partition.c,
 * validate.c and kernel.c. Nothing outside core/host includes this, except
 * the host's own unit tests (for the test-only hooks at the end).
 *
 * Lifetime: a fuser counts two things. `refs` are the users' references
 * (fbx_fuser_load / retain / release); when they reach zero the in-memory
 * kernel cache is flushed. `holds` counts refs plus every live kernel (a
 * kernel is live while anyone, the cache included, holds a reference): when
 * it reaches zero the plugin is shut down and dlclose'd. So a kernel kept by
 * its user keeps the shared object mapped after fbx_fuser_release.
 */
#ifndef FBX_HOST_HOSTIMPL_H
#define FBX_HOST_HOSTIMPL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <fusebox/fuser_abi.h>

#include "base/status.h"
#include "host/host.h"
#include "ir/graph.h"

/* The host's status object behind the ABI's opaque fbxp_status. */
struct fbxp_status {
  fbxp_code code;
  int is_static; /* the out-of-memory status: never freed */
  char *msg;
};

/* One proposal as recorded by host->propose. */
typedef struct fbx_proposal {
  fbx_node **nodes; /* copied; NULL entries and foreign pointers are kept for validation */
  int count;       /* as proposed (nodes is NULL when bad is set) */
  const char *bad;  /* set when the call itself was malformed (never read the nodes then) */
} fbx_proposal;

struct fbxp_proposals {
  const fbx_graph *graph;
  int max_count;    /* no valid group has more nodes than the graph */
  fbx_proposal *items;
  int n, cap;
  bool nomem;
};

#define FBX_KCACHE_BUCKETS 64

struct fbx_fkernel {
  atomic_long refs;
  fbx_fuser *fuser;
  fbxp_kernel *pk;
  uint64_t hash;
  char *text;               /* canonical subgraph text (cache key) */
  char *desc;               /* "group %5 (aten::mul, aten::relu)" for messages */
  int nin, nout;
  fbxp_arg_spec *in_specs;  /* nin */
  fbxp_arg_spec *out_specs; /* nout (from compile; dynamic kernels ask per run) */
  bool dynamic_outputs;
  int nsyms;                /* symbols in in_specs (0: concrete) */
  struct fbx_fkernel *lru_prev, *lru_next; /* the cache's use order (most recent first) */
  int32_t *out_dtypes;      /* dynamic kernels: profiled output dtypes (-1 unknown) checked per run; or NULL */
  int nkernels;
  struct fbx_fkernel *next; /* cache chain */
};

struct fbx_fuser {
  atomic_long refs;  /* user references */
  atomic_long holds; /* refs + live kernels; unload at zero */
  void *dl;          /* dlopen handle; NULL for in-process tables */
  const fbxp_plugin_api *api;
  size_t api_size;   /* min(plugin's struct_size, what this host knows) */
  void *state;       /* from init */
  char *path, *name, *version, *vendor, *description, *compat_key;
  uint32_t abi_major, abi_minor, flags, devices;
  pthread_mutex_t lock;     /* partition, compile, the cache, kernel release */
  pthread_mutex_t run_lock; /* runs of plugins without FBXP_RUN_THREAD_SAFE */
  fbx_fkernel *cache[FBX_KCACHE_BUCKETS];
  fbx_fkernel *lru_head, *lru_tail; /* cached kernels, most recently used first */
  atomic_llong cached;              /* count (changed under lock, read by stats without) */
  int64_t cache_max;                /* bound (FUSEBOX_KERNEL_CACHE_MAX, default 1024) */
  atomic_llong evictions;
  /* stats */
  atomic_llong compiles, compile_failures, compile_unsupported, memory_cache_hits, disk_cache_hits;
  atomic_llong runs, run_failures, declines, kernel_launches;
  atomic_llong compile_ns;
};

/* Optional plugin functions read through this: NULL when the plugin's
 * struct_size does not cover the field (an older plugin). */
#define FBX_PLUGIN_FN(f, field) \
  ((f)->api_size >= FBXP_SIZE_UPTO(fbxp_plugin_api, field) ? (f)->api->field : NULL)
/* The v1.0 fields this host cannot do without (through `release`). */
#define FBX_PLUGIN_API_MIN_SIZE FBXP_SIZE_UPTO(fbxp_plugin_api, release)

/* ---- hostapi.c ----------------------------------------------------------------- */

/* The table handed to every plugin. */
const fbxp_host_api *fbx_host_api_table(void);
/* Take a status returned by a plugin: an fbx_status with `code`, message
 * "<prefix>: <plugin's message>"; frees ps. NULL ps gives NULL. */
fbx_status *fbx_host_take_status(fbxp_status *ps, fbx_code code, const char *fmt, ...) FBX_PRINTF(3, 4);
/* Free a plugin status and return its code (FBXP_OK for NULL). */
fbxp_code fbx_host_drop_status(fbxp_status *ps);
const char *fbxp_code_name(fbxp_code c);
/* The fuser whose partition/compile/run is running on this thread (for log
 * prefixes and disk-hit counting). Returns the previous one. */
fbx_fuser *fbx_host_set_current(fbx_fuser *f);
fbx_fuser *fbx_host_current(void);
/* Name the plugin call about to be made on this thread (after
 * fbx_host_set_current(f), which clears it): stage "partition", "compile",
 * "run", ...; `what` the group ("group %5 (aten::mul, ...)") or "the graph".
 * Both must outlive the call. A fatal signal during the call prints them
 * (crashnote.c). */
void fbx_host_set_stage(const char *stage, const char *what);
/* The current plugin call of this thread, if any (async-signal-safe). */
bool fbx_host_current_call(const char **name, const char **path, const char **stage, const char **what);

/* ---- crashnote.c ----------------------------------------------------------------- */

/* Install (once per process) handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and
 * SIGABRT that, when the signal arrives inside a plugin call, write which
 * plugin, stage and group to stderr, then re-raise with the previous action
 * (the default: the process still dies with 134/139). */
void fbx_host_crash_note_install(void);

/* The table as a host of ABI 1.`minor` would hand it out (minor 0: only
 * the 1.0 part, struct_size FBXP_HOST_API_SIZE_V1_0; for loading tests). */
const fbxp_host_api *fbx_host_api_table_for(uint32_t minor);

/* ---- hostquery.c (the 1.1 queries) --------------------------------------------- */

int32_t fbx_host_num_threads(void);
const char *fbx_host_cpu_features(void);
int32_t fbx_host_cache_dir(char *buf, int32_t cap);

/* ---- loader.c ------------------------------------------------------------------- */

void fbx_fuser_hold(fbx_fuser *f);   /* a new live kernel */
void fbx_fuser_unhold(fbx_fuser *f); /* a kernel died; may unload */

/* ---- kernel.c -------------------------------------------------------------------- */

/* Drop every cached kernel (called with f->lock held, when refs reach 0). */
void fbx_kcache_flush_locked(fbx_fuser *f);

/* ---- elfcheck.c ------------------------------------------------------------------ */

/* Check a plugin file before dlopen (regular file, ELF of this process's
 * class, byte order and machine, a shared object, size covering its header
 * tables and every PT_LOAD segment): NULL when dlopen cannot fault on it,
 * else an FBX_ERR_PLUGIN status saying why. */
fbx_status *fbx_plugin_file_check(const char *path);

/* ---- validate.c ------------------------------------------------------------------- */

/* fbx_group_validate for nodes already known to belong to g (partition
 * checks membership first without dereferencing the pointers). When valid
 * and `after` is not NULL, *after (fbx_free it) lists in program order the
 * outside nodes between the members that use the group's results: they must
 * move after the last member before the group is created there. */
fbx_status *fbx_group_validate_members(const fbx_graph *g, fbx_node *const *nodes, int count, fbx_node ***after,
                                       int *nafter);

/* ---- test hooks ---------------------------------------------------------------------- */

/* Load a plugin file, telling its entry point that the host speaks
 * major.minor (to simulate other hosts in tests). */
fbx_status *fbx_fuser_load_path_as(fbx_fuser **out, const char *path, uint32_t host_major, uint32_t host_minor);

#endif
