/* The `fusebox ab` suite manifest (format: bench/suite/manifest.txt; see ab.h). */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "ab.h"
#include "base/alloc.h"
#include "base/strbuf.h"

#define AB_MAX_FIELDS 64

static char *join_dir(const char *dir, const char *rel) {
  if (rel[0] == '/' || !dir[0]) return fbx_strdup(rel);
  fbx_strbuf b = {0};
  fbx_strbuf_printf(&b, "%s/%s", dir, rel);
  return fbx_strbuf_take(&b);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static bool valid_name(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("_.-^", *s)) return false;
  return true;
}

static void workload_free(ab_workload *w) {
  fbx_free(w->name);
  fbx_free(w->graph);
  fbx_free(w->group);
  for (int i = 0; i < w->ninputs; i++) fbx_free(w->inputs[i]);
  fbx_free(w->inputs);
}

void ab_suite_free(ab_suite *s) {
  for (int i = 0; i < s->n; i++) workload_free(&s->w[i]);
  fbx_free(s->w);
  s->w = NULL;
  s->n = 0;
}

static fbx_status *push(ab_suite *s, ab_workload *w, const char *where) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->w[i].name, w->name)) {
      fbx_status *st = fbx_status_new(FBX_ERR_PARSE, "%s: workload '%s' given twice", where, w->name);
      workload_free(w);
      return st;
    }
  ab_workload *nw = fbx_realloc(s->w, (size_t)(s->n + 1) * sizeof *nw);
  if (!nw) {
    workload_free(w);
    return fbx_status_nomem();
  }
  s->w = nw;
  s->w[s->n++] = *w;
  return NULL;
}

/* A graph given directly: its file name without .ir is the workload's name. */
static fbx_status *add_graph(ab_suite *s, const char *path, const char *default_shape) {
  ab_workload w = {0};
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  w.name = fbx_strndup(base, strlen(base) - 3);
  w.graph = fbx_strdup(path);
  w.backward = true;
  if (default_shape) {
    w.inputs = fbx_calloc(1, sizeof *w.inputs);
    if (w.inputs) w.inputs[0] = fbx_strdup(default_shape);
    w.ninputs = w.inputs && w.inputs[0] ? 1 : 0;
    if (!w.ninputs) {
      workload_free(&w);
      return fbx_status_nomem();
    }
  }
  if (!w.name || !w.graph) {
    workload_free(&w);
    return fbx_status_nomem();
  }
  return push(s, &w, path);
}

static fbx_status *parse_line(ab_suite *s, char *line, const char *dir, const char *file, int lineno) {
  char *field[AB_MAX_FIELDS];
  int nf = 0;
  char *save = NULL;
  for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
    if (nf == AB_MAX_FIELDS)
      return fbx_status_new(FBX_ERR_PARSE, "%s:%d: more than %d fields", file, lineno, AB_MAX_FIELDS);
    field[nf++] = t;
  }
  if (!nf || field[0][0] == '#') return NULL;
  if (nf < 4)
    return fbx_status_new(FBX_ERR_PARSE, "%s:%d: expected NAME GRAPH BACKWARD GROUP [INPUT...], got %d field%s",
                          file, lineno, nf, nf == 1 ? "" : "s");
  if (!valid_name(field[0]))
    return fbx_status_new(FBX_ERR_PARSE, "%s:%d: workload name '%s': use letters, digits and _ . - ^", file,
                          lineno, field[0]);
  if (strcmp(field[2], "yes") && strcmp(field[2], "no"))
    return fbx_status_new(FBX_ERR_PARSE, "%s:%d: BACKWARD must be yes or no, not '%s'", file, lineno, field[2]);
  ab_workload w = {0};
  w.name = fbx_strdup(field[0]);
  w.graph = join_dir(dir, field[1]);
  w.backward = !strcmp(field[2], "yes");
  w.group = strcmp(field[3], "-") ? fbx_strdup(field[3]) : NULL;
  w.inputs = fbx_calloc((size_t)nf, sizeof *w.inputs);
  bool ok = w.name && w.graph && w.inputs && (w.group || !strcmp(field[3], "-"));
  for (int i = 4; i < nf && ok; i++) {
    const char *eq = strchr(field[i], '=');
    if (eq && ends_with(field[i], ".npy") && eq[1] != '/') {
      char *path = join_dir(dir, eq + 1);
      fbx_strbuf b = {0};
      if (path) fbx_strbuf_printf(&b, "%.*s=%s", (int)(eq - field[i]), field[i], path);
      fbx_free(path);
      w.inputs[w.ninputs] = fbx_strbuf_take(&b);
    } else {
      w.inputs[w.ninputs] = fbx_strdup(field[i]);
    }
    ok = w.inputs[w.ninputs++] != NULL;
  }
  if (!ok) {
    workload_free(&w);
    return fbx_status_nomem();
  }
  struct stat sb;
  if (stat(w.graph, &sb) || !S_ISREG(sb.st_mode)) {
    fbx_status *st = fbx_status_new(FBX_ERR_IO, "%s:%d: graph %s: %s", file, lineno, w.graph,
                                    errno ? strerror(errno) : "not a regular file");
    workload_free(&w);
    return st;
  }
  char where[600];
  snprintf(where, sizeof where, "%s:%d", file, lineno);
  return push(s, &w, where);
}

fbx_status *ab_suite_add(ab_suite *s, const char *path, const char *default_shape) {
  struct stat sb;
  if (stat(path, &sb)) return fbx_status_new(FBX_ERR_IO, "%s: %s", path, strerror(errno));
  if (!S_ISDIR(sb.st_mode) && ends_with(path, ".ir")) return add_graph(s, path, default_shape);
  char *file = S_ISDIR(sb.st_mode) ? join_dir(path, "manifest.txt") : fbx_strdup(path);
  if (!file) return fbx_status_nomem();
  char *dir = S_ISDIR(sb.st_mode) ? fbx_strdup(path) : fbx_strdup(file);
  if (!dir) {
    fbx_free(file);
    return fbx_status_nomem();
  }
  if (!S_ISDIR(sb.st_mode)) {
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else dir[0] = 0;
  }
  fbx_status *st = NULL;
  FILE *f = fopen(file, "r");
  if (!f) st = fbx_status_new(FBX_ERR_IO, "%s: %s (a suite is a directory with a manifest.txt, a manifest, or a .ir graph)",
                              file, strerror(errno));
  char line[4096];
  int lineno = 0;
  int before = s->n;
  while (!st && fgets(line, sizeof line, f)) {
    lineno++;
    if (!strchr(line, '\n') && !feof(f)) {
      st = fbx_status_new(FBX_ERR_PARSE, "%s:%d: line longer than %zu bytes", file, lineno, sizeof line - 2);
      break;
    }
    errno = 0;
    st = parse_line(s, line, dir, file, lineno);
  }
  if (!st && s->n == before) st = fbx_status_new(FBX_ERR_PARSE, "%s: no workloads", file);
  if (f) fclose(f);
  fbx_free(file);
  fbx_free(dir);
  return st;
}

void ab_suite_quick(ab_suite *s) {
  int k = 0;
  for (int i = 0; i < s->n; i++) {
    bool keep = true;
    for (int j = 0; j < k && keep; j++)
      keep = !(s->w[i].group && s->w[j].group && !strcmp(s->w[i].group, s->w[j].group));
    if (keep) s->w[k++] = s->w[i];
    else workload_free(&s->w[i]);
  }
  s->n = k;
}
