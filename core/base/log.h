/* Tracing to stderr, switched on by FUSEBOX_LOG.
 *
 * FUSEBOX_LOG is a comma-separated list of channels (`passes,loader`), or
 * `all`/`1`. Channels: passes (each pass's effect and the graph after it),
 * parse, loader, fusion, exec, cache. Unknown names are ignored.
 *
 *   if (fbx_log_on(FBX_LOG_PASSES)) fbx_log(FBX_LOG_PASSES, "dce removed %d", n);
 */
#ifndef FBX_BASE_LOG_H
#define FBX_BASE_LOG_H
#include "base/status.h"

typedef enum fbx_log_channel {
  FBX_LOG_PASSES,
  FBX_LOG_PARSE,
  FBX_LOG_LOADER,
  FBX_LOG_FUSION,
  FBX_LOG_EXEC,
  FBX_LOG_CACHE,
  FBX_LOG_CHANNEL_COUNT
} fbx_log_channel;

int fbx_log_on(fbx_log_channel ch);
void fbx_log(fbx_log_channel ch, const char *fmt, ...) FBX_PRINTF(2, 3);
/* Re-read FUSEBOX_LOG (tests change the environment). */
void fbx_log_reload(void);

#endif
