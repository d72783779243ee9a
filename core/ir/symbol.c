#include "ir/symbol.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"

/* Open-addressing hash from string to index, plus an index -> string array.
 * Strings are never freed; readers of existing symbols take no lock. */

typedef struct entry {
  const char *str;
  uint32_t hash;
  fbx_sym sym;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *slots;
static size_t nslots, nsyms;
/* Chunked index -> string table so that published pointers never move. */
enum { CHUNK_BITS = 10, CHUNK = 1 << CHUNK_BITS, MAX_CHUNKS = 4096 };
static _Atomic(const char **) chunks[MAX_CHUNKS];
static atomic_int builtins_ready;

static uint32_t hash_str(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static int grow(void) {
  size_t ncap = nslots ? nslots * 2 : 512;
  entry *ns = fbx_calloc(ncap, sizeof *ns);
  if (!ns) return -1;
  for (size_t i = 0; i < nslots; i++) {
    if (!slots[i].str) continue;
    size_t j = slots[i].hash & (ncap - 1);
    while (ns[j].str) j = (j + 1) & (ncap - 1);
    ns[j] = slots[i];
  }
  fbx_free(slots);
  slots = ns;
  nslots = ncap;
  return 0;
}

static int intern_locked(fbx_sym *out, const char *s, size_t n) {
  if ((nsyms + 1) * 2 > nslots && grow()) return -1;
  uint32_t h = hash_str(s, n);
  size_t j = h & (nslots - 1);
  while (slots[j].str) {
    if (slots[j].hash == h && !strncmp(slots[j].str, s, n) && slots[j].str[n] == '\0') {
      *out = slots[j].sym;
      return 0;
    }
    j = (j + 1) & (nslots - 1);
  }
  size_t c = nsyms >> CHUNK_BITS;
  if (c >= MAX_CHUNKS) return -1;
  const char **chunk = atomic_load(&chunks[c]);
  if (!chunk) {
    chunk = fbx_calloc(CHUNK, sizeof *chunk);
    if (!chunk) return -1;
    atomic_store(&chunks[c], chunk);
  }
  char *copy = fbx_strndup(s, n);
  if (!copy) return -1;
  chunk[nsyms & (CHUNK - 1)] = copy;
  slots[j].str = copy;
  slots[j].hash = h;
  slots[j].sym = (fbx_sym)nsyms;
  *out = (fbx_sym)nsyms++;
  return 0;
}

static void init_builtins_locked(void) {
  static const char *const names[] = {
#define FBX_SYM_STR_(ns, name) #ns "::" #name,
      FBX_SYM_LIST(FBX_SYM_STR_)
#undef FBX_SYM_STR_
#define FBX_SYM_ATTR_STR_(name) #name,
      FBX_SYM_ATTR_LIST(FBX_SYM_ATTR_STR_)
#undef FBX_SYM_ATTR_STR_
  };
  _Static_assert(sizeof names / sizeof names[0] == FBX_SYM_BUILTIN_COUNT, "symbol table size");
  for (size_t i = 0; i < FBX_SYM_BUILTIN_COUNT; i++) {
    fbx_sym s;
    /* Builtins are tiny; failing here means the process is out of memory at start. */
    if (intern_locked(&s, names[i], strlen(names[i])) || s != i) return;
  }
  atomic_store(&builtins_ready, 1);
}

static void ensure_builtins(void) {
  if (atomic_load(&builtins_ready)) return;
  pthread_mutex_lock(&lock);
  if (!atomic_load(&builtins_ready)) init_builtins_locked();
  pthread_mutex_unlock(&lock);
}

int fbx_sym_intern(fbx_sym *out, const char *s, size_t n) {
  ensure_builtins();
  if (!atomic_load(&builtins_ready)) return -1;
  pthread_mutex_lock(&lock);
  int rc = intern_locked(out, s, n);
  pthread_mutex_unlock(&lock);
  return rc;
}

const char *fbx_sym_str(fbx_sym s) {
  ensure_builtins();
  const char **chunk = atomic_load(&chunks[s >> CHUNK_BITS]);
  return chunk ? chunk[s & (CHUNK - 1)] : "<?>";
}

int fbx_sym_in_ns(fbx_sym s, const char *ns) {
  const char *str = fbx_sym_str(s);
  size_t n = strlen(ns);
  return !strncmp(str, ns, n) && str[n] == ':' && str[n + 1] == ':';
}

const char *fbx_sym_unqual(fbx_sym s) {
  const char *str = fbx_sym_str(s);
  const char *p = strstr(str, "::");
  return p ? p + 2 : str;
}
