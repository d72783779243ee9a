/* Memory helpers shared by the benchmarks that time a memory floor
 * (bench_peak --stream, bench_nvf_launch --stream): blocks laid out as large
 * tensors get them, and the eviction `fusebox bench` makes before each timed
 * run (tools/cmd_benchrun.c, fbx_br_evict), so that a floor starts from the
 * same cache state as the rows it is printed under. */
#ifndef FBX_BENCH_MEM_H
#define FBX_BENCH_MEM_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/parallel.h"
#include "tensor/hugepages.h"

/* A block of n bytes, 2 MiB aligned and advised huge pages, as storage.c
 * gives tensors of 4 MiB or more; free() it. */
static inline void *bench_big_block(size_t n) {
  size_t r = (n + FBX_HUGEPAGES_ALIGN - 1) / FBX_HUGEPAGES_ALIGN * FBX_HUGEPAGES_ALIGN;
  void *p = aligned_alloc(FBX_HUGEPAGES_ALIGN, r);
  if (p) fbx_hugepages_advise(p, r);
  return p;
}

typedef struct {
  char *dst;
  const char *src;
} bench_evict;

static inline void bench_evict_range(void *ctx, int64_t begin, int64_t end) {
  bench_evict *c = ctx;
  memcpy(c->dst + begin, c->src + begin, (size_t)(end - begin));
}

/* e->src copied into e->dst (bytes each) on the pool, with fbx_br_evict's grain. */
static inline void bench_evict_run(bench_evict *e, size_t bytes) {
  fbx_parallel_for((int64_t)bytes, 4 * 32768, bench_evict_range, e);
}

#endif
