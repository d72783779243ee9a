/* A small JSON reader for `fusebox ab --compare` (see ab.h): the whole file
 * into a tree; strings with \uXXXX escapes below U+0080 kept, others as '?'. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ab.h"
#include "base/alloc.h"
#include "base/strbuf.h"

#define AB_JSON_MAX_DEPTH 64
#define AB_JSON_MAX_BYTES (256L << 20)

typedef struct jparser {
  const char *s, *end, *start;
  const char *file;
  fbx_status *err;
} jparser;

static void jfail(jparser *p, const char *what) {
  if (!p->err)
    p->err = fbx_status_new(FBX_ERR_PARSE, "%s: byte %ld: %s", p->file, (long)(p->s - p->start), what);
}

static void skip_ws(jparser *p) {
  while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static char *parse_string(jparser *p) {
  if (p->s >= p->end || *p->s != '"') {
    jfail(p, "expected a string");
    return NULL;
  }
  p->s++;
  fbx_strbuf b = {0};
  while (p->s < p->end && *p->s != '"') {
    char c = *p->s++;
    if (c == '\\') {
      if (p->s >= p->end) break;
      char e = *p->s++;
      switch (e) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'u': {
        if (p->end - p->s < 4) {
          jfail(p, "short \\u escape");
          fbx_strbuf_free(&b);
          return NULL;
        }
        char hex[5] = {p->s[0], p->s[1], p->s[2], p->s[3], 0};
        long v = strtol(hex, NULL, 16);
        p->s += 4;
        c = v > 0 && v < 0x80 ? (char)v : '?';
        break;
      }
      default: c = e;
      }
    }
    fbx_strbuf_append(&b, &c, 1);
  }
  if (p->s >= p->end) {
    jfail(p, "unterminated string");
    fbx_strbuf_free(&b);
    return NULL;
  }
  p->s++;
  char *out = fbx_strbuf_take(&b);
  if (!out) out = fbx_strdup("");
  return out;
}

static bool parse_value(jparser *p, ab_json *out, int depth);

static bool push_item(jparser *p, ab_json *j, ab_json *item, char *key) {
  ab_json *ni = fbx_realloc(j->items, (size_t)(j->n + 1) * sizeof *ni);
  char **nk = j->kind == AB_J_OBJ ? fbx_realloc(j->keys, (size_t)(j->n + 1) * sizeof *nk) : NULL;
  if (ni) j->items = ni;
  if (nk) j->keys = nk;
  if (!ni || (j->kind == AB_J_OBJ && !nk)) {
    if (!p->err) p->err = fbx_status_nomem();
    ab_json_free(item);
    fbx_free(key);
    return false;
  }
  j->items[j->n] = *item;
  if (j->kind == AB_J_OBJ) j->keys[j->n] = key;
  j->n++;
  return true;
}

static bool parse_container(jparser *p, ab_json *out, int depth) {
  bool obj = *p->s == '{';
  char close = obj ? '}' : ']';
  out->kind = obj ? AB_J_OBJ : AB_J_ARR;
  p->s++;
  skip_ws(p);
  if (p->s < p->end && *p->s == close) {
    p->s++;
    return true;
  }
  for (;;) {
    char *key = NULL;
    skip_ws(p);
    if (obj) {
      if (!(key = parse_string(p))) return false;
      skip_ws(p);
      if (p->s >= p->end || *p->s != ':') {
        fbx_free(key);
        jfail(p, "expected ':'");
        return false;
      }
      p->s++;
    }
    ab_json item = {0};
    if (!parse_value(p, &item, depth + 1)) {
      fbx_free(key);
      ab_json_free(&item);
      return false;
    }
    if (!push_item(p, out, &item, key)) return false;
    skip_ws(p);
    if (p->s < p->end && *p->s == ',') {
      p->s++;
      continue;
    }
    if (p->s < p->end && *p->s == close) {
      p->s++;
      return true;
    }
    jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    return false;
  }
}

static bool parse_value(jparser *p, ab_json *out, int depth) {
  memset(out, 0, sizeof *out);
  if (depth > AB_JSON_MAX_DEPTH) {
    jfail(p, "nested too deep");
    return false;
  }
  skip_ws(p);
  if (p->s >= p->end) {
    jfail(p, "unexpected end");
    return false;
  }
  char c = *p->s;
  if (c == '{' || c == '[') return parse_container(p, out, depth);
  if (c == '"') {
    out->kind = AB_J_STR;
    return (out->str = parse_string(p)) != NULL;
  }
  static const struct {
    const char *word;
    ab_jkind kind;
    double v;
  } words[] = {{"null", AB_J_NULL, 0}, {"true", AB_J_BOOL, 1}, {"false", AB_J_BOOL, 0}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t n = strlen(words[i].word);
    if ((size_t)(p->end - p->s) >= n && !strncmp(p->s, words[i].word, n)) {
      p->s += n;
      out->kind = words[i].kind;
      out->num = words[i].v;
      return true;
    }
  }
  char buf[64];
  size_t n = 0;
  while (p->s + n < p->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", p->s[n])) n++;
  memcpy(buf, p->s, n);
  buf[n] = 0;
  char *e;
  errno = 0;
  double v = n ? strtod(buf, &e) : 0;
  if (!n || *e || errno) {
    jfail(p, "expected a value");
    return false;
  }
  p->s += n;
  out->kind = AB_J_NUM;
  out->num = v;
  return true;
}

fbx_status *ab_json_parse_file(const char *path, ab_json *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) return fbx_status_new(FBX_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  fbx_strbuf b = {0};
  char chunk[65536];
  size_t got;
  long total = 0;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0 && total <= AB_JSON_MAX_BYTES) {
    fbx_strbuf_append(&b, chunk, got);
    total += (long)got;
  }
  bool bad = ferror(f);
  fclose(f);
  char *text = fbx_strbuf_take(&b);
  if (bad || total > AB_JSON_MAX_BYTES) {
    fbx_free(text);
    return fbx_status_new(FBX_ERR_IO, "cannot read %s: %s", path, bad ? "read error" : "larger than 256 MiB");
  }
  if (!text) return total ? fbx_status_nomem() : fbx_status_new(FBX_ERR_PARSE, "%s: empty file", path);
  jparser p = {.s = text, .end = text + strlen(text), .start = text, .file = path};
  if (parse_value(&p, out, 0)) {
    skip_ws(&p);
    if (p.s != p.end) jfail(&p, "text after the value");
  }
  fbx_free(text);
  if (p.err) ab_json_free(out);
  return p.err;
}

const ab_json *ab_json_get(const ab_json *obj, const char *key) {
  if (!obj || obj->kind != AB_J_OBJ) return NULL;
  for (int i = 0; i < obj->n; i++)
    if (!strcmp(obj->keys[i], key)) return &obj->items[i];
  return NULL;
}

void ab_json_free(ab_json *j) {
  for (int i = 0; i < j->n; i++) {
    ab_json_free(&j->items[i]);
    if (j->keys) fbx_free(j->keys[i]);
  }
  fbx_free(j->items);
  fbx_free(j->keys);
  fbx_free(j->str);
  memset(j, 0, sizeof *j);
}
