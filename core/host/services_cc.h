/* Private to core/host/services_cc.c and its tests: counters and state of the
 * C-compiler service, for tests and diagnostics. */
#ifndef FBX_HOST_SERVICES_CC_H
#define FBX_HOST_SERVICES_CC_H

typedef struct fbx_svc_cc_counters {
  long compiles;       /* compiler runs that produced an object (cache misses) */
  long disk_hits;      /* objects loaded from the disk cache */
  long memory_hits;    /* answered by an object already loaded in this process */
  long corrupt;        /* disk entries found corrupt, deleted and rebuilt */
  long failures;       /* compiles that returned an error */
} fbx_svc_cc_counters;

/* Process-wide totals since start (all threads). */
void fbx_svc_cc_get_counters(fbx_svc_cc_counters *out);

/* OpenMP support of the compiler that $FUSEBOX_CC names now: 1 works, 0 was
 * dropped (the probe failed), -1 not probed yet (no compile asked for it). */
int fbx_svc_cc_openmp_state(void);

/* The cache directory the next compile would ask for (resolved from
 * FUSEBOX_CACHE_DIR / XDG_CACHE_HOME / HOME, else /tmp/fusebox-cache-<euid>);
 * a compile uses it only if it passes the ownership checks (services_cc.c).
 * fbx_malloc'd, NULL on OOM. */
char *fbx_svc_cc_cache_dir(void);

#endif
