/* Small helpers shared by the Check suites. */
#ifndef FBX_TESTUTIL_H
#define FBX_TESTUTIL_H
#include <stddef.h>
#include <stdint.h>

/* Read a whole file (NUL-terminated); NULL on error. Free with free(). */
char *tu_read_file(const char *path, size_t *len);
/* Path under the source tree: tu_src_path("tests/corpus/x.ir"); static buffer per call slot. */
const char *tu_src_path(const char *rel);
/* Run a shell command, capture stdout+stderr into *out (malloc'd), return exit status
 * (the process's exit code, or 128+signal). */
int tu_run(const char *cmd, char **out);
/* Next value of a xorshift32 sequence (state *s, never 0): reproducible
 * test inputs. */
uint32_t tu_xs32(uint32_t *s);

#endif
