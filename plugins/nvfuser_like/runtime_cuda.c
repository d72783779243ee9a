/* runtime_cuda.c — the nvfuser_like runtime on CUDA: not written yet; the
 * target opens as unsupported. */
#include "rt_impl.h"

fbxp_status *nvf_rt_open_cuda(nvf_rt *rt) {
  return rt->host->status_new(FBXP_ERR_UNSUPPORTED, "nvfuser_like CUDA: the CUDA runtime is not built yet");
}
