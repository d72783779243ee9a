/* PyTorch as a peer of the fusers in `fusebox bench --fusers ...,torch`
 * (issue 19): the C side of bridges/torch/peer.h. The bridge library
 * (libfusebox_torch_peer.so, over libtorch) is dlopened on first use, from
 * the build tree (bridges/torch/) or the install prefix (lib/fusebox/, next
 * to the plugins directory), so that `fusebox` never links libtorch; it is
 * never closed (libtorch does not unload cleanly). Implemented in
 * tools/cmd_torchpeer.c. */
#ifndef FBX_TOOLS_TORCHPEER_H
#define FBX_TOOLS_TORCHPEER_H
#include "base/status.h"
#include "ops/ivalue.h"

typedef struct fbx_torch_peer fbx_torch_peer;

/* Whether the bridge library can be loaded (NULL), else why: fusebox was
 * built without the bridge, or the library is missing or broken. */
fbx_status *fbx_torch_peer_check(void);
/* Hand the graph text to torch::jit::parseIR and make a GraphExecutor. */
fbx_status *fbx_torch_peer_open(fbx_torch_peer **out, const char *graph_text);
/* Run once on in[0..nin) (tensors, ints, floats, bools, None; tensors cross
 * as DLPack without copies); the outputs, tuples flattened, into
 * out[0..cap) and their count into *nout (release them). */
fbx_status *fbx_torch_peer_run(fbx_torch_peer *p, const fbx_ivalue *in, int nin, fbx_ivalue *out, int cap,
                               int *nout);
/* As fbx_torch_peer_run, then backward through PyTorch's autograd: every
 * floating tensor input requires grad, gout[0..ngout) (one per flattened
 * output; None for no gradient) is fed to the outputs, and gin[0..nin)
 * gets the inputs' gradients (None where there is none; release them). */
fbx_status *fbx_torch_peer_run_grad(fbx_torch_peer *p, const fbx_ivalue *in, int nin, const fbx_ivalue *gout,
                                    int ngout, fbx_ivalue *out, int cap, int *nout, fbx_ivalue *gin);
void fbx_torch_peer_close(fbx_torch_peer *p);

#endif
