/* fusebox fuser plugin ABI — the one header a fuser plugin includes.
 *
 * A fuser plugin is a shared object with one exported symbol,
 * `fbxp_plugin_entry`. fusebox loads it with dlopen, calls the entry with its
 * host function table and ABI version, and gets back the plugin's function
 * table (or NULL and a reason). Through those two tables the plugin
 *
 *   1. partitions: looks at a graph through opaque handles and proposes
 *      fusion groups (lists of nodes); the host validates every proposal;
 *   2. compiles: gets a group's subgraph and the specs (dtype, sizes,
 *      strides, device) of its inputs, returns a kernel and the specs of its
 *      outputs so that the host can allocate them;
 *   3. runs the kernel many times on DLPack tensors;
 *   4. releases the kernel.
 *
 * Minimal plugin (see sdk/examples/hello_fuser for a complete one):
 *
 *   #include <fusebox/fuser_abi.h>
 *
 *   static const fbxp_host_api *H;
 *   static fbxp_status *partition(void *st, const fbxp_graph *g, fbxp_proposals *p) {
 *     for (const fbxp_node *n = H->block_first(H->graph_block(g)); n; n = H->node_next(n))
 *       if (!strcmp(H->node_kind(n), "aten::relu")) H->propose(p, &n, 1);
 *     return NULL;
 *   }
 *   ... compile, run, release ...
 *   static const fbxp_plugin_api API = {
 *     .struct_size = FBXP_PLUGIN_API_SIZE_V1_0, .abi_major = FBXP_ABI_MAJOR, .abi_minor = FBXP_ABI_MINOR,
 *     .name = "hello", .version = "0.1", .vendor = "me", .flags = FBXP_GUARDS_OUTSIDE,
 *     .devices = FBXP_DEVICE_CPU, .partition = partition, .compile = compile, .run = run,
 *     .release = release,
 *   };
 *   FBXP_EXPORT const fbxp_plugin_api *fbxp_plugin_entry(const fbxp_host_api *host, uint32_t major,
 *                                                        uint32_t minor, const char **reason) {
 *     if (major != FBXP_ABI_MAJOR) { *reason = "built for fusebox ABI 1.x"; return NULL; }
 *     H = host;
 *     return &API;
 *   }
 *
 * Rules of the ABI (they are what keep old plugins working with new hosts
 * and the other way round):
 *
 *   - Versioning. FBXP_ABI_MAJOR must match exactly; minors only append.
 *     The host passes its version to the entry point; the plugin's table
 *     says what it was built against. Each side only calls what the other's
 *     minor version has: a 1.1 plugin on a 1.0 host finds
 *     host->struct_size == FBXP_HOST_API_SIZE_V1_0 and must either refuse
 *     (return NULL with a reason) or do without the 1.1 functions.
 *   - Every struct crossing the boundary starts with `size_t struct_size`:
 *     the offset of its last field plus that field's size for the version
 *     the writer was built with (use the FBXP_*_SIZE_V* macros). Readers only
 *     touch fields the writer's size covers; a field not covered reads as
 *     its documented default (usually NULL / 0).
 *   - Optional functions may be NULL; each says its default behaviour.
 *   - Handles (fbxp_graph, fbxp_node, fbxp_value, fbxp_block) are valid only
 *     during the call that handed them out. Strings returned by the host are
 *     valid for that call too; copy what you keep.
 *   - Errors are fbxp_status values made with host->status_new; NULL is
 *     success. Nothing may abort, exit or longjmp across the boundary. A
 *     failing compile or run makes the host fall back to its interpreter for
 *     that group (logged once, counted in stats); no result is lost.
 *   - The plugin never frees what the host owns and vice versa, except
 *     through the functions given for it.
 *   - Threads: partition and compile are called under a host lock, one at a
 *     time. run may be called from several threads at once if the plugin
 *     sets FBXP_RUN_THREAD_SAFE; otherwise the host serializes runs of the
 *     plugin's kernels.
 *
 * Types: dtypes are PyTorch ScalarType codes (0 uint8, 1 int8, 2 int16,
 * 3 int32, 4 int64, 5 float16, 6 float32, 7 float64, 11 bool, 15 bfloat16),
 * the same integers TorchScript graphs use for dtype constants. Tensors at
 * run time are DLPack DLTensors on the CPU (kDLCPU) or the plugin's device.
 */
#ifndef FUSEBOX_FUSER_ABI_H
#define FUSEBOX_FUSER_ABI_H
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FBXP_ABI_MAJOR 1u
#define FBXP_ABI_MINOR 1u
#define FBXP_ENTRY_SYMBOL "fbxp_plugin_entry"

#if defined(__GNUC__)
#define FBXP_EXPORT __attribute__((visibility("default")))
#else
#define FBXP_EXPORT
#endif

/* The size of a struct up to and including `field`. */
#define FBXP_SIZE_UPTO(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* ---- status ---------------------------------------------------------------- */

typedef struct fbxp_status fbxp_status; /* made by host->status_new, owned by whoever holds it */

typedef enum fbxp_code {
  FBXP_OK = 0,
  FBXP_ERR_INVALID = 1,     /* bad input from the host or graph */
  /* The plugin cannot handle this group or spec. From compile it is the
   * normal "not this one": the group runs in the host's interpreter with no
   * warning (logged under FUSEBOX_LOG=fusion, counted as unsupported, not as
   * a compile failure). Every other error code is a failure and is warned. */
  FBXP_ERR_UNSUPPORTED = 2,
  FBXP_ERR_COMPILE = 3,     /* code generation or compilation failed */
  FBXP_ERR_RUN = 4,         /* a kernel failed at run time */
  FBXP_ERR_NOMEM = 5,
  FBXP_ERR_INTERNAL = 6,
  /* Not an error: run() declines this call (e.g. shapes it cannot handle)
   * and the host runs the group through its interpreter instead. Only for
   * plugins with FBXP_SELF_FALLBACK; counted in stats, not logged as a
   * failure. From a FBXP_GUARDS_OUTSIDE plugin (whose kernel only ever sees
   * the specs it was compiled for) it is a run failure: warned once,
   * counted in run failures, and the group runs in the interpreter. */
  FBXP_DECLINE = 7,
} fbxp_code;

/* ---- opaque graph handles (valid during the call only) ------------------------ */

typedef struct fbxp_graph fbxp_graph;
typedef struct fbxp_block fbxp_block;
typedef struct fbxp_node fbxp_node;
typedef struct fbxp_value fbxp_value;
typedef struct fbxp_proposals fbxp_proposals; /* where partition puts its groups */

typedef enum fbxp_type_kind {
  FBXP_TYPE_TENSOR = 0,
  FBXP_TYPE_INT = 1,
  FBXP_TYPE_FLOAT = 2,
  FBXP_TYPE_BOOL = 3,
  FBXP_TYPE_NONE = 4,
  FBXP_TYPE_STR = 5,
  FBXP_TYPE_DEVICE = 6,
  FBXP_TYPE_LIST = 7,
  FBXP_TYPE_TUPLE = 8,
  FBXP_TYPE_OPTIONAL = 9,
  FBXP_TYPE_OTHER = 10, /* number, Scalar, classes, ... */
} fbxp_type_kind;

#define FBXP_MAX_DIMS 16
#define FBXP_DIM_UNKNOWN (-1)
/* ABI 1.1, symbolic sizes: in an fbxp_arg_spec given to a plugin that sets
 * FBXP_ACCEPTS_SYMBOLIC, a size <= -2 is symbol FBXP_SYMBOL_ID(size): a
 * size not known at compile time, equal to every other size with the same
 * symbol (in any input) and never 1 (size-1 dims stay concrete). Such a
 * tensor input is contiguous, and its strides are FBXP_DIM_UNKNOWN. Output
 * specs may use the inputs' symbols; the host resolves them per run. */
#define FBXP_SYMBOL(id) (-2 - (int64_t)(id))
#define FBXP_SYMBOL_ID(size) ((int32_t)(-2 - (size)))
#define FBXP_IS_SYMBOL(size) ((size) <= -2)

/* What is known statically about a tensor value (from its IR type). */
typedef struct fbxp_tensor_type {
  size_t struct_size;
  int32_t dtype;            /* ScalarType code, -1 unknown */
  int32_t ndim;             /* -1 unknown */
  int64_t sizes[FBXP_MAX_DIMS];   /* FBXP_DIM_UNKNOWN where unknown */
  int64_t strides[FBXP_MAX_DIMS]; /* FBXP_DIM_UNKNOWN where unknown */
  int32_t requires_grad;    /* -1 unknown, 0, 1 */
  int32_t device_type;      /* DLDeviceType, 0 unknown */
  int32_t device_id;
} fbxp_tensor_type;
#define FBXP_TENSOR_TYPE_SIZE_V1_0 FBXP_SIZE_UPTO(fbxp_tensor_type, device_id)

/* ---- specs and arguments of compiled kernels ------------------------------------ */

typedef enum fbxp_arg_kind {
  FBXP_ARG_TENSOR = 0,
  FBXP_ARG_INT = 1,   /* also bool (0/1) */
  FBXP_ARG_FLOAT = 2,
} fbxp_arg_kind;

/* The spec of one kernel input or output: what compile specializes on. For
 * tensors, sizes and strides are in elements. */
typedef struct fbxp_arg_spec {
  size_t struct_size;
  int32_t kind;             /* fbxp_arg_kind */
  int32_t dtype;            /* tensors: ScalarType code */
  int32_t ndim;
  int64_t sizes[FBXP_MAX_DIMS];
  int64_t strides[FBXP_MAX_DIMS];
  int32_t device_type;      /* DLDeviceType */
  int32_t device_id;
} fbxp_arg_spec;
#define FBXP_ARG_SPEC_SIZE_V1_0 FBXP_SIZE_UPTO(fbxp_arg_spec, device_id)

/* One run-time argument. */
typedef struct fbxp_arg {
  int32_t kind; /* fbxp_arg_kind */
  union {
    DLTensor *tensor; /* borrowed for the call */
    int64_t i;
    double f;
  } u;
} fbxp_arg;

typedef struct fbxp_kernel fbxp_kernel; /* the plugin's own compiled-kernel object */

/* What compile hands back besides the kernel. The host fills struct_size,
 * noutputs and zeroes the rest before the call. */
typedef struct fbxp_compile_result {
  size_t struct_size;
  int32_t noutputs;         /* set by the host: the group's output count */
  fbxp_arg_spec *outputs;   /* host-owned array of noutputs specs: the plugin fills
                               each (kind, dtype, ndim, sizes; strides are ignored:
                               outputs are allocated contiguous) */
  /* Set to 1 when output sizes depend on run-time inputs that the specs do
   * not pin down (a plugin specializing on dtype and rank only, like the
   * legacy fuser): the host then calls output_specs before every run. */
  int32_t dynamic_outputs;
  int32_t nkernels;         /* kernels one run launches, for stats (default 1) */
} fbxp_compile_result;
#define FBXP_COMPILE_RESULT_SIZE_V1_0 FBXP_SIZE_UPTO(fbxp_compile_result, nkernels)

/* ---- host services -------------------------------------------------------------- */

typedef struct fbxp_shlib fbxp_shlib; /* a compiled and loaded shared object */

typedef enum fbxp_log_level { FBXP_LOG_DEBUG = 0, FBXP_LOG_INFO = 1, FBXP_LOG_WARN = 2 } fbxp_log_level;

typedef void (*fbxp_range_fn)(void *ctx, int64_t begin, int64_t end);

/* The host's function table, handed to fbxp_plugin_entry. */
typedef struct fbxp_host_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor;

  /* status and logging */
  fbxp_status *(*status_new)(fbxp_code code, const char *message); /* message copied */
  /* Goes to stderr under FUSEBOX_LOG=fusion (debug/info) and always for warnings. */
  void (*log)(fbxp_log_level level, const char *message);

  /* graph structure */
  const fbxp_block *(*graph_block)(const fbxp_graph *g);          /* the top block */
  int32_t (*graph_num_inputs)(const fbxp_graph *g);
  const fbxp_value *(*graph_input)(const fbxp_graph *g, int32_t i);
  int32_t (*graph_num_outputs)(const fbxp_graph *g);
  const fbxp_value *(*graph_output)(const fbxp_graph *g, int32_t i);
  const fbxp_node *(*block_first)(const fbxp_block *b);           /* NULL when empty */
  const fbxp_node *(*node_next)(const fbxp_node *n);              /* NULL after the last */
  const fbxp_node *(*block_owner)(const fbxp_block *b);           /* NULL for the top block */

  /* nodes */
  const char *(*node_kind)(const fbxp_node *n);                   /* "aten::add" */
  const char *(*node_srcloc)(const fbxp_node *n);                 /* "model.py:3:8" or NULL */
  int32_t (*node_num_inputs)(const fbxp_node *n);
  const fbxp_value *(*node_input)(const fbxp_node *n, int32_t i);
  int32_t (*node_num_outputs)(const fbxp_node *n);
  const fbxp_value *(*node_output)(const fbxp_node *n, int32_t i);
  int32_t (*node_num_blocks)(const fbxp_node *n);
  const fbxp_block *(*node_block)(const fbxp_node *n, int32_t i);
  /* The op table's schema of the node ("aten::add.Tensor(Tensor self, ...)")
   * when the host can tell which overload it is, else NULL. */
  const char *(*node_schema)(const fbxp_node *n);

  /* values */
  fbxp_type_kind (*value_kind)(const fbxp_value *v);
  const char *(*value_name)(const fbxp_value *v);                 /* "x.1" */
  const fbxp_node *(*value_producer)(const fbxp_value *v);        /* NULL for graph/block inputs */
  int32_t (*value_num_uses)(const fbxp_value *v);
  /* The i-th use: its node (NULL when the use is a block's or graph's
   * return) and which input of that node. Uses are in no particular order
   * (when the graph changes, a dropped use's index goes to the last one). */
  const fbxp_node *(*value_use)(const fbxp_value *v, int32_t i, int32_t *input_index);
  /* Tensor values: fill *out (its struct_size set by the caller). Returns 0,
   * or -1 when v is not a tensor. */
  int32_t (*value_tensor_type)(const fbxp_value *v, fbxp_tensor_type *out);
  /* Constants (v produced by prim::Constant): 1 and *out set when v is a
   * constant of that kind, else 0. Bools read as ints. */
  int32_t (*value_const_int)(const fbxp_value *v, int64_t *out);
  int32_t (*value_const_float)(const fbxp_value *v, double *out);
  int32_t (*value_const_str)(const fbxp_value *v, const char **out);
  int32_t (*value_is_none)(const fbxp_value *v);
  /* Constant int lists ([1, 2] or a prim::ListConstruct of constants):
   * returns the length (filling at most cap entries), or -1. */
  int32_t (*value_const_int_list)(const fbxp_value *v, int64_t *out, int32_t cap);

  /* partition: propose one group (nodes of one block, any order). Returns
   * 0 if recorded; the host validates proposals after partition returns and
   * drops invalid ones with a logged reason. */
  int32_t (*propose)(fbxp_proposals *p, const fbxp_node *const *nodes, int32_t count);

  /* memory for things the plugin hands to the host or keeps */
  void *(*alloc)(size_t n);
  void (*free)(void *p);

  /* parallelism: run fn over [0, n) on the host's thread pool, in chunks of
   * at least `grain`; returns when done. */
  void (*parallel_for)(int64_t n, int64_t grain, fbxp_range_fn fn, void *ctx);

  /* Compile C source into a shared object and load it (the system compiler,
   * FUSEBOX_CC, default cc; flags appended to -O3 -fPIC -shared -std=c11; OpenMP is
   * tried once and, if the compiler lacks it, -fopenmp and -fopenmp-simd are
   * dropped). Results are cached on
   * disk by a hash of source, compiler and flags (FUSEBOX_CACHE_DIR). */
  fbxp_status *(*cc_compile)(const char *source, const char *flags, fbxp_shlib **out);
  void *(*shlib_symbol)(fbxp_shlib *lib, const char *name);
  void (*shlib_release)(fbxp_shlib *lib); /* never while its functions may still run */

  /* Compile CUDA C to PTX with NVRTC (libnvrtc loaded with dlopen; works
   * without a GPU). *ptx is host->alloc'd, NUL-terminated. FBXP_ERR_UNSUPPORTED
   * when NVRTC is not installed. `arch` like "compute_80" (NULL: a default). */
  fbxp_status *(*nvrtc_compile)(const char *source, const char *name, const char *arch, char **ptx,
                                char **log);

  /* Build an OpenCL C program for the first device of the first platform
   * that has one (PoCL on a CPU-only machine); returns the cl_program and its
   * cl_context/cl_device_id/cl_command_queue as void* (cast them with CL/cl.h).
   * FBXP_ERR_UNSUPPORTED when no OpenCL platform is present. */
  fbxp_status *(*opencl_build)(const char *source, const char *options, void **program, void **context,
                               void **device, void **queue, char **log);

  /* ---- appended in ABI 1.1: check host->struct_size >= FBXP_HOST_API_SIZE_V1_1
   * (or the host minor passed to the entry >= 1) before calling these. ---- */

  /* Statuses both ways: read the code and message of any status (one a
   * host service returned, or one the plugin made), and free one the plugin
   * keeps instead of returning it (e.g. to add context and retry). NULL
   * reads as FBXP_OK and ""; the message is valid until the status is freed
   * or handed back to the host. */
  fbxp_code (*status_code)(const fbxp_status *s);
  const char *(*status_message)(const fbxp_status *s);
  void (*status_free)(fbxp_status *s);

  /* Host queries. The number of threads the host's pool (parallel_for) uses
   * (FUSEBOX_NUM_THREADS, else the online CPUs): size your own thread teams
   * with it. */
  int32_t (*num_threads)(void);
  /* The CPU this process runs on, as one line that differs between CPUs
   * that generated code can tell apart: the architecture, then for x86 the
   * vendor and signature, then the ISA features the CPU and OS support
   * ("x86_64 GenuineIntel sig 000806f8: sse2 sse3 ssse3 sse4.1 sse4.2 popcnt
   * avx f16c fma avx2 bmi2 avx512f ..."). Host-owned, valid for the
   * process. Put it in generated code compiled with -march=native so that a
   * shared disk cache never serves one CPU's code to another. */
  const char *(*cpu_features)(void);
  /* The host's on-disk cache directory (FUSEBOX_CACHE_DIR, else
   * $XDG_CACHE_HOME/fusebox, else ~/.cache/fusebox), written to buf like
   * snprintf: returns the full length (write again with a larger buffer if
   * it is >= cap), or -1 when there is none. Keep your own files in a
   * subdirectory named after your plugin. */
  int32_t (*cache_dir)(char *buf, int32_t cap);
} fbxp_host_api;
#define FBXP_HOST_API_SIZE_V1_0 FBXP_SIZE_UPTO(fbxp_host_api, opencl_build)
#define FBXP_HOST_API_SIZE_V1_1 FBXP_SIZE_UPTO(fbxp_host_api, cache_dir)

/* ---- the plugin's table ------------------------------------------------------------ */

enum {
  /* The host guards each compiled group with a type check of its inputs and
   * falls back (and respecializes) when it fails — like NNC and nvFuser. */
  FBXP_GUARDS_OUTSIDE = 1u << 0,
  /* The plugin checks inputs itself at run and returns FBXP_DECLINE for
   * what it cannot handle — like the legacy fuser. No host guard. */
  FBXP_SELF_FALLBACK = 1u << 1,
  /* run() may be called concurrently (on the same or different kernels). */
  FBXP_RUN_THREAD_SAFE = 1u << 2,
  /* ABI 1.1: compile accepts specs with symbolic sizes (FBXP_SYMBOL). The
   * host then passes them at the `dynamic` levels of FUSEBOX_FUSION_STRATEGY
   * (for contiguous tensor inputs), so one kernel serves every shape with the
   * same ranks, dtypes, size-1 dims and equalities; a 1.0 host never does. */
  FBXP_ACCEPTS_SYMBOLIC = 1u << 3,
};

enum { FBXP_DEVICE_CPU = 1u << 0, FBXP_DEVICE_CUDA = 1u << 1, FBXP_DEVICE_OPENCL = 1u << 2 };

typedef struct fbxp_plugin_api {
  size_t struct_size;
  uint32_t abi_major, abi_minor; /* what the plugin was built against */

  const char *name;        /* short, unique: "legacy", "tensorexpr" */
  const char *version;
  const char *vendor;
  const char *description; /* one line; may be NULL */
  uint32_t flags;          /* FBXP_GUARDS_OUTSIDE or FBXP_SELF_FALLBACK, | FBXP_RUN_THREAD_SAFE */
  uint32_t devices;        /* FBXP_DEVICE_* bits */
  /* Part of every disk-cache key: change it when the plugin's generated
   * code changes meaning. May be NULL (then name and version are used). */
  const char *compat_key;

  /* Optional: set up plugin state (passed to every call below). Default: state NULL. */
  fbxp_status *(*init)(void **state);
  /* Optional: tear down; called after every kernel was released. */
  void (*shutdown)(void *state);

  /* Propose fusion groups for graph g (the whole graph; proposals may come
   * from any block). */
  fbxp_status *(*partition)(void *state, const fbxp_graph *g, fbxp_proposals *proposals);

  /* Compile one group. `group` is the group's subgraph: its inputs are the
   * kernel's inputs in order (specs in `inputs`), its outputs the kernel's
   * outputs. Fill result->outputs and return a kernel in *out. */
  fbxp_status *(*compile)(void *state, const fbxp_graph *group, const fbxp_arg_spec *inputs,
                          int32_t ninputs, fbxp_compile_result *result, fbxp_kernel **out);

  /* Optional: for kernels compiled with dynamic_outputs, the output specs for
   * these actual inputs (same contract as compile's result->outputs). */
  fbxp_status *(*output_specs)(void *state, fbxp_kernel *k, const fbxp_arg *inputs, int32_t ninputs,
                               fbxp_arg_spec *outputs, int32_t noutputs);

  /* Run: inputs as given; outputs are host-allocated contiguous tensors of
   * the promised specs, to be filled. */
  fbxp_status *(*run)(void *state, fbxp_kernel *k, const fbxp_arg *inputs, int32_t ninputs,
                      DLTensor *const *outputs, int32_t noutputs);

  void (*release)(void *state, fbxp_kernel *k);

  /* Optional: the generated source of a kernel for `fusebox explain
   * --source` (plugin-owned, valid until release). Default: none shown. */
  const char *(*kernel_source)(void *state, fbxp_kernel *k);
} fbxp_plugin_api;
#define FBXP_PLUGIN_API_SIZE_V1_0 FBXP_SIZE_UPTO(fbxp_plugin_api, kernel_source)
/* 1.1 appends nothing to the plugin table: a 1.1 plugin's table is as large
 * as a 1.0 one. */
#define FBXP_PLUGIN_API_SIZE_V1_1 FBXP_PLUGIN_API_SIZE_V1_0

/* The entry point every plugin exports (the only exported symbol). */
typedef const fbxp_plugin_api *(*fbxp_entry_fn)(const fbxp_host_api *host, uint32_t host_abi_major,
                                                uint32_t host_abi_minor, const char **reason);

#ifdef __cplusplus
}
#endif
#endif
