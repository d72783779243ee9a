/* Environment variables, parsed one way (issue #12).
 *
 *   int64_t n;
 *   FBX_TRY(fbx_env_int("FUSEBOX_NUM_THREADS", 1, 1024, 0, &n));  // 0: unset
 *   fbx_status *st = fbx_env_check_all(); // every FUSEBOX_* variable of core (exec/executor.h)
 *
 * Every reader returns NULL and sets *out (the default when the variable is
 * unset or empty), or an FBX_ERR_INVALID_ARG status that names the variable,
 * quotes the bad value and says what is accepted, e.g.
 *   FUSEBOX_NUM_THREADS='abc': expected an integer from 1 to 1024
 *
 * The rule (README, "Environment variables"): a bad value is an error, never
 * silently something else. The command line checks every variable at start
 * (fbx_env_check_all, in exec/executor.h: it needs
 * the pass and log channel names) and exits with status 2 naming it; the embedding API
 * returns the same status from fbx_executor_create. Code deep in the
 * library that reads a variable lazily (thread count, pointwise grain, log
 * channels, storage cache) cannot return a status: there a bad value warns
 * once on stderr, with the same message, and the default is used.
 *
 * Other helpers' variables (FUSEBOX_CC*, FUSEBOX_CACHE_*, FUSEBOX_LEGACY_*,
 * FUSEBOX_PLUGIN_PATH, FUSEBOX_FUSER, FUSEBOX_CORPUS, FUSEBOX_NVRTC*) may use
 * these readers too; fbx_env_check_all does not cover them yet. */
#ifndef FBX_BASE_ENV_H
#define FBX_BASE_ENV_H
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"

/* FUSEBOX_NUM_THREADS accepts 1..FBX_ENV_MAX_THREADS (more than the pool's
 * 64 threads is clamped to 64). */
#define FBX_ENV_MAX_THREADS 1024

/* FUSEBOX_PW_GRAIN: 0 (never parallel) .. 2^40 elements. */
#define FBX_ENV_MAX_GRAIN ((int64_t)1 << 40)
/* FUSEBOX_STORAGE_CACHE_MB: 0 (off) .. 2^30 MiB. */
#define FBX_ENV_MAX_CACHE_MB ((int64_t)1 << 30)

/* A decimal integer in [min, max] (leading/trailing blanks not allowed). */
fbx_status *fbx_env_int(const char *name, int64_t min, int64_t max, int64_t def, int64_t *out);
/* `0` or `1` (also `false`/`true`, `off`/`on`, `no`/`yes`). */
fbx_status *fbx_env_bool(const char *name, bool def, bool *out);
/* A comma list whose every item is one of valid[] (NULL-terminated) or, if
 * all_word is not NULL, that word. Empty items are errors. *out is the
 * variable's value, or NULL when unset or empty. */
fbx_status *fbx_env_list(const char *name, const char *const *valid, const char *all_word, const char **out);

/* The same checks on a given text instead of getenv(name) (for tests and
 * for values that come from elsewhere); name is used in messages only. */
fbx_status *fbx_env_parse_int(const char *name, const char *text, int64_t min, int64_t max, int64_t *out);
fbx_status *fbx_env_parse_bool(const char *name, const char *text, bool *out);
fbx_status *fbx_env_parse_list(const char *name, const char *text, const char *const *valid, const char *all_word);

/* For lazy readers that cannot fail: the status's message on stderr
 * ("fusebox: warning: ...; using the default"), once per variable name
 * pointer, and frees st. */
void fbx_env_warn(fbx_status *st);

#endif
