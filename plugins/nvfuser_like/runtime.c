/* runtime.c — the target-independent part of the nvfuser_like runtime
 * (nvf_rt.h): opening a back end, the program cache keyed by (source,
 * entry), the checks every launch sequence passes before a device API sees
 * it, and the counters. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rt_impl.h"

fbxp_status *nvf_rt_errf(const fbxp_host_api *host, fbxp_code code, const char *fmt, ...) {
  enum { CAP = 16384 };
  char *buf = host->alloc(CAP);
  if (!buf) return host->status_new(code, fmt); /* at least the shape of the message */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, CAP, fmt, ap);
  va_end(ap);
  fbxp_status *st = host->status_new(code, buf);
  host->free(buf);
  return st;
}

fbxp_status *nvf_rt_open(const fbxp_host_api *host, nvf_target t, nvf_rt **out) {
  if (!out) return host ? host->status_new(FBXP_ERR_INVALID, "nvf_rt_open: out is NULL") : NULL;
  *out = NULL;
  if (!host) return NULL; /* nothing to make a status with; cannot happen from the plugin */
  if (t != NVF_TARGET_OPENCL && t != NVF_TARGET_CUDA)
    return nvf_rt_errf(host, FBXP_ERR_INVALID, "nvf_rt_open: unknown target %d", (int)t);
  nvf_rt *rt = host->alloc(sizeof *rt);
  if (!rt) return host->status_new(FBXP_ERR_NOMEM, "nvf_rt_open: out of memory");
  memset(rt, 0, sizeof *rt);
  rt->host = host;
  rt->target = t;
  rt->nbuckets = 64;
  rt->buckets = host->alloc(rt->nbuckets * sizeof *rt->buckets);
  if (!rt->buckets) {
    host->free(rt);
    return host->status_new(FBXP_ERR_NOMEM, "nvf_rt_open: out of memory");
  }
  memset(rt->buckets, 0, rt->nbuckets * sizeof *rt->buckets);
  pthread_mutex_init(&rt->lock, NULL);
  fbxp_status *st = t == NVF_TARGET_OPENCL ? nvf_rt_open_opencl(rt) : nvf_rt_open_cuda(rt);
  if (st) {
    pthread_mutex_destroy(&rt->lock);
    host->free(rt->buckets);
    host->free(rt);
    return st;
  }
  *out = rt;
  return NULL;
}

void nvf_rt_close(nvf_rt *rt) {
  if (!rt) return;
  const fbxp_host_api *h = rt->host;
  for (size_t b = 0; b < rt->nbuckets; b++) {
    for (struct nvf_program *p = rt->buckets[b], *next; p; p = next) {
      next = p->next;
      rt->be->release_program(rt, p->handle);
      h->free(p->source);
      h->free(p->entry);
      h->free(p);
    }
  }
  rt->be->close(rt);
  pthread_mutex_destroy(&rt->lock);
  h->free(rt->buckets);
  h->free(rt);
}

nvf_target nvf_rt_target(const nvf_rt *rt) { return rt->target; }
const char *nvf_rt_device(const nvf_rt *rt) { return rt->device; }
int nvf_rt_cpu_device(const nvf_rt *rt) { return rt->cpu_device; }
int64_t nvf_rt_cache_bytes(const nvf_rt *rt) { return rt->cache_bytes; }
fbxp_status *nvf_rt_copy_bandwidth(nvf_rt *rt, size_t bytes, int reps, double *gbps) {
  *gbps = 0;
  if (!rt->be->copy_bandwidth) return rt->host->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like: no copy bandwidth on this device");
  return rt->be->copy_bandwidth(rt, bytes, reps, gbps);
}

void nvf_rt_set_wrap_align(nvf_rt *rt, size_t bytes) {
  if (rt->be->set_wrap_align) rt->be->set_wrap_align(rt, bytes);
}

void nvf_rt_get_stats(nvf_rt *rt, nvf_rt_stats *out) {
  pthread_mutex_lock(&rt->lock);
  *out = rt->stats;
  pthread_mutex_unlock(&rt->lock);
}

/* ---- the program cache ------------------------------------------------------------------------ */

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static uint64_t key_hash(const char *source, const char *entry) {
  uint64_t h = fnv1a(0xcbf29ce484222325ull, entry);
  h = (h ^ 0xff) * 0x100000001b3ull; /* a separator no C identifier contains */
  return fnv1a(h, source);
}

static char *dup_str(const fbxp_host_api *h, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = h->alloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Doubles the table when it holds more programs than buckets (under lock).
 * A failed allocation leaves the table as it is: longer chains, same answers. */
static void maybe_grow(nvf_rt *rt) {
  if (rt->nprograms <= rt->nbuckets) return;
  size_t n = rt->nbuckets * 2;
  struct nvf_program **b = rt->host->alloc(n * sizeof *b);
  if (!b) return;
  memset(b, 0, n * sizeof *b);
  for (size_t i = 0; i < rt->nbuckets; i++) {
    for (struct nvf_program *p = rt->buckets[i], *next; p; p = next) {
      next = p->next;
      p->next = b[p->hash & (n - 1)];
      b[p->hash & (n - 1)] = p;
    }
  }
  rt->host->free(rt->buckets);
  rt->buckets = b;
  rt->nbuckets = n;
}

fbxp_status *nvf_rt_compile(nvf_rt *rt, const char *source, const char *entry, nvf_program **out) {
  const fbxp_host_api *h = rt->host;
  if (!out) return h->status_new(FBXP_ERR_INVALID, "nvf_rt_compile: out is NULL");
  *out = NULL;
  if (!source || !entry || !*entry)
    return h->status_new(FBXP_ERR_INVALID, "nvf_rt_compile: source and entry are required");
  uint64_t hash = key_hash(source, entry);
  /* The lock is held through the build: two threads compiling the same text
   * get the same program, and builds are rare next to runs. */
  pthread_mutex_lock(&rt->lock);
  rt->stats.compiles++;
  for (struct nvf_program *p = rt->buckets[hash & (rt->nbuckets - 1)]; p; p = p->next) {
    if (p->hash == hash && !strcmp(p->entry, entry) && !strcmp(p->source, source)) {
      rt->stats.cache_hits++;
      pthread_mutex_unlock(&rt->lock);
      *out = p;
      return NULL;
    }
  }
  fbxp_status *st = NULL;
  struct nvf_program *p = h->alloc(sizeof *p);
  char *src = dup_str(h, source), *ent = dup_str(h, entry);
  if (!p || !src || !ent) {
    st = h->status_new(FBXP_ERR_NOMEM, "nvf_rt_compile: out of memory");
    goto fail;
  }
  void *handle = NULL;
  st = rt->be->compile(rt, source, entry, &handle);
  if (st) goto fail;
  p->hash = hash;
  p->source = src;
  p->entry = ent;
  p->handle = handle;
  p->next = rt->buckets[hash & (rt->nbuckets - 1)];
  rt->buckets[hash & (rt->nbuckets - 1)] = p;
  rt->nprograms++;
  maybe_grow(rt);
  pthread_mutex_unlock(&rt->lock);
  *out = p;
  return NULL;
fail:
  pthread_mutex_unlock(&rt->lock);
  h->free(p);
  h->free(src);
  h->free(ent);
  return st;
}

/* ---- running ---------------------------------------------------------------------------------- */

static fbxp_status *check(nvf_rt *rt, const nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                          int32_t nlaunches) {
  const fbxp_host_api *h = rt->host;
  if (nbufs < 0 || nlaunches < 0 || (nbufs && !bufs) || (nlaunches && !launches))
    return h->status_new(FBXP_ERR_INVALID, "nvf_rt_run: bad buffer or launch table");
  for (int32_t b = 0; b < nbufs; b++) {
    const nvf_buffer *x = &bufs[b];
    if (!x->bytes) return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: buffer %d has 0 bytes", (int)b);
    if (!x->flags || (x->flags & ~(uint32_t)(NVF_BUF_IN | NVF_BUF_OUT | NVF_BUF_TEMP)) ||
        ((x->flags & NVF_BUF_TEMP) && (x->flags & (NVF_BUF_IN | NVF_BUF_OUT))))
      return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: buffer %d has flags 0x%x (IN and/or OUT, or TEMP alone)",
                         (int)b, (unsigned)x->flags);
    if (!x->data && !(x->flags & NVF_BUF_TEMP))
      return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: buffer %d has no host memory", (int)b);
  }
  for (int32_t l = 0; l < nlaunches; l++) {
    const nvf_launch *x = &launches[l];
    if (!x->program) return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: launch %d has no program", (int)l);
    const char *entry = x->program->entry;
    if (x->dims < 1 || x->dims > 3)
      return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: launch %d (%s): %d dimensions (1..3)", (int)l, entry,
                         (int)x->dims);
    for (int32_t d = 0; d < x->dims; d++)
      if (!x->local[d] || !x->global[d] || x->global[d] % x->local[d])
        return nvf_rt_errf(h, FBXP_ERR_INVALID,
                           "nvf_rt_run: launch %d (%s): global size %zu is not a positive multiple of local size %zu "
                           "in dimension %d",
                           (int)l, entry, x->global[d], x->local[d], (int)d);
    if (x->nargs < 0 || (x->nargs && !x->args))
      return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: launch %d (%s): bad argument table", (int)l, entry);
    for (int32_t a = 0; a < x->nargs; a++) {
      const nvf_arg *g = &x->args[a];
      switch (g->kind) {
      case NVF_ARG_BUFFER:
        if (g->buffer < 0 || g->buffer >= nbufs)
          return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: launch %d (%s): argument %d names buffer %d of %d",
                             (int)l, entry, (int)a, (int)g->buffer, (int)nbufs);
        break;
      case NVF_ARG_I64:
      case NVF_ARG_I32:
      case NVF_ARG_F32:
      case NVF_ARG_F64: break;
      case NVF_ARG_LOCAL:
        if (!g->local_bytes)
          return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: launch %d (%s): argument %d: local memory of 0 bytes",
                             (int)l, entry, (int)a);
        if (rt->target == NVF_TARGET_CUDA && a != x->nargs - 1)
          return nvf_rt_errf(h, FBXP_ERR_INVALID,
                             "nvf_rt_run: launch %d (%s): argument %d: CUDA takes one dynamic shared memory "
                             "argument, the last",
                             (int)l, entry, (int)a);
        break;
      default:
        return nvf_rt_errf(h, FBXP_ERR_INVALID, "nvf_rt_run: launch %d (%s): argument %d has unknown kind %d",
                           (int)l, entry, (int)a, (int)g->kind);
      }
    }
  }
  return NULL;
}

fbxp_status *nvf_rt_run(nvf_rt *rt, nvf_buffer *bufs, int32_t nbufs, const nvf_launch *launches,
                        int32_t nlaunches) {
  fbxp_status *st = check(rt, bufs, nbufs, launches, nlaunches);
  if (st) return st;
  if (!nlaunches) return NULL;
  st = rt->be->run(rt, bufs, nbufs, launches, nlaunches);
  pthread_mutex_lock(&rt->lock);
  rt->stats.runs++;
  if (!st) rt->stats.launches += (uint64_t)nlaunches;
  pthread_mutex_unlock(&rt->lock);
  return st;
}
