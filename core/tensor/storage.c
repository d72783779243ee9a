/* Reference-counted storage. Owned buffers live in the same allocation as
 * the header (one allocation to fail, one to free), aligned by hand since
 * the allocation hook has no aligned variant. */
#include <stdint.h>

#include "base/alloc.h"
#include "base/status.h"
#include <fusebox/tensor.h>
#include "tensor/blockcache.h"
#include "tensor/hugepages.h"
#include "tensor/internal.h"

struct fbx_storage {
  atomic_long refcount;
  void *data;
  size_t nbytes;
  fbx_storage_deleter deleter; /* NULL for owned buffers and unowned wraps */
  void *ctx;
  size_t block_bytes; /* owned buffers: the size of the allocation (for the block cache) */
};

fbx_status *fbx_storage_new(fbx_storage **out, size_t nbytes) {
  size_t head = sizeof(fbx_storage);
  if (nbytes > SIZE_MAX - head - FBX_STORAGE_ALIGN)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "storage of %zu bytes is too large", nbytes);
  /* a buffer that gets huge pages starts on a 2 MiB boundary, so that all of
   * it lies in them: at FBX_STORAGE_ALIGN, the block's first and last part
   * (up to 2 MiB each, from malloc's 4 KiB-aligned mmap) stayed in small pages,
   * where the hardware prefetchers stop every 4 KiB. The cost is address
   * space: the pages skipped before the buffer are never touched but the
   * header's. */
  size_t align = nbytes >= FBX_HUGEPAGES_MIN ? FBX_HUGEPAGES_ALIGN : FBX_STORAGE_ALIGN;
  if (nbytes > SIZE_MAX - head - align)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "storage of %zu bytes is too large", nbytes);
  size_t block_bytes = fbx_blockcache_class(head + align + nbytes);
  char *block = fbx_blockcache_take(block_bytes);
  if (!block) {
    block = fbx_malloc(block_bytes);
    /* before the first touch, which is when pages are chosen */
    if (block) fbx_hugepages_advise(block, block_bytes);
  }
  /* Say what did not fit (issue #12); the interpreter adds the node. When
   * even the message cannot be allocated this is the plain "out of memory". */
  if (!block)
    return fbx_status_new(FBX_ERR_NOMEM, "out of memory: cannot allocate %zu bytes (%.3g GiB) for a tensor", nbytes,
                          (double)nbytes / (1024.0 * 1024.0 * 1024.0));
  fbx_storage *s = (fbx_storage *)(void *)block;
  uintptr_t p = (uintptr_t)(block + head);
  p = (p + align - 1) & ~(uintptr_t)(align - 1);
  atomic_init(&s->refcount, 1);
  s->data = (void *)p;
  s->nbytes = nbytes;
  s->deleter = NULL;
  s->ctx = NULL;
  s->block_bytes = block_bytes;
  *out = s;
  return NULL;
}

fbx_status *fbx_storage_wrap(fbx_storage **out, void *data, size_t nbytes,
                             fbx_storage_deleter deleter, void *ctx) {
  fbx_storage *s = fbx_malloc(sizeof *s);
  if (!s) return fbx_status_nomem();
  atomic_init(&s->refcount, 1);
  s->data = data;
  s->nbytes = nbytes;
  s->deleter = deleter;
  s->ctx = ctx;
  s->block_bytes = 0;
  *out = s;
  return NULL;
}

fbx_storage *fbx_storage_retain(fbx_storage *s) {
  if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
  return s;
}

void fbx_storage_release(fbx_storage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
  if (s->deleter) s->deleter(s->ctx, s->data);
  if (s->block_bytes && fbx_blockcache_give(s, s->block_bytes)) return;
  fbx_free(s);
}

void *fbx_storage_data(const fbx_storage *s) { return s->data; }
size_t fbx_storage_nbytes(const fbx_storage *s) { return s->nbytes; }
long fbx_storage_refcount(const fbx_storage *s) {
  return atomic_load_explicit(&((fbx_storage *)s)->refcount, memory_order_relaxed);
}

void fbx_storage_set_deleter_(fbx_storage *s, fbx_storage_deleter deleter, void *ctx) {
  s->deleter = deleter;
  s->ctx = ctx;
}
