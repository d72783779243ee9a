/* fusebox status values: NULL means success; anything else carries a code
 * and a human-readable message, and is freed with fbx_status_free.
 *
 *   fbx_status *st = fbx_graph_parse(&g, text, len, "model.ir");
 *   if (st) {
 *     fprintf(stderr, "%s\n", fbx_status_message(st));
 *     fbx_status_free(st);
 *     return 1;
 *   }
 *
 * Out-of-memory while building a status yields a static status that
 * fbx_status_free ignores, so error paths never need their own checks.
 */
#ifndef FUSEBOX_STATUS_H
#define FUSEBOX_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fbx_code {
  FBX_OK = 0,
  FBX_ERR_INVALID_ARG,  /* a bad argument from the caller */
  FBX_ERR_PARSE,        /* malformed input text or file */
  FBX_ERR_VERIFY,       /* a graph broke an IR invariant */
  FBX_ERR_NOMEM,        /* an allocation failed */
  FBX_ERR_IO,           /* reading or writing a file failed */
  FBX_ERR_UNSUPPORTED,  /* valid input that fusebox does not handle */
  FBX_ERR_RUNTIME,      /* an error while running a graph */
  FBX_ERR_PLUGIN,       /* a fuser plugin failed or misbehaved */
  FBX_ERR_INTERNAL,     /* a bug in fusebox */
  FBX_CODE_COUNT
} fbx_code;

typedef struct fbx_status fbx_status;

fbx_code fbx_status_code(const fbx_status *st);   /* FBX_OK for NULL */
const char *fbx_status_message(const fbx_status *st); /* "" for NULL */
const char *fbx_code_name(fbx_code code);
void fbx_status_free(fbx_status *st);

#ifdef __cplusplus
}
#endif
#endif
