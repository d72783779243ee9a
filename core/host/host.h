/* The plugin host: finding, loading and talking to fuser plugins.
 *
 * The rest of core sees a plugin as an fbx_fuser and its compiled kernels as
 * fbx_fkernel; everything that crosses the C ABI (sdk/include/fusebox/
 * fuser_abi.h) happens in core/host. Plugins come from a shared object
 * (dlopen) or, for tests and built-ins, from a function table linked into
 * the process (fbx_fuser_from_table).
 *
 *   fbx_fuser *f;
 *   FBX_TRY(fbx_fuser_load(&f, getenv("FUSEBOX_FUSER")));   // "legacy", "fuser1", "/path/libx.so"
 *   fbx_partition_report rep = {0};
 *   FBX_TRY(fbx_fuser_partition(f, graph, &rep));          // groups become fusebox::FusionGroup nodes
 *   fbx_fkernel *k;
 *   FBX_TRY(fbx_fuser_compile(f, group_node, inputs, nin, &k));  // specialized on the inputs' specs
 *   bool declined;
 *   FBX_TRY(fbx_fkernel_run(k, inputs, nin, outputs, nout, &declined));
 *   fbx_fkernel_release(k);
 *   fbx_fuser_release(f);     // the shared object stays loaded while kernels live
 *
 * Selection names: `none`; a built-in fuser name (`legacy`, `tensorexpr`,
 * `nvfuser_like`) or PyTorch's alias (`fuser0`, `fuser1`, `fuser2`); any other
 * name is looked up as lib<name>.so / <name>.so in FUSEBOX_PLUGIN_PATH
 * (colon-separated) and then in the built-in plugin directories; a string
 * containing '/' is a path. An unknown name is an error listing what exists.
 *
 * Thread safety: load/partition/compile take the fuser's lock; runs of a
 * plugin without FBXP_RUN_THREAD_SAFE are serialized by the host.
 */
#ifndef FBX_HOST_HOST_H
#define FBX_HOST_HOST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/graph.h"
#include "ops/ivalue.h"

struct fbxp_plugin_api;
struct fbxp_host_api;

typedef struct fbx_fuser fbx_fuser;
typedef struct fbx_fkernel fbx_fkernel;

/* ---- loading -------------------------------------------------------------------- */

/* Load by selection name (see above). *out is NULL for `none` (no fusion). */
fbx_status *fbx_fuser_load(fbx_fuser **out, const char *name);
/* Wrap an in-process plugin table (tests, statically linked fusers). The
 * entry is called like a shared object's fbxp_plugin_entry. */
typedef const struct fbxp_plugin_api *(*fbx_fuser_entry_fn)(const struct fbxp_host_api *host, uint32_t major,
                                                             uint32_t minor, const char **reason);
fbx_status *fbx_fuser_from_entry(fbx_fuser **out, fbx_fuser_entry_fn entry, const char *origin);
/* Drop the caller's reference; the plugin is shut down and unloaded when
 * the last fuser reference and the last kernel are gone. */
void fbx_fuser_release(fbx_fuser *f);
fbx_fuser *fbx_fuser_retain(fbx_fuser *f);

const char *fbx_fuser_name(const fbx_fuser *f);
const char *fbx_fuser_version(const fbx_fuser *f);
const char *fbx_fuser_path(const fbx_fuser *f); /* the .so, or the origin given */
uint32_t fbx_fuser_flags(const fbx_fuser *f);   /* FBXP_GUARDS_OUTSIDE, ... */
uint32_t fbx_fuser_devices(const fbx_fuser *f);
const struct fbxp_plugin_api *fbx_fuser_api(const fbx_fuser *f);

/* Discovery for `fusebox plugins`: every candidate found, loaded or not. */
typedef struct fbx_fuser_candidate {
  char *path;        /* the file */
  char *name;        /* plugin name when it loaded, else the file's stem */
  char *version, *vendor, *description;
  uint32_t abi_major, abi_minor, flags, devices;
  char *rejected;    /* why it did not load (NULL when it did) */
} fbx_fuser_candidate;
fbx_status *fbx_fuser_discover(fbx_fuser_candidate **out, int *count);
void fbx_fuser_candidates_free(fbx_fuser_candidate *c, int count);
/* The directories searched, in order (for messages and `fusebox plugins`):
 * FUSEBOX_PLUGIN_PATH; then, for a program inside the build tree, the
 * build's plugins/, else <dir of the executable>/../lib/fusebox/plugins
 * (an installed fusebox finds its own plugins wherever the prefix is);
 * then the configured install directory. */
int fbx_fuser_search_dirs(const char **dirs, int cap);
/* <dir of this executable>/rel into out (0, or -1 when it cannot be told);
 * *in_build_tree (may be NULL): the executable lies under the build tree
 * this library was configured in. */
int fbx_exe_relative(char *out, size_t cap, const char *rel, bool *in_build_tree);
/* `rel` from the executable's directory to the installed conformance corpus. */
#define FBX_CORPUS_FROM_BIN_DEFAULT "../share/fusebox/corpus"
const char *fbx_corpus_from_bin(void);

/* Name what the process is doing (e.g. "plugin-check test lifecycle/x"),
 * or NULL: a fatal signal then prints it before the plugin/stage/group line
 * (the string must stay valid until replaced). */
void fbx_host_set_crash_context(const char *what);

/* ---- partition ------------------------------------------------------------------- */

typedef struct fbx_partition_report {
  int proposed;  /* groups the plugin proposed */
  int accepted;  /* became fusebox::FusionGroup nodes */
  int rejected;  /* dropped by validation (each logged with its reason) */
  /* Optional, set by the caller: called for every node of a rejected
   * proposal with the reason (valid during the call), e.g. for `explain`. */
  void (*on_reject)(void *ctx, const fbx_node *node, const char *why);
  void *on_reject_ctx;
} fbx_partition_report;

/* Ask the plugin for groups over g, validate each (same block; no side
 * effects, control flow or subgraph nodes inside; no node in two groups;
 * convex: no path leaves the group and comes back), and replace each valid
 * one by a fusebox::FusionGroup node holding the subgraph (attribute
 * Subgraph) and the plugin's name (string attribute `fuser`). Rejections are
 * logged (FUSEBOX_LOG=fusion) and never fatal. */
fbx_status *fbx_fuser_partition(fbx_fuser *f, fbx_graph *g, fbx_partition_report *rep);
/* Validation alone (for tests and plugin-check): NULL if `nodes` would make a
 * valid group, else a status whose message says why. */
fbx_status *fbx_group_validate(const fbx_graph *g, fbx_node *const *nodes, int count);

/* ---- compile and run ---------------------------------------------------------------- */

/* Compile the group node's subgraph for the specs of these run-time inputs
 * (tensor dtype/sizes/strides/device; int/float/bool scalars). Kernels are
 * cached in memory by (plugin, canonical subgraph text, input specs): a hit
 * returns the cached kernel with a new reference. */
fbx_status *fbx_fuser_compile(fbx_fuser *f, const fbx_node *group, const fbx_ivalue *inputs, int nin,
                              fbx_fkernel **out);
/* The same, with symbolic sizes when `symbolic` and the plugin sets
 * FBXP_ACCEPTS_SYMBOLIC (a dynamic strategy level): every size other than 1
 * of a contiguous tensor input becomes a symbol (equal sizes, equal symbols;
 * fbx_symtab_apply), so one kernel serves every shape with the same ranks,
 * dtypes, size-1 dims and equalities. Runs bind the symbols to the actual
 * sizes (and refuse inputs that break the equalities). */
fbx_status *fbx_fuser_compile_sym(fbx_fuser *f, const fbx_node *group, const fbx_ivalue *inputs, int nin,
                                  bool symbolic, fbx_fkernel **out);
/* Symbol numbering shared by the executor's kernel slots and the host:
 * the first distinct size seen is symbol 0, and so on. */
#define FBX_SYMTAB_MAX 128
typedef struct fbx_symtab {
  int n;
  int64_t vals[FBX_SYMTAB_MAX];
} fbx_symtab;
/* Replace each size other than 1 by FBXP_SYMBOL(its id); false (sizes
 * untouched) when the table would overflow. */
bool fbx_symtab_apply(fbx_symtab *t, int64_t *sizes, int ndim);
/* Whether this fuser takes symbolic specs (FBXP_ACCEPTS_SYMBOLIC). */
bool fbx_fuser_accepts_symbolic(const fbx_fuser *f);

/* Run; outputs are new references. *declined is set (and nothing is output)
 * when a self-fallback plugin declined these inputs. */
fbx_status *fbx_fkernel_run(fbx_fkernel *k, const fbx_ivalue *inputs, int nin, fbx_ivalue *outputs, int nout,
                            bool *declined);
void fbx_fkernel_release(fbx_fkernel *k);
/* Counters of one fuser since it was loaded (all threads). */
typedef struct fbx_fuser_stats {
  int64_t compiles;           /* compile calls that reached the plugin */
  int64_t compile_failures;   /* ... that failed (the group then runs interpreted) */
  int64_t compile_unsupported; /* ... that the plugin answered FBXP_ERR_UNSUPPORTED (not failures) */
  int64_t memory_cache_hits;  /* compile requests answered from the in-memory cache */
  int64_t disk_cache_hits;    /* cc_compile requests answered from the disk cache */
  int64_t runs, run_failures, declines;
  int64_t kernel_launches;    /* sum over runs of the kernels each launched */
  double compile_seconds;     /* wall time inside plugin compile calls */
  int64_t cached_kernels;     /* kernels in the in-memory cache now (bounded: FUSEBOX_KERNEL_CACHE_MAX) */
  int64_t cache_evictions;    /* kernels dropped from it, least recently used first */
} fbx_fuser_stats;
void fbx_fuser_get_stats(const fbx_fuser *f, fbx_fuser_stats *out);

/* Kernels one run launches (from compile's result), and the generated source
 * if the plugin shows it (NULL otherwise). */
int fbx_fkernel_launches(const fbx_fkernel *k);
const char *fbx_fkernel_source(const fbx_fkernel *k);

#endif
