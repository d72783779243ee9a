/* Host services (fuser ABI rule 8): the C compiler with its disk cache
 * (hits in this and in another process, corrupt entries, errors, OpenMP,
 * timeouts, concurrency), NVRTC to PTX, OpenCL builds on PoCL; and SHA-256.
 *
 * NVRTC and OpenCL tests print "skipped: <reason>" and pass where the
 * library or platform is absent (Check has no skip).
 *
 * The binary doubles as a helper: `test_services --child-cc` compiles the
 * shared test source with the environment's FUSEBOX_CACHE_DIR (and flags
 * FBX_TEST_CHILD_FLAGS) and prints its counters (the second-process,
 * concurrent-process, planted-entry, compiler-count and kill tests run it).
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/sha256.h"
#include "host/hostimpl.h" /* struct fbxp_status, fbx_host_drop_status */
#include "host/services.h"
#include "host/services_cc.h"
#include "testutil.h"

/* PoCL, LLVM and NVRTC keep process-lifetime allocations that LeakSanitizer
 * would report at exit; they are not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  return "leak:libpocl\nleak:libOpenCL\nleak:libLLVM\nleak:libclang\nleak:libnvrtc\nleak:libhwloc\n";
}

#define OK(expr)                                                                                  \
  do {                                                                                            \
    fbxp_status *st_ = (expr);                                                                    \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, st_ ? st_->msg : "");                      \
  } while (0)

static const char ADD_SRC[] = "int fbx_add(int a, int b) { return a + b; }\n";
static const char CHILD_SRC[] = "int fbx_child(int a) { return a * 3 + 1; }\n";

static char tmpdir[256];
static const char KERNEL_CU_SMALL[] = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n";
static char self_exe[4096];

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fbx_test_services_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  char cache[300];
  snprintf(cache, sizeof cache, "%s/cache", tmpdir);
  setenv("FUSEBOX_CACHE_DIR", cache, 1);
  unsetenv("FUSEBOX_CC");
  unsetenv("FUSEBOX_CC_TIMEOUT");
  unsetenv("FUSEBOX_CC_CACHE");
  unsetenv("FUSEBOX_CACHE_MAX_MB");
}

static void teardown(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  tu_run(cmd, NULL);
  unsetenv("FUSEBOX_CACHE_DIR");
  unsetenv("FUSEBOX_CC");
  unsetenv("FUSEBOX_CC_TIMEOUT");
  unsetenv("FUSEBOX_CC_CACHE");
  unsetenv("FUSEBOX_CACHE_MAX_MB");
}

static fbx_svc_cc_counters counters(void) {
  fbx_svc_cc_counters c;
  fbx_svc_cc_get_counters(&c);
  return c;
}

static const char *cache_path(const char *name) {
  static char p[4][512];
  static int k;
  char *s = p[k++ & 3];
  snprintf(s, 512, "%s/cache/%s", tmpdir, name);
  return s;
}

/* The single entry's key in the test's cache dir (the stem of its .so). */
static void entry_key(char key[65]) {
  char cmd[400], *out = NULL;
  snprintf(cmd, sizeof cmd, "ls '%s/cache' | grep '\\.so$'", tmpdir);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(strlen(out) == 68 && !strcmp(out + 64, ".so\n"), "expected one entry, got: %s", out);
  memcpy(key, out, 64);
  key[64] = '\0';
  free(out);
}

static void write_text(const char *path, const char *text, int mode) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  chmod(path, (mode_t)mode);
}

static fbxp_code drop(fbxp_status *st) { return fbx_host_drop_status(st); }

/* Compile ADD_SRC and check it adds. */
static fbxp_shlib *compile_add(const char *flags) {
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(ADD_SRC, flags, &lib));
  int (*add)(int, int) = (int (*)(int, int))fbx_svc_shlib_symbol(lib, "fbx_add");
  ck_assert_ptr_nonnull(add);
  ck_assert_int_eq(add(40, 2), 42);
  return lib;
}

/* ---- SHA-256 ---------------------------------------------------------------------------------- */

START_TEST(sha256_vectors) {
  char hex[65];
  fbx_sha256_hex(hex, "", 0);
  ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  fbx_sha256_hex(hex, "abc", 3);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  fbx_sha256_hex(hex, m, strlen(m));
  ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* a million 'a' in uneven pieces exercises the partial-block paths */
  char *a = malloc(1000000);
  memset(a, 'a', 1000000);
  fbx_sha256 s;
  fbx_sha256_init(&s);
  size_t off = 0, step = 1;
  while (off < 1000000) {
    size_t n = step < 1000000 - off ? step : 1000000 - off;
    fbx_sha256_update(&s, a + off, n);
    off += n;
    step = step * 7 % 997 + 1;
  }
  fbx_sha256_final_hex(&s, hex);
  ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}
END_TEST

/* ---- the C compiler service --------------------------------------------------------------------- */

START_TEST(cc_compile_and_call) {
  fbx_svc_cc_counters c0 = counters();
  fbxp_shlib *lib = compile_add(NULL);
  ck_assert_ptr_null(fbx_svc_shlib_symbol(lib, "no_such_symbol"));
  ck_assert_ptr_null(fbx_svc_shlib_symbol(NULL, "fbx_add"));
  fbx_svc_shlib_release(lib);
  fbx_svc_shlib_release(NULL);
  ck_assert_int_eq(counters().compiles - c0.compiles, 1);
  /* layout: <key>.c, <key>.so, <key>.meta, nothing else (no temporaries
   * left) but the compiler's cc-<id>.probe */
  char key[65], name[80];
  entry_key(key);
  char cmd[400], *out = NULL;
  snprintf(cmd, sizeof cmd, "ls '%s/cache' | grep -v '^cc-[0-9a-f]*\\.probe$' | wc -l", tmpdir);
  tu_run(cmd, &out);
  ck_assert_int_eq(atoi(out), 3);
  free(out);
  snprintf(name, sizeof name, "%s.meta", key);
  char *meta = tu_read_file(cache_path(name), NULL);
  ck_assert_ptr_nonnull(meta);
  ck_assert_msg(!strncmp(meta, "fusebox-cc-cache 1\nkey ", 23), "meta: %s", meta);
  ck_assert_ptr_nonnull(strstr(meta, "flags -O3 -fPIC -shared -std=c11\n"));
  free(meta);
  snprintf(name, sizeof name, "%s.c", key);
  char *src = tu_read_file(cache_path(name), NULL);
  ck_assert_str_eq(src, ADD_SRC);
  free(src);
  struct stat st;
  stat(cache_path(""), &st);
  ck_assert_int_eq(st.st_mode & 0777, 0700);
}
END_TEST

START_TEST(cc_memory_then_disk_hit) {
  fbx_svc_cc_counters c0 = counters();
  double t0 = now_ms();
  fbxp_shlib *a = compile_add(NULL);
  double t1 = now_ms();
  fbxp_shlib *b = compile_add(NULL); /* still loaded: same object, no disk access */
  double t2 = now_ms();
  ck_assert_ptr_eq(a, b);
  ck_assert_int_eq(counters().memory_hits - c0.memory_hits, 1);
  fbx_svc_shlib_release(a);
  /* b still works after one release */
  ck_assert_int_eq(((int (*)(int, int))fbx_svc_shlib_symbol(b, "fbx_add"))(1, 2), 3);
  fbx_svc_shlib_release(b);
  double t3 = now_ms();
  fbxp_shlib *c = compile_add(NULL); /* unloaded: comes from the disk cache */
  double t4 = now_ms();
  fbx_svc_shlib_release(c);
  fbx_svc_cc_counters c1 = counters();
  ck_assert_int_eq(c1.compiles - c0.compiles, 1);
  ck_assert_int_eq(c1.disk_hits - c0.disk_hits, 1);
  ck_assert_int_eq(c1.corrupt - c0.corrupt, 0);
  printf("cc timings: cold compile %.1f ms, in-process hit %.3f ms, disk-cache hit %.2f ms\n", t1 - t0, t2 - t1,
         t4 - t3);
}
END_TEST

START_TEST(cc_flags_are_part_of_the_key) {
  const char *src = "int fbx_val(void) { return VAL; }\n";
  fbxp_shlib *a = NULL, *b = NULL;
  OK(fbx_svc_cc_compile(src, "-DVAL=7", &a));
  OK(fbx_svc_cc_compile(src, " -DVAL=9\t", &b));
  ck_assert_ptr_ne(a, b);
  ck_assert_int_eq(((int (*)(void))fbx_svc_shlib_symbol(a, "fbx_val"))(), 7);
  ck_assert_int_eq(((int (*)(void))fbx_svc_shlib_symbol(b, "fbx_val"))(), 9);
  fbx_svc_shlib_release(a);
  fbx_svc_shlib_release(b);
  /* a library flag after the source resolves its symbols */
  fbxp_shlib *m = NULL;
  OK(fbx_svc_cc_compile("#include <math.h>\ndouble fbx_s(double x) { return sqrt(x) + expm1(x); }\n", "-lm", &m));
  ck_assert(((double (*)(double))fbx_svc_shlib_symbol(m, "fbx_s"))(4.0) > 2.0);
  fbx_svc_shlib_release(m);
}
END_TEST

/* Child mode (see main): compile CHILD_SRC and print the counters. */
static int child_cc(void) {
  fbxp_shlib *lib = NULL;
  const char *flags = getenv("FBX_TEST_CHILD_FLAGS");
  fbxp_status *st = fbx_svc_cc_compile(CHILD_SRC, flags ? flags : "", &lib);
  if (st) {
    printf("child: error %s\n", st->msg);
    return 1;
  }
  int (*f)(int) = (int (*)(int))fbx_svc_shlib_symbol(lib, "fbx_child");
  fbx_svc_cc_counters c = counters();
  printf("child: result=%d compiles=%ld disk_hits=%ld corrupt=%ld\n", f ? f(4) : -1, c.compiles, c.disk_hits,
         c.corrupt);
  fbx_svc_shlib_release(lib);
  return 0;
}

START_TEST(cc_disk_hit_in_another_process) {
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(CHILD_SRC, "", &lib));
  fbx_svc_shlib_release(lib);
  char cmd[5000], *out = NULL;
  snprintf(cmd, sizeof cmd, "FUSEBOX_LOG=cache '%s' --child-cc", self_exe);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(strstr(out, "child: result=13 compiles=0 disk_hits=1 corrupt=0"), "child said:\n%s", out);
  ck_assert_msg(strstr(out, "[fusebox:cache] cc: disk cache hit"), "child said:\n%s", out);
  free(out);
}
END_TEST

START_TEST(cc_concurrent_processes) {
  /* Six processes race to build the same key into an empty cache; every one
   * must succeed and the entry left behind must be intact. */
  char cmd[5000], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "for i in 1 2 3 4 5 6; do '%s' --child-cc > '%s'/child.$i 2>&1 & done; wait; cat '%s'/child.*",
           self_exe, tmpdir, tmpdir);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  int ok = 0;
  for (const char *p = out; (p = strstr(p, "child: result=13 ")); p++) ok++;
  ck_assert_msg(ok == 6, "children said:\n%s", out);
  ck_assert_ptr_null(strstr(out, "corrupt=1"));
  free(out);
  fbx_svc_cc_counters c0 = counters();
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(CHILD_SRC, "", &lib));
  fbx_svc_shlib_release(lib);
  fbx_svc_cc_counters c1 = counters();
  ck_assert_int_eq(c1.disk_hits - c0.disk_hits, 1);
  ck_assert_int_eq(c1.corrupt - c0.corrupt, 0);
  snprintf(cmd, sizeof cmd, "ls '%s/cache' | grep -c tmp", tmpdir);
  tu_run(cmd, &out);
  ck_assert_int_eq(atoi(out), 0);
  free(out);
}
END_TEST

typedef struct thread_arg {
  const char *src;
  fbxp_shlib *lib;
  fbxp_status *st;
} thread_arg;

static void *compile_thread(void *p) {
  thread_arg *a = p;
  a->st = fbx_svc_cc_compile(a->src, "", &a->lib);
  return NULL;
}

START_TEST(cc_concurrent_threads) {
  enum { N = 8 };
  static char srcs[N][128];
  thread_arg args[2 * N];
  pthread_t th[2 * N];
  fbx_svc_cc_counters c0 = counters();
  /* N threads on one source (built once, shared) and N on distinct sources */
  for (int i = 0; i < N; i++) {
    snprintf(srcs[i], sizeof srcs[i], "int fbx_t(void) { return %d; }\n", 100 + i);
    args[i] = (thread_arg){.src = "int fbx_t(void) { return 1; }\n"};
    args[N + i] = (thread_arg){.src = srcs[i]};
  }
  for (int i = 0; i < 2 * N; i++) pthread_create(&th[i], NULL, compile_thread, &args[i]);
  for (int i = 0; i < 2 * N; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 2 * N; i++) {
    ck_assert_msg(args[i].st == NULL, "thread %d: %s", i, args[i].st ? args[i].st->msg : "");
    int v = ((int (*)(void))fbx_svc_shlib_symbol(args[i].lib, "fbx_t"))();
    ck_assert_int_eq(v, i < N ? 1 : 100 + i - N);
    if (i < N) ck_assert_ptr_eq(args[i].lib, args[0].lib);
  }
  for (int i = 0; i < 2 * N; i++) fbx_svc_shlib_release(args[i].lib);
  fbx_svc_cc_counters c1 = counters();
  ck_assert_int_eq(c1.compiles - c0.compiles, N + 1);
  ck_assert_int_eq(c1.memory_hits - c0.memory_hits, N - 1);
}
END_TEST

/* Compile, release, damage the entry with `damage`, compile again: the entry
 * must be detected as corrupt (or missing), rebuilt, and work. */
static void check_recovery(void (*damage)(const char *key), int expect_corrupt) {
  fbx_svc_shlib_release(compile_add(NULL));
  char key[65];
  entry_key(key);
  damage(key);
  fbx_svc_cc_counters c0 = counters();
  fbx_svc_shlib_release(compile_add(NULL));
  fbx_svc_cc_counters c1 = counters();
  ck_assert_int_eq(c1.corrupt - c0.corrupt, expect_corrupt);
  ck_assert_int_eq(c1.compiles - c0.compiles, 1);
  ck_assert_int_eq(c1.disk_hits - c0.disk_hits, 0);
  /* and the rebuilt entry is good again */
  fbx_svc_shlib_release(compile_add(NULL));
  ck_assert_int_eq(counters().disk_hits - c1.disk_hits, 1);
}

static void so_name(char *buf, const char *key, const char *ext) { sprintf(buf, "%s%s", key, ext); }

static void truncate_so(const char *key) {
  char n[80];
  so_name(n, key, ".so");
  struct stat st;
  ck_assert_int_eq(stat(cache_path(n), &st), 0);
  ck_assert_int_eq(truncate(cache_path(n), st.st_size / 2), 0);
}

static void garbage_so_same_size(const char *key) {
  char n[80];
  so_name(n, key, ".so");
  FILE *f = fopen(cache_path(n), "r+");
  ck_assert_ptr_nonnull(f);
  fseek(f, 100, SEEK_SET);
  fputs("garbage garbage garbage", f);
  fclose(f);
}

static void garbage_meta(const char *key) {
  char n[80];
  so_name(n, key, ".meta");
  write_text(cache_path(n), "not a meta file\n", 0600);
}

static void missing_meta(const char *key) {
  char n[80];
  so_name(n, key, ".meta");
  ck_assert_int_eq(unlink(cache_path(n)), 0);
}

/* A consistent meta for an object that is not a shared library: only dlopen
 * can tell. */
static void garbage_so_matching_meta(const char *key) {
  char n[80], m[80];
  so_name(n, key, ".so");
  so_name(m, key, ".meta");
  const char junk[] = "this is not an ELF file\n";
  write_text(cache_path(n), junk, 0600);
  char hex[65], meta[400];
  fbx_sha256_hex(hex, junk, sizeof junk - 1);
  snprintf(meta, sizeof meta, "fusebox-cc-cache 1\nkey %s\nso-size %zu\nso-sha256 %s\n", key, sizeof junk - 1, hex);
  write_text(cache_path(m), meta, 0600);
}

START_TEST(cc_corrupt_truncated) { check_recovery(truncate_so, 1); }
END_TEST
START_TEST(cc_corrupt_garbage) { check_recovery(garbage_so_same_size, 1); }
END_TEST
START_TEST(cc_corrupt_meta) { check_recovery(garbage_meta, 1); }
END_TEST
START_TEST(cc_corrupt_not_loadable) { check_recovery(garbage_so_matching_meta, 1); }
END_TEST
START_TEST(cc_missing_meta) { check_recovery(missing_meta, 0); }
END_TEST

START_TEST(cc_cache_off_switch) {
  fbx_svc_shlib_release(compile_add(NULL));
  setenv("FUSEBOX_CC_CACHE", "0", 1);
  fbx_svc_cc_counters c0 = counters();
  fbx_svc_shlib_release(compile_add(NULL));
  fbx_svc_cc_counters c1 = counters();
  ck_assert_int_eq(c1.compiles - c0.compiles, 1);
  ck_assert_int_eq(c1.disk_hits - c0.disk_hits, 0);
}
END_TEST

START_TEST(cc_unusable_cache_dir) {
  /* under a regular file: cannot be created; compiles go to a private directory */
  char file[400], dir[450];
  snprintf(file, sizeof file, "%s/plainfile", tmpdir);
  write_text(file, "x", 0600);
  snprintf(dir, sizeof dir, "%s/cache", file);
  setenv("FUSEBOX_CACHE_DIR", dir, 1);
  char *old_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", tmpdir, 1); /* the private directory goes where teardown cleans */
  fbx_svc_shlib_release(compile_add("-DUNUSABLE_DIR"));
  if (old_tmp) setenv("TMPDIR", old_tmp, 1);
  else unsetenv("TMPDIR");
  free(old_tmp);
  /* the private directory is removed after the request (it leaked, one per process) */
  char cmd[500], *out = NULL;
  snprintf(cmd, sizeof cmd, "ls -d '%s'/fusebox-cc-* 2>/dev/null | wc -l", tmpdir);
  tu_run(cmd, &out);
  ck_assert_int_eq(atoi(out), 0);
  free(out);
}
END_TEST

START_TEST(cc_out_of_memory) {
  /* Fail the n-th allocation for every n until a compile gets through: each
   * attempt fails cleanly (ASan checks leaks and bad frees) or succeeds. */
  fbx_svc_shlib_release(compile_add("-fopenmp")); /* warm: cc probed, entry on disk */
  int omp = fbx_svc_cc_openmp_state();
  /* a compiler spec not seen before, so its OpenMP probe runs under faults too */
  setenv("FUSEBOX_CC", "cc -DFBX_OOM_TEST", 1);
  int n;
  for (n = 0; n < 500; n++) {
    fbxp_shlib *lib = NULL;
    fbx_alloc_fail_after(n);
    fbxp_status *st = fbx_svc_cc_compile(ADD_SRC, "-fopenmp", &lib);
    fbx_alloc_fail_after(-1);
    if (!st) {
      ck_assert_ptr_nonnull(lib);
      fbx_svc_shlib_release(lib);
      break;
    }
    ck_assert_ptr_null(lib);
    drop(st);
  }
  ck_assert_int_lt(n, 500);
  ck_assert_int_eq(fbx_svc_cc_openmp_state(), omp); /* failed allocations decided nothing */
  for (n = 0; n < 500; n++) {
    char *ptx = NULL, *log = NULL;
    fbx_alloc_fail_after(n);
    fbxp_status *st = fbx_svc_nvrtc_compile(KERNEL_CU_SMALL, NULL, NULL, &ptx, &log);
    fbx_alloc_fail_after(-1);
    fbx_free(ptx);
    fbx_free(log);
    if (!st) break;
    fbxp_code c = drop(st);
    if (c == FBXP_ERR_UNSUPPORTED) break; /* no NVRTC here */
  }
  ck_assert_int_lt(n, 500);
}
END_TEST

START_TEST(cc_syntax_error) {
  fbxp_shlib *lib = (fbxp_shlib *)1;
  fbxp_status *st = fbx_svc_cc_compile("int broken(void) { return 1 +; }\n", NULL, &lib);
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_null(lib);
  ck_assert_int_eq(st->code, FBXP_ERR_COMPILE);
  ck_assert_msg(strstr(st->msg, "error") && strstr(st->msg, "command: ") && strstr(st->msg, "-O3 -fPIC -shared") &&
                    strstr(st->msg, ".c:1:"),
                "message: %s", st->msg);
  drop(st);
  /* a failed compile leaves no object behind, and a retry fails the same way */
  char cmd[400], *out = NULL;
  snprintf(cmd, sizeof cmd, "ls '%s/cache' | grep -c '\\.so'", tmpdir);
  tu_run(cmd, &out);
  ck_assert_int_eq(atoi(out), 0);
  free(out);
  st = fbx_svc_cc_compile("int broken(void) { return 1 +; }\n", NULL, &lib);
  ck_assert_int_eq(drop(st), FBXP_ERR_COMPILE);
  /* an undefined symbol fails at load (RTLD_NOW), not at the first call */
  st = fbx_svc_cc_compile("int fbx_undef(void);\nint f(void) { return fbx_undef(); }\n", NULL, &lib);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(st->code == FBXP_ERR_COMPILE && strstr(st->msg, "fbx_undef"), "message: %s", st->msg);
  drop(st);
  /* NULL arguments */
  ck_assert_int_eq(drop(fbx_svc_cc_compile(NULL, NULL, &lib)), FBXP_ERR_INVALID);
  ck_assert_int_eq(drop(fbx_svc_cc_compile(ADD_SRC, NULL, NULL)), FBXP_ERR_INVALID);
}
END_TEST

START_TEST(cc_long_diagnostics_are_cut) {
  /* thousands of errors: the message keeps the first ~4 KB */
  char *src = malloc(200000);
  size_t n = 0;
  for (int i = 0; i < 3000; i++) n += (size_t)sprintf(src + n, "int f%d(void) { return x%d; }\n", i, i);
  fbxp_status *st = fbx_svc_cc_compile(src, NULL, &(fbxp_shlib *){NULL});
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_COMPILE);
  ck_assert_msg(strlen(st->msg) < 6000 && strstr(st->msg, "[... output truncated]"), "len %zu", strlen(st->msg));
  drop(st);
  free(src);
}
END_TEST

START_TEST(cc_missing_compiler) {
  fbxp_shlib *lib = NULL;
  setenv("FUSEBOX_CC", "/nonexistent/bin/fbx-cc", 1);
  fbxp_status *st = fbx_svc_cc_compile(ADD_SRC, NULL, &lib);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(st->msg, "/nonexistent/bin/fbx-cc") && strstr(st->msg, "not found") &&
                    strstr(st->msg, "FUSEBOX_CC"),
                "message: %s", st->msg);
  drop(st);
  setenv("FUSEBOX_CC", "fbx-no-such-compiler -O1", 1);
  st = fbx_svc_cc_compile(ADD_SRC, NULL, &lib);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(st->msg, "'fbx-no-such-compiler' not found on PATH"), "message: %s", st->msg);
  drop(st);
  ck_assert_ptr_null(lib);
  /* a compiler with arguments works */
  setenv("FUSEBOX_CC", "cc -Wall", 1);
  fbx_svc_shlib_release(compile_add(NULL));
}
END_TEST

START_TEST(cc_timeout_kills_compiler) {
  char path[400];
  snprintf(path, sizeof path, "%s/slowcc", tmpdir);
  write_text(path,
             "#!/bin/sh\n"
             "case \"$*\" in *--version*) echo 'slowcc 1.0'; exit 0;; esac\n"
             "sleep 30\n",
             0755);
  setenv("FUSEBOX_CC", path, 1);
  setenv("FUSEBOX_CC_TIMEOUT", "0.5", 1);
  double t0 = now_ms();
  fbxp_shlib *lib = NULL;
  fbxp_status *st = fbx_svc_cc_compile(ADD_SRC, NULL, &lib);
  double ms = now_ms() - t0;
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_COMPILE);
  ck_assert_msg(strstr(st->msg, "timed out"), "message: %s", st->msg);
  ck_assert_msg(ms < 10000, "took %.0f ms", ms);
  drop(st);
}
END_TEST

START_TEST(cc_openmp_works) {
  const char *src = "#include <omp.h>\n"
                    "int fbx_threads(void) {\n"
                    "  int n = 0;\n"
                    "#pragma omp parallel reduction(+ : n)\n"
                    "  n += 1;\n"
                    "  return n;\n"
                    "}\n";
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(src, "-fopenmp", &lib));
  int state = fbx_svc_cc_openmp_state();
  ck_assert_int_ne(state, -1);
  int n = ((int (*)(void))fbx_svc_shlib_symbol(lib, "fbx_threads"))();
  ck_assert_int_ge(n, 1);
  printf("cc: OpenMP %s (%d threads)\n", state ? "present" : "dropped", n);
  fbx_svc_shlib_release(lib);
}
END_TEST

START_TEST(cc_openmp_dropped) {
  /* A compiler that rejects -fopenmp (and -fopenmp-simd): the first
   * compile asks for OpenMP before anything is known (the compile is the
   * probe) and fails; the probe then fails once, both flags are dropped from
   * this (compiled again) and later compiles, and they succeed. */
  char path[400], log[400];
  snprintf(path, sizeof path, "%s/noompcc", tmpdir);
  snprintf(log, sizeof log, "%s/noompcc.calls", tmpdir);
  char script[1200];
  snprintf(script, sizeof script,
           "#!/bin/sh\n"
           "echo \"$*\" >> '%s'\n"
           "for a in \"$@\"; do\n"
           "  case \"$a\" in -fopenmp|-fopenmp-simd) echo \"noompcc: error: unsupported option $a\" >&2; exit 1;; esac\n"
           "done\n"
           "exec cc \"$@\"\n",
           log);
  write_text(path, script, 0755);
  setenv("FUSEBOX_CC", path, 1);
  ck_assert_int_eq(fbx_svc_cc_openmp_state(), -1);
  fbx_svc_shlib_release(compile_add("-fopenmp"));
  ck_assert_int_eq(fbx_svc_cc_openmp_state(), 0);
  const char *src2 = "int fbx_two(void) { return 2; }\n";
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(src2, "-fopenmp -fopenmp-simd -DX=1", &lib));
  fbx_svc_shlib_release(lib);
  /* calls: --version, the compile with -fopenmp (refused), the probe (with
   * -fopenmp), the compile again and the second compile without it */
  char *calls = tu_read_file(log, NULL);
  ck_assert_ptr_nonnull(calls);
  int lines = 0, omp = 0;
  for (char *p = calls; *p; p++) lines += *p == '\n';
  for (char *p = calls; (p = strstr(p, "-fopenmp")); p++) omp++;
  ck_assert_msg(lines == 5 && omp == 2, "calls:\n%s", calls);
  ck_assert_msg(strstr(calls, "openmp-probe") > strstr(calls, ".c -fopenmp"), "calls:\n%s", calls);
  free(calls);
}
END_TEST

/* ---- trust, hangs, leaks, limits (issue 12 items 6, 7, 10, 11) ----------------------------------- */

static int is_root_or_skip(const char *test) {
  if (geteuid() == 0) return 1;
  printf("%s: skipped: needs root to make files owned by another user\n", test);
  return 0;
}

/* Run the child helper with extra environment; its output (stdout+stderr). */
static char *run_child(const char *env, int *rc) {
  char cmd[10000], *out = NULL;
  snprintf(cmd, sizeof cmd, "%s timeout 60 '%s' --child-cc 2>&1", env, self_exe);
  *rc = tu_run(cmd, &out);
  return out;
}

/* Plant, at CHILD_SRC's key, an object whose constructor writes `marker`,
 * with a meta that matches it (what an attacker who can write the
 * directory does: the checksum is no defence). `so_at` is where the object
 * goes (the entry's name, or elsewhere for a symlink to it). */
static void plant(const char *key, const char *so_at, const char *marker) {
  char src[400], cmd[2000], so[400];
  snprintf(src, sizeof src, "%s/evil.c", tmpdir);
  snprintf(so, sizeof so, "%s/evil.so", tmpdir);
  char text[800];
  snprintf(text, sizeof text,
           "#include <stdio.h>\n"
           "__attribute__((constructor)) static void fbx_evil(void) {\n"
           "  FILE *f = fopen(\"%s\", \"w\");\n"
           "  if (f) fclose(f);\n"
           "}\n"
           "int fbx_child(int a) { return a * 3 + 1; }\n",
           marker);
  write_text(src, text, 0600);
  snprintf(cmd, sizeof cmd, "cc -O1 -fPIC -shared -o '%s' '%s' && rm -f '%s' && cp '%s' '%s'", so, src, so_at, so,
           so_at);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
  size_t n = 0;
  char *bytes = tu_read_file(so, &n);
  ck_assert_ptr_nonnull(bytes);
  char sha[65];
  fbx_sha256_hex(sha, bytes, n);
  free(bytes);
  char meta[400], name[100];
  snprintf(meta, sizeof meta, "fusebox-cc-cache 1\nkey %s\nso-size %zu\nso-sha256 %s\n", key, n, sha);
  snprintf(name, sizeof name, "%s.meta", key);
  unlink(cache_path(name));
  write_text(cache_path(name), meta, 0600);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

START_TEST(cc_planted_entries_are_not_run) {
  if (!is_root_or_skip("cc_planted_entries_are_not_run")) return;
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(CHILD_SRC, "", &lib));
  fbx_svc_shlib_release(lib);
  char key[65], so_name[80], marker[400], evil[400];
  entry_key(key);
  snprintf(so_name, sizeof so_name, "%s.so", key);
  snprintf(marker, sizeof marker, "%s/PLANTED_CODE_RAN", tmpdir);
  snprintf(evil, sizeof evil, "%s/evil.so", tmpdir);
  const char *so = cache_path(so_name);
  int rc;
  char *out;

  /* control: an entry of ours is trusted, so the planted object does run
   * when nothing is wrong with ownership (the planting works) */
  plant(key, so, marker);
  out = run_child("", &rc);
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13 compiles=0 disk_hits=1"), "child said:\n%s", out);
  free(out);
  ck_assert(exists(marker));
  unlink(marker);

  struct {
    const char *what, *setup, *reason, *undo;
  } cases[] = {
      {"directory writable by others", "chmod 0777 '%s/cache'", "writable by group or others", "chmod 0700 '%s/cache'"},
      {"directory owned by another user", "chown 65534 '%s/cache'", "owned by uid 65534", "chown 0 '%s/cache'"},
      {"object owned by another user", "chown 65534 '%s'/cache/*.so", "owned by uid 65534", "true"},
      {"meta owned by another user", "chown 65534 '%s'/cache/*.meta", "owned by uid 65534", "true"},
      {"object writable by others", "chmod 0666 '%s'/cache/*.so", "writable by group or others", "true"},
      {"object is a symlink", "rm '%s/cache/'*.so && ln -s ../evil.so \"$(ls -d '%s'/cache)/KEY.so\"",
       "a symbolic link", "true"},
      {"directory is a symlink", "ln -s cache '%s/link'", "a symbolic link", "rm '%s/link'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    plant(key, so, marker);
    char cmd[2000], setup[1000];
    snprintf(setup, sizeof setup, cases[i].setup, tmpdir, tmpdir);
    /* KEY stands for the entry's key */
    char *k = strstr(setup, "KEY");
    if (k) {
      char rest[1000];
      snprintf(rest, sizeof rest, "%s", k + 3);
      snprintf(k, sizeof setup - (size_t)(k - setup), "%s%s", key, rest);
    }
    ck_assert_msg(tu_run(setup, NULL) == 0, "%s: %s", cases[i].what, setup);
    char env[600] = "";
    if (strstr(cases[i].what, "directory is a symlink")) snprintf(env, sizeof env, "FUSEBOX_CACHE_DIR='%s/link'", tmpdir);
    out = run_child(env, &rc);
    ck_assert_msg(!exists(marker), "%s: the planted object ran; child said:\n%s", cases[i].what, out);
    ck_assert_msg(rc == 0 && strstr(out, "child: result=13 compiles=1 disk_hits=0"), "%s: child said:\n%s",
                  cases[i].what, out);
    ck_assert_msg(strstr(out, "[fusebox:cache] warning:") && strstr(out, cases[i].reason) && strstr(out, tmpdir),
                  "%s: no warning naming the path and '%s'; child said:\n%s", cases[i].what, cases[i].reason, out);
    free(out);
    snprintf(cmd, sizeof cmd, cases[i].undo, tmpdir);
    ck_assert_int_eq(tu_run(cmd, NULL), 0);
  }
  /* nothing of ours is left in /tmp by the refused-directory runs */
  unlink(evil);
}
END_TEST

START_TEST(cc_predictable_fallback_is_checked) {
  /* With no FUSEBOX_CACHE_DIR, XDG_CACHE_HOME or HOME the cache is
   * /tmp/fusebox-cache-<uid>, which another user can make first: it is used
   * only when it passes the ownership checks. */
  if (!is_root_or_skip("cc_predictable_fallback_is_checked")) return;
  char dir[100];
  snprintf(dir, sizeof dir, "/tmp/fusebox-cache-%ld", (long)geteuid());
  if (exists(dir)) {
    printf("cc_predictable_fallback_is_checked: skipped: %s exists\n", dir);
    return;
  }
  ck_assert_int_eq(mkdir(dir, 0755), 0);
  ck_assert_int_eq(chown(dir, 65534, 65534), 0);
  char env[1000], *out = NULL, cmd[1200];
  snprintf(env, sizeof env, "env -u FUSEBOX_CACHE_DIR -u XDG_CACHE_HOME -u HOME TMPDIR='%s'", tmpdir);
  int rc;
  out = run_child(env, &rc);
  char *ls = NULL;
  snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
  tu_run(cmd, &ls);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  tu_run(cmd, NULL);
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13"), "child said:\n%s", out);
  ck_assert_msg(strstr(out, "owned by uid 65534"), "child said:\n%s", out);
  ck_assert_msg(atoi(ls) == 0, "%s files written into the other user's directory", ls);
  free(ls);
  free(out);
}
END_TEST

START_TEST(cc_fifo_entry_does_not_hang) {
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(CHILD_SRC, "", &lib));
  fbx_svc_shlib_release(lib);
  char key[65], name[80], cmd[1000];
  entry_key(key);
  const char *which[] = {"meta", "so", "c"};
  for (int i = 0; i < 3; i++) {
    snprintf(name, sizeof name, "%s.%s", key, which[i]);
    snprintf(cmd, sizeof cmd, "rm -f '%s' && mkfifo '%s'", cache_path(name), cache_path(name));
    ck_assert_int_eq(tu_run(cmd, NULL), 0);
    int rc;
    char *out = run_child("", &rc); /* `timeout 60` turns a hang into a failure */
    /* a FIFO at .c matters only to a build: after the first two the entry is whole again */
    ck_assert_msg(rc == 0 && strstr(out, i < 2 ? "child: result=13 compiles=1" : "child: result=13"),
                  "FIFO at .%s: child said (%d):\n%s", which[i], rc, out);
    if (i == 1) { /* and at .c while the entry is missing */
      snprintf(name, sizeof name, "%s.meta", key);
      unlink(cache_path(name));
    }
    free(out);
  }
}
END_TEST

START_TEST(cc_directory_at_entry) {
  /* a directory at <key>.so (and at <key>.c) is a miss, not a kernel blocked forever */
  fbx_svc_shlib_release(compile_add(NULL));
  char key[65], name[80], cmd[4000];
  entry_key(key);
  snprintf(name, sizeof name, "%s.so", key);
  char so[600];
  snprintf(so, sizeof so, "%s", cache_path(name));
  snprintf(name, sizeof name, "%s.c", key);
  /* non-empty directories: compiled beside them */
  snprintf(cmd, sizeof cmd, "rm -f '%s' '%s' && mkdir -p '%s/x' '%s/x'", so, cache_path(name), so, cache_path(name));
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
  fbx_svc_cc_counters c0 = counters();
  fbx_svc_shlib_release(compile_add(NULL));
  ck_assert_int_eq(counters().compiles - c0.compiles, 1);
  /* an empty directory: replaced by the entry, which is a hit next time */
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s'", so, so);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
  fbx_svc_shlib_release(compile_add(NULL));
  struct stat st;
  ck_assert_int_eq(lstat(so, &st), 0);
  ck_assert(S_ISREG(st.st_mode));
  c0 = counters();
  fbx_svc_shlib_release(compile_add(NULL));
  ck_assert_int_eq(counters().disk_hits - c0.disk_hits, 1);
}
END_TEST

START_TEST(cc_stale_temporaries_are_swept) {
  char cache[400], cmd[2000];
  snprintf(cache, sizeof cache, "%s/cache", tmpdir);
  ck_assert_int_eq(mkdir(cache, 0700), 0);
  /* what a process killed mid-compile leaves: old ones of ours go, a fresh
   * one (a compile running now) and someone else's stay */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && touch -d '-1 hour' old.so.123.0.tmp old.meta.123.1.tmp && touch new.so.124.0.tmp && "
           "touch -d '-1 hour' other.so.125.0.tmp && chown 65534 other.so.125.0.tmp",
           cache);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
  fbx_svc_shlib_release(compile_add(NULL));
  ck_assert(!exists(cache_path("old.so.123.0.tmp")));
  ck_assert(!exists(cache_path("old.meta.123.1.tmp")));
  ck_assert(exists(cache_path("new.so.124.0.tmp")));
  ck_assert(exists(cache_path("other.so.125.0.tmp")));
}
END_TEST

START_TEST(cc_compiler_dies_with_its_parent) {
  /* kill -9 the process during a compile: the compiler goes too */
  char path[400], pidfile[400], cmd[10000], script[2000];
  snprintf(path, sizeof path, "%s/hangcc", tmpdir);
  snprintf(pidfile, sizeof pidfile, "%s/hangcc.pid", tmpdir);
  snprintf(script, sizeof script,
           "#!/bin/sh\n"
           "case \"$*\" in *--version*) echo 'hangcc 1.0'; exit 0;; esac\n"
           "echo $$ > '%s.part' && mv '%s.part' '%s'\n"
           "exec sleep 60\n",
           pidfile, pidfile, pidfile);
  write_text(path, script, 0755);
  snprintf(cmd, sizeof cmd,
           "FUSEBOX_CC='%s' '%s' --child-cc >/dev/null 2>&1 & c=$!\n"
           "for i in $(seq 300); do [ -s '%s' ] && break; sleep 0.1; done\n"
           "kill -9 $c; wait $c\n"
           "p=$(cat '%s')\n"
           "for i in $(seq 100); do\n"
           "  s=$(awk '{print $3}' /proc/$p/stat 2>/dev/null)\n"
           "  if [ -z \"$s\" ] || [ \"$s\" = Z ]; then echo gone; exit 0; fi\n"
           "  sleep 0.1\n"
           "done\n"
           "kill -9 $p; echo alive; exit 1\n",
           path, self_exe, pidfile, pidfile);
  char *out = NULL;
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0 && strstr(out, "gone"), "the compiler outlived its parent: %s", out);
  free(out);
}
END_TEST

/* A compiler that logs every invocation to `log` and then is cc. */
static void counting_cc(char *path, size_t cap, char *log, size_t logcap) {
  snprintf(path, cap, "%s/countcc", tmpdir);
  snprintf(log, logcap, "%s/countcc.calls", tmpdir);
  char script[1000];
  snprintf(script, sizeof script, "#!/bin/sh\necho \"$*\" >> '%s'\nexec cc \"$@\"\n", log);
  write_text(path, script, 0755);
}

static int lines_of(const char *path) {
  char *text = tu_read_file(path, NULL);
  int n = 0;
  for (char *p = text; p && *p; p++) n += *p == '\n';
  free(text);
  return n;
}

START_TEST(cc_warm_process_runs_no_compiler) {
  char path[400], log[400], env[1000];
  counting_cc(path, sizeof path, log, sizeof log);
  snprintf(env, sizeof env, "FUSEBOX_CC='%s' FBX_TEST_CHILD_FLAGS='-fopenmp -fopenmp-simd'", path);
  int rc;
  char *out = run_child(env, &rc);
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13 compiles=1"), "cold child said:\n%s", out);
  free(out);
  /* cold: --version and the compile, which is also the OpenMP probe (it
   * loads: OpenMP works, kept in the probe file); no separate probe */
  char *calls = tu_read_file(log, NULL);
  ck_assert_msg(lines_of(log) == 2 && !strstr(calls, "openmp-probe"), "cold calls:\n%s", calls);
  free(calls);
  out = run_child(env, &rc);
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13 compiles=0 disk_hits=1"), "warm child said:\n%s", out);
  free(out);
  calls = tu_read_file(log, NULL);
  ck_assert_msg(lines_of(log) == 2, "a warm process ran the compiler; calls:\n%s", calls);
  free(calls);
}
END_TEST

START_TEST(cc_failed_first_compile_probes_openmp) {
  /* The first compile of a compiler not seen before asks for OpenMP and
   * fails for its own reason (a syntax error): the probe runs, says OpenMP
   * works, and the compile's own error is what the caller gets (no retry
   * without the flags). */
  char path[400], log[400];
  counting_cc(path, sizeof path, log, sizeof log);
  setenv("FUSEBOX_CC", path, 1);
  ck_assert_int_eq(fbx_svc_cc_openmp_state(), -1);
  fbxp_shlib *lib = NULL;
  fbxp_status *st = fbx_svc_cc_compile("int broken(void) { return 1 }\n", "-fopenmp", &lib);
  ck_assert_ptr_null(lib);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_COMPILE);
  ck_assert_msg(strstr(st->msg, "expected"), "message: %s", st->msg);
  drop(st);
  ck_assert_int_eq(fbx_svc_cc_openmp_state(), 1);
  char *calls = tu_read_file(log, NULL);
  ck_assert_msg(lines_of(log) == 3 && strstr(calls, "openmp-probe"), "calls:\n%s", calls);
  free(calls);
}
END_TEST

START_TEST(cc_timeout_is_one_deadline) {
  /* every step takes 1 s, the request may take 2: --version + probe +
   * compile no longer each get their own limit */
  char path[400], script[600];
  snprintf(path, sizeof path, "%s/slowcc", tmpdir);
  snprintf(script, sizeof script, "#!/bin/sh\nsleep 1\nexec cc \"$@\"\n");
  write_text(path, script, 0755);
  setenv("FUSEBOX_CC", path, 1);
  setenv("FUSEBOX_CC_TIMEOUT", "2", 1);
  fbxp_shlib *lib = NULL;
  fbxp_status *st = fbx_svc_cc_compile(ADD_SRC, "-fopenmp", &lib);
  ck_assert_ptr_null(lib);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(st->msg, "timed out"), "message: %s", st->msg);
  drop(st);
  /* --version is inside the deadline too (it had a fixed 30 s) */
  snprintf(path, sizeof path, "%s/slowversion", tmpdir);
  write_text(path,
             "#!/bin/sh\n"
             "case \"$*\" in *--version*) exec sleep 30;; esac\n"
             "exec cc \"$@\"\n",
             0755);
  setenv("FUSEBOX_CC", path, 1);
  setenv("FUSEBOX_CC_TIMEOUT", "0.5", 1);
  double t0 = now_ms();
  st = fbx_svc_cc_compile(ADD_SRC, NULL, &lib);
  double ms = now_ms() - t0;
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(st->msg, "timed out") && strstr(st->msg, "--version"), "message: %s", st->msg);
  ck_assert_msg(ms < 20000, "took %.0f ms", ms); /* a hang guard, not a timing */
  drop(st);
}
END_TEST

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Bytes of one entry (<key>.so + .meta + .c) in the test's cache. */
static long long entry_bytes(const char *key) {
  const char *ext[] = {"so", "meta", "c"};
  long long n = 0;
  for (int i = 0; i < 3; i++) {
    char name[80];
    struct stat st;
    snprintf(name, sizeof name, "%s.%s", key, ext[i]);
    ck_assert_int_eq(stat(cache_path(name), &st), 0);
    n += st.st_size;
  }
  return n;
}

static fbxp_shlib *compile_src_key(const char *src, char key[65]) {
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(src, "", &lib));
  /* the newest .so is this one's */
  char cmd[400], *out = NULL;
  snprintf(cmd, sizeof cmd, "ls -t '%s/cache' | grep '\\.so$' | head -1", tmpdir);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  memcpy(key, out, 64);
  key[64] = '\0';
  free(out);
  return lib;
}

START_TEST(cc_cache_size_limit_evicts_lru) {
  const char *a = "int fbx_a(void) { return 1; }\n", *b = "int fbx_b(void) { return 2; }\n",
             *c = "int fbx_c(void) { return 3; }\n";
  char ka[65], kb[65], kc[65], name[80];
  fbx_svc_shlib_release(compile_src_key(a, ka));
  long long one = entry_bytes(ka);
  char mb[64];
  snprintf(mb, sizeof mb, "%.6f", 2.5 * (double)one / (1024.0 * 1024.0)); /* room for two entries */
  setenv("FUSEBOX_CACHE_MAX_MB", mb, 1);
  sleep_ms(50);
  fbx_svc_shlib_release(compile_src_key(b, kb));
  sleep_ms(50);
  fbx_svc_cc_counters c0 = counters();
  fbxp_shlib *lib = NULL;
  OK(fbx_svc_cc_compile(a, "", &lib)); /* a hit: a is now the most recently used */
  fbx_svc_shlib_release(lib);
  ck_assert_int_eq(counters().disk_hits - c0.disk_hits, 1);
  sleep_ms(50);
  /* the lone source of a compile that failed long ago counts too */
  char orphan[600], cmd[1400];
  snprintf(orphan, sizeof orphan, "%s/cache/%064d.c", tmpdir, 0);
  snprintf(cmd, sizeof cmd, "head -c %lld /dev/zero > '%s' && touch -d '-1 day' '%s'", one, orphan, orphan);
  ck_assert_int_eq(tu_run(cmd, NULL), 0);
  fbx_svc_shlib_release(compile_src_key(c, kc));
  unsetenv("FUSEBOX_CACHE_MAX_MB");
  ck_assert_msg(!exists(orphan), "the old orphan source is still there");
  snprintf(name, sizeof name, "%s.so", kb);
  ck_assert_msg(!exists(cache_path(name)), "the least recently used entry (b) is still there");
  snprintf(name, sizeof name, "%s.meta", kb);
  ck_assert(!exists(cache_path(name)));
  snprintf(name, sizeof name, "%s.so", ka);
  ck_assert(exists(cache_path(name)));
  snprintf(name, sizeof name, "%s.so", kc);
  ck_assert(exists(cache_path(name)));
}
END_TEST

START_TEST(cc_object_mode_from_the_umask) {
  /* A linker that makes the object anew gives it 0777 & ~umask: 0777 under
   * umask 0. The store makes it 0600, so that a reader does not refuse our
   * own entry as writable by others. */
  char path[400];
  snprintf(path, sizeof path, "%s/umask0cc", tmpdir);
  write_text(path,
             "#!/bin/sh\n"
             "cc \"$@\" || exit\n"
             "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && chmod 0777 \"$2\"; shift; done\n",
             0755);
  char env[600];
  snprintf(env, sizeof env, "FUSEBOX_CC='%s'", path);
  int rc;
  char *out = run_child(env, &rc); /* in child processes: the store, then the load */
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13 compiles=1"), "first child said:\n%s", out);
  free(out);
  out = run_child(env, &rc);
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13 compiles=0 disk_hits=1"), "second child said:\n%s", out);
  free(out);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "find '%s/cache' -type f -perm /022 | wc -l", tmpdir);
  tu_run(cmd, &out);
  ck_assert_int_eq(atoi(out), 0);
  free(out);
}
END_TEST

START_TEST(cc_environment_is_validated) {
  int rc;
  char *out = run_child("FUSEBOX_CC_TIMEOUT=soon FUSEBOX_CACHE_MAX_MB=-3 FUSEBOX_CC_CACHE=maybe", &rc);
  ck_assert_msg(rc == 0 && strstr(out, "child: result=13"), "child said:\n%s", out);
  ck_assert_msg(strstr(out, "FUSEBOX_CC_TIMEOUT='soon'"), "child said:\n%s", out);
  ck_assert_msg(strstr(out, "FUSEBOX_CACHE_MAX_MB='-3'"), "child said:\n%s", out);
  ck_assert_msg(strstr(out, "FUSEBOX_CC_CACHE='maybe'"), "child said:\n%s", out);
  free(out);
  out = run_child("FUSEBOX_CC_TIMEOUT=2.5 FUSEBOX_CACHE_MAX_MB=0.5 FUSEBOX_CC_CACHE=1", &rc);
  ck_assert_msg(rc == 0 && !strstr(out, "warning"), "child said:\n%s", out);
  free(out);
}
END_TEST

/* ---- NVRTC ----------------------------------------------------------------------------------------- */

static const char KERNEL_CU[] = "extern \"C\" __global__ void k(float *x, int n) {\n"
                                "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "  if (i < n) x[i] = x[i] * 2.0f + 1.0f;\n"
                                "}\n";

/* 1 when NVRTC is usable; else prints the reason and returns 0. */
static int nvrtc_or_skip(const char *test) {
  char *ptx = NULL;
  fbxp_status *st = fbx_svc_nvrtc_compile(KERNEL_CU, "probe.cu", NULL, &ptx, NULL);
  if (st && st->code == FBXP_ERR_UNSUPPORTED) {
    printf("%s: skipped: %s\n", test, st->msg);
    drop(st);
    return 0;
  }
  ck_assert_msg(st == NULL, "nvrtc: %s", st ? st->msg : "");
  fbx_free(ptx);
  return 1;
}

/* `test_services --child-nvrtc`: one NVRTC compile in a fresh process (NVRTC is loaded once). */
static int child_nvrtc(void) {
  char *ptx = NULL;
  fbxp_status *st = fbx_svc_nvrtc_compile(KERNEL_CU_SMALL, NULL, NULL, &ptx, NULL);
  printf("child-nvrtc: %s\n", st ? st->msg : "ok");
  fbx_free(ptx);
  if (st) drop(st);
  return 0;
}

START_TEST(nvrtc_environment_is_validated) {
  char cmd[5000], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "FUSEBOX_NVRTC=/nonexistent/libnvrtc.so FUSEBOX_NVRTC_ARCH='compute_80 --foo' '%s' --child-nvrtc 2>&1",
           self_exe);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(strstr(out, "FUSEBOX_NVRTC='/nonexistent/libnvrtc.so' does not load"), "child said:\n%s", out);
  ck_assert_msg(strstr(out, "FUSEBOX_NVRTC_ARCH='compute_80 --foo' is not"), "child said:\n%s", out);
  /* with NVRTC present the compile still works, with the default architecture */
  ck_assert_msg(strstr(out, "child-nvrtc: ok") || strstr(out, "NVRTC not found"), "child said:\n%s", out);
  free(out);
  snprintf(cmd, sizeof cmd, "FUSEBOX_NVRTC_ARCH=compute_75 '%s' --child-nvrtc 2>&1", self_exe);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(!strstr(out, "warning"), "child said:\n%s", out);
  free(out);
}
END_TEST

START_TEST(nvrtc_to_ptx) {
  if (!nvrtc_or_skip("nvrtc_to_ptx")) return;
  char *ptx = NULL, *log = NULL;
  double t0 = now_ms();
  OK(fbx_svc_nvrtc_compile(KERNEL_CU, "k.cu", NULL, &ptx, &log));
  double ms = now_ms() - t0;
  ck_assert_ptr_nonnull(ptx);
  ck_assert_msg(strstr(ptx, ".visible .entry k("), "ptx:\n%.2000s", ptx);
  ck_assert_ptr_nonnull(strstr(ptx, ".target sm_"));
  printf("nvrtc: small kernel to PTX in %.1f ms (%zu bytes of PTX)\n", ms, strlen(ptx));
  fbx_free(ptx);
  fbx_free(log);
  /* an explicit architecture */
  OK(fbx_svc_nvrtc_compile(KERNEL_CU, "k.cu", "compute_80", &ptx, NULL));
  ck_assert_msg(strstr(ptx, ".target sm_80"), "ptx:\n%.2000s", ptx);
  fbx_free(ptx);
}
END_TEST

START_TEST(nvrtc_errors) {
  if (!nvrtc_or_skip("nvrtc_errors")) return;
  char *ptx = (char *)1, *log = NULL;
  fbxp_status *st = fbx_svc_nvrtc_compile("extern \"C\" __global__ void k(float *x) { x[0] = ; }\n", "bad.cu", NULL,
                                          &ptx, &log);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_COMPILE);
  ck_assert_ptr_null(ptx);
  ck_assert_ptr_nonnull(log);
  ck_assert_msg(strstr(log, "bad.cu") && strstr(log, "error"), "log: %s", log);
  ck_assert_msg(strstr(st->msg, "bad.cu"), "message: %s", st->msg);
  drop(st);
  fbx_free(log);
  /* log may be NULL */
  st = fbx_svc_nvrtc_compile("__global__ void k( {", NULL, NULL, &ptx, NULL);
  ck_assert_int_eq(drop(st), FBXP_ERR_COMPILE);
  /* an architecture NVRTC does not know */
  st = fbx_svc_nvrtc_compile(KERNEL_CU, NULL, "compute_1", &ptx, &log);
  ck_assert_int_eq(drop(st), FBXP_ERR_COMPILE);
  fbx_free(log);
  ck_assert_int_eq(drop(fbx_svc_nvrtc_compile(NULL, NULL, NULL, &ptx, NULL)), FBXP_ERR_INVALID);
}
END_TEST

/* ---- OpenCL ------------------------------------------------------------------------------------------ */

/* The run-side OpenCL calls the service does not wrap, for the test only. */
typedef struct _cl_mem *cl_mem;
typedef struct _cl_kernel *cl_kernel;
static struct {
  void *lib;
  cl_mem (*create_buffer)(void *, uint64_t, size_t, void *, int32_t *);
  cl_kernel (*create_kernel)(void *, const char *, int32_t *);
  int32_t (*set_arg)(cl_kernel, uint32_t, size_t, const void *);
  int32_t (*enqueue)(void *, cl_kernel, uint32_t, const size_t *, const size_t *, const size_t *, uint32_t,
                     const void *, void *);
  int32_t (*read)(void *, cl_mem, uint32_t, size_t, size_t, void *, uint32_t, const void *, void *);
  int32_t (*release_mem)(cl_mem);
  int32_t (*release_kernel)(cl_kernel);
  int32_t (*release_program)(void *);
} CL;

static int opencl_or_skip(const char *test, void **program, void **ctx, void **dev, void **queue, const char *src) {
  fbxp_status *st = fbx_svc_opencl_build(src, "-cl-std=CL1.2", program, ctx, dev, queue, NULL);
  if (st && st->code == FBXP_ERR_UNSUPPORTED) {
    printf("%s: skipped: %s\n", test, st->msg);
    drop(st);
    return 0;
  }
  ck_assert_msg(st == NULL, "opencl: %s", st ? st->msg : "");
  if (!CL.lib) {
    CL.lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(CL.lib);
    *(void **)&CL.create_buffer = dlsym(CL.lib, "clCreateBuffer");
    *(void **)&CL.create_kernel = dlsym(CL.lib, "clCreateKernel");
    *(void **)&CL.set_arg = dlsym(CL.lib, "clSetKernelArg");
    *(void **)&CL.enqueue = dlsym(CL.lib, "clEnqueueNDRangeKernel");
    *(void **)&CL.read = dlsym(CL.lib, "clEnqueueReadBuffer");
    *(void **)&CL.release_mem = dlsym(CL.lib, "clReleaseMemObject");
    *(void **)&CL.release_kernel = dlsym(CL.lib, "clReleaseKernel");
    *(void **)&CL.release_program = dlsym(CL.lib, "clReleaseProgram");
    ck_assert(CL.create_buffer && CL.create_kernel && CL.set_arg && CL.enqueue && CL.read && CL.release_mem &&
              CL.release_kernel && CL.release_program);
  }
  return 1;
}

START_TEST(opencl_vector_add) {
  static const char src[] = "__kernel void vadd(__global const float *a, __global const float *b,\n"
                            "                   __global float *c, int n) {\n"
                            "  int i = get_global_id(0);\n"
                            "  if (i < n) c[i] = a[i] + b[i];\n"
                            "}\n";
  void *prog = NULL, *ctx = NULL, *dev = NULL, *queue = NULL;
  double t0 = now_ms();
  if (!opencl_or_skip("opencl_vector_add", &prog, &ctx, &dev, &queue, src)) return;
  printf("opencl: vadd built in %.1f ms (first build includes platform setup)\n", now_ms() - t0);
  ck_assert(prog && ctx && dev && queue);
  enum { N = 1000 };
  float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 0.5f * (float)i, c[i] = -1;
  int32_t e;
  const uint64_t RO_COPY = (1u << 2) | (1u << 5), WO = 1u << 1;
  cl_mem ba = CL.create_buffer(ctx, RO_COPY, sizeof a, a, &e);
  cl_mem bb = CL.create_buffer(ctx, RO_COPY, sizeof b, b, &e);
  cl_mem bc = CL.create_buffer(ctx, WO, sizeof c, NULL, &e);
  ck_assert(ba && bb && bc);
  cl_kernel k = CL.create_kernel(prog, "vadd", &e);
  ck_assert_msg(k != NULL, "clCreateKernel: %d", e);
  int n = N;
  ck_assert_int_eq(CL.set_arg(k, 0, sizeof ba, &ba), 0);
  ck_assert_int_eq(CL.set_arg(k, 1, sizeof bb, &bb), 0);
  ck_assert_int_eq(CL.set_arg(k, 2, sizeof bc, &bc), 0);
  ck_assert_int_eq(CL.set_arg(k, 3, sizeof n, &n), 0);
  size_t global = 1024;
  ck_assert_int_eq(CL.enqueue(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), 0);
  ck_assert_int_eq(CL.read(queue, bc, 1, 0, sizeof c, c, 0, NULL, NULL), 0);
  for (int i = 0; i < N; i++) ck_assert_float_eq(c[i], 1.5f * (float)i);
  CL.release_kernel(k);
  CL.release_mem(ba);
  CL.release_mem(bb);
  CL.release_mem(bc);
  CL.release_program(prog);
  /* a second build shares the context and queue */
  void *prog2 = NULL, *ctx2 = NULL, *queue2 = NULL;
  OK(fbx_svc_opencl_build(src, NULL, &prog2, &ctx2, NULL, &queue2, NULL));
  ck_assert_ptr_eq(ctx2, ctx);
  ck_assert_ptr_eq(queue2, queue);
  CL.release_program(prog2);
}
END_TEST

START_TEST(opencl_build_error) {
  void *prog = NULL, *ctx = NULL, *dev = NULL, *queue = NULL;
  if (!opencl_or_skip("opencl_build_error", &prog, &ctx, &dev, &queue, "__kernel void ok(void) {}\n")) return;
  CL.release_program(prog);
  char *log = NULL;
  prog = (void *)1;
  fbxp_status *st = fbx_svc_opencl_build("__kernel void bad(__global float *x) { x[0] = undefined_thing; }\n", NULL,
                                         &prog, NULL, NULL, NULL, &log);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(st->code, FBXP_ERR_COMPILE);
  ck_assert_ptr_null(prog);
  ck_assert_ptr_nonnull(log);
  ck_assert_msg(strstr(log, "undefined_thing"), "log: %s", log);
  ck_assert_msg(strstr(st->msg, "CL_BUILD_PROGRAM_FAILURE") && strstr(st->msg, "undefined_thing"), "message: %s",
                st->msg);
  drop(st);
  fbx_free(log);
  /* bad options */
  st = fbx_svc_opencl_build("__kernel void ok(void) {}\n", "-fbx-no-such-option", &prog, NULL, NULL, NULL, NULL);
  ck_assert_int_eq(drop(st), FBXP_ERR_COMPILE);
}
END_TEST

static Suite *services_suite(void) {
  Suite *s = suite_create("services");
  TCase *tc = tcase_create("sha256");
  tcase_add_test(tc, sha256_vectors);
  suite_add_tcase(s, tc);

  tc = tcase_create("cc");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, cc_compile_and_call);
  tcase_add_test(tc, cc_memory_then_disk_hit);
  tcase_add_test(tc, cc_flags_are_part_of_the_key);
  tcase_add_test(tc, cc_disk_hit_in_another_process);
  tcase_add_test(tc, cc_concurrent_processes);
  tcase_add_test(tc, cc_concurrent_threads);
  tcase_add_test(tc, cc_corrupt_truncated);
  tcase_add_test(tc, cc_corrupt_garbage);
  tcase_add_test(tc, cc_corrupt_meta);
  tcase_add_test(tc, cc_corrupt_not_loadable);
  tcase_add_test(tc, cc_missing_meta);
  tcase_add_test(tc, cc_cache_off_switch);
  tcase_add_test(tc, cc_unusable_cache_dir);
  tcase_add_test(tc, cc_out_of_memory);
  tcase_add_test(tc, cc_syntax_error);
  tcase_add_test(tc, cc_long_diagnostics_are_cut);
  tcase_add_test(tc, cc_missing_compiler);
  tcase_add_test(tc, cc_timeout_kills_compiler);
  tcase_add_test(tc, cc_openmp_works);
  tcase_add_test(tc, cc_openmp_dropped);
  tcase_add_test(tc, cc_planted_entries_are_not_run);
  tcase_add_test(tc, cc_predictable_fallback_is_checked);
  tcase_add_test(tc, cc_fifo_entry_does_not_hang);
  tcase_add_test(tc, cc_directory_at_entry);
  tcase_add_test(tc, cc_stale_temporaries_are_swept);
  tcase_add_test(tc, cc_compiler_dies_with_its_parent);
  tcase_add_test(tc, cc_warm_process_runs_no_compiler);
  tcase_add_test(tc, cc_failed_first_compile_probes_openmp);
  tcase_add_test(tc, cc_timeout_is_one_deadline);
  tcase_add_test(tc, cc_cache_size_limit_evicts_lru);
  tcase_add_test(tc, cc_environment_is_validated);
  tcase_add_test(tc, cc_object_mode_from_the_umask);
  suite_add_tcase(s, tc);

  tc = tcase_create("nvrtc");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, nvrtc_to_ptx);
  tcase_add_test(tc, nvrtc_errors);
  tcase_add_test(tc, nvrtc_environment_is_validated);
  suite_add_tcase(s, tc);

  tc = tcase_create("opencl");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, opencl_vector_add);
  tcase_add_test(tc, opencl_build_error);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
  if (n > 0) self_exe[n] = '\0';
  if (argc > 1 && !strcmp(argv[1], "--child-cc")) return child_cc();
  if (argc > 1 && !strcmp(argv[1], "--child-nvrtc")) return child_nvrtc();
  SRunner *sr = srunner_create(services_suite());
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
