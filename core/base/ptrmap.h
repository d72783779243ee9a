/* Pointer-keyed hash map (open addressing), for passes and cloning.
 *
 *   fbx_ptrmap m = {0};
 *   if (fbx_ptrmap_put(&m, key, val)) ...oom...;
 *   void *v = fbx_ptrmap_get(&m, key);   // NULL when absent
 *   fbx_ptrmap_free(&m);
 */
#ifndef FBX_BASE_PTRMAP_H
#define FBX_BASE_PTRMAP_H
#include <stddef.h>

typedef struct fbx_ptrmap {
  const void **keys;
  void **vals;
  size_t cap, count;
} fbx_ptrmap;

/* 0 on success, -1 when out of memory. key must not be NULL. */
int fbx_ptrmap_put(fbx_ptrmap *m, const void *key, void *val);
void *fbx_ptrmap_get(const fbx_ptrmap *m, const void *key);
int fbx_ptrmap_has(const fbx_ptrmap *m, const void *key);
void fbx_ptrmap_clear(fbx_ptrmap *m);
void fbx_ptrmap_free(fbx_ptrmap *m);

#endif
