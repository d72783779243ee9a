#include "base/ptrmap.h"

#include <stdint.h>
#include <string.h>

#include "base/alloc.h"

static size_t slot_of(const void *key, size_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)key;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static int grow(fbx_ptrmap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  const void **nk = fbx_calloc(ncap, sizeof *nk);
  void **nv = fbx_calloc(ncap, sizeof *nv);
  if (!nk || !nv) {
    fbx_free(nk);
    fbx_free(nv);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i]) continue;
    size_t j = slot_of(m->keys[i], ncap);
    while (nk[j]) j = (j + 1) & (ncap - 1);
    nk[j] = m->keys[i];
    nv[j] = m->vals[i];
  }
  fbx_free(m->keys);
  fbx_free(m->vals);
  m->keys = nk;
  m->vals = nv;
  m->cap = ncap;
  return 0;
}

int fbx_ptrmap_put(fbx_ptrmap *m, const void *key, void *val) {
  if ((m->count + 1) * 2 > m->cap && grow(m)) return -1;
  size_t j = slot_of(key, m->cap);
  while (m->keys[j] && m->keys[j] != key) j = (j + 1) & (m->cap - 1);
  if (!m->keys[j]) m->count++;
  m->keys[j] = key;
  m->vals[j] = val;
  return 0;
}

static size_t find(const fbx_ptrmap *m, const void *key, int *found) {
  *found = 0;
  if (!m->cap) return 0;
  size_t j = slot_of(key, m->cap);
  while (m->keys[j]) {
    if (m->keys[j] == key) {
      *found = 1;
      return j;
    }
    j = (j + 1) & (m->cap - 1);
  }
  return j;
}

void *fbx_ptrmap_get(const fbx_ptrmap *m, const void *key) {
  int found;
  size_t j = find(m, key, &found);
  return found ? m->vals[j] : NULL;
}

int fbx_ptrmap_has(const fbx_ptrmap *m, const void *key) {
  int found;
  find(m, key, &found);
  return found;
}

void fbx_ptrmap_clear(fbx_ptrmap *m) {
  if (m->cap) {
    memset(m->keys, 0, m->cap * sizeof *m->keys);
    memset(m->vals, 0, m->cap * sizeof *m->vals);
  }
  m->count = 0;
}

void fbx_ptrmap_free(fbx_ptrmap *m) {
  fbx_free(m->keys);
  fbx_free(m->vals);
  memset(m, 0, sizeof *m);
}
