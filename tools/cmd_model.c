/* Imported PyTorch models for the commands that run graphs, and
 * `fusebox import` (see tools/model.h). */
#undef _POSIX_C_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "cli.h"
#include "model.h"

extern char **environ;

#define MANIFEST "manifest.txt"

char *fbx_cli_exe_dir(void) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return fbx_strdup(".");
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (slash) *slash = '\0';
  return fbx_strdup(slash && buf[0] ? buf : "/");
}

fbx_status *fbx_cli_torch_import(const char *model, const char *outdir, const char *method, bool quiet) {
#ifndef FBX_TORCH_IMPORT_NAME
  (void)model;
  (void)outdir;
  (void)method;
  (void)quiet;
  return fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "importing %s needs the PyTorch bridge, and this fusebox was built without it (libtorch "
                        "was not found when it was configured: install libtorch-dev and reconfigure with "
                        "-DFUSEBOX_TORCH=AUTO or ON)",
                        model);
#else
  char *dir = fbx_cli_exe_dir();
  if (!dir) return fbx_status_nomem();
  fbx_strbuf prog = {0};
  fbx_strbuf_printf(&prog, "%s/%s", dir, FBX_TORCH_IMPORT_NAME);
  fbx_free(dir);
  if (prog.oom) return fbx_status_nomem();
  fbx_status *st = NULL;
  if (access(prog.data, X_OK)) {
    st = fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "importing %s needs the PyTorch bridge's program %s, which is missing (%s): build the "
                        "fusebox_import target or install fusebox again",
                        model, prog.data, strerror(errno));
    fbx_strbuf_free(&prog);
    return st;
  }
  char *argv[] = {prog.data, (char *)model, (char *)outdir, method ? "--method" : NULL, (char *)method, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  fflush(NULL);
  pid_t pid;
  int e = posix_spawn(&pid, prog.data, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e) {
    st = fbx_status_new(FBX_ERR_IO, "cannot start %s: %s", prog.data, strerror(e));
  } else {
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(ws))
      st = fbx_status_new(FBX_ERR_RUNTIME, "importing %s: %s died of signal %d", model, prog.data, WTERMSIG(ws));
    else if (WEXITSTATUS(ws) == 2)
      st = fbx_status_new(FBX_ERR_INVALID_ARG, "importing %s: bad arguments to %s", model, prog.data);
    else if (WEXITSTATUS(ws))
      st = fbx_status_new(FBX_ERR_RUNTIME, "importing %s failed (the reason is above)", model);
  }
  fbx_strbuf_free(&prog);
  return st;
#endif
}

/* ---- the manifest ------------------------------------------------------------------------------ */

static bool is_dir(const char *p) {
  struct stat sb;
  return !stat(p, &sb) && S_ISDIR(sb.st_mode);
}

/* A zip file (torch.jit.save's format) starts with "PK\3\4". */
static bool is_archive(const char *p) {
  FILE *f = fopen(p, "rb");
  if (!f) return false;
  unsigned char b[4] = {0};
  size_t n = fread(b, 1, 4, f);
  fclose(f);
  return n == 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4;
}

static bool user_names(char **inputs, int n, const char *name) {
  size_t len = strlen(name);
  for (int i = 0; i < n; i++)
    if (!strncmp(inputs[i], name, len) && inputs[i][len] == '=') return true;
  return false;
}

static fbx_status *add_arg(fbx_cli_model *m, int cap, const char *dir, const char *name, const char *file) {
  if (m->nargs >= cap) return fbx_status_new(FBX_ERR_INTERNAL, "too many --input arguments");
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "%s=%s/%s", name, dir, file);
  if (b.oom) return fbx_status_nomem();
  m->args[m->nargs++] = fbx_strbuf_take(&b);
  fbx_strbuf_free(&b);
  return NULL;
}

/* DIR/FILE, once symbolic links are resolved, still inside DIR (dir_real:
 * DIR resolved)? A file that does not exist passes: opening it reports it. */
static bool resolves_inside(const char *dir_real, const char *dir, const char *file) {
  char path[PATH_MAX + 8], real[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) return false;
  if (!realpath(path, real)) return errno == ENOENT;
  size_t n = strlen(dir_real);
  return !strncmp(real, dir_real, n) && real[n] == '/';
}

/* Read DIR/manifest.txt: the graph file and one --input per weight. */
static fbx_status *read_manifest(fbx_cli_model *m, const char *dir, char **inputs, int ninputs) {
  fbx_strbuf path = {0};
  fbx_strbuf_printf(&path, "%s/" MANIFEST, dir);
  if (path.oom) return fbx_status_nomem();
  FILE *f = fopen(path.data, "r");
  if (!f) {
    fbx_status *st = fbx_status_new(FBX_ERR_IO,
                                    "%s is a directory but has no readable " MANIFEST " (%s): give a graph file, "
                                    "a TorchScript archive, or a directory written by `fusebox import`",
                                    dir, strerror(errno));
    fbx_strbuf_free(&path);
    return st;
  }
  char dir_real[PATH_MAX];
  if (!realpath(dir, dir_real)) {
    fbx_status *st = fbx_status_new(FBX_ERR_IO, "%s: %s", dir, strerror(errno));
    fclose(f);
    fbx_strbuf_free(&path);
    return st;
  }
  /* The weights are counted first: room for them and the user's inputs. */
  char line[8192];
  int nlines = 0;
  while (fgets(line, sizeof line, f)) nlines++;
  rewind(f);
  int cap = nlines + ninputs + 1;
  fbx_status *st = NULL;
  if (!(m->args = fbx_calloc((size_t)cap, sizeof *m->args))) st = fbx_status_nomem();
  int lineno = 0;
  while (!st && fgets(line, sizeof line, f)) {
    lineno++;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\n') line[--len] = '\0';
    else if (!feof(f)) {
      st = fbx_status_new(FBX_ERR_PARSE, "%s:%d: line too long", path.data, lineno);
      break;
    }
    char key[32], a[4096], b[4096];
    int nf = sscanf(line, "%31s %4095s %4095s", key, a, b);
    if (lineno == 1) {
      if (nf < 2 || strcmp(key, "fusebox-import") || strcmp(a, "1"))
        st = fbx_status_new(FBX_ERR_PARSE, "%s:1: expected 'fusebox-import 1' (a manifest of another version?)",
                            path.data);
      continue;
    }
    if (nf < 1 || key[0] == '#') continue;
    if (!strcmp(key, "graph")) {
      if (nf < 2 || strchr(a, '/')) {
        st = fbx_status_new(FBX_ERR_PARSE, "%s:%d: 'graph FILE' names a file in the directory", path.data, lineno);
        break;
      }
      if (!resolves_inside(dir_real, dir, a)) {
        st = fbx_status_new(FBX_ERR_PARSE, "%s:%d: graph file %s resolves outside the directory (a symbolic link?)",
                            path.data, lineno, a);
        break;
      }
      fbx_free(m->graph);
      fbx_strbuf g = {0};
      fbx_strbuf_printf(&g, "%s/%s", dir, a);
      if (g.oom) st = fbx_status_nomem();
      else m->graph = fbx_strbuf_take(&g);
      fbx_strbuf_free(&g);
    } else if (!strcmp(key, "weight")) {
      if (nf < 3 || strstr(b, "..") || b[0] == '/') {
        st = fbx_status_new(FBX_ERR_PARSE, "%s:%d: expected 'weight NAME FILE ...' with FILE inside the directory",
                            path.data, lineno);
        break;
      }
      if (!resolves_inside(dir_real, dir, b)) {
        st = fbx_status_new(FBX_ERR_PARSE, "%s:%d: weight file %s resolves outside the directory (a symbolic link?)",
                            path.data, lineno, b);
        break;
      }
      if (user_names(inputs, ninputs, a)) continue; /* the user's value wins */
      st = add_arg(m, cap, dir, a, b);
      m->nweights++;
    }
    /* input, module, method, source: for people; the graph says the rest */
  }
  if (!st && ferror(f)) st = fbx_status_new(FBX_ERR_IO, "cannot read %s", path.data);
  if (!st && lineno == 0) st = fbx_status_new(FBX_ERR_PARSE, "%s is empty", path.data);
  if (!st && !m->graph) st = fbx_status_new(FBX_ERR_PARSE, "%s names no graph file ('graph graph.ir')", path.data);
  fclose(f);
  fbx_strbuf_free(&path);
  for (int i = 0; !st && i < ninputs; i++) m->args[m->nargs++] = inputs[i];
  return st;
}

/* ---- open / close -------------------------------------------------------------------------------- */

static void remove_tree(const char *dir, int depth) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      fbx_strbuf p = {0};
      fbx_strbuf_printf(&p, "%s/%s", dir, e->d_name);
      if (!p.oom) {
        if (depth < 2 && is_dir(p.data)) remove_tree(p.data, depth + 1);
        else unlink(p.data);
      }
      fbx_strbuf_free(&p);
    }
    closedir(d);
  }
  rmdir(dir);
}

fbx_status *fbx_cli_model_open(fbx_cli_model *m, const char *path, char **inputs, int ninputs) {
  memset(m, 0, sizeof *m);
  fbx_status *st = NULL;
  if (is_dir(path)) {
    if (!(m->dir = fbx_strdup(path))) return fbx_status_nomem();
    st = read_manifest(m, m->dir, inputs, ninputs);
  } else if (is_archive(path)) {
    const char *tmp = getenv("TMPDIR");
    fbx_strbuf t = {0};
    fbx_strbuf_printf(&t, "%s/fusebox-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (t.oom) return fbx_status_nomem();
    m->dir = fbx_strbuf_take(&t);
    fbx_strbuf_free(&t);
    if (!mkdtemp(m->dir)) {
      st = fbx_status_new(FBX_ERR_IO, "cannot make a temporary directory %s: %s", m->dir, strerror(errno));
      fbx_free(m->dir);
      m->dir = NULL;
      return st;
    }
    m->temporary = true;
    st = fbx_cli_torch_import(path, m->dir, NULL, true);
    if (!st) st = read_manifest(m, m->dir, inputs, ninputs);
  } else {
    if (!(m->graph = fbx_strdup(path)) || !(m->args = fbx_calloc((size_t)ninputs + 1, sizeof *m->args)))
      return fbx_status_nomem();
    for (int i = 0; i < ninputs; i++) m->args[m->nargs++] = inputs[i];
  }
  return st;
}

void fbx_cli_model_close(fbx_cli_model *m) {
  /* The weights' arguments come first and are ours. */
  for (int i = 0; m->args && i < m->nweights; i++) fbx_free(m->args[i]);
  fbx_free(m->args);
  fbx_free(m->graph);
  if (m->temporary && m->dir) remove_tree(m->dir, 0);
  fbx_free(m->dir);
  memset(m, 0, sizeof *m);
}

/* ---- fusebox import ------------------------------------------------------------------------------ */

static const char *const USAGE = "fusebox import MODEL.pt OUTDIR [--method NAME]";

int fbx_cmd_import(int argc, char **argv) {
  if (argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
    printf("usage: %s\n\n"
           "Imports a TorchScript archive (torch.jit.save) with the PyTorch bridge: the module in\n"
           "eval mode, frozen and inlined, becomes OUTDIR/graph.ir, in which every parameter,\n"
           "buffer and tensor constant is a named graph input; the weights are written to\n"
           "OUTDIR/weights/NAME.npy and listed in OUTDIR/manifest.txt. Then\n"
           "  fusebox run OUTDIR --input x=x.npy [--fuser NAME] [--backward]\n"
           "runs the model with the weights from the manifest (explain and bench take OUTDIR\n"
           "too; `fusebox run MODEL.pt ...` imports into a temporary directory first).\n"
           "  --method NAME   the method to import (default forward)\n\n"
           "Format of the manifest: bridges/torch/README.md.\n\n"
           "Exit status: 0 success, 1 the model could not be imported, 2 usage error.\n",
           USAGE);
    return 0;
  }
  const char *pos[2] = {NULL, NULL}, *method = NULL;
  int npos = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--method")) {
      if (i + 1 >= argc) return fbx_cli_usage("import", USAGE, "--method needs a name");
      method = argv[++i];
    } else if (argv[i][0] == '-') {
      return fbx_cli_usage("import", USAGE, "unknown option '%s'", argv[i]);
    } else if (npos == 2) {
      return fbx_cli_usage("import", USAGE, "unexpected argument '%s'", argv[i]);
    } else {
      pos[npos++] = argv[i];
    }
  }
  if (npos != 2) return fbx_cli_usage("import", USAGE, "expected MODEL.pt and OUTDIR");
  struct stat sb;
  if (stat(pos[0], &sb) != 0)
    return fbx_cli_fail("import", fbx_status_new(FBX_ERR_IO, "cannot open %s: %s", pos[0], strerror(errno)));
  if (S_ISDIR(sb.st_mode))
    return fbx_cli_fail("import", fbx_status_new(FBX_ERR_INVALID_ARG, "%s is a directory, not a TorchScript archive",
                                                 pos[0]));
  if (!is_archive(pos[0]))
    return fbx_cli_fail("import", fbx_status_new(FBX_ERR_INVALID_ARG,
                                                 "%s is not a TorchScript archive (torch.jit.save writes a zip file)",
                                                 pos[0]));
  fbx_status *st = fbx_cli_torch_import(pos[0], pos[1], method, false);
  return st ? fbx_cli_fail("import", st) : 0;
}
