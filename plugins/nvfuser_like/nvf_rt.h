/* nvf_rt.h — the nvfuser_like device runtime: compile kernels and run a
 * fusion's launches on OpenCL (the host's opencl_build service: PoCL's CPU
 * device here, any OpenCL device elsewhere) or CUDA (NVRTC to PTX through the
 * host's nvrtc_compile, the driver API loaded with dlopen).
 *
 * The compiler side of the plugin (fusion IR, schedulers, kernel IR, printers)
 * produces, per compiled fusion, kernel sources and a list of launches over a
 * table of buffers; this runtime is the only code that talks to a device API.
 *
 * Buffers are host memory described by the caller. A launch sequence maps them
 * to device memory once for the whole sequence: on a device that shares host
 * memory (an OpenCL CPU device) host pointers are wrapped without copies
 * (CL_MEM_USE_HOST_PTR); otherwise NVF_BUF_IN buffers are copied to the device
 * before the first launch and NVF_BUF_OUT buffers back after the last one.
 * NVF_BUF_TEMP buffers live on the device only (data may be NULL), e.g. the
 * partial results of a two-kernel reduction.
 */
#ifndef NVF_RT_H
#define NVF_RT_H

#include <stddef.h>
#include <stdint.h>

#include <fusebox/fuser_abi.h>

typedef enum { NVF_TARGET_OPENCL = 0, NVF_TARGET_CUDA = 1 } nvf_target;

/* A process-wide runtime for one target: the device, its context and queue
 * (or CUDA context and stream), and the program cache. Thread-safe. */
typedef struct nvf_rt nvf_rt;

/* Opens the runtime for target t. FBXP_ERR_UNSUPPORTED with a message that
 * says why (no OpenCL platform, no NVRTC, no CUDA driver or device) when the
 * target cannot run here. The message of a failed open is what `fusebox
 * plugins` shows. */
fbxp_status *nvf_rt_open(const fbxp_host_api *host, nvf_target t, nvf_rt **out);
void nvf_rt_close(nvf_rt *rt);
nvf_target nvf_rt_target(const nvf_rt *rt);
/* One line naming the device ("OpenCL: pthread-... (PoCL 3.1), 2 compute units",
 * "CUDA: NVIDIA H100 (sm_90)"); valid while rt is open. */
const char *nvf_rt_device(const nvf_rt *rt);
/* Whether the device runs on the host's CPU cores (PoCL's): schedulers
 * then give a whole row to one work-item (sched.h). */
int nvf_rt_cpu_device(const nvf_rt *rt);
/* The device's global memory cache in bytes (OpenCL's
 * CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: a CPU device's last-level cache on
 * PoCL); 0 when unknown (CUDA). Added by the runtime, beyond the first
 * contract. */
int64_t nvf_rt_cache_bytes(const nvf_rt *rt);

/* A compiled kernel: one entry point of one source. Programs are cached by
 * (source, entry): compiling the same text twice returns the same program.
 * Owned by the runtime (freed by nvf_rt_close). The build log of a failed
 * compile is in the status message. */
typedef struct nvf_program nvf_program;
fbxp_status *nvf_rt_compile(nvf_rt *rt, const char *source, const char *entry, nvf_program **out);

enum { NVF_BUF_IN = 1u << 0, NVF_BUF_OUT = 1u << 1, NVF_BUF_TEMP = 1u << 2 };
typedef struct {
  void *data;     /* host memory (NULL allowed only for NVF_BUF_TEMP) */
  size_t bytes;   /* > 0; zero-size tensors never reach the runtime */
  uint32_t flags; /* NVF_BUF_* */
} nvf_buffer;

typedef enum {
  NVF_ARG_BUFFER = 0, /* index into the sequence's buffers: a __global pointer / device pointer */
  NVF_ARG_I64 = 1,    /* a long / long long */
  NVF_ARG_I32 = 2,    /* an int */
  NVF_ARG_F32 = 3,    /* a float */
  NVF_ARG_F64 = 4,    /* a double */
  NVF_ARG_LOCAL = 5   /* OpenCL: a __local buffer of `local_bytes`; CUDA: dynamic shared memory
                         (at most one, last; its size becomes the launch's shared bytes) */
} nvf_arg_kind;

typedef struct {
  nvf_arg_kind kind;
  int32_t buffer; /* NVF_ARG_BUFFER */
  int64_t i;      /* NVF_ARG_I64 / NVF_ARG_I32 */
  double f;       /* NVF_ARG_F32 / NVF_ARG_F64 */
  size_t local_bytes;
} nvf_arg;

/* One kernel launch. OpenCL: an NDRange of `dims` dimensions, global work
 * size global[d] (a multiple of local[d]) and work-group size local[d].
 * CUDA: grid = global[d] / local[d] blocks of local[d] threads. */
typedef struct {
  nvf_program *program;
  const nvf_arg *args;
  int32_t nargs;
  int32_t dims; /* 1..3 */
  size_t global[3];
  size_t local[3];
} nvf_launch;

/* Runs the launches in order over the buffers (mapped once for the whole
 * sequence) and returns when results are in the NVF_BUF_OUT buffers' host
 * memory. An error names the launch (its index and entry) and the API call. */
fbxp_status *nvf_rt_run(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                        int32_t nlaunches);

/* OpenCL on a device that shares host memory: host pointers aligned to
 * `bytes` are wrapped (CL_MEM_USE_HOST_PTR) instead of copied. The default
 * is the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN — 128 bytes on PoCL (a
 * long16), which fusebox's 64-byte-aligned tensors meet only every other
 * time. A caller whose kernels access memory with nothing wider than N bytes
 * (a float4: 16) may lower it to N; the map/unmap after the launches keeps
 * results right whatever the device does with the pointer. A power of two;
 * 0 restores the default. No effect on CUDA (always copied). Added by the
 * runtime, beyond the first contract. */
void nvf_rt_set_wrap_align(nvf_rt *rt, size_t bytes);

/* Counters since nvf_rt_open, for tests and benchmarks (added by the runtime,
 * beyond the first contract): how often the program cache was asked and hit,
 * runs and launches, buffers wrapped without a copy (OpenCL
 * CL_MEM_USE_HOST_PTR on a host-unified device with a host pointer aligned
 * to CL_DEVICE_MEM_BASE_ADDR_ALIGN), and the bytes copied each way. */
typedef struct {
  uint64_t compiles, cache_hits;
  uint64_t runs, launches;
  uint64_t zero_copy_buffers;
  uint64_t bytes_to_device, bytes_from_device;
  /* CUDA with FUSEBOX_CUDA_KERNEL_TIMING=1 (kit_cuda.h): runs whose launches
   * were timed on the device by events, and their total milliseconds */
  uint64_t timed_runs;
  double kernel_ms;
} nvf_rt_stats;
void nvf_rt_get_stats(nvf_rt *rt, nvf_rt_stats *out);
/* The device's copy bandwidth in GB/s (read + written) over `bytes`
 * device-to-device, the reference a copy-bound kernel is held to; CUDA only
 * (FBXP_ERR_UNSUPPORTED elsewhere). */
fbxp_status *nvf_rt_copy_bandwidth(nvf_rt *rt, size_t bytes, int reps, double *gbps);

#endif
