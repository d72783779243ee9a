/* Host service: OpenCL C program builds through the ICD loader.
 *
 * libOpenCL.so.1 (the Khronos/ocl-icd loader) is loaded with dlopen on first
 * use, and the few types and entry points used are declared below, so the
 * build never needs CL/cl.h and fusebox runs where OpenCL is absent. The
 * first device of the first platform that has one (PoCL's CPU device on a
 * machine without a GPU) gets one context and one in-order command queue,
 * created once and shared for the life of the process. Each build returns a
 * new cl_program the caller owns (clReleaseProgram).
 *
 * PoCL keeps compiled kernels in a disk cache of its own, read from
 * POCL_CACHE_DIR when the platform initializes. Unless the variable is set
 * already, it is pointed at <fusebox cache dir>/pocl before the loader is
 * opened — if that directory is a real directory owned by this user and not
 * writable by group or others (the rule of the host's own cache); otherwise
 * PoCL keeps its default. (A process that initialized OpenCL itself before
 * fusebox keeps what PoCL chose then.)
 *
 * PoCL's CPU device runs work-groups on worker threads that Linux starts on
 * the CPU of the thread creating them and is slow to spread: a 2-thread
 * layer norm kernel ran at 2.1-2.7 ms with them left alone and 1.8-2.0 ms
 * with POCL_AFFINITY=1 (worker i pinned to CPU i; fusebox bench, 4096x1024).
 * So unless POCL_AFFINITY is set, it is set to 1 before the loader is
 * opened, when this process may run on every online CPU (a process confined
 * to some CPUs keeps PoCL's default, which knows nothing of the confinement).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <dlfcn.h>
#include <sched.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "host/services.h"
#include "host/services_cc.h"

/* ---- the slice of CL/cl.h we use (OpenCL 1.2, stable ABI) ----------------------------------- */

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_bitfield;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_program *cl_program;
typedef intptr_t cl_context_properties;

enum {
  CL_SUCCESS = 0,
  CL_BUILD_PROGRAM_FAILURE = -11,
  CL_PLATFORM_VERSION = 0x0901,
  CL_PLATFORM_NAME = 0x0902,
  CL_DEVICE_NAME = 0x102B,
  CL_CONTEXT_PLATFORM = 0x1084,
  CL_PROGRAM_BUILD_LOG = 0x1183,
};
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFu

static struct {
  int ok;
  char why[512]; /* when !ok */
  void *lib;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  cl_int (*get_platform_ids)(cl_uint, cl_platform_id *, cl_uint *);
  cl_int (*get_platform_info)(cl_platform_id, cl_uint, size_t, void *, size_t *);
  cl_int (*get_device_ids)(cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *);
  cl_int (*get_device_info)(cl_device_id, cl_uint, size_t, void *, size_t *);
  cl_context (*create_context)(const cl_context_properties *, cl_uint, const cl_device_id *,
                               void (*)(const char *, const void *, size_t, void *), void *, cl_int *);
  cl_command_queue (*create_queue)(cl_context, cl_device_id, cl_bitfield, cl_int *);
  cl_program (*create_program)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
  cl_int (*build_program)(cl_program, cl_uint, const cl_device_id *, const char *, void (*)(cl_program, void *),
                          void *);
  cl_int (*get_build_info)(cl_program, cl_device_id, cl_uint, size_t, void *, size_t *);
  cl_int (*release_program)(cl_program);
} C;

static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *cl_err(cl_int e) {
  switch (e) {
  case 0: return "CL_SUCCESS";
  case -1: return "CL_DEVICE_NOT_FOUND";
  case -2: return "CL_DEVICE_NOT_AVAILABLE";
  case -3: return "CL_COMPILER_NOT_AVAILABLE";
  case -5: return "CL_OUT_OF_RESOURCES";
  case -6: return "CL_OUT_OF_HOST_MEMORY";
  case -11: return "CL_BUILD_PROGRAM_FAILURE";
  case -30: return "CL_INVALID_VALUE";
  case -32: return "CL_INVALID_PLATFORM";
  case -33: return "CL_INVALID_DEVICE";
  case -34: return "CL_INVALID_CONTEXT";
  case -42: return "CL_INVALID_BINARY";
  case -43: return "CL_INVALID_BUILD_OPTIONS";
  case -44: return "CL_INVALID_PROGRAM";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "OpenCL error";
  }
}

static void fail(const char *fmt, const char *a, cl_int e) {
  snprintf(C.why, sizeof C.why, fmt, a, cl_err(e), (int)e);
  fbx_log(FBX_LOG_LOADER, "opencl: %s", C.why);
}

/* A directory this user owns that nobody else may write: made 0700 (with its
 * parents) when missing. */
static int private_dir(char *path) {
  for (char *s = path + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      int rc = mkdir(path, 0700);
      *s = c;
      if (rc != 0 && errno != EEXIST) return 0;
      if (!c) break;
    }
  }
  struct stat st;
  return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

static void set_pocl_cache_dir(void) {
  const char *cur = getenv("POCL_CACHE_DIR");
  if (cur && *cur) return;
  char *dir = fbx_svc_cc_cache_dir();
  if (!dir) return;
  char *pocl = fbx_malloc(strlen(dir) + sizeof "/pocl");
  if (pocl) {
    strcpy(pocl, dir);
    if (private_dir(pocl)) {
      strcat(pocl, "/pocl");
      if (private_dir(pocl)) {
        setenv("POCL_CACHE_DIR", pocl, 0);
        fbx_log(FBX_LOG_LOADER, "opencl: POCL_CACHE_DIR=%s", pocl);
      }
    }
    if (!getenv("POCL_CACHE_DIR"))
      fbx_log(FBX_LOG_LOADER, "opencl: %s is not a private directory; PoCL keeps its own cache", dir);
  }
  fbx_free(pocl);
  fbx_free(dir);
}

static void set_pocl_affinity(void) {
  if (getenv("POCL_AFFINITY")) return;
#ifdef __linux__
  cpu_set_t allowed;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) != online) return;
  setenv("POCL_AFFINITY", "1", 0);
  fbx_log(FBX_LOG_LOADER, "opencl: POCL_AFFINITY=1");
#endif
}

static void init(void) {
  set_pocl_cache_dir();
  set_pocl_affinity();
  static const char *const libs[] = {"libOpenCL.so.1", "libOpenCL.so"};
  for (size_t i = 0; !C.lib && i < sizeof libs / sizeof libs[0]; i++) C.lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!C.lib) {
    snprintf(C.why, sizeof C.why, "no OpenCL ICD loader (tried libOpenCL.so.1, libOpenCL.so)");
    fbx_log(FBX_LOG_LOADER, "opencl: %s", C.why);
    return;
  }
  struct {
    void **slot;
    const char *name;
  } syms[] = {
      {(void **)&C.get_platform_ids, "clGetPlatformIDs"},
      {(void **)&C.get_platform_info, "clGetPlatformInfo"},
      {(void **)&C.get_device_ids, "clGetDeviceIDs"},
      {(void **)&C.get_device_info, "clGetDeviceInfo"},
      {(void **)&C.create_context, "clCreateContext"},
      {(void **)&C.create_queue, "clCreateCommandQueue"},
      {(void **)&C.create_program, "clCreateProgramWithSource"},
      {(void **)&C.build_program, "clBuildProgram"},
      {(void **)&C.get_build_info, "clGetProgramBuildInfo"},
      {(void **)&C.release_program, "clReleaseProgram"},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    if (!(*syms[i].slot = dlsym(C.lib, syms[i].name))) {
      snprintf(C.why, sizeof C.why, "the OpenCL loader lacks %s", syms[i].name);
      fbx_log(FBX_LOG_LOADER, "opencl: %s", C.why);
      return;
    }
  cl_platform_id plats[16];
  cl_uint nplat = 0;
  cl_int e = C.get_platform_ids(16, plats, &nplat);
  if (e != CL_SUCCESS || nplat == 0) {
    fail("no OpenCL platform%s (%s, %d); install an ICD such as pocl-opencl-icd", "", e);
    return;
  }
  if (nplat > 16) nplat = 16;
  for (cl_uint i = 0; i < nplat && !C.device; i++) {
    cl_uint ndev = 0;
    if (C.get_device_ids(plats[i], CL_DEVICE_TYPE_ALL, 1, &C.device, &ndev) != CL_SUCCESS || ndev == 0)
      C.device = NULL;
    else
      C.platform = plats[i];
  }
  if (!C.device) {
    snprintf(C.why, sizeof C.why, "no OpenCL device on any of %u platform(s)", (unsigned)nplat);
    fbx_log(FBX_LOG_LOADER, "opencl: %s", C.why);
    return;
  }
  char pname[256] = "?", pver[256] = "?", dname[256] = "?";
  C.get_platform_info(C.platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
  C.get_platform_info(C.platform, CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
  C.get_device_info(C.device, CL_DEVICE_NAME, sizeof dname, dname, NULL);
  pname[255] = pver[255] = dname[255] = '\0';
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)C.platform, 0};
  C.context = C.create_context(props, 1, &C.device, NULL, NULL, &e);
  if (!C.context) {
    fail("clCreateContext on %s: %s (%d)", dname, e);
    return;
  }
  C.queue = C.create_queue(C.context, C.device, 0, &e);
  if (!C.queue) {
    fail("clCreateCommandQueue on %s: %s (%d)", dname, e);
    return;
  }
  C.ok = 1;
  fbx_log(FBX_LOG_LOADER, "opencl: platform %s (%s), device %s", pname, pver, dname);
}

static char *build_log(cl_program p) {
  size_t n = 0;
  if (C.get_build_info(p, C.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0) return NULL;
  char *s = fbx_malloc(n + 1);
  if (!s) return NULL;
  if (C.get_build_info(p, C.device, CL_PROGRAM_BUILD_LOG, n, s, NULL) != CL_SUCCESS) {
    fbx_free(s);
    return NULL;
  }
  s[n] = '\0';
  /* trim trailing blanks; an all-blank log is no log */
  while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\0')) s[--n] = '\0';
  if (!n) {
    fbx_free(s);
    return NULL;
  }
  return s;
}

fbxp_status *fbx_svc_opencl_build(const char *source, const char *options, void **program, void **context,
                                  void **device, void **queue, char **log) {
  if (log) *log = NULL;
  if (!program) return fbx_svc_status(FBXP_ERR_INVALID, "opencl_build: program is NULL");
  *program = NULL;
  if (!source) return fbx_svc_status(FBXP_ERR_INVALID, "opencl_build: source is NULL");
  pthread_once(&once, init);
  if (!C.ok) return fbx_svc_status(FBXP_ERR_UNSUPPORTED, "OpenCL unavailable: %s", C.why);
  if (context) *context = C.context;
  if (device) *device = C.device;
  if (queue) *queue = C.queue;
  cl_int e;
  cl_program p = C.create_program(C.context, 1, &source, NULL, &e);
  if (!p) return fbx_svc_status(FBXP_ERR_COMPILE, "clCreateProgramWithSource: %s (%d)", cl_err(e), (int)e);
  e = C.build_program(p, 1, &C.device, options ? options : "", NULL, NULL);
  char *text = build_log(p);
  fbxp_status *st = NULL;
  if (e != CL_SUCCESS) {
    st = fbx_svc_status(FBXP_ERR_COMPILE, "OpenCL build failed: %s (%d)%s%s\n%.4096s", cl_err(e), (int)e,
                        options && *options ? ", options: " : "", options ? options : "", text ? text : "(no log)");
    C.release_program(p);
  } else {
    *program = p;
  }
  if (log) *log = text;
  else fbx_free(text);
  return st;
}
