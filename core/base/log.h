/* Tracing to stderr, switched on by FUSEBOX_LOG.
 *
 * FUSEBOX_LOG is a comma-separated list of channels (`passes,loader`), or
 * `all`/`1`. Channels: passes (each pass's effect and the graph after it),
 * parse, loader, fusion, exec, cache. An unknown name is an error for the
 * command line and fbx_executor_create (fbx_log_check); read lazily here, it
 * warns once on stderr and is ignored.
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
/* The channel names, NULL-terminated, and the check of a FUSEBOX_LOG value
 * (a comma list of them, `all`, `0` or `1`): NULL or a status naming it. */
extern const char *const fbx_log_channel_list[];
fbx_status *fbx_log_check(const char *value);

#endif
