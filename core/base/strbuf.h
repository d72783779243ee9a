/* Growable string buffer used by printers and code generators.
 *
 *   fbx_strbuf b = {0};
 *   fbx_strbuf_printf(&b, "%%%s", name);
 *   if (b.oom) ...;           // sticky: later appends are no-ops
 *   use(b.data, b.len);
 *   fbx_strbuf_free(&b);
 */
#ifndef FBX_BASE_STRBUF_H
#define FBX_BASE_STRBUF_H
#include <stdarg.h>
#include <stddef.h>

#include "base/status.h"

typedef struct fbx_strbuf {
  char *data; /* NUL-terminated once anything was appended */
  size_t len, cap;
  int oom;    /* set when an append failed to allocate */
} fbx_strbuf;

void fbx_strbuf_append(fbx_strbuf *b, const char *s, size_t n);
void fbx_strbuf_puts(fbx_strbuf *b, const char *s);
void fbx_strbuf_putc(fbx_strbuf *b, char c);
void fbx_strbuf_printf(fbx_strbuf *b, const char *fmt, ...) FBX_PRINTF(2, 3);
void fbx_strbuf_vprintf(fbx_strbuf *b, const char *fmt, va_list ap);
/* A new formatted string (free with fbx_free); NULL when out of memory. */
char *fbx_vasprintf(const char *fmt, va_list ap);

/* Hand the string to the caller (free with fbx_free); NULL if oom. Resets b. */
char *fbx_strbuf_take(fbx_strbuf *b);
void fbx_strbuf_free(fbx_strbuf *b);

#endif
