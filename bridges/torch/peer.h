/* libfusebox_torch_peer.so: PyTorch's TorchScript executor as a peer of the
 * fusers in `fusebox bench --fusers none,legacy,torch`.
 *
 * A C ABI over DLPack so that the `fusebox` command (C, never linked with
 * libtorch) can dlopen it: the graph text goes to torch::jit::parseIR, runs
 * through a torch::jit::GraphExecutor (PyTorch's profiling executor with
 * whatever fusers this libtorch enables on the CPU), and the tensors cross
 * as DLManagedTensors both ways (at::fromDLPack / at::toDLPack, no copies
 * except bool tensors, which DLPack 0.6 cannot name).
 *
 *   fbxtp_graph *p = fbxtp_create(text, err, sizeof err);
 *   fbxtp_run(p, in, nin, out, cap, &nout, err, sizeof err);   // many times
 *   fbxtp_destroy(p);
 *
 * The host resolves every entry point with dlsym and checks
 * fbxtp_abi_version() == FBXTP_ABI_VERSION first. */
#ifndef FBX_BRIDGES_TORCH_PEER_H
#define FBX_BRIDGES_TORCH_PEER_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FBXTP_ABI_VERSION 1

typedef struct fbxtp_graph fbxtp_graph;

typedef enum fbxtp_kind {
  FBXTP_NONE = 0,
  FBXTP_TENSOR = 1,
  FBXTP_INT = 2,
  FBXTP_FLOAT = 3,
  FBXTP_BOOL = 4
} fbxtp_kind;

/* One graph input or (flattened) output. A tensor input's DLManagedTensor
 * is consumed by fbxtp_run (its deleter is called when PyTorch lets go of
 * it, possibly before fbxtp_run returns); an output tensor is the caller's
 * (call its deleter). bool tensors use type code 6 (kDLBool) both ways. */
typedef struct fbxtp_value {
  int kind;                 /* fbxtp_kind */
  struct DLManagedTensor *tensor; /* FBXTP_TENSOR */
  int64_t i;                /* FBXTP_INT, FBXTP_BOOL (0/1) */
  double f;                 /* FBXTP_FLOAT */
} fbxtp_value;

int fbxtp_abi_version(void);
/* Parse the graph text; NULL with a message in err (errlen bytes) when
 * PyTorch cannot parse it. */
fbxtp_graph *fbxtp_create(const char *ir_text, char *err, size_t errlen);
/* Run once on in[0..nin); the outputs, tuples and lists flattened
 * depth-first, go to out[0..cap) and their count to *nout. 0 on success,
 * -1 with a message in err. Not thread-safe per graph. */
int fbxtp_run(fbxtp_graph *g, const fbxtp_value *in, int nin, fbxtp_value *out, int cap, int *nout, char *err,
              size_t errlen);
/* As fbxtp_run, then backward: every floating-point tensor input requires
 * grad, and gout[0..ngout) (one per flattened output: a tensor, or
 * FBXTP_NONE for no gradient; consumed like the inputs) is fed to the
 * outputs; gin[0..nin) gets each input's gradient (a tensor, the caller's;
 * FBXTP_NONE for inputs that are not floating tensors or that no gradient
 * reaches). */
int fbxtp_run_grad(fbxtp_graph *g, const fbxtp_value *in, int nin, const fbxtp_value *gout, int ngout,
                   fbxtp_value *out, int cap, int *nout, fbxtp_value *gin, char *err, size_t errlen);
void fbxtp_destroy(fbxtp_graph *g);

#ifdef __cplusplus
}
#endif
#endif
