#include "base/strmap.h"

#include <stdint.h>
#include <string.h>

#include "base/alloc.h"

/* FNV-1a, then a final mix so that the low bits depend on every byte */
static size_t slot_of(const char *key, size_t cap) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 0x100000001b3ULL;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return (size_t)h & (cap - 1);
}

static int grow(fbx_strmap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  const char **nk = fbx_calloc(ncap, sizeof *nk);
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

static size_t find(const fbx_strmap *m, const char *key, int *found) {
  *found = 0;
  if (!m->cap) return 0;
  size_t j = slot_of(key, m->cap);
  while (m->keys[j]) {
    if (!strcmp(m->keys[j], key)) {
      *found = 1;
      return j;
    }
    j = (j + 1) & (m->cap - 1);
  }
  return j;
}

int fbx_strmap_put(fbx_strmap *m, const char *key, void *val) {
  if ((m->count + 1) * 2 > m->cap && grow(m)) return -1;
  int found;
  size_t j = find(m, key, &found);
  if (!found) {
    m->keys[j] = key;
    m->count++;
  }
  m->vals[j] = val;
  return 0;
}

void *fbx_strmap_get(const fbx_strmap *m, const char *key) {
  int found;
  size_t j = find(m, key, &found);
  return found ? m->vals[j] : NULL;
}

int fbx_strmap_has(const fbx_strmap *m, const char *key) {
  int found;
  find(m, key, &found);
  return found;
}

void fbx_strmap_free(fbx_strmap *m) {
  fbx_free(m->keys);
  fbx_free(m->vals);
  memset(m, 0, sizeof *m);
}
