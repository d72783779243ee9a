/* Models imported from PyTorch (bridges/torch, issue 19), as the commands
 * that run graphs (run, explain, bench) see them. Their GRAPH argument may be
 *   - a graph file (TorchScript IR text), as always;
 *   - a directory written by `fusebox import` (graph.ir, weights/NAME.npy,
 *     manifest.txt; format in bridges/torch/README.md): every weight becomes
 *     a named --input (NAME=DIR/weights/NAME.npy) unless the user names it;
 *   - a TorchScript archive (torch.jit.save: a zip file) imported into a
 *     fresh temporary directory first, removed again when the command ends.
 * The import itself is the bridge's program `fusebox-import`, found next to
 * the `fusebox` executable (build tree and install prefix alike) and run
 * with posix_spawn, so that the C command never links libtorch. Implemented
 * in tools/cmd_model.c. */
#ifndef FBX_TOOLS_MODEL_H
#define FBX_TOOLS_MODEL_H
#include <stdbool.h>

#include "base/status.h"

typedef struct fbx_cli_model {
  char *graph;   /* the graph file to parse */
  char **args;   /* --input arguments: the weights' NAME=FILE, then the user's */
  int nargs;
  int nweights;  /* weights taken from a manifest */
  char *dir;     /* the import directory, NULL for a plain graph file */
  bool temporary; /* dir was made for a .pt and is removed by close */
} fbx_cli_model;

/* Resolve path (a graph file, an import directory or a .pt archive) and the
 * user's --input arguments inputs[0..ninputs) (borrowed, must outlive m). */
fbx_status *fbx_cli_model_open(fbx_cli_model *m, const char *path, char **inputs, int ninputs);
void fbx_cli_model_close(fbx_cli_model *m);

/* Run `fusebox-import model outdir [--method method]` (method NULL:
 * forward); its messages go to stderr (and its one-line summary to stdout
 * unless quiet). A clear error when fusebox was built without the bridge or
 * the program is missing. */
fbx_status *fbx_cli_torch_import(const char *model, const char *outdir, const char *method, bool quiet);

/* The directory holding the running `fusebox` executable (fbx_free it). */
char *fbx_cli_exe_dir(void);

#endif
