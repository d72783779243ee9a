/* The `torch` peer of `fusebox bench` (see tools/torchpeer.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../bridges/torch/peer.h"
#include "base/alloc.h"
#include "base/strbuf.h"
#include "model.h"
#include "torchpeer.h"

typedef struct peer_api {
  int (*abi_version)(void);
  fbxtp_graph *(*create)(const char *, char *, size_t);
  int (*run)(fbxtp_graph *, const fbxtp_value *, int, fbxtp_value *, int, int *, char *, size_t);
  void (*destroy)(fbxtp_graph *);
} peer_api;

struct fbx_torch_peer {
  fbxtp_graph *g;
};

static peer_api api;

#ifdef FBX_TORCH_PEER_NAME
static bool loaded;

/* Installed: bin/<FBX_BIN_TO_TORCH_PEER>/; built: bridges/torch/ of the build tree. */
static fbx_status *load(void) {
  if (loaded) return NULL;
  char *exe = fbx_cli_exe_dir();
  if (!exe) return fbx_status_nomem();
  fbx_strbuf cand[2] = {{0}, {0}};
  fbx_strbuf_printf(&cand[0], "%s/%s/%s", exe, FBX_BIN_TO_TORCH_PEER, FBX_TORCH_PEER_NAME);
  fbx_strbuf_printf(&cand[1], "%s/%s", FBX_TORCH_PEER_BUILD_DIR, FBX_TORCH_PEER_NAME);
  fbx_free(exe);
  fbx_status *st = NULL;
  void *h = NULL;
  for (int i = 0; i < 2 && !h && !st; i++) {
    if (cand[i].oom) st = fbx_status_nomem();
    else if (access(cand[i].data, R_OK) == 0 && !(h = dlopen(cand[i].data, RTLD_NOW | RTLD_LOCAL)))
      st = fbx_status_new(FBX_ERR_UNSUPPORTED, "the PyTorch peer %s cannot be loaded: %s", cand[i].data, dlerror());
  }
  if (!h && !st)
    st = fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "the PyTorch peer " FBX_TORCH_PEER_NAME " is missing (looked in %s and %s): build the "
                        "fusebox_torch_peer target or install fusebox again",
                        cand[0].data, cand[1].data);
  fbx_strbuf_free(&cand[0]);
  fbx_strbuf_free(&cand[1]);
  if (st) return st;
  *(void **)&api.abi_version = dlsym(h, "fbxtp_abi_version");
  *(void **)&api.create = dlsym(h, "fbxtp_create");
  *(void **)&api.run = dlsym(h, "fbxtp_run");
  *(void **)&api.destroy = dlsym(h, "fbxtp_destroy");
  if (!api.abi_version || !api.create || !api.run || !api.destroy)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "the PyTorch peer lacks an fbxtp_* entry point");
  if (api.abi_version() != FBXTP_ABI_VERSION)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "the PyTorch peer speaks ABI %d, this fusebox %d", api.abi_version(),
                          FBXTP_ABI_VERSION);
  loaded = true;
  return NULL;
}
#else
static fbx_status *load(void) {
  return fbx_status_new(FBX_ERR_UNSUPPORTED,
                        "`torch` needs the PyTorch bridge, and this fusebox was built without it (libtorch was not "
                        "found when it was configured: install libtorch-dev and reconfigure with -DFUSEBOX_TORCH=AUTO "
                        "or ON)");
}
#endif

fbx_status *fbx_torch_peer_check(void) { return load(); }

fbx_status *fbx_torch_peer_open(fbx_torch_peer **out, const char *graph_text) {
  *out = NULL;
  FBX_TRY(load());
  fbx_torch_peer *p = fbx_calloc(1, sizeof *p);
  if (!p) return fbx_status_nomem();
  char err[1024] = "";
  if (!(p->g = api.create(graph_text, err, sizeof err))) {
    fbx_free(p);
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "torch: %s", err);
  }
  *out = p;
  return NULL;
}

#define MAX_PEER_VALUES 256

fbx_status *fbx_torch_peer_run(fbx_torch_peer *p, const fbx_ivalue *in, int nin, fbx_ivalue *out, int cap,
                               int *nout) {
  *nout = 0;
  if (nin > MAX_PEER_VALUES || cap > MAX_PEER_VALUES)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "torch: at most %d inputs and outputs", MAX_PEER_VALUES);
  fbxtp_value vin[MAX_PEER_VALUES], vout[MAX_PEER_VALUES];
  memset(vin, 0, sizeof vin);
  fbx_status *st = NULL;
  int i = 0;
  for (; i < nin && !st; i++) {
    const fbx_ivalue *v = &in[i];
    switch (v->kind) {
      case FBX_IV_TENSOR:
        vin[i].kind = FBXTP_TENSOR;
        st = fbx_tensor_to_dlpack(&vin[i].tensor, v->u.t);
        break;
      case FBX_IV_INT: vin[i].kind = FBXTP_INT; vin[i].i = v->u.i; break;
      case FBX_IV_FLOAT: vin[i].kind = FBXTP_FLOAT; vin[i].f = v->u.f; break;
      case FBX_IV_BOOL: vin[i].kind = FBXTP_BOOL; vin[i].i = v->u.b; break;
      case FBX_IV_NONE: vin[i].kind = FBXTP_NONE; break;
      default: st = fbx_status_new(FBX_ERR_UNSUPPORTED, "torch: input %d is a list, tuple or string: not supported", i);
    }
  }
  if (st) {
    for (int k = 0; k < i; k++)
      if (vin[k].kind == FBXTP_TENSOR && vin[k].tensor) vin[k].tensor->deleter(vin[k].tensor);
    return st;
  }
  char err[1024] = "";
  int n = 0;
  if (api.run(p->g, vin, nin, vout, cap, &n, err, sizeof err)) return fbx_status_new(FBX_ERR_RUNTIME, "torch: %s", err);
  for (int k = 0; k < n; k++) {
    switch (vout[k].kind) {
      case FBXTP_TENSOR: {
        fbx_tensor *t = NULL;
        fbx_status *s = st ? NULL : fbx_tensor_from_dlpack(&t, vout[k].tensor);
        if (st || s) vout[k].tensor->deleter(vout[k].tensor);
        if (s) st = fbx_status_wrap(s, "torch: output %d", k);
        out[k] = t ? fbx_iv_tensor(t) : fbx_iv_none();
        break;
      }
      case FBXTP_INT: out[k] = fbx_iv_int(vout[k].i); break;
      case FBXTP_FLOAT: out[k] = fbx_iv_float(vout[k].f); break;
      case FBXTP_BOOL: out[k] = fbx_iv_bool(vout[k].i != 0); break;
      default: out[k] = fbx_iv_none(); break;
    }
  }
  if (st) {
    for (int k = 0; k < n; k++) fbx_iv_release(&out[k]);
    return st;
  }
  *nout = n;
  return NULL;
}

void fbx_torch_peer_close(fbx_torch_peer *p) {
  if (!p) return;
  api.destroy(p->g);
  fbx_free(p);
}
