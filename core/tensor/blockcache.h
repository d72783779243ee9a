/* A cache of large freed storage blocks (internal to core/tensor).
 *
 * Fresh multi-megabyte buffers cost a page fault per 4 KiB page on first
 * touch, which dominated the interpreter's time on large tensors (every op
 * allocates its output). Freed blocks of 64 KiB or more are kept in size
 * classes (a quarter-octave apart, so at most 25% slack) and handed out again.
 *
 * FUSEBOX_STORAGE_CACHE_MB bounds the bytes kept (default 1024; 0 turns the
 * cache off). It steps aside while fault injection is armed and in
 * AddressSanitizer builds, so tests see every allocation.
 */
#ifndef FBX_TENSOR_BLOCKCACHE_H
#define FBX_TENSOR_BLOCKCACHE_H
#include <stddef.h>

/* The size to allocate for a request of n bytes (n itself when small). */
size_t fbx_blockcache_class(size_t n);
/* A cached block of exactly class size `bytes`, or NULL. */
void *fbx_blockcache_take(size_t bytes);
/* Offer a block of class size `bytes`; 1 if kept, 0 if the caller must free it. */
int fbx_blockcache_give(void *block, size_t bytes);
/* Free every cached block. */
void fbx_blockcache_trim(void);

#endif
