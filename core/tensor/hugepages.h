/* Transparent huge pages for large tensor blocks (internal to core/tensor).
 *
 * A memory-bound kernel streaming a [4096, 1024] float32 tensor crosses
 * 4096 pages of 4 KiB: a TLB miss and a page walk each, and the hardware
 * prefetchers stop at every page boundary. On Linux, a fresh block of
 * FBX_HUGEPAGES_MIN bytes or more is advised MADV_HUGEPAGE (its 2 MiB
 * aligned interior, before its first touch), so that where the system's
 * transparent huge pages are set to `madvise` (Debian's default) or
 * `always`, the kernel backs it with 2 MiB pages. The advice is a hint:
 * where it is refused (`never`, no THP, another OS) nothing changes.
 *
 * FUSEBOX_HUGE_PAGES: `1` (default) or `0` to give no advice. A bad value
 * warns once and the default is used (the CLI and fbx_executor_create
 * refuse it first, see fbx_env_check_all).
 */
#ifndef FBX_TENSOR_HUGEPAGES_H
#define FBX_TENSOR_HUGEPAGES_H
#include <stddef.h>

#define FBX_HUGEPAGES_MIN ((size_t)4 << 20) /* always holds one whole 2 MiB page */
#define FBX_HUGEPAGES_ALIGN ((size_t)2 << 20) /* a huge page; storage.c starts such buffers there */

/* Advise the 2 MiB pages inside [p, p + n) when n >= FBX_HUGEPAGES_MIN and
 * FUSEBOX_HUGE_PAGES is not 0. Returns the bytes advised (0 when none, or
 * when the system refused). */
size_t fbx_hugepages_advise(void *p, size_t n);

#endif
