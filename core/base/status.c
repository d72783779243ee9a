#include "base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"

struct fbx_status {
  fbx_code code;
  int is_static;
  char *msg;
};

static fbx_status nomem_status = {FBX_ERR_NOMEM, 1, "out of memory"};

static const char *const code_names[FBX_CODE_COUNT] = {
    "ok",          "invalid argument", "parse error", "verify error",
    "out of memory", "i/o error",      "unsupported", "runtime error",
    "plugin error",  "internal error",
};

const char *fbx_code_name(fbx_code code) {
  return (unsigned)code < FBX_CODE_COUNT ? code_names[code] : "unknown";
}

fbx_code fbx_status_code(const fbx_status *st) { return st ? st->code : FBX_OK; }

const char *fbx_status_message(const fbx_status *st) { return st ? st->msg : ""; }

void fbx_status_free(fbx_status *st) {
  if (!st || st->is_static) return;
  fbx_free(st->msg);
  fbx_free(st);
}

fbx_status *fbx_status_nomem(void) { return &nomem_status; }

fbx_status *fbx_status_newv(fbx_code code, const char *fmt, va_list ap) {
  fbx_status *st = fbx_malloc(sizeof *st);
  char *msg = st ? fbx_vasprintf(fmt, ap) : NULL;
  if (!msg) {
    fbx_free(st);
    return &nomem_status;
  }
  st->code = code;
  st->is_static = 0;
  st->msg = msg;
  return st;
}

fbx_status *fbx_status_new(fbx_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fbx_status *st = fbx_status_newv(code, fmt, ap);
  va_end(ap);
  return st;
}

fbx_status *fbx_status_wrap(fbx_status *st, const char *fmt, ...) {
  if (!st || st->is_static) return st;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  fbx_status *w = fbx_status_new(st->code, "%s: %s", prefix, st->msg);
  if (w == &nomem_status) return st; /* keep the original rather than lose it */
  fbx_status_free(st);
  return w;
}
