#include "base/strbuf.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"

static int reserve(fbx_strbuf *b, size_t extra) {
  if (b->oom) return 0;
  size_t need = b->len + extra + 1;
  if (need <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) cap *= 2;
  char *d = fbx_realloc(b->data, cap);
  if (!d) {
    b->oom = 1;
    return 0;
  }
  b->data = d;
  b->cap = cap;
  return 1;
}

void fbx_strbuf_append(fbx_strbuf *b, const char *s, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void fbx_strbuf_puts(fbx_strbuf *b, const char *s) { fbx_strbuf_append(b, s, strlen(s)); }

void fbx_strbuf_putc(fbx_strbuf *b, char c) { fbx_strbuf_append(b, &c, 1); }

void fbx_strbuf_vprintf(fbx_strbuf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0 || !reserve(b, (size_t)n)) return;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void fbx_strbuf_printf(fbx_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fbx_strbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *fbx_strbuf_take(fbx_strbuf *b) {
  char *d = NULL;
  if (!b->oom) {
    if (!b->data) reserve(b, 0), b->data ? b->data[0] = '\0' : 0;
    d = b->data;
  } else {
    fbx_free(b->data);
  }
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
  return d;
}

void fbx_strbuf_free(fbx_strbuf *b) {
  fbx_free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}

char *fbx_vasprintf(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  char *msg = fbx_malloc((size_t)n + 1);
  if (msg) vsnprintf(msg, (size_t)n + 1, fmt, ap);
  return msg;
}
