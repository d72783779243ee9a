/* fusebox print GRAPH [--passes LIST|default] [--verify] */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "cli.h"
#include "ir/text.h"
#include "exec/interp.h"
#include "ir/verify.h"
#include "passes/passes.h"

static const char *const USAGE = "fusebox print GRAPH [--passes LIST|default] [--verify]";

/* The IR's own checks, then the op table's: every node's outputs agree
 * with what its op returns (what the interpreter checks before it runs). */
static fbx_status *verify_ops(const fbx_graph *g) {
  FBX_TRY(fbx_graph_verify(g));
  fbx_interp *it = NULL;
  fbx_status *st = fbx_interp_create(&it, g);
  if (!st) fbx_interp_destroy(it);
  return st;
}

int fbx_cmd_print(int argc, char **argv) {
  const char *path = NULL, *passes = NULL;
  int verify = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: %s\n\nParses GRAPH (TorchScript IR text), runs the given passes (comma list of\n"
             "dce, cse, constprop, constpool, peephole, inline, rtquery; or `default`),\nverifies the graph "
             "with --verify, and prints it back in the same format.\n", USAGE);
      return 0;
    } else if (!strcmp(argv[i], "--passes")) {
      if (++i == argc) return fbx_cli_usage("print", USAGE, "--passes needs a value");
      passes = argv[i];
    } else if (!strcmp(argv[i], "--verify")) {
      verify = 1;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return fbx_cli_usage("print", USAGE, "unknown option '%s'", argv[i]);
    } else if (!path) {
      path = argv[i];
    } else {
      return fbx_cli_usage("print", USAGE, "more than one graph given ('%s')", argv[i]);
    }
  }
  if (!path) return fbx_cli_usage("print", USAGE, "no graph given");

  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (st) return fbx_cli_fail("print", st);
  if (verify && (st = verify_ops(g))) goto fail;
  if (passes) {
    if ((st = fbx_pass_pipeline(g, passes))) goto fail;
    if (verify && (st = verify_ops(g))) {
      st = fbx_status_wrap(st, "after passes '%s'", passes);
      goto fail;
    }
  }
  char *text = fbx_graph_print(g);
  fbx_graph_destroy(g);
  if (!text) return fbx_cli_fail("print", fbx_status_nomem());
  fputs(text, stdout);
  fbx_free(text);
  return 0;
fail:
  fbx_graph_destroy(g);
  return fbx_cli_fail("print", st);
}
