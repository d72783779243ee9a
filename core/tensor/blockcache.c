#include "tensor/blockcache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/env.h"

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_DISABLED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE_DISABLED_BUILD 1
#endif
#endif
#ifndef CACHE_DISABLED_BUILD
#define CACHE_DISABLED_BUILD 0
#endif

enum { MIN_CACHED = 64 * 1024, NBUCKETS = 64 };

typedef struct free_block {
  struct free_block *next;
  size_t bytes;
} free_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static free_block *buckets[NBUCKETS];
static size_t cached_bytes, limit_bytes;

static void init(void) {
  int64_t mb = 1024;
  fbx_status *st = fbx_env_int("FUSEBOX_STORAGE_CACHE_MB", 0, FBX_ENV_MAX_CACHE_MB, 1024, &mb);
  if (st) fbx_env_warn(st), mb = 1024; /* the CLI and fbx_executor_create refuse it first */
  limit_bytes = CACHE_DISABLED_BUILD || mb <= 0 ? 0 : (size_t)mb << 20;
}

size_t fbx_blockcache_class(size_t n) {
  if (n < MIN_CACHED) return n;
  size_t top = (size_t)1 << (63 - __builtin_clzll((unsigned long long)n)); /* largest power of 2 <= n */
  size_t step = top / 4;
  if (n > SIZE_MAX - step) return n;
  return (n + step - 1) / step * step;
}

static int bucket_of(size_t bytes) { return (int)((size_t)(bytes * 2654435761u) >> 7) & (NBUCKETS - 1); }

static int usable(size_t bytes) {
  pthread_once(&once, init);
  return limit_bytes && bytes >= MIN_CACHED && !fbx_alloc_faults_armed();
}

void *fbx_blockcache_take(size_t bytes) {
  if (!usable(bytes)) return NULL;
  pthread_mutex_lock(&lock);
  free_block **p = &buckets[bucket_of(bytes)];
  while (*p && (*p)->bytes != bytes) p = &(*p)->next;
  free_block *b = *p;
  if (b) {
    *p = b->next;
    cached_bytes -= bytes;
  }
  pthread_mutex_unlock(&lock);
  return b;
}

int fbx_blockcache_give(void *block, size_t bytes) {
  if (!usable(bytes)) return 0;
  int kept = 0;
  pthread_mutex_lock(&lock);
  if (cached_bytes + bytes <= limit_bytes) {
    free_block *b = block;
    int k = bucket_of(bytes);
    b->bytes = bytes;
    b->next = buckets[k];
    buckets[k] = b;
    cached_bytes += bytes;
    kept = 1;
  }
  pthread_mutex_unlock(&lock);
  return kept;
}

void fbx_blockcache_trim(void) {
  pthread_mutex_lock(&lock);
  for (int k = 0; k < NBUCKETS; k++) {
    for (free_block *b = buckets[k], *n; b; b = n) {
      n = b->next;
      fbx_free(b);
    }
    buckets[k] = NULL;
  }
  cached_bytes = 0;
  pthread_mutex_unlock(&lock);
}
