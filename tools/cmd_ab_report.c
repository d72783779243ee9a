#include "ab.h"
fbx_status *ab_write_report(const char *dir, const ab_run *run) {
  (void)dir;
  (void)run;
  return fbx_status_new(FBX_ERR_UNSUPPORTED, "--report: not yet");
}
