/* fusebox: run, inspect and compare TorchScript-IR graphs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <fusebox/fuser_abi.h>

#include "cli.h"
#include "exec/executor.h"
#include "exec/fold.h"

/* Under LeakSanitizer (the ASan build of CI): what the OpenCL stack
 * (PoCL, its LLVM, the ICD loader) and NVRTC keep allocated until exit is
 * theirs, not fusebox's; nvfuser_like opens an OpenCL device when it loads. */
#if defined(__SANITIZE_ADDRESS__)
#define FBX_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FBX_LSAN 1
#endif
#endif
#ifdef FBX_LSAN
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  return "leak:libpocl\nleak:libOpenCL\nleak:libLLVM\nleak:libclang\nleak:libnvrtc\nleak:libhwloc\nleak:libcuda\n";
}
#endif

typedef struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"print", fbx_cmd_print, "parse a graph, optionally run passes, print it back"},
    {"run", fbx_cmd_run, "run a graph on .npy/scalar inputs; write or summarize its outputs"},
    {"plugins", fbx_cmd_plugins, "list fuser plugins found, and why any were rejected"},
    {"explain", fbx_cmd_explain, "show the optimized graph: fusion groups, guards, fallbacks, unfused nodes"},
    {"plugin-check", fbx_cmd_plugin_check, "conformance tests of a fuser plugin against the reference"},
    {"bench", fbx_cmd_bench, "compare fusers on a graph: time, compile time, kernels, error"},
    {"ab", fbx_cmd_ab, "A/B benchmark fusers over a suite: statistics, report, compare runs"},
    {"ops", fbx_cmd_ops, "list the operators fusebox runs, and which have a gradient"},
    {"import", fbx_cmd_import, "import a TorchScript archive (.pt): graph, weights, manifest (PyTorch bridge)"},
    {"fuzz", fbx_cmd_fuzz, "differential fuzzing: random graphs under a fuser against none, minimized repros"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: fusebox <command> [args]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n`fusebox <command> --help` describes a command; `fusebox --version` prints the version.\n");
}

fbx_status *fbx_cli_make_dirs(const char *dir) {
  char buf[4096];
  if (!*dir) return fbx_status_new(FBX_ERR_INVALID_ARG, "the output directory name is empty");
  if (strlen(dir) >= sizeof buf) return fbx_status_new(FBX_ERR_INVALID_ARG, "output directory name too long");
  strcpy(buf, dir);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || !*p) {
      char c = *p;
      *p = '\0';
      if (mkdir(buf, 0777) && errno != EEXIST)
        return fbx_status_new(FBX_ERR_IO, "cannot create directory %s: %s", buf, strerror(errno));
      *p = c;
      if (!c) break;
    }
  }
  struct stat sb;
  if (stat(dir, &sb) || !S_ISDIR(sb.st_mode)) return fbx_status_new(FBX_ERR_IO, "%s is not a directory", dir);
  return NULL;
}

int fbx_cli_fail(const char *cmd, fbx_status *st) {
  fprintf(stderr, "fusebox %s: %s\n", cmd, fbx_status_message(st));
  fbx_status_free(st);
  return 1;
}

int fbx_cli_usage(const char *cmd, const char *usage_text, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fusebox %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nusage: %s\n", usage_text);
  va_end(ap);
  return 2;
}

int main(int argc, char **argv) {
  /* Every command that runs passes folds constants through the interpreter. */
  fbx_fold_register();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version")) {
    printf("fusebox %s (plugin ABI %d.%d)\n", FBX_VERSION, FBXP_ABI_MAJOR, FBXP_ABI_MINOR);
    return 0;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) {
      /* A bad FUSEBOX_* value is a usage error whatever the command: the
       * user asked for something we cannot do (README, environment). */
      fbx_status *st = fbx_env_check_all();
      if (st) {
        fprintf(stderr, "fusebox %s: %s\n", commands[i].name, fbx_status_message(st));
        fbx_status_free(st);
        return 2;
      }
      return commands[i].fn(argc - 2, argv + 2);
    }
  fprintf(stderr, "fusebox: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
