/* kit_cuda.h — running CUDA kernels from a fuser plugin: the CUDA driver
 * API loaded with dlopen (no CUDA header, no link-time dependency), CUDA C
 * compiled to PTX by the host's nvrtc_compile service, modules, launches,
 * and host <-> device copies around a launch sequence.
 *
 * The driver is libcuda.so.1 unless the caller names another file (the
 * FUSEBOX_LIBCUDA environment variable is read when it names none; tests
 * point it at a stand-in driver). Only the stable, versioned entry points of
 * the driver API are used. A machine without a driver, a device or NVRTC
 * gets FBXP_ERR_UNSUPPORTED from fbxk_cuda_open with the reason, so a plugin
 * that uses this module loads everywhere.
 *
 * Device 0's primary context is retained at open and pushed/popped around
 * every call, so the caller's own current context is left as it was. A run
 * takes device memory for every buffer, copies FBXK_CUDA_IN buffers in,
 * launches in order on the default stream, synchronizes once and copies
 * FBXK_CUDA_OUT buffers back. Its device blocks are then kept for later
 * runs (up to 32 blocks and 2 GiB, a block reused for a buffer of at least
 * half its size; a run that fails frees its blocks instead) and freed by
 * fbxk_cuda_close; a device out of memory gets the kept blocks back first.
 * Every call is thread-safe on one fbxk_cuda (the driver serializes; the
 * pool has a mutex).
 *
 * Needs an ABI 1.1 host (status_code/status_message/status_free); every
 * status returned is the host's (free it with host->status_free) and its
 * message starts with the `who` given to fbxk_cuda_open ("tensorexpr CUDA:
 * cuInit: CUDA_ERROR_NO_DEVICE (100)"). Memory comes from host->alloc.
 * Link: libdl (glibc >= 2.34: libc). */
#ifndef FUSEBOX_KIT_CUDA_H
#define FUSEBOX_KIT_CUDA_H
#include <stddef.h>
#include <stdint.h>

#include <fusebox/fuser_abi.h>
#include <fusebox/kit/kit_dtype.h>

typedef struct fbxk_cuda fbxk_cuda;               /* the driver, device 0, its context */
typedef struct fbxk_cuda_module fbxk_cuda_module; /* one compiled source */
typedef struct fbxk_cuda_fn fbxk_cuda_fn;         /* one entry point of a module */

/* Opens the driver at `libpath` (NULL or "": $FUSEBOX_LIBCUDA, else
 * libcuda.so.1), device 0 and its primary context, and checks that NVRTC
 * builds for the device's compute capability (else NVRTC's default arch is
 * used, and the driver JIT-compiles that PTX). `who` prefixes every message
 * (kept by pointer: a string literal). FBXP_ERR_UNSUPPORTED: the host is
 * older than ABI 1.1, no driver, a driver without an entry point used here,
 * cuInit failed, no device, no NVRTC. */
FBXK_API fbxp_status *fbxk_cuda_open(const fbxp_host_api *host, const char *who, const char *libpath,
                                     fbxk_cuda **out);
/* Releases the context (the driver library stays loaded). Every module must
 * have been unloaded. NULL is allowed. */
FBXK_API void fbxk_cuda_close(fbxk_cuda *cu);
/* "NAME (sm_XY), N SMs" (", PTX for NVRTC's default arch" when NVRTC does not
 * know the device); valid while cu is open. */
FBXK_API const char *fbxk_cuda_device(const fbxk_cuda *cu);
/* The arch NVRTC builds for ("compute_90"), or "" for NVRTC's default. */
FBXK_API const char *fbxk_cuda_arch(const fbxk_cuda *cu);

/* Compiles CUDA C `source` (program name `name`, used in NVRTC's messages)
 * to PTX for the device and loads it. FBXP_ERR_COMPILE with the build log
 * (or the driver's refusal of the PTX); FBXP_ERR_UNSUPPORTED when NVRTC is
 * missing. Entry points must be extern "C". */
FBXK_API fbxp_status *fbxk_cuda_module_load(fbxk_cuda *cu, const char *source, const char *name,
                                            fbxk_cuda_module **out);
/* The entry point `entry` of a module (owned by the module).
 * FBXP_ERR_COMPILE when the module has no such entry. */
FBXK_API fbxp_status *fbxk_cuda_function(fbxk_cuda *cu, fbxk_cuda_module *m, const char *entry, fbxk_cuda_fn **out);
/* Unloads a module and frees its functions. NULL is allowed. */
FBXK_API void fbxk_cuda_module_unload(fbxk_cuda *cu, fbxk_cuda_module *m);
/* The entry's name (for messages). */
FBXK_API const char *fbxk_cuda_fn_name(const fbxk_cuda_fn *f);

enum { FBXK_CUDA_IN = 1u << 0, FBXK_CUDA_OUT = 1u << 1, FBXK_CUDA_TEMP = 1u << 2 };
/* A buffer of a run: host memory `data` of `bytes` (> 0) bytes; IN and/or
 * OUT, or TEMP alone (device memory only; data may be NULL). */
typedef struct fbxk_cuda_buf {
  void *data;
  size_t bytes;
  uint32_t flags;
} fbxk_cuda_buf;

typedef enum fbxk_cuda_arg_kind {
  FBXK_CUDA_ARG_BUFFER = 0, /* a device pointer: buffer index `buffer` of the run */
  FBXK_CUDA_ARG_I64 = 1,    /* long long / int64_t */
  FBXK_CUDA_ARG_I32 = 2,    /* int */
  FBXK_CUDA_ARG_F32 = 3,    /* float */
  FBXK_CUDA_ARG_F64 = 4     /* double */
} fbxk_cuda_arg_kind;

typedef struct fbxk_cuda_arg {
  fbxk_cuda_arg_kind kind;
  int32_t buffer;
  int64_t i;
  double f;
} fbxk_cuda_arg;

/* One launch: grid[d] blocks of block[d] threads (each >= 1), `shared`
 * bytes of dynamic shared memory (above 48 KiB the function is opted in,
 * up to the device's limit). */
typedef struct fbxk_cuda_launch {
  fbxk_cuda_fn *fn;
  const fbxk_cuda_arg *args;
  int32_t nargs;
  unsigned grid[3], block[3];
  unsigned shared;
} fbxk_cuda_launch;

/* Bytes one run copied each way (for the caller's counters), and the
 * device time of its launches, first launch to the end of the last, by CUDA
 * events: only when the environment variable FUSEBOX_CUDA_KERNEL_TIMING is 1
 * when fbxk_cuda_open runs (events cost a few microseconds per run) and the
 * driver has the event entry points; else kernel_ms is -1. */
typedef struct fbxk_cuda_copied {
  uint64_t to_device, from_device;
  double kernel_ms;
} fbxk_cuda_copied;

/* Runs the launches in order over the buffers and returns when the results
 * are in the FBXK_CUDA_OUT buffers' host memory. The arguments are checked
 * (buffer indices, flags, sizes) before the driver sees them:
 * FBXP_ERR_INVALID. A driver error is FBXP_ERR_RUN and names the launch
 * (index and entry) and the API call. `copied` may be NULL. */
FBXK_API fbxp_status *fbxk_cuda_run(fbxk_cuda *cu, const fbxk_cuda_buf *bufs, int32_t nbufs,
                                    const fbxk_cuda_launch *launches, int32_t nlaunches, fbxk_cuda_copied *copied);

/* The device's copy bandwidth, the reference a copy-bound kernel is held
 * to: cuMemcpyDtoD of `bytes` between two device buffers, `reps` times
 * after one warm-up, timed by CUDA events; *gbps counts the bytes read and
 * written (2 * bytes per copy) per second, in GB/s (1e9). FBXP_ERR_UNSUPPORTED
 * when the driver lacks the event or copy entry points. */
FBXK_API fbxp_status *fbxk_cuda_copy_bandwidth(fbxk_cuda *cu, size_t bytes, int reps, double *gbps);

#endif
