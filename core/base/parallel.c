#define _GNU_SOURCE /* sched_getcpu, pthread_setaffinity_np */
#include <sched.h>
#include "base/parallel.h"
#include "base/env.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { MAX_THREADS = 64 };

/* How long a thread busy-waits for the next job (a worker) or for the last
 * worker to finish (the caller) before it sleeps on a condition variable.
 * Kernels come one after another with a few microseconds of host work
 * between them; waking a sleeping worker costs tens of microseconds, which
 * on a 1 ms row kernel is the difference between 2 threads and 1. */
enum { SPIN_NS = 200 * 1000 };

/* One job at a time: a caller that finds the pool busy runs its loop inline,
 * which is also what makes concurrent executors safe. */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int nthreads = 1;         /* including the caller */
static int nworkers;             /* started */
/* Bumped (under m, release) after the job fields below are written; a
 * worker that sees a new value (acquire) may read them. */
static atomic_uint_fast64_t generation;
static fbx_range_fn job_fn;
static void *job_ctx;
static int64_t job_n, job_chunk;
static atomic_long next_chunk;
static atomic_int pending;       /* workers still on the current job */
static int sleepers;             /* workers in cond_wait (under m) */
static _Thread_local int in_worker;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Busy-waits up to SPIN_NS for done(); returns whether it became true.
 * Every 256 pauses (a few microseconds) it also yields the CPU, so that a
 * thread of another pool that wants this CPU (PoCL's, running a kernel
 * launched right after a loop here) gets it without waiting for the spin
 * to end. */
static int spin_until(int (*done)(uint64_t), uint64_t arg) {
  int64_t t0 = 0;
  for (unsigned i = 1;; i++) {
    if (done(arg)) return 1;
    cpu_relax();
    if ((i & 255) == 0) {
      sched_yield();
      int64_t t = now_ns();
      if (!t0) t0 = t;
      else if (t - t0 > SPIN_NS) return 0;
    }
  }
}

static int new_job(uint64_t seen) {
  return atomic_load_explicit(&generation, memory_order_acquire) != seen;
}
static int job_done(uint64_t unused) {
  (void)unused;
  return atomic_load_explicit(&pending, memory_order_acquire) == 0;
}

static void run_chunks(void) {
  for (;;) {
    long c = atomic_fetch_add(&next_chunk, 1);
    int64_t begin = (int64_t)c * job_chunk;
    if (begin >= job_n) return;
    int64_t end = begin + job_chunk < job_n ? begin + job_chunk : job_n;
    job_fn(job_ctx, begin, end);
  }
}

/* Where a new worker starts. Linux tends to start a thread on its creator's
 * CPU and takes tens of milliseconds to move one of two busy threads away
 * (measured here: a 2-thread row kernel ran at 1-thread speed for its first
 * ~12 runs). So worker i is moved once, at start, to the i-th allowed CPU
 * after the creator's, and then given the whole allowed set back: a
 * starting place, not a pin; the scheduler is free to move it later. */
#ifdef __linux__
static cpu_set_t allowed;
static int have_allowed;

static int worker_cpu(int i) {
  if (!have_allowed) return -1;
  int here = sched_getcpu(), n = CPU_COUNT(&allowed);
  if (here < 0 || n < 2) return -1;
  int list[CPU_SETSIZE], k = 0, at = 0;
  for (int c = 0; c < CPU_SETSIZE && k < n; c++)
    if (CPU_ISSET(c, &allowed)) {
      if (c == here) at = k;
      list[k++] = c;
    }
  return list[(at + i) % k];
}

static void place_self(int cpu) {
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0)
    pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
}
#else
static int worker_cpu(int i) { (void)i; return -1; }
static void place_self(int cpu) { (void)cpu; }
#endif

static void *worker(void *arg) {
  in_worker = 1;
  place_self((int)(intptr_t)arg);
  uint64_t seen = 0;
  for (;;) {
    if (!spin_until(new_job, seen)) {
      pthread_mutex_lock(&m);
      sleepers++;
      while (!new_job(seen)) pthread_cond_wait(&work_cv, &m);
      sleepers--;
      pthread_mutex_unlock(&m);
    }
    seen = atomic_load_explicit(&generation, memory_order_acquire);
    run_chunks();
    if (atomic_fetch_sub_explicit(&pending, 1, memory_order_acq_rel) == 1) {
      /* The caller checks pending under m before it sleeps, so taking m
       * here means the signal cannot fall between its check and its wait. */
      pthread_mutex_lock(&m);
      pthread_cond_signal(&done_cv);
      pthread_mutex_unlock(&m);
    }
  }
  return NULL;
}

/* A child forked after the pool started has none of its workers: its loops
 * run serially (waiting for workers that do not exist hung forever), and the
 * locks start fresh (no thread of the child holds them). */
static void forked_child(void) {
  pthread_mutex_init(&job_lock, NULL);
  pthread_mutex_init(&m, NULL);
  pthread_cond_init(&work_cv, NULL);
  pthread_cond_init(&done_cv, NULL);
  nworkers = 0;
  nthreads = 1;
  sleepers = 0;
  atomic_store(&pending, 0);
}

static void init(void) {
  pthread_atfork(NULL, NULL, forked_child);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  int64_t want = 0;
  fbx_status *st = fbx_env_int("FUSEBOX_NUM_THREADS", 1, FBX_ENV_MAX_THREADS, 0, &want);
  if (st) fbx_env_warn(st); /* cannot fail here; the CLI and fbx_executor_create refuse it first */
  else if (want > 0) n = (long)want;
  if (n < 1) n = 1;
  if (n > MAX_THREADS) n = MAX_THREADS;
#ifdef __linux__
  have_allowed = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
#endif
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (long i = 1; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, (void *)(intptr_t)worker_cpu((int)i))) break;
    nworkers++;
  }
  pthread_attr_destroy(&attr);
  nthreads = nworkers + 1;
}

int fbx_parallel_threads(void) {
  pthread_once(&once, init);
  return nthreads;
}

/* Runs fn over [0, n) in chunks of `chunk`, claimed by the caller and the
 * workers as they come free; serially where the pool cannot take it. */
static void run_job(int64_t n, int64_t chunk, fbx_range_fn fn, void *ctx) {
  if (n <= chunk || in_worker || fbx_parallel_threads() == 1 || pthread_mutex_trylock(&job_lock)) {
    fn(ctx, 0, n);
    return;
  }
  job_fn = fn;
  job_ctx = ctx;
  job_n = n;
  job_chunk = chunk;
  atomic_store(&next_chunk, 0);
  atomic_store(&pending, nworkers);
  pthread_mutex_lock(&m);
  atomic_fetch_add_explicit(&generation, 1, memory_order_release);
  if (sleepers) pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&m);
  in_worker = 1; /* the caller takes chunks too; nested loops inside run inline */
  run_chunks();
  in_worker = 0;
  if (!spin_until(job_done, 0)) {
    pthread_mutex_lock(&m);
    while (!job_done(0)) pthread_cond_wait(&done_cv, &m);
    pthread_mutex_unlock(&m);
  }
  pthread_mutex_unlock(&job_lock);
}

void fbx_parallel_for(int64_t n, int64_t grain, fbx_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain) {
    fn(ctx, 0, n);
    return;
  }
  int64_t chunks = n / grain, threads = fbx_parallel_threads();
  if (chunks > threads) chunks = threads;
  run_job(n, (n + chunks - 1) / chunks, fn, ctx);
}

void fbx_parallel_for_tasks(int64_t n, int64_t per, fbx_range_fn fn, void *ctx) {
  if (n <= 0) return;
  run_job(n, per < 1 ? 1 : per, fn, ctx);
}
