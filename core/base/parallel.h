/* Data parallelism for kernels: split [0, n) into chunks run on a shared
 * pool of worker threads (created on first use; FUSEBOX_NUM_THREADS, default
 * the number of online CPUs). Calls from inside a worker run inline, so
 * nested parallel loops never deadlock. In a process forked after the pool
 * started (fusebox fuzz, plugin-check --isolate run graphs in forked
 * children), loops run serially: the workers stay in the parent.
 * Between loops a worker busy-waits for up to 200 us before it sleeps, and
 * the caller busy-waits as long for the last chunk (back-to-back kernels
 * then pay no wake-up); each worker starts on a CPU other than its
 * creator's (a starting place, not a pin).
 *
 *   static void body(void *ctx, int64_t begin, int64_t end) { ... }
 *   fbx_parallel_for(n, 32768, body, &ctx);   // serial when n <= grain
 */
#ifndef FBX_BASE_PARALLEL_H
#define FBX_BASE_PARALLEL_H
#include <stdint.h>

typedef void (*fbx_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Run fn over [0, n) in chunks of at least `grain` elements; returns when all
 * chunks are done. Falls back to a serial call if threads are unavailable. */
void fbx_parallel_for(int64_t n, int64_t grain, fbx_range_fn fn, void *ctx);
/* Run fn over [0, n) in chunks of `per` (>= 1) elements, each claimed by
 * whichever thread is free next: for loops of few, long and even tasks
 * (convolution bands), so that a thread slowed by another process's work
 * on its CPU leaves the rest of its share to the others, where
 * fbx_parallel_for gives each thread one fixed share. Like
 * fbx_parallel_for, it runs as one call over [0, n) when n <= per, with one
 * thread, from inside a pool thread, or while another thread's loop holds
 * the pool: fn must take any range. */
void fbx_parallel_for_tasks(int64_t n, int64_t per, fbx_range_fn fn, void *ctx);
/* Number of threads fbx_parallel_for may use (>= 1). */
int fbx_parallel_threads(void);

#endif
