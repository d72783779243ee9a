#define _POSIX_C_SOURCE 200809L
#include "base/log.h"
#include "base/env.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static atomic_int mask = -1; /* -1: not read yet */

const char *const fbx_log_channel_list[FBX_LOG_CHANNEL_COUNT + 1] = {
    "passes", "parse", "loader", "fusion", "exec", "cache", NULL,
};

fbx_status *fbx_log_check(const char *env) {
  if (!env || !*env || !strcmp(env, "0") || !strcmp(env, "1")) return NULL;
  return fbx_env_parse_list("FUSEBOX_LOG", env, fbx_log_channel_list, "all");
}

static int parse_mask(const char *env) {
  /* An unknown channel warns once (the CLI and fbx_executor_create refuse it). */
  fbx_env_warn(fbx_log_check(env));
  if (!env || !*env || !strcmp(env, "0")) return 0;
  if (!strcmp(env, "1") || !strcmp(env, "all")) return (1 << FBX_LOG_CHANNEL_COUNT) - 1;
  int m = 0;
  const char *p = env;
  while (*p) {
    size_t n = strcspn(p, ",");
    for (int i = 0; i < FBX_LOG_CHANNEL_COUNT; i++)
      if (strlen(fbx_log_channel_list[i]) == n && !strncmp(p, fbx_log_channel_list[i], n)) m |= 1 << i;
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
  fprintf(stderr, "[fusebox:%s] %s\n", fbx_log_channel_list[ch], line);
}
