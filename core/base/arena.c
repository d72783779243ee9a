#include "base/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"

enum { ARENA_CHUNK = 16 * 1024 };

typedef struct chunk {
  struct chunk *next;
  size_t cap, used;
  alignas(max_align_t) unsigned char data[];
} chunk;

struct fbx_arena {
  chunk *head;
  size_t total;
};

fbx_arena *fbx_arena_create(void) { return fbx_calloc(1, sizeof(fbx_arena)); }

void fbx_arena_destroy(fbx_arena *a) {
  if (!a) return;
  for (chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    fbx_free(c);
  }
  fbx_free(a);
}

void *fbx_arena_alloc(fbx_arena *a, size_t n) {
  const size_t align = alignof(max_align_t);
  n = (n + align - 1) & ~(align - 1);
  if (n == 0) n = align;
  chunk *c = a->head;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
    chunk *nc = fbx_malloc(sizeof(chunk) + cap);
    if (!nc) return NULL;
    nc->cap = cap;
    nc->used = 0;
    /* A big one-off block goes behind the head so the head keeps its room. */
    if (c && cap > ARENA_CHUNK) {
      nc->next = c->next;
      c->next = nc;
    } else {
      nc->next = c;
      a->head = nc;
    }
    c = nc;
  }
  void *p = c->data + c->used;
  c->used += n;
  a->total += n;
  memset(p, 0, n);
  return p;
}

void *fbx_arena_memdup(fbx_arena *a, const void *p, size_t n) {
  void *d = fbx_arena_alloc(a, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *fbx_arena_strndup(fbx_arena *a, const char *s, size_t n) {
  char *d = fbx_arena_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *fbx_arena_strdup(fbx_arena *a, const char *s) {
  return fbx_arena_strndup(a, s, strlen(s));
}

size_t fbx_arena_used(const fbx_arena *a) { return a->total; }
