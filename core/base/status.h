/* Building status values (internal). See <fusebox/status.h> for the API. */
#ifndef FBX_BASE_STATUS_H
#define FBX_BASE_STATUS_H
#include <stdarg.h>

#include <fusebox/status.h>

#if defined(__GNUC__)
#define FBX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FBX_PRINTF(a, b)
#endif

fbx_status *fbx_status_new(fbx_code code, const char *fmt, ...) FBX_PRINTF(2, 3);
fbx_status *fbx_status_newv(fbx_code code, const char *fmt, va_list ap);
/* The shared out-of-memory status (never freed). */
fbx_status *fbx_status_nomem(void);
/* Prefix an existing status's message: "<prefix>: <old message>". Consumes st. */
fbx_status *fbx_status_wrap(fbx_status *st, const char *fmt, ...) FBX_PRINTF(2, 3);

#define FBX_TRY(expr)                   \
  do {                                  \
    fbx_status *fbx_try_st_ = (expr);   \
    if (fbx_try_st_) return fbx_try_st_; \
  } while (0)

#endif
