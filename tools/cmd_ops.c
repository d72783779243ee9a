/* fusebox ops [PATTERN] [--grad|--no-grad]: the operator table, one schema
 * a line, with whether autodiff has a gradient for it. PATTERN matches a
 * schema by substring, ignoring case ("layer_norm", "aten::add."). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "cli.h"
#include "ops/optable.h"

static const char *const USAGE = "fusebox ops [PATTERN] [--grad|--no-grad]";

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  if (!n) return 1;
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == n) return 1;
  }
  return 0;
}

int fbx_cmd_ops(int argc, char **argv) {
  const char *pattern = NULL;
  int want_grad = -1;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: %s\n\nLists the operators fusebox runs (its op table), one schema a line, marked\n"
             "`grad` when autodiff differentiates it. PATTERN keeps the schemas that contain it\n"
             "(case ignored); --grad / --no-grad keep those with / without a gradient.\n"
             "Exits 1 when nothing matches.\n", USAGE);
      return 0;
    } else if (!strcmp(argv[i], "--grad")) {
      want_grad = 1;
    } else if (!strcmp(argv[i], "--no-grad")) {
      want_grad = 0;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return fbx_cli_usage("ops", USAGE, "unknown option '%s'", argv[i]);
    } else if (pattern) {
      return fbx_cli_usage("ops", USAGE, "one PATTERN at most (got '%s' and '%s')", pattern, argv[i]);
    } else {
      pattern = argv[i];
    }
  }
  fbx_status *st = fbx_op_table_init();
  if (st) return fbx_cli_fail("ops", st);
  int shown = 0, with_grad = 0;
  for (int id = 0; id < FBX_OP_COUNT; id++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)id);
    if (!op) return fbx_cli_fail("ops", fbx_status_nomem());
    int grad = fbx_grad_op_has_formula(id);
    if (pattern && !contains_nocase(op->schema_text, pattern)) continue;
    if (want_grad >= 0 && grad != want_grad) continue;
    printf("%-5s %s\n", grad ? "grad" : "", op->schema_text);
    shown++;
    with_grad += grad;
  }
  fflush(stdout); /* the list first: with both streams on one pipe, the count must not split a line */
  fprintf(stderr, "%d operator%s, %d with a gradient\n", shown, shown == 1 ? "" : "s", with_grad);
  return shown ? 0 : 1;
}
