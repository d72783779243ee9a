/* libFuzzer target for the TorchScript-IR parser and printer.
 *
 * Any input either fails with a positioned message, or parses; a parsed graph
 * prints, the print parses again, and printing that gives the same text
 * (print(parse(print(g))) == print(g)). ASan/UBSan/LeakSanitizer catch the
 * rest. Run with tests/fuzz/run_fuzz.sh SECONDS.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/text.h"

static void die(const char *what, const char *a, const char *b) {
  fprintf(stderr, "fuzz_parse: %s\n", what);
  if (a) fprintf(stderr, "---- first ----\n%s\n", a);
  if (b) fprintf(stderr, "---- second ----\n%s\n", b);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, (const char *)data, size, "fuzz.ir");
  if (st) {
    const char *m = fbx_status_message(st);
    if (g) die("a failed parse returned a graph", m, NULL);
    if (fbx_status_code(st) != FBX_ERR_NOMEM && (strncmp(m, "fuzz.ir:", 8) || !strchr(m, '^')))
      die("error message without position or caret", m, NULL);
    fbx_status_free(st);
    return 0;
  }
  char *p1 = fbx_graph_print(g);
  if (!p1) die("print returned NULL", NULL, NULL);
  fbx_graph *g2 = NULL;
  st = fbx_graph_parse(&g2, p1, strlen(p1), "print1.ir");
  if (st) die("the print does not parse", fbx_status_message(st), p1);
  char *p2 = fbx_graph_print(g2);
  if (!p2) die("print returned NULL", NULL, NULL);
  if (strcmp(p1, p2)) die("print(parse(print(g))) != print(g)", p1, p2);
  fbx_free(p1);
  fbx_free(p2);
  fbx_graph_destroy(g);
  fbx_graph_destroy(g2);
  return 0;
}
