#include "base/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local long fail_after = -1;
static _Thread_local long failures;
static _Thread_local int fail_once; /* only one allocation fails; later ones succeed */
static _Thread_local int armed;
static atomic_long outstanding;

long fbx_alloc_outstanding(void) { return atomic_load_explicit(&outstanding, memory_order_relaxed); }

static void *counted(void *p) {
  if (p) atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
  return p;
}

void fbx_alloc_fail_after(long n) {
  fail_after = n;
  failures = 0;
  fail_once = 0;
  armed = n >= 0;
}

void fbx_alloc_fail_once_after(long n) {
  fbx_alloc_fail_after(n);
  fail_once = armed;
}

long fbx_alloc_failures(void) { return failures; }

int fbx_alloc_faults_armed(void) { return armed; }

static int should_fail(void) {
  if (fail_after < 0) return 0;
  if (fail_after == 0) {
    failures++;
    if (fail_once) fail_after = -1; /* still armed: caches stay aside until the reset */
    return 1;
  }
  fail_after--;
  return 0;
}

void *fbx_malloc(size_t n) {
  if (should_fail()) return NULL;
  return counted(malloc(n ? n : 1));
}

void *fbx_calloc(size_t count, size_t size) {
  if (should_fail()) return NULL;
  return counted(calloc(count ? count : 1, size ? size : 1));
}

void *fbx_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  if (!p) return counted(realloc(p, n ? n : 1));
  return realloc(p, n ? n : 1);
}

void fbx_free(void *p) {
  if (p) atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
  free(p);
}

char *fbx_strndup(const char *s, size_t n) {
  char *d = fbx_malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *fbx_strdup(const char *s) { return fbx_strndup(s, strlen(s)); }
