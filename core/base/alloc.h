/* One allocation hook for all of core, so tests can fail the Nth allocation.
 *
 *   fbx_alloc_fail_after(3);   // the 4th allocation from now returns NULL
 *   ... exercise code, expect FBX_ERR_NOMEM ...
 *   fbx_alloc_fail_after(-1);  // back to normal
 *
 * Every allocation of core goes through here (never malloc/free directly),
 * so that fault injection and fbx_alloc_outstanding see all of it.
 */
#ifndef FBX_BASE_ALLOC_H
#define FBX_BASE_ALLOC_H
#include <stddef.h>

void *fbx_malloc(size_t n);
void *fbx_calloc(size_t count, size_t size);
void *fbx_realloc(void *p, size_t n);
void fbx_free(void *p);
char *fbx_strdup(const char *s);
char *fbx_strndup(const char *s, size_t n);

/* Blocks allocated through this hook and not yet freed, summed over all
 * threads (fbx_realloc of a live block does not count again). Tests compare
 * it before and after some work to find leaks without a sanitizer; memory
 * that a cache keeps on purpose (the storage block cache, interned symbols)
 * counts too, so warm those up first or turn them off. */
long fbx_alloc_outstanding(void);

/* Fault injection: after `n` more successful allocations, every allocation
 * fails until reset with a negative n. Thread-local. */
void fbx_alloc_fail_after(long n);
/* As fbx_alloc_fail_after, but only that one allocation fails; the ones
 * after it succeed (recovery paths: what carries on after a failure must
 * still be right). Reset with fbx_alloc_fail_after(-1). */
void fbx_alloc_fail_once_after(long n);
/* Number of allocations that were made to fail since the last reset. */
long fbx_alloc_failures(void);
/* 1 while fault injection is armed on this thread (caches step aside then,
 * so that every allocation really goes through the hook). */
int fbx_alloc_faults_armed(void);

#endif
