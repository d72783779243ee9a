/* base/parallel.h: the kernels' thread pool. Every index of every loop is
 * run exactly once, whatever the caller does between loops: back to back
 * (the workers are still busy-waiting), after a pause longer than their
 * busy-wait (they sleep and must be woken), from several threads at once
 * (one gets the pool, the others run inline), and nested; and
 * fbx_parallel_for_tasks's chunks go to whichever thread is free. Each test runs
 * in the pool of 2 threads set below, so a worker really takes part. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parallel.h"

enum { N = 1 << 14 };

typedef struct {
  atomic_uchar hits[N];
  pthread_t caller;  /* the thread that called fbx_parallel_for */
  atomic_int others; /* chunks run by another thread */
  int sleep_us; /* per chunk: long enough that the caller cannot take every chunk */
} job;

static void body(void *ctx, int64_t begin, int64_t end) {
  job *j = ctx;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&j->hits[i], 1);
  if (!pthread_equal(pthread_self(), j->caller)) atomic_fetch_add(&j->others, 1);
  if (j->sleep_us) {
    nanosleep(&(struct timespec){.tv_nsec = j->sleep_us * 1000L}, NULL);
  }
}

static job *job_new(int sleep_us) {
  job *j = calloc(1, sizeof *j);
  ck_assert_ptr_nonnull(j);
  j->sleep_us = sleep_us;
  j->caller = pthread_self();
  return j;
}

/* One assertion per loop: Check records every assertion it evaluates. */
static void check_once(job *j, int64_t n) {
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; i++)
    if (atomic_load(&j->hits[i]) != 1) bad = i;
  ck_assert_msg(bad < 0, "index %lld of %lld run %d times", (long long)bad, (long long)n,
                bad < 0 ? 1 : (int)atomic_load(&j->hits[bad]));
}

static void run_checked(int64_t n, int64_t grain, int sleep_us) {
  job *j = job_new(sleep_us);
  fbx_parallel_for(n, grain, body, j);
  check_once(j, n);
  free(j);
}

/* fbx_parallel_for_tasks: chunks of exactly `per` (the last one shorter),
 * every index once. */
typedef struct {
  job *j;
  int64_t per, n;
  atomic_int bad_chunks, caller_sleep_us;
} tasks_job;

static void tasks_body(void *ctx, int64_t begin, int64_t end) {
  tasks_job *t = ctx;
  int64_t want = t->n - begin < t->per ? t->n - begin : t->per;
  if (begin % t->per != 0 || end - begin != want) atomic_fetch_add(&t->bad_chunks, 1);
  body(t->j, begin, end);
  int us = atomic_load(&t->caller_sleep_us);
  if (us && pthread_equal(pthread_self(), t->j->caller))
    nanosleep(&(struct timespec){.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000L}, NULL);
}

static int64_t run_tasks(int64_t n, int64_t per, int caller_sleep_us) {
  tasks_job t = {.j = job_new(0), .per = per, .n = n};
  atomic_init(&t.bad_chunks, 0);
  atomic_init(&t.caller_sleep_us, caller_sleep_us);
  fbx_parallel_for_tasks(n, per, tasks_body, &t);
  check_once(t.j, n);
  int bad_chunks = atomic_load(&t.bad_chunks);
  ck_assert_msg(bad_chunks == 0, "%d chunks of %lld were not [k * %lld, k * %lld + %lld)", bad_chunks, (long long)n,
                (long long)per, (long long)per, (long long)per);
  int64_t others = atomic_load(&t.j->others);
  free(t.j);
  return others;
}

START_TEST(tasks_every_index_once) {
  for (int k = 0; k < 500; k++) run_tasks(1 + (k * 37) % N, 1 + k % 7, 0);
}
END_TEST

/* The caller sleeps 20 ms in each chunk it runs: the worker, claiming
 * chunks as it comes free, runs more than the half of 20 chunks that a
 * fixed share would give it. */
START_TEST(tasks_go_to_the_free_thread) {
  int64_t most = 0;
  for (int t = 0; t < 5 && most <= 10; t++) {
    int64_t others = run_tasks(20, 1, 20000);
    if (others > most) most = others;
  }
  ck_assert_msg(most > 10, "the worker ran at most %lld of 20 chunks while the caller slept", (long long)most);
}
END_TEST

START_TEST(pool_has_two_threads) { ck_assert_int_eq(fbx_parallel_threads(), 2); }
END_TEST

/* Chunks that sleep 2 ms: if no worker ran, the caller ran both. */
START_TEST(worker_takes_part) {
  int two = 0;
  for (int t = 0; t < 20 && !two; t++) {
    job *j = job_new(2000);
    fbx_parallel_for(2, 1, body, j);
    check_once(j, 2);
    two = atomic_load(&j->others) > 0;
    free(j);
  }
  ck_assert_msg(two, "in 20 loops of two 2 ms chunks, no worker thread ever ran a chunk");
}
END_TEST

/* Loops back to back, of every size around the grain. */
START_TEST(back_to_back) {
  for (int k = 0; k < 1000; k++) run_checked(1 + (k * 37) % N, 1 + k % 64, 0);
}
END_TEST

/* Pauses longer than the busy-wait (200 us), so that the workers sleep and
 * each loop has to wake them; a lost wake-up hangs (Check's timeout). */
START_TEST(after_pauses) {
  for (int k = 0; k < 100; k++) {
    nanosleep(&(struct timespec){.tv_nsec = (k % 3 + 1) * 300 * 1000L}, NULL);
    run_checked(N, 64, k % 2 ? 0 : 1);
  }
}
END_TEST

static void *caller(void *arg) {
  (void)arg;
  for (int k = 0; k < 100; k++) run_checked(N, 128, 0);
  return NULL;
}

/* Four threads calling at once: the pool runs one job at a time and the
 * others run inline; none may lose or repeat an index. */
START_TEST(concurrent_callers) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, caller, NULL), 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
}
END_TEST

typedef struct {
  job *inner[64];
} nest;

static void outer_body(void *ctx, int64_t begin, int64_t end) {
  nest *ns = ctx;
  for (int64_t i = begin; i < end; i++) fbx_parallel_for(N, 256, body, ns->inner[i]);
}

/* A loop inside a chunk runs inline (no deadlock) and completely. */
START_TEST(nested) {
  nest ns;
  for (int i = 0; i < 64; i++) ns.inner[i] = job_new(0);
  fbx_parallel_for(64, 1, outer_body, &ns);
  for (int i = 0; i < 64; i++) {
    check_once(ns.inner[i], N);
    free(ns.inner[i]);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("parallel");
  TCase *tc = tcase_create("pool");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, pool_has_two_threads);
  tcase_add_test(tc, worker_takes_part);
  tcase_add_test(tc, back_to_back);
  tcase_add_test(tc, after_pauses);
  tcase_add_test(tc, concurrent_callers);
  tcase_add_test(tc, nested);
  tcase_add_test(tc, tasks_every_index_once);
  tcase_add_test(tc, tasks_go_to_the_free_thread);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  /* before the pool starts (its first use reads it) */
  setenv("FUSEBOX_NUM_THREADS", "2", 1);
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
