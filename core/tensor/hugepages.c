#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "tensor/hugepages.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "base/env.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool enabled = true;

static void init(void) {
  fbx_status *st = fbx_env_bool("FUSEBOX_HUGE_PAGES", true, &enabled);
  if (st) fbx_env_warn(st), enabled = true;
}

size_t fbx_hugepages_advise(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (n < FBX_HUGEPAGES_MIN) return 0;
  pthread_once(&once, init);
  if (!enabled) return 0;
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(huge - 1);
  if (e <= a || madvise((void *)a, (size_t)(e - a), MADV_HUGEPAGE) != 0) return 0;
  return (size_t)(e - a);
#else
  (void)p;
  (void)n;
  return 0;
#endif
}
