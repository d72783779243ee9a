/* Host services behind the fbxp_host_api service entries (fuser ABI rule 8).
 *
 * hostapi.c forwards the table's cc_compile / shlib_symbol / shlib_release /
 * nvrtc_compile / opencl_build entries to the functions below. They are
 * implemented in core/host/services_*.c (C compiler + disk cache, NVRTC,
 * OpenCL); fbx_svc_status and fbx_svc_count_disk_hit are implemented in
 * hostapi.c for the services to use.
 *
 * Contract shared by all of them:
 *   - They return NULL on success, or a status made with fbx_svc_status()
 *     (which the plugin receives and hands back to the host, who frees it).
 *   - Nothing aborts: a missing compiler, libnvrtc or OpenCL platform is
 *     FBXP_ERR_UNSUPPORTED; a compile error is FBXP_ERR_COMPILE with the
 *     compiler's diagnostics in the message (or in *log).
 *   - Strings and buffers handed out (*ptx, *log) are allocated with
 *     fbx_malloc (core/base/alloc.h), i.e. what host->free releases; *log
 *     may be left NULL when there is nothing to say. Callers may pass NULL
 *     for log.
 *   - They may be called from several threads at once (compiles of
 *     different fusers run concurrently; one fuser's compiles are serialized).
 *   - Logging: cache events on FBX_LOG_CACHE, library loading on
 *     FBX_LOG_LOADER, a dropped -fopenmp on FBX_LOG_FUSION (core/base/log.h).
 */
#ifndef FBX_HOST_SERVICES_H
#define FBX_HOST_SERVICES_H
#include <fusebox/fuser_abi.h>

/* ---- implemented in core/host/services_*.c ------------------------------------------ */

/* Compile C source to a shared object and load it: $FUSEBOX_CC (default cc),
 * flags appended to "-O3 -fPIC -shared -std=c11"; -fopenmp probed once per
 * compiler identity (the answer kept in the cache directory) and dropped
 * (with -fopenmp-simd) if the compiler rejects it. On-disk cache under
 * $FUSEBOX_CACHE_DIR keyed by a hash of source, compiler and flags, with
 * atomic writes, recovery from a corrupt entry (recompile), ownership checks
 * (a directory or entry not the user's is refused with a warning), an LRU
 * size limit (FUSEBOX_CACHE_MAX_MB), and one FUSEBOX_CC_TIMEOUT deadline for
 * the whole request. Calls fbx_svc_count_disk_hit() when the object came
 * from the disk cache. *out is released with fbx_svc_shlib_release. See
 * services_cc.c's header for the layout and the rules. */
fbxp_status *fbx_svc_cc_compile(const char *source, const char *flags, fbxp_shlib **out);
/* dlsym in a loaded object; NULL when lib or the symbol is missing. */
void *fbx_svc_shlib_symbol(fbxp_shlib *lib, const char *name);
/* Drop one reference (NULL is a no-op); unloads when it was the last. */
void fbx_svc_shlib_release(fbxp_shlib *lib);

/* CUDA C to PTX through libnvrtc (dlopen'ed on first use; no GPU needed).
 * arch NULL means a default: the newest of compute_90/80/75/70 the loaded
 * NVRTC accepts (FUSEBOX_NVRTC_ARCH overrides). */
fbxp_status *fbx_svc_nvrtc_compile(const char *source, const char *name, const char *arch, char **ptx,
                                   char **log);

/* Build an OpenCL C program on the first device of the first platform that
 * has one (through the ICD loader, dlopen'ed). The context/device/queue are
 * shared and live until process exit. */
fbxp_status *fbx_svc_opencl_build(const char *source, const char *options, void **program, void **context,
                                  void **device, void **queue, char **log);

/* ---- implemented in core/host/hostapi.c ------------------------------------------------ */

/* A new status (printf-style message) of the kind plugins get from
 * host->status_new. code FBXP_OK still makes an object; use NULL for success. */
fbxp_status *fbx_svc_status(fbxp_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Count a disk-cache hit for the fuser whose compile is running on this
 * thread (its stats' disk_cache_hits); no-op outside a compile. */
void fbx_svc_count_disk_hit(void);

#endif
