#define _POSIX_C_SOURCE 200809L
#include "base/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const channel_names[FBX_LOG_CHANNEL_COUNT] = {
    "passes", "parse", "loader", "fusion", "exec", "cache",
};

static atomic_int mask = -1; /* -1: not read yet */

static int parse_mask(const char *env) {
  if (!env || !*env || !strcmp(env, "0")) return 0;
  if (!strcmp(env, "1") || !strcmp(env, "all")) return (1 << FBX_LOG_CHANNEL_COUNT) - 1;
  int m = 0;
  const char *p = env;
  while (*p) {
    size_t n = strcspn(p, ",");
    for (int i = 0; i < FBX_LOG_CHANNEL_COUNT; i++)
      if (strlen(channel_names[i]) == n && !strncmp(p, channel_names[i], n)) m |= 1 << i;
    p += n;
    if (*p == ',') p++;
  }
  return m;
}

void fbx_log_reload(void) { mask = parse_mask(getenv("FUSEBOX_LOG")); }

int fbx_log_on(fbx_log_channel ch) {
  if (mask < 0) fbx_log_reload();
  return (mask >> ch) & 1;
}

void fbx_log(fbx_log_channel ch, const char *fmt, ...) {
  if (!fbx_log_on(ch)) return;
  char line[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[fusebox:%s] %s\n", channel_names[ch], line);
}
