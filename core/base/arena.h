/* Bump allocator for IR objects and strings; everything is freed at once
 * with fbx_arena_destroy. Allocations go through fbx_malloc (fault-injectable).
 *
 *   fbx_arena *a = fbx_arena_create();
 *   int *xs = fbx_arena_alloc(a, 10 * sizeof *xs);
 *   char *s = fbx_arena_strndup(a, "hello", 5);
 *   fbx_arena_destroy(a);
 */
#ifndef FBX_BASE_ARENA_H
#define FBX_BASE_ARENA_H
#include <stddef.h>

typedef struct fbx_arena fbx_arena;

fbx_arena *fbx_arena_create(void);
void fbx_arena_destroy(fbx_arena *a);
/* Zero-filled, aligned to max_align_t. NULL when out of memory. */
void *fbx_arena_alloc(fbx_arena *a, size_t n);
char *fbx_arena_strndup(fbx_arena *a, const char *s, size_t n);
char *fbx_arena_strdup(fbx_arena *a, const char *s);
void *fbx_arena_memdup(fbx_arena *a, const void *p, size_t n);
/* Bytes handed out so far (for stats and tests). */
size_t fbx_arena_used(const fbx_arena *a);

#endif
