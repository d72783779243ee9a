#include "base/parallel.h"
#include "base/env.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

enum { MAX_THREADS = 64 };

/* One job at a time: a caller that finds the pool busy runs its loop inline,
 * which is also what makes concurrent executors safe. */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int nthreads = 1;         /* including the caller */
static int nworkers;             /* started */
static uint64_t generation;      /* bumped per job */
static fbx_range_fn job_fn;
static void *job_ctx;
static int64_t job_n, job_chunk;
static atomic_long next_chunk;
static int pending;              /* workers still on the current job */
static _Thread_local int in_worker;

static void run_chunks(void) {
  for (;;) {
    long c = atomic_fetch_add(&next_chunk, 1);
    int64_t begin = (int64_t)c * job_chunk;
    if (begin >= job_n) return;
    int64_t end = begin + job_chunk < job_n ? begin + job_chunk : job_n;
    job_fn(job_ctx, begin, end);
  }
}

static void *worker(void *arg) {
  (void)arg;
  in_worker = 1;
  uint64_t seen = 0;
  pthread_mutex_lock(&m);
  for (;;) {
    while (generation == seen) pthread_cond_wait(&work_cv, &m);
    seen = generation;
    pthread_mutex_unlock(&m);
    run_chunks();
    pthread_mutex_lock(&m);
    if (--pending == 0) pthread_cond_signal(&done_cv);
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
  pending = 0;
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
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (long i = 1; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, NULL)) break;
    nworkers++;
  }
  pthread_attr_destroy(&attr);
  nthreads = nworkers + 1;
}

int fbx_parallel_threads(void) {
  pthread_once(&once, init);
  return nthreads;
}

void fbx_parallel_for(int64_t n, int64_t grain, fbx_range_fn fn, void *ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain || in_worker || fbx_parallel_threads() == 1 || pthread_mutex_trylock(&job_lock)) {
    fn(ctx, 0, n);
    return;
  }
  int64_t chunks = n / grain;
  if (chunks > nthreads) chunks = nthreads;
  pthread_mutex_lock(&m);
  job_fn = fn;
  job_ctx = ctx;
  job_n = n;
  job_chunk = (n + chunks - 1) / chunks;
  atomic_store(&next_chunk, 0);
  pending = nworkers;
  generation++;
  pthread_cond_broadcast(&work_cv);
  pthread_mutex_unlock(&m);
  in_worker = 1; /* the caller takes chunks too; nested loops inside run inline */
  run_chunks();
  in_worker = 0;
  pthread_mutex_lock(&m);
  while (pending) pthread_cond_wait(&done_cv, &m);
  pthread_mutex_unlock(&m);
  pthread_mutex_unlock(&job_lock);
}
