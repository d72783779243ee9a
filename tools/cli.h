/* The `fusebox` command: one function per subcommand (tools/cmd_*.c). Each
 * gets argv after the subcommand name and returns the process exit code:
 * 0 success, 1 the input or run failed, 2 a usage error. */
#ifndef FBX_TOOLS_CLI_H
#define FBX_TOOLS_CLI_H
#include <fusebox/status.h>

int fbx_cmd_print(int argc, char **argv);
int fbx_cmd_run(int argc, char **argv);
int fbx_cmd_plugins(int argc, char **argv);
int fbx_cmd_explain(int argc, char **argv);
int fbx_cmd_plugin_check(int argc, char **argv);
int fbx_cmd_bench(int argc, char **argv);
int fbx_cmd_ab(int argc, char **argv);
int fbx_cmd_ops(int argc, char **argv);
int fbx_cmd_fuzz(int argc, char **argv);
int fbx_cmd_import(int argc, char **argv); /* tools/cmd_model.c */

/* Print "fusebox <cmd>: <message>" to stderr, free st, return 1. */
int fbx_cli_fail(const char *cmd, fbx_status *st);
/* mkdir -p DIR: creates DIR and the directories above it that are
 * missing; an error names the one that could not be made. */
fbx_status *fbx_cli_make_dirs(const char *dir);
/* Print a usage error and return 2. */
int fbx_cli_usage(const char *cmd, const char *usage, const char *fmt, ...);

#endif
