/* FUSEBOX_FUSION_STRATEGY: how many levels of specialization, and of which
 * kind, a group may go through before it runs unfused. Like PyTorch's
 * torch.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)]): the
 * levels are taken in the order given. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec/executor.h"

static fbx_status *bad(const char *what, const char *text) {
  return fbx_status_new(FBX_ERR_INVALID_ARG, "%s: expected static:N,dynamic:M, got '%s'", what, text);
}

fbx_status *fbx_strategy_parse(fbx_strategy *out, const char *text, const char *what) {
  fbx_strategy s = {0};
  const char *p = text;
  if (!p) return bad(what, "(null)");
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    fbx_spec_kind kind;
    if (!strncmp(p, "static", 6)) {
      kind = FBX_SPEC_STATIC;
      p += 6;
    } else if (!strncmp(p, "dynamic", 7)) {
      kind = FBX_SPEC_DYNAMIC;
      p += 7;
    } else {
      return bad(what, text);
    }
    while (isspace((unsigned char)*p)) p++;
    if (*p++ != ':') return bad(what, text);
    while (isspace((unsigned char)*p)) p++;
    if (!isdigit((unsigned char)*p)) return bad(what, text);
    char *end;
    errno = 0;
    long n = strtol(p, &end, 10);
    if (errno || n > 1000000) return bad(what, text);
    p = end;
    if (s.nlevels == FBX_STRATEGY_MAX_LEVELS)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "%s: more than %d items in '%s'", what, FBX_STRATEGY_MAX_LEVELS,
                            text);
    s.levels[s.nlevels].kind = kind;
    s.levels[s.nlevels].count = (int)n;
    s.nlevels++;
    while (isspace((unsigned char)*p)) p++;
    if (!*p) break;
    if (*p++ != ',') return bad(what, text);
  }
  *out = s;
  return NULL;
}

fbx_spec_kind fbx_strategy_kind_at(const fbx_strategy *s, int depth) {
  for (int i = 0; i < s->nlevels; i++) {
    if (depth < s->levels[i].count) return s->levels[i].kind;
    depth -= s->levels[i].count;
  }
  return FBX_SPEC_NONE;
}

int fbx_strategy_depth(const fbx_strategy *s) {
  int n = 0;
  for (int i = 0; i < s->nlevels; i++) n += s->levels[i].count;
  return n;
}

const char *fbx_spec_kind_name(fbx_spec_kind k) {
  return k == FBX_SPEC_STATIC ? "static" : k == FBX_SPEC_DYNAMIC ? "dynamic" : "none";
}

void fbx_strategy_print(fbx_strbuf *b, const fbx_strategy *s) {
  for (int i = 0; i < s->nlevels; i++)
    fbx_strbuf_printf(b, "%s%s:%d", i ? "," : "", fbx_spec_kind_name(s->levels[i].kind), s->levels[i].count);
  if (!s->nlevels) fbx_strbuf_puts(b, "(none)");
}
