/* Environment variables, parsed one way (see env.h). */
#include "base/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

fbx_status *fbx_env_parse_int(const char *name, const char *text, int64_t min, int64_t max, int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long v = text && *text && !(*text == ' ' || *text == '\t') ? strtoll(text, &end, 10) : 0;
  if (!text || !*text || !end || *end || errno || v < min || v > max)
    return fbx_status_new(FBX_ERR_INVALID_ARG, "%s='%s': expected an integer from %lld to %lld", name,
                          text ? text : "", (long long)min, (long long)max);
  *out = v;
  return NULL;
}

fbx_status *fbx_env_int(const char *name, int64_t min, int64_t max, int64_t def, int64_t *out) {
  const char *text = getenv(name);
  *out = def;
  if (!text || !*text) return NULL;
  return fbx_env_parse_int(name, text, min, max, out);
}

fbx_status *fbx_env_parse_bool(const char *name, const char *text, bool *out) {
  static const char *const yes[] = {"1", "true", "on", "yes"}, *const no[] = {"0", "false", "off", "no"};
  for (int i = 0; i < 4; i++) {
    if (!strcmp(text, yes[i])) return *out = true, NULL;
    if (!strcmp(text, no[i])) return *out = false, NULL;
  }
  return fbx_status_new(FBX_ERR_INVALID_ARG, "%s='%s': expected 0 or 1", name, text);
}

fbx_status *fbx_env_bool(const char *name, bool def, bool *out) {
  const char *text = getenv(name);
  *out = def;
  if (!text || !*text) return NULL;
  return fbx_env_parse_bool(name, text, out);
}

fbx_status *fbx_env_parse_list(const char *name, const char *text, const char *const *valid, const char *all_word) {
  for (const char *p = text;;) {
    size_t n = strcspn(p, ",");
    bool ok = n > 0 && all_word && strlen(all_word) == n && !strncmp(p, all_word, n);
    for (int i = 0; valid[i] && !ok; i++) ok = strlen(valid[i]) == n && !strncmp(p, valid[i], n);
    if (!ok) {
      fbx_strbuf b = {0};
      if (n) fbx_strbuf_printf(&b, "%s='%s': unknown item '%.*s' (valid: ", name, text, (int)n, p);
      else fbx_strbuf_printf(&b, "%s='%s': empty item in the comma list (valid: ", name, text);
      for (int i = 0; valid[i]; i++) fbx_strbuf_printf(&b, "%s%s", i ? ", " : "", valid[i]);
      if (all_word) fbx_strbuf_printf(&b, ", or %s", all_word);
      fbx_strbuf_putc(&b, ')');
      fbx_status *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
      fbx_strbuf_free(&b);
      return st;
    }
    p += n;
    if (!*p) return NULL;
    p++; /* the comma */
  }
}

fbx_status *fbx_env_list(const char *name, const char *const *valid, const char *all_word, const char **out) {
  const char *text = getenv(name);
  *out = NULL;
  if (!text || !*text) return NULL;
  FBX_TRY(fbx_env_parse_list(name, text, valid, all_word));
  *out = text;
  return NULL;
}

void fbx_env_warn(fbx_status *st) {
  if (!st) return;
  fprintf(stderr, "fusebox: warning: %s; using the default\n", fbx_status_message(st));
  fbx_status_free(st);
}
