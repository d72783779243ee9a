/* NumPy .npy reading and writing. The format: "\x93NUMPY", major, minor, a
 * little-endian header length (2 bytes in 1.0, 4 in 2.0/3.0), a Python dict
 * literal padded with spaces and ending in '\n', then the raw array bytes.
 * https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/status.h"
#include <fusebox/tensor.h>

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
/* numpy refuses headers over 10000 bytes by default; allow generous room
 * for hand-made files but bound what a corrupt length can make us read. */
#define MAX_HEADER_LEN (1u << 20)

typedef struct {
  fbx_dtype dtype;
  size_t itemsize;
  int swap;    /* data is in the other byte order */
  int fortran;
  int ndim;
  int64_t shape[FBX_MAX_DIMS];
  char descr[32]; /* as written in the file, for messages */
  size_t nbytes;  /* numel * itemsize */
} npy_info;

static int host_is_little(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

static void shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
  size_t len = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%" PRId64, i ? ", " : "", shape[i]);
  if (len < n) snprintf(buf + len, n - len, ndim == 1 ? ",)" : ")");
}

/* ---- preamble ---------------------------------------------------------- */

/* From the first bytes: the size of the preamble (magic, version, length
 * field) and the header length. */
static fbx_status *parse_preamble(const uint8_t *b, size_t len, const char *name,
                                  size_t *prelude, size_t *hlen) {
  size_t m = len < MAGIC_LEN ? len : MAGIC_LEN;
  if (len == 0 || memcmp(b, MAGIC, m) != 0)
    return fbx_status_new(FBX_ERR_PARSE, "%s: not a .npy file (bad magic, expected \\x93NUMPY)",
                          name);
  if (len < MAGIC_LEN + 2)
    return fbx_status_new(FBX_ERR_PARSE, "%s: truncated .npy preamble (file is %zu bytes)", name,
                          len);
  int major = b[6], minor = b[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "%s: unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)",
                          name, major, minor);
  *prelude = major == 1 ? 10 : 12;
  if (len < *prelude)
    return fbx_status_new(FBX_ERR_PARSE, "%s: truncated .npy preamble (file is %zu bytes)", name,
                          len);
  if (major == 1)
    *hlen = (size_t)b[8] | (size_t)b[9] << 8;
  else
    *hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
  if (*hlen > MAX_HEADER_LEN)
    return fbx_status_new(FBX_ERR_PARSE, "%s: header length %zu is implausibly large", name,
                          *hlen);
  return NULL;
}

/* ---- header dict ------------------------------------------------------- */

typedef struct {
  const char *p, *end, *start;
  const char *name;
} lex;

static void skip_ws(lex *l) {
  while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
    l->p++;
}

static fbx_status *syntax(lex *l, const char *what) {
  char near[24];
  size_t n = 0;
  for (const char *q = l->p; q < l->end && n < 16; q++)
    near[n++] = (*q >= 32 && *q < 127) ? *q : '?';
  near[n] = '\0';
  if (l->p >= l->end)
    return fbx_status_new(FBX_ERR_PARSE, "%s: malformed header: %s at end of header", l->name,
                          what);
  return fbx_status_new(FBX_ERR_PARSE, "%s: malformed header: %s at offset %td near \"%s\"",
                        l->name, what, l->p - l->start, near);
}

static int peek(lex *l) { return l->p < l->end ? (unsigned char)*l->p : -1; }

static fbx_status *expect(lex *l, char c, const char *what) {
  skip_ws(l);
  if (peek(l) != (unsigned char)c) return syntax(l, what);
  l->p++;
  return NULL;
}

static fbx_status *parse_string(lex *l, char *out, size_t cap) {
  skip_ws(l);
  int q = peek(l);
  if (q != '\'' && q != '"') return syntax(l, "expected a string");
  l->p++;
  size_t n = 0;
  while (l->p < l->end && *l->p != q) {
    if (*l->p == '\\' || n + 1 >= cap) return syntax(l, "unexpected string");
    out[n++] = *l->p++;
  }
  if (l->p >= l->end) return syntax(l, "unterminated string");
  l->p++;
  out[n] = '\0';
  return NULL;
}

static fbx_status *parse_bool(lex *l, int *out) {
  skip_ws(l);
  size_t left = (size_t)(l->end - l->p);
  if (left >= 4 && !memcmp(l->p, "True", 4)) {
    *out = 1;
    l->p += 4;
  } else if (left >= 5 && !memcmp(l->p, "False", 5)) {
    *out = 0;
    l->p += 5;
  } else {
    return syntax(l, "fortran_order must be True or False");
  }
  return NULL;
}

static fbx_status *parse_shape(lex *l, npy_info *info) {
  FBX_TRY(expect(l, '(', "shape must be a tuple"));
  info->ndim = 0;
  for (;;) {
    skip_ws(l);
    if (peek(l) == ')') break;
    if (peek(l) == '-')
      return fbx_status_new(FBX_ERR_PARSE, "%s: shape has a negative dimension", l->name);
    if (peek(l) < '0' || peek(l) > '9') return syntax(l, "expected an integer in shape");
    int64_t v = 0;
    while (peek(l) >= '0' && peek(l) <= '9') {
      int d = *l->p++ - '0';
      if (v > (INT64_MAX - d) / 10)
        return fbx_status_new(FBX_ERR_PARSE, "%s: shape dimension does not fit in 64 bits",
                              l->name);
      v = v * 10 + d;
    }
    if (peek(l) == 'L') l->p++; /* Python 2 long */
    if (info->ndim == FBX_MAX_DIMS)
      return fbx_status_new(FBX_ERR_UNSUPPORTED, "%s: shape has more than %d dimensions",
                            l->name, FBX_MAX_DIMS);
    info->shape[info->ndim++] = v;
    skip_ws(l);
    if (peek(l) == ',') {
      l->p++;
      continue;
    }
    if (peek(l) != ')') return syntax(l, "expected ',' or ')' in shape");
  }
  l->p++;
  return NULL;
}

static const char *kind_name(char k) {
  switch (k) {
    case 'c': return "complex numbers";
    case 'u': return "this unsigned integer width";
    case 'i': return "this integer width";
    case 'f': return "this float width";
    case 'b': return "this bool width";
    case 'O': return "Python objects (pickled)";
    case 'U': return "unicode strings";
    case 'S': case 'a': return "byte strings";
    case 'V': return "raw void data";
    case 'M': case 'm': return "datetimes";
    default: return "an unknown kind";
  }
}

static fbx_status *parse_descr(const char *name, npy_info *info) {
  const char *d = info->descr;
  char order = '=';
  if (*d && strchr("<>=|", *d)) order = *d++;
  char kind = *d;
  size_t size = 0;
  const char *digits = kind ? d + 1 : d;
  int ok = *digits != '\0';
  for (const char *q = digits; *q; q++) {
    if (*q < '0' || *q > '9' || size > 1000) {
      ok = 0;
      break;
    }
    size = size * 10 + (size_t)(*q - '0');
  }
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  if (ok) {
    if (kind == 'b' && size == 1) dt = FBX_DTYPE_BOOL;
    else if (kind == 'u' && size == 1) dt = FBX_DTYPE_UINT8;
    else if (kind == 'i' && size == 1) dt = FBX_DTYPE_INT8;
    else if (kind == 'i' && size == 2) dt = FBX_DTYPE_INT16;
    else if (kind == 'i' && size == 4) dt = FBX_DTYPE_INT32;
    else if (kind == 'i' && size == 8) dt = FBX_DTYPE_INT64;
    else if (kind == 'f' && size == 2) dt = FBX_DTYPE_FLOAT16;
    else if (kind == 'f' && size == 4) dt = FBX_DTYPE_FLOAT32;
    else if (kind == 'f' && size == 8) dt = FBX_DTYPE_FLOAT64;
  }
  if (dt == FBX_DTYPE_UNDEFINED)
    return fbx_status_new(FBX_ERR_UNSUPPORTED,
                          "%s: unsupported dtype '%s' (%s); fusebox reads |b1 |u1 |i1 <i2 <i4 "
                          "<i8 <f2 <f4 <f8",
                          name, info->descr, kind_name(kind));
  info->dtype = dt;
  info->itemsize = size;
  int little = host_is_little();
  info->swap = size > 1 && ((order == '>' && little) || (order == '<' && !little));
  return NULL;
}

static fbx_status *parse_dict(const char *h, size_t n, const char *name, npy_info *info) {
  lex l = {h, h + n, h, name};
  int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
  skip_ws(&l);
  if (peek(&l) != '{') {
    char start[24];
    size_t k = 0;
    for (const char *q = l.p; q < l.end && k < 16; q++)
      start[k++] = (*q >= 32 && *q < 127) ? *q : '?';
    start[k] = '\0';
    return fbx_status_new(FBX_ERR_PARSE, "%s: header is not a dict (starts with \"%s\")", name,
                          start);
  }
  l.p++;
  for (;;) {
    skip_ws(&l);
    if (peek(&l) == '}') break;
    char key[32];
    FBX_TRY(parse_string(&l, key, sizeof key));
    FBX_TRY(expect(&l, ':', "expected ':' after a key"));
    skip_ws(&l);
    if (!strcmp(key, "descr") && !seen_descr) {
      if (peek(&l) == '[')
        return fbx_status_new(FBX_ERR_UNSUPPORTED, "%s: structured dtypes are not supported",
                              name);
      FBX_TRY(parse_string(&l, info->descr, sizeof info->descr));
      seen_descr = 1;
    } else if (!strcmp(key, "fortran_order") && !seen_fortran) {
      FBX_TRY(parse_bool(&l, &info->fortran));
      seen_fortran = 1;
    } else if (!strcmp(key, "shape") && !seen_shape) {
      FBX_TRY(parse_shape(&l, info));
      seen_shape = 1;
    } else {
      return fbx_status_new(FBX_ERR_PARSE,
                            "%s: malformed header: unexpected or repeated key '%s' (expected "
                            "descr, fortran_order, shape)",
                            name, key);
    }
    skip_ws(&l);
    if (peek(&l) == ',') {
      l.p++;
      continue;
    }
    if (peek(&l) != '}') return syntax(&l, "expected ',' or '}'");
  }
  l.p++;
  skip_ws(&l);
  while (l.p < l.end && *l.p == '\0') l.p++; /* tolerate NUL padding */
  if (l.p != l.end) return syntax(&l, "junk after the header dict");
  if (!seen_descr || !seen_fortran || !seen_shape)
    return fbx_status_new(FBX_ERR_PARSE, "%s: header lacks the key '%s'", name,
                          !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape");
  FBX_TRY(parse_descr(name, info));
  /* numel * itemsize must fit in int64 and size_t */
  int64_t limit = INT64_MAX / (int64_t)info->itemsize, numel = 1;
  int zero = 0;
  for (int i = 0; i < info->ndim; i++) {
    if (info->shape[i] == 0) {
      zero = 1;
    } else if (numel > limit / info->shape[i]) {
      char s[512];
      shape_str(s, sizeof s, info->ndim, info->shape);
      return fbx_status_new(FBX_ERR_PARSE, "%s: shape %s of %s is too large", name, s,
                            info->descr);
    } else {
      numel *= info->shape[i];
    }
  }
  if (zero) numel = 0;
  if ((uint64_t)numel * info->itemsize > SIZE_MAX)
    return fbx_status_new(FBX_ERR_PARSE, "%s: array is too large for this machine", name);
  info->nbytes = (size_t)numel * info->itemsize;
  return NULL;
}

static fbx_status *size_mismatch(const char *name, const npy_info *info, size_t have,
                                 const char *more) {
  char s[512];
  shape_str(s, sizeof s, info->ndim, info->shape);
  return fbx_status_new(FBX_ERR_PARSE, "%s: data is %s%zu bytes, shape %s of %s needs %zu%s", name,
                        more, have, s, info->descr, info->nbytes,
                        have > info->nbytes ? " (trailing bytes are not allowed)" : "");
}

/* The tensor for info, with storage to receive the file's bytes. */
static fbx_status *make_tensor(fbx_tensor **out, const npy_info *info) {
  int64_t strides[FBX_MAX_DIMS];
  if (info->fortran) {
    int64_t s = 1;
    for (int i = 0; i < info->ndim; i++) {
      strides[i] = s;
      s *= info->shape[i] > 1 ? info->shape[i] : 1;
    }
  } else {
    fbx_contiguous_strides(info->ndim, info->shape, strides);
  }
  return fbx_tensor_empty_strided(out, info->dtype, info->ndim, info->shape, strides);
}

/* Byte order and bool normalization over the raw bytes just read. */
static void fix_data(fbx_tensor *t, const npy_info *info) {
  uint8_t *b = fbx_storage_data(t->storage);
  size_t n = info->nbytes, w = info->itemsize;
  if (info->swap) {
    for (size_t i = 0; i < n; i += w)
      for (size_t j = 0; j < w / 2; j++) {
        uint8_t c = b[i + j];
        b[i + j] = b[i + w - 1 - j];
        b[i + w - 1 - j] = c;
      }
  }
  if (info->dtype == FBX_DTYPE_BOOL)
    for (size_t i = 0; i < n; i++) b[i] = b[i] != 0;
}

fbx_status *fbx_npy_read_mem(fbx_tensor **out, const void *buf, size_t len, const char *name) {
  const uint8_t *b = buf;
  size_t prelude = 0, hlen = 0;
  npy_info info;
  memset(&info, 0, sizeof info);
  FBX_TRY(parse_preamble(b, len, name, &prelude, &hlen));
  if (hlen > len - prelude)
    return fbx_status_new(FBX_ERR_PARSE, "%s: truncated header: %zu bytes announced, %zu present",
                          name, hlen, len - prelude);
  FBX_TRY(parse_dict((const char *)b + prelude, hlen, name, &info));
  size_t have = len - prelude - hlen;
  if (have != info.nbytes) return size_mismatch(name, &info, have, "");
  fbx_tensor *t;
  FBX_TRY(make_tensor(&t, &info));
  if (info.nbytes) memcpy(fbx_storage_data(t->storage), b + prelude + hlen, info.nbytes);
  fix_data(t, &info);
  *out = t;
  return NULL;
}

static fbx_status *io_error(const char *path, const char *what) {
  return fbx_status_new(FBX_ERR_IO, "%s: %s: %s", path, what, strerror(errno));
}

static fbx_status *read_stream(fbx_tensor **out, FILE *f, const char *path) {
  uint8_t pre[12];
  size_t got = fread(pre, 1, sizeof pre, f);
  if (ferror(f)) return io_error(path, "read failed");
  size_t prelude = 0, hlen = 0;
  FBX_TRY(parse_preamble(pre, got, path, &prelude, &hlen));
  char *h = fbx_malloc(hlen + 1);
  if (!h) return fbx_status_nomem();
  size_t have_pre = got - prelude; /* header bytes already in pre */
  if (have_pre > hlen) have_pre = hlen;
  memcpy(h, pre + prelude, have_pre);
  size_t hgot = have_pre + fread(h + have_pre, 1, hlen - have_pre, f);
  if (hgot < hlen) {
    fbx_free(h);
    if (ferror(f)) return io_error(path, "read failed");
    return fbx_status_new(FBX_ERR_PARSE, "%s: truncated header: %zu bytes announced, %zu present",
                          path, hlen, hgot);
  }
  npy_info info;
  memset(&info, 0, sizeof info);
  fbx_status *st = parse_dict(h, hlen, path, &info);
  /* bytes of pre past the header are the start of the data */
  size_t data_in_pre = got > prelude + hlen ? got - prelude - hlen : 0;
  fbx_free(h);
  if (st) return st;

  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
    /* Check the size before allocating what a corrupt shape asks for. */
    uint64_t total = (uint64_t)sb.st_size, head = prelude + hlen;
    size_t have = total > head ? (size_t)(total - head) : 0;
    if (have != info.nbytes) return size_mismatch(path, &info, have, "");
  }
  fbx_tensor *t;
  FBX_TRY(make_tensor(&t, &info));
  uint8_t *d = fbx_storage_data(t->storage);
  size_t n = data_in_pre < info.nbytes ? data_in_pre : info.nbytes;
  memcpy(d, pre + prelude + hlen, n);
  if (data_in_pre > info.nbytes) {
    fbx_tensor_release(t);
    return size_mismatch(path, &info, data_in_pre, "at least ");
  }
  n += fread(d + n, 1, info.nbytes - n, f);
  if (ferror(f)) {
    fbx_tensor_release(t);
    return io_error(path, "read failed");
  }
  if (n < info.nbytes) {
    fbx_tensor_release(t);
    return size_mismatch(path, &info, n, "");
  }
  if (fgetc(f) != EOF) {
    fbx_tensor_release(t);
    return size_mismatch(path, &info, info.nbytes + 1, "at least ");
  }
  fix_data(t, &info);
  *out = t;
  return NULL;
}

fbx_status *fbx_npy_read_file(fbx_tensor **out, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return io_error(path, "cannot open");
  fbx_status *st = read_stream(out, f, path);
  fclose(f);
  return st;
}

/* ---- writing ----------------------------------------------------------- */

static fbx_status *write_all(int fd, const void *p, size_t n, const char *path) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return io_error(path, "write failed");
    }
    c += w;
    n -= (size_t)w;
  }
  return NULL;
}

static atomic_uint tmp_counter;

fbx_status *fbx_npy_write_file(const char *path, const fbx_tensor *t) {
  char descr[8];
  switch (t->dtype) {
    case FBX_DTYPE_BOOL: strcpy(descr, "|b1"); break;
    case FBX_DTYPE_UINT8: strcpy(descr, "|u1"); break;
    case FBX_DTYPE_INT8: strcpy(descr, "|i1"); break;
    case FBX_DTYPE_BFLOAT16:
      return fbx_status_new(FBX_ERR_UNSUPPORTED,
                            "%s: bfloat16 has no NumPy dtype; convert to float32 to save it",
                            path);
    default:
      snprintf(descr, sizeof descr, "%c%c%zu", host_is_little() ? '<' : '>',
               fbx_dtype_is_floating(t->dtype) ? 'f' : 'i', fbx_dtype_size(t->dtype));
  }
  /* Header: the dict numpy writes, padded so the data starts on a 64-byte
   * boundary. */
  char shape[512], header[700];
  shape_str(shape, sizeof shape, t->ndim, t->sizes);
  int hn = snprintf(header, sizeof header,
                    "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
  if (hn < 0 || hn > 600) /* <= 16 dims of <= 20 digits always fit */
    return fbx_status_new(FBX_ERR_INTERNAL, "%s: .npy header too long", path);
  /* Always format 1.0: with at most 16 dims the header fits its 16-bit length. */
  size_t prelude = 10;
  size_t hlen = (prelude + (size_t)hn + 1 + 63) / 64 * 64 - prelude;
  memset(header + hn, ' ', hlen - (size_t)hn - 1);
  header[hlen - 1] = '\n';
  uint8_t pre[10];
  memcpy(pre, MAGIC, MAGIC_LEN);
  pre[6] = 1;
  pre[7] = 0;
  pre[8] = (uint8_t)(hlen & 0xff);
  pre[9] = (uint8_t)(hlen >> 8 & 0xff);

  fbx_tensor *c = NULL;
  const void *data = t->data;
  if (!fbx_tensor_is_contiguous(t)) {
    FBX_TRY(fbx_tensor_clone_as(&c, t, t->dtype));
    data = c->data;
  }
  size_t nbytes = (size_t)t->numel * fbx_dtype_size(t->dtype);

  size_t tn = strlen(path) + 48;
  char *tmp = fbx_malloc(tn);
  if (!tmp) {
    fbx_tensor_release(c);
    return fbx_status_nomem();
  }
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 100; tries++) {
    snprintf(tmp, tn, "%s.tmp.%ld.%u", path, (long)getpid(),
             atomic_fetch_add(&tmp_counter, 1u));
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  fbx_status *st = NULL;
  if (fd < 0) {
    st = io_error(path, "cannot create a temporary file");
  } else {
    st = write_all(fd, pre, prelude, path);
    if (!st) st = write_all(fd, header, hlen, path);
    if (!st && nbytes) st = write_all(fd, data, nbytes, path);
    if (!st && fsync(fd) != 0) st = io_error(path, "fsync failed");
    if (close(fd) != 0 && !st) st = io_error(path, "close failed");
    if (!st && rename(tmp, path) != 0) st = io_error(path, "cannot rename the temporary file");
    if (st) unlink(tmp);
  }
  fbx_free(tmp);
  fbx_tensor_release(c);
  return st;
}
