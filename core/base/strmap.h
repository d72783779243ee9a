/* String-keyed hash map (open addressing), for name lookups that must not
 * scan a graph.
 *
 *   fbx_strmap m = {0};
 *   if (fbx_strmap_put(&m, name, val)) ...oom...;   // name is not copied
 *   void *v = fbx_strmap_get(&m, "x.1");            // NULL when absent
 *   fbx_strmap_free(&m);
 *
 * Keys are borrowed: the caller keeps each key's bytes alive and unchanged
 * while it is in the map (arena strings, value names). Keys compare by
 * content; putting an existing key replaces its value.
 */
#ifndef FBX_BASE_STRMAP_H
#define FBX_BASE_STRMAP_H
#include <stddef.h>

typedef struct fbx_strmap {
  const char **keys;
  void **vals;
  size_t cap, count;
} fbx_strmap;

/* 0 on success, -1 when out of memory. key must not be NULL. */
int fbx_strmap_put(fbx_strmap *m, const char *key, void *val);
void *fbx_strmap_get(const fbx_strmap *m, const char *key);
int fbx_strmap_has(const fbx_strmap *m, const char *key);
void fbx_strmap_free(fbx_strmap *m);

#endif
