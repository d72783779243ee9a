/* The host queries of ABI 1.1: thread count, the CPU's identity and ISA
 * features, the cache directory. Plugins used to work these out by hand
 * (and could disagree with the host about them). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "host/hostimpl.h"
#include "host/services_cc.h"

int32_t fbx_host_num_threads(void) {
  int n = fbx_parallel_threads();
  return n < 1 ? 1 : (int32_t)n;
}

static char cpu_line[512];
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void add(size_t *len, const char *word) {
  size_t n = strlen(word);
  if (*len + n + 2 >= sizeof cpu_line) return;
  cpu_line[(*len)++] = ' ';
  memcpy(cpu_line + *len, word, n + 1);
  *len += n;
}

static void cpu_init(void) {
  size_t len = 0;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d, max, sig = 0;
  __asm__ volatile("cpuid" : "=a"(max), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
  char vendor[13];
  memcpy(vendor, &b, 4);
  memcpy(vendor + 4, &d, 4);
  memcpy(vendor + 8, &c, 4);
  vendor[12] = 0;
  if (max >= 1) __asm__ volatile("cpuid" : "=a"(sig), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  (void)a;
#if defined(__x86_64__)
  len = (size_t)snprintf(cpu_line, sizeof cpu_line, "x86_64 %s sig %08x:", vendor, sig);
#else
  len = (size_t)snprintf(cpu_line, sizeof cpu_line, "x86 %s sig %08x:", vendor, sig);
#endif
  /* What the CPU and the OS both support (the compiler's runtime checks
   * XGETBV for the AVX state), in the order -march levels add them. */
  __builtin_cpu_init();
#define F(name)                                      \
  do {                                               \
    if (__builtin_cpu_supports(name)) add(&len, name); \
  } while (0)
  F("sse2"); F("sse3"); F("ssse3"); F("sse4.1"); F("sse4.2"); F("popcnt"); F("avx"); F("fma"); F("avx2");
  F("bmi"); F("bmi2"); F("avx512f"); F("avx512dq"); F("avx512cd"); F("avx512bw"); F("avx512vl");
  F("avx512vnni"); F("avx512bf16");
#if !defined(__clang__) || __clang_major__ >= 15 /* clang 14 (the fuzz build's) does not know it */
  F("avx512fp16");
#endif
#undef F
#elif defined(__aarch64__)
  len = (size_t)snprintf(cpu_line, sizeof cpu_line, "aarch64:");
  add(&len, "neon");
#else
  len = (size_t)snprintf(cpu_line, sizeof cpu_line, "unknown:");
#endif
  (void)len;
}

const char *fbx_host_cpu_features(void) {
  pthread_once(&cpu_once, cpu_init);
  return cpu_line;
}

int32_t fbx_host_cache_dir(char *buf, int32_t cap) {
  char *d = fbx_svc_cc_cache_dir();
  if (!d) return -1;
  size_t n = strlen(d);
  if (buf && cap > 0) snprintf(buf, (size_t)cap, "%s", d);
  fbx_free(d);
  return n > INT32_MAX ? -1 : (int32_t)n;
}
