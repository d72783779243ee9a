/* fusebox plugins: where fuser plugins are looked for, what was found, and
 * why anything was rejected. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <fusebox/fuser_abi.h>

#include "cli.h"
#include "host/host.h"

static const char *const USAGE = "fusebox plugins";

static void print_flags(char *buf, size_t n, uint32_t flags) {
  snprintf(buf, n, "%s%s",
           flags & FBXP_SELF_FALLBACK ? "self-fallback" : flags & FBXP_GUARDS_OUTSIDE ? "guards-outside" : "?",
           flags & FBXP_RUN_THREAD_SAFE ? ",thread-safe-run" : "");
}

static void print_devices(char *buf, size_t n, uint32_t devices) {
  snprintf(buf, n, "%s%s%s%s", devices & FBXP_DEVICE_CPU ? "cpu," : "", devices & FBXP_DEVICE_CUDA ? "cuda," : "",
           devices & FBXP_DEVICE_OPENCL ? "opencl," : "", devices ? "" : "none");
  size_t len = strlen(buf);
  if (len && buf[len - 1] == ',') buf[len - 1] = 0;
}

int fbx_cmd_plugins(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: %s\n\nLists the directories searched for fuser plugins (FUSEBOX_PLUGIN_PATH, then\n"
             "the built-in plugin directories), then every candidate shared object: name,\n"
             "version, vendor, ABI version, flags, devices and path, then the plugin's own\n"
             "description on a line of its own (nvfuser_like says there which device it\n"
             "runs on, and why not CUDA), or why it was rejected.\n"
             "FUSEBOX_FUSER selects one by name (or path); FUSEBOX_LOG=loader traces loading.\n",
             USAGE);
      return 0;
    }
    return fbx_cli_usage("plugins", USAGE, "unexpected argument '%s'", argv[i]);
  }
  const char *dirs[64];
  int nd = fbx_fuser_search_dirs(dirs, 64);
  printf("search dirs:\n");
  for (int i = 0; i < nd; i++) {
    struct stat st;
    printf("  %s%s\n", dirs[i], stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode) ? "" : " (missing)");
  }
  fbx_fuser_candidate *c = NULL;
  int n = 0;
  fbx_status *st = fbx_fuser_discover(&c, &n);
  if (st) return fbx_cli_fail("plugins", st);
  int loaded = 0;
  for (int i = 0; i < n; i++) loaded += !c[i].rejected;
  printf("plugins: %d found, %d loadable, %d rejected\n", n, loaded, n - loaded);
  for (int i = 0; i < n; i++) {
    if (c[i].rejected) {
      /* The loader's message starts with the path, printed already. */
      const char *why = c[i].rejected;
      size_t plen = strlen(c[i].path);
      if (!strncmp(why, c[i].path, plen) && !strncmp(why + plen, ": ", 2)) why += plen + 2;
      printf("  %-20s REJECTED %s\n      reason: %s\n", c[i].name, c[i].path, why);
      continue;
    }
    char flags[64], devices[64];
    print_flags(flags, sizeof flags, c[i].flags);
    print_devices(devices, sizeof devices, c[i].devices);
    printf("  %-20s %-8s %-16s ABI %u.%u  %-31s %-10s %s\n", c[i].name, c[i].version ? c[i].version : "-",
           c[i].vendor ? c[i].vendor : "-", c[i].abi_major, c[i].abi_minor, flags, devices, c[i].path);
    if (c[i].description && *c[i].description) printf("      %s\n", c[i].description);
  }
  fbx_fuser_candidates_free(c, n);
  return 0;
}
