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
  int (*run_grad)(fbxtp_graph *, const fbxtp_value *, int, const fbxtp_value *, int, fbxtp_value *, int, int *,
                  fbxtp_value *, char *, size_t);
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
  *(void **)&api.run_grad = dlsym(h, "fbxtp_run_grad");
  *(void **)&api.destroy = dlsym(h, "fbxtp_destroy");
  if (!api.abi_version || !api.create || !api.run || !api.run_grad || !api.destroy)
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

static void free_values(fbxtp_value *v, int n) {
  for (int k = 0; k < n; k++)
    if (v[k].kind == FBXTP_TENSOR && v[k].tensor) v[k].tensor->deleter(v[k].tensor);
}

/* Values to the bridge (tensors exported through DLPack; the bridge consumes them). */
static fbx_status *export_values(const fbx_ivalue *in, int n, fbxtp_value *v, const char *what) {
  memset(v, 0, (size_t)n * sizeof *v);
  fbx_status *st = NULL;
  int i = 0;
  for (; i < n && !st; i++) {
    switch (in[i].kind) {
      case FBX_IV_TENSOR:
        v[i].kind = FBXTP_TENSOR;
        st = fbx_tensor_to_dlpack(&v[i].tensor, in[i].u.t);
        break;
      case FBX_IV_INT: v[i].kind = FBXTP_INT; v[i].i = in[i].u.i; break;
      case FBX_IV_FLOAT: v[i].kind = FBXTP_FLOAT; v[i].f = in[i].u.f; break;
      case FBX_IV_BOOL: v[i].kind = FBXTP_BOOL; v[i].i = in[i].u.b; break;
      case FBX_IV_NONE: v[i].kind = FBXTP_NONE; break;
      default:
        st = fbx_status_new(FBX_ERR_UNSUPPORTED, "torch: %s %d is a list, tuple or string: not supported", what, i);
    }
  }
  if (st) free_values(v, i);
  return st;
}

/* Values from the bridge into out[0..n) (all of v is consumed, even on error). */
static fbx_status *import_values(fbxtp_value *v, int n, fbx_ivalue *out, const char *what) {
  fbx_status *st = NULL;
  for (int k = 0; k < n; k++) {
    switch (v[k].kind) {
      case FBXTP_TENSOR: {
        fbx_tensor *t = NULL;
        fbx_status *s = st ? NULL : fbx_tensor_from_dlpack(&t, v[k].tensor);
        if (st || s) v[k].tensor->deleter(v[k].tensor);
        if (s) st = fbx_status_wrap(s, "torch: %s %d", what, k);
        out[k] = t ? fbx_iv_tensor(t) : fbx_iv_none();
        break;
      }
      case FBXTP_INT: out[k] = fbx_iv_int(v[k].i); break;
      case FBXTP_FLOAT: out[k] = fbx_iv_float(v[k].f); break;
      case FBXTP_BOOL: out[k] = fbx_iv_bool(v[k].i != 0); break;
      default: out[k] = fbx_iv_none(); break;
    }
  }
  if (st)
    for (int k = 0; k < n; k++) fbx_iv_release(&out[k]);
  return st;
}

static fbx_status *peer_run(fbx_torch_peer *p, const fbx_ivalue *in, int nin, const fbx_ivalue *gout, int ngout,
                            fbx_ivalue *out, int cap, int *nout, fbx_ivalue *gin) {
  *nout = 0;
  if (nin > MAX_PEER_VALUES || cap > MAX_PEER_VALUES || ngout > MAX_PEER_VALUES)
    return fbx_status_new(FBX_ERR_UNSUPPORTED, "torch: at most %d inputs and outputs", MAX_PEER_VALUES);
  fbxtp_value vin[MAX_PEER_VALUES], vgout[MAX_PEER_VALUES], vout[MAX_PEER_VALUES], vgin[MAX_PEER_VALUES];
  FBX_TRY(export_values(in, nin, vin, "input"));
  if (gin) {
    fbx_status *st = export_values(gout, ngout, vgout, "output gradient");
    if (st) {
      free_values(vin, nin);
      return st;
    }
  }
  char err[1024] = "";
  int n = 0;
  int rc = gin ? api.run_grad(p->g, vin, nin, vgout, ngout, vout, cap, &n, vgin, err, sizeof err)
               : api.run(p->g, vin, nin, vout, cap, &n, err, sizeof err);
  if (rc) return fbx_status_new(FBX_ERR_RUNTIME, "torch: %s", err);
  fbx_status *st = import_values(vout, n, out, "output");
  fbx_status *sg = gin ? import_values(vgin, nin, gin, "gradient of input") : NULL;
  if (st || sg) {
    if (!st) for (int k = 0; k < n; k++) fbx_iv_release(&out[k]);
    if (!sg && gin) for (int k = 0; k < nin; k++) fbx_iv_release(&gin[k]);
    fbx_status_free(sg && st ? sg : NULL);
    return st ? st : sg;
  }
  *nout = n;
  return NULL;
}

fbx_status *fbx_torch_peer_run(fbx_torch_peer *p, const fbx_ivalue *in, int nin, fbx_ivalue *out, int cap,
                               int *nout) {
  return peer_run(p, in, nin, NULL, 0, out, cap, nout, NULL);
}

fbx_status *fbx_torch_peer_run_grad(fbx_torch_peer *p, const fbx_ivalue *in, int nin, const fbx_ivalue *gout,
                                    int ngout, fbx_ivalue *out, int cap, int *nout, fbx_ivalue *gin) {
  return peer_run(p, in, nin, gout, ngout, out, cap, nout, gin);
}

void fbx_torch_peer_close(fbx_torch_peer *p) {
  if (!p) return;
  api.destroy(p->g);
  fbx_free(p);
}
