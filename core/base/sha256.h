/* SHA-256 (FIPS 180-4), for content keys of on-disk caches.
 *
 *   fbx_sha256 h;
 *   fbx_sha256_init(&h);
 *   fbx_sha256_update(&h, src, strlen(src));
 *   char hex[FBX_SHA256_HEX_LEN + 1];
 *   fbx_sha256_final_hex(&h, hex);        // 64 lowercase hex digits
 *
 * No allocation; a context is plain data and may be copied.
 */
#ifndef FBX_BASE_SHA256_H
#define FBX_BASE_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define FBX_SHA256_LEN 32
#define FBX_SHA256_HEX_LEN 64

typedef struct fbx_sha256 {
  uint32_t h[8];
  uint64_t nbytes;  /* message length so far */
  uint8_t buf[64];  /* partial block */
  size_t nbuf;
} fbx_sha256;

void fbx_sha256_init(fbx_sha256 *s);
void fbx_sha256_update(fbx_sha256 *s, const void *data, size_t n);
void fbx_sha256_final(fbx_sha256 *s, uint8_t out[FBX_SHA256_LEN]);
/* Final digest as NUL-terminated lowercase hex (65 bytes). */
void fbx_sha256_final_hex(fbx_sha256 *s, char out[FBX_SHA256_HEX_LEN + 1]);
/* One-shot convenience. */
void fbx_sha256_hex(char out[FBX_SHA256_HEX_LEN + 1], const void *data, size_t n);

#endif
