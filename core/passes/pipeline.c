/* The pass pipeline: a readable list of calls, the verifier between them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/env.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "ir/text.h"
#include "ir/verify.h"
#include "passes/passes.h"

typedef fbx_status *(*pass_fn)(fbx_graph *g, bool *changed);

static const struct {
  const char *name;
  pass_fn fn;
} passes[] = {
    {"dce", fbx_pass_dce},
    {"cse", fbx_pass_cse},
    {"constprop", fbx_pass_constprop},
    {"constpool", fbx_pass_constpool},
    {"peephole", fbx_pass_peephole},
    {"inline", fbx_pass_inline},
    {"rtquery", fbx_pass_rtquery},
};
enum { NPASSES = sizeof passes / sizeof passes[0], MAX_ROUNDS = 8 };

static const char valid_names[] = "default, dce, cse, constprop, constpool, peephole, inline, rtquery";
static const char *const pass_names[] = {"dce", "cse", "constprop", "constpool", "peephole", "inline", "rtquery", NULL};

fbx_status *fbx_pass_check_env(void) {
  const char *list = NULL;
  FBX_TRY(fbx_env_list("FUSEBOX_DISABLE_PASSES", pass_names, "all", &list));
  bool verify;
  return fbx_env_bool("FUSEBOX_VERIFY", false, &verify);
}

/* Is `name` an item of the comma list `list`? */
static bool list_has(const char *list, const char *name, size_t n) {
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, ",");
    if (len == n && !strncmp(p, name, n)) return true;
    p += len;
    if (*p == ',') p++;
  }
  return false;
}

bool fbx_pass_disabled(const char *pass) {
  const char *env = getenv("FUSEBOX_DISABLE_PASSES");
  if (!env || !*env) return false;
  return list_has(env, "all", 3) || list_has(env, pass, strlen(pass));
}

static bool verify_on(void) {
#ifndef NDEBUG
  return true;
#else
  bool on = false;
  fbx_env_warn(fbx_env_bool("FUSEBOX_VERIFY", false, &on)); /* the CLI and fbx_executor_create refuse junk */
  return on;
#endif
}

static void dump(const fbx_graph *g, const char *after) {
  char *text = fbx_graph_print(g);
  if (!text) return; /* out of memory: the trace is best effort */
  fbx_log(FBX_LOG_PASSES, "graph after %s:", after);
  for (char *line = text, *end; *line; line = end + (*end == '\n')) {
    end = line + strcspn(line, "\n");
    fbx_log(FBX_LOG_PASSES, "  %.*s", (int)(end - line), line);
  }
  fbx_free(text);
}

typedef struct run_ctx {
  fbx_graph *g;
  bool verify, trace, changed;
} run_ctx;

static fbx_status *run(run_ctx *c, const char *name, pass_fn fn) {
  bool changed = false;
  FBX_TRY(fn(c->g, &changed));
  if (changed && c->trace) dump(c->g, name);
  if (c->verify) {
    fbx_status *st = fbx_graph_verify(c->g);
    if (st && fbx_status_code(st) != FBX_ERR_NOMEM)
      return fbx_status_wrap(st, "graph invalid after pass %s", name);
    if (st) return st;
  }
  c->changed |= changed;
  return NULL;
}

static fbx_status *run_default(run_ctx *c) {
  bool any = false;
  /* calls first: what they become is optimized with the rest; constprop and
   * peephole make their constant arguments, so inline again in the rounds */
  FBX_TRY(run(c, "inline", fbx_pass_inline));
  any |= c->changed;
  for (int round = 0; round < MAX_ROUNDS; round++) {
    c->changed = false;
    fbx_log(FBX_LOG_PASSES, "pipeline: round %d", round + 1);
    FBX_TRY(run(c, "rtquery", fbx_pass_rtquery));
    FBX_TRY(run(c, "peephole", fbx_pass_peephole));
    FBX_TRY(run(c, "constprop", fbx_pass_constprop));
    FBX_TRY(run(c, "inline", fbx_pass_inline));
    FBX_TRY(run(c, "dce", fbx_pass_dce));
    FBX_TRY(run(c, "cse", fbx_pass_cse));
    FBX_TRY(run(c, "constpool", fbx_pass_constpool));
    FBX_TRY(run(c, "dce", fbx_pass_dce));
    any |= c->changed;
    if (!c->changed) break;
    if (round == MAX_ROUNDS - 1)
      fbx_log(FBX_LOG_PASSES, "pipeline: stopped after %d rounds, still changing", MAX_ROUNDS);
  }
  c->changed = any;
  return NULL;
}

static pass_fn find_pass(const char *name, size_t n) {
  for (size_t i = 0; i < NPASSES; i++)
    if (strlen(passes[i].name) == n && !strncmp(passes[i].name, name, n)) return passes[i].fn;
  return NULL;
}

static bool is_default(const char *name, size_t n) { return n == 7 && !strncmp(name, "default", 7); }

fbx_status *fbx_pass_run_list(fbx_graph *g, const char *list, bool *changed) {
  if (changed) *changed = false;
  if (!list) list = "default";
  /* Check every name before running anything. */
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ",");
    if (n && !is_default(p, n) && !find_pass(p, n))
      return fbx_status_new(FBX_ERR_INVALID_ARG, "unknown pass '%.*s' (valid: %s)", (int)n, p, valid_names);
    p += n;
    if (*p == ',') p++;
  }
  if (fbx_pass_disabled("all")) {
    fbx_log(FBX_LOG_PASSES, "pipeline: all passes disabled (FUSEBOX_DISABLE_PASSES)");
    return NULL;
  }
  run_ctx c = {.g = g, .verify = verify_on(), .trace = fbx_log_on(FBX_LOG_PASSES)};
  bool any = false;
  fbx_status *err = NULL;
  for (const char *p = list; *p && !err;) {
    size_t n = strcspn(p, ",");
    if (is_default(p, n)) {
      err = run_default(&c);
    } else if (n) {
      char name[32];
      snprintf(name, sizeof name, "%.*s", (int)n, p);
      c.changed = false;
      err = run(&c, name, find_pass(p, n));
    }
    any |= c.changed;
    p += n;
    if (*p == ',') p++;
  }
  if (changed) *changed = any;
  return err;
}

fbx_status *fbx_pass_pipeline(fbx_graph *g, const char *list) { return fbx_pass_run_list(g, list, NULL); }
