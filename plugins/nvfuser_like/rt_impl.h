/* rt_impl.h — inside the nvfuser_like runtime (nvf_rt.h): the runtime object
 * shared by runtime.c (program cache, argument checks, dispatch) and the two
 * device back ends, runtime_cl.c and runtime_cuda.c. Not for the compiler
 * side of the plugin: it uses nvf_rt.h only. */
#ifndef NVF_RT_IMPL_H
#define NVF_RT_IMPL_H

#include <pthread.h>

#include "nvf_rt.h"

/* A device back end. `impl` in nvf_rt is its state. */
typedef struct nvf_backend {
  /* Compile `source` and find `entry` in it; *handle is the back end's
   * program (freed by release_program). The status names the API call and,
   * for a failed build, carries the build log. */
  fbxp_status *(*compile)(nvf_rt *rt, const char *source, const char *entry, void **handle);
  void (*release_program)(nvf_rt *rt, void *handle);
  /* Launches already checked by runtime.c (indices, dims, sizes). */
  fbxp_status *(*run)(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches, int32_t nlaunches);
  void (*close)(nvf_rt *rt); /* after every program was released */
  void (*set_wrap_align)(nvf_rt *rt, size_t bytes); /* NULL: nothing to set */
  /* NULL: not measured on this device (nvf_rt_copy_bandwidth) */
  fbxp_status *(*copy_bandwidth)(nvf_rt *rt, size_t bytes, int reps, double *gbps);
} nvf_backend;

struct nvf_program {
  struct nvf_program *next; /* hash chain */
  uint64_t hash;
  char *source;
  char *entry;
  void *handle; /* the back end's */
};

struct nvf_rt {
  const fbxp_host_api *host;
  nvf_target target;
  const nvf_backend *be;
  void *impl;
  char device[512];
  int cpu_device; /* the device runs on the host's CPU cores */
  int64_t cache_bytes; /* the device's global memory cache, 0: unknown */
  pthread_mutex_t lock; /* the program cache and stats */
  struct nvf_program **buckets;
  size_t nbuckets, nprograms;
  nvf_rt_stats stats;
};

/* Back-end openers: fill rt->be, rt->impl and rt->device, or return a status
 * (FBXP_ERR_UNSUPPORTED with the reason when the target cannot run here). */
fbxp_status *nvf_rt_open_opencl(nvf_rt *rt);
fbxp_status *nvf_rt_open_cuda(nvf_rt *rt);

/* A status with a printf-style message (truncated at 16 KiB). */
fbxp_status *nvf_rt_errf(const fbxp_host_api *host, fbxp_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
