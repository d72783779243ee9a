/* Gradient formulas of reductions, scans, linear algebra (convolutions
 * too), prelu, shape and indexing ops, embedding_bag, im2col/col2im and the
 * losses (autodiff/formulas_{reduce,linalg,shape,extra}.h, prelu's in
 * formulas_nn.h, and the C builders of grad_builders.c), checked against finite differences in float64 with
 * the gradcheck harness (gradcheck.h), kinks and ties against PyTorch's own
 * gradients: one row per formula and overload,
 * with keepdim, negative dims, broadcasting matmul ranks and repeated
 * indices that accumulate. The Tensor[] ops are checked by a small driver
 * below (the harness differentiates tensor-valued nodes only). The backward
 * rows of ops/list_backward.h are checked against values PyTorch 1.13
 * printed (the commands are next to the numbers). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff/autodiff.h"
#include "base/alloc.h"
#include "exec/interp.h"
#include "gradcheck.h"
#include "ir/text.h"
#include "ops/optable.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                                 \
  do {                                                                           \
    fbx_status *st_ = (expr);                                                    \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_)); \
  } while (0)

/* One forward node on graph inputs %x (and %y, %z); constants inline. */
#define G1(body) "graph(%x : Tensor):\n" body
#define G2(body) "graph(%x : Tensor, %y : Tensor):\n" body
#define G3(body) "graph(%x : Tensor, %y : Tensor, %z : Tensor):\n" body
#define C_NONE "  %none : NoneType = prim::Constant()\n"
#define C_T "  %t : bool = prim::Constant[value=1]()\n"
#define C_F "  %f : bool = prim::Constant[value=0]()\n"
#define C_I(name, v) "  %" name " : int = prim::Constant[value=" #v "]()\n"
#define RET "  return (%r)\n"
#define UPS_F(name, v) "  %" name " : float = prim::Constant[value=" v "]()\n"
#define RET4 "  return (%r, %r1, %r2, %r3)\n"
#define V_(...) (const double[]){__VA_ARGS__}

/* CTC's gradient against PyTorch's (golden mode; printed by /usr/bin/python3 with
 * torch.manual_seed(3), lp = randn(...).log_softmax(-1).round(decimals=4), float64,
 * torch.ops.aten.ctc_loss(lp, ...).backward()): PyTorch's formula, exp(lp) - ..., is the
 * gradient of the log-probabilities only through log_softmax (whose backward cancels the
 * exp(lp) term), so finite differences of the loss alone do not check it. */
static const double ctc_v1[] = {-1.7247, -1.3602, -0.8378, -2.021, -3.2126, -2.3744, -0.9727, -0.7162, -1.8257,
                                  -2.7829, -0.3874, -2.3207, -1.4668, -0.8684, -2.1398, -1.4609, -1.91, -0.3854,
                                  -3.6729, -1.9217, -2.812, -1.7497, -1.2976, -0.7075, -1.7943, -0.5085, -1.8422,
                                  -2.605, -1.0508, -1.6042, -2.085, -1.124, -0.75, -1.561, -2.8688, -1.3435,
                                  -2.2379, -2.0909, -0.3587, -2.6425};
static const double ctc_e1[] = {-0.06142612779306439, -0.0798648817974211, 0.10816533302166355,
                                  0.03313071898016761, 0.008979297249039403, 0.02326757866253674,
                                  0.09451522360386265, -0.12676498332294273, -0.054184554629590966,
                                  -0.06328186592020192, 0.09291222065044273, 0.02455120454146249,
                                  -0.17809651468173698, 0.10490560206763425, 0.029419594085909318,
                                  0.04376896001286037, -0.05010758534807004, 0.03515685760811313,
                                  -0.02163387421422507, 0.03658948550544829, -0.012293542600430862,
                                  0.04345652086352244, 0.06829666371428708, -0.09946657030926943,
                                  -0.04131617295621952, 0.1101489196656836, -0.08730544866544401,
                                  0.018475784299388988, -0.02800148514015169, 0.05026258271399096,
                                  0.031076780041444846, -0.05333971659280966, -0.06543308173507817,
                                  0.05248151004064641, -0.05228352854684209, 0.06523270266888638, 0.0, 0.0, 0.0,
                                  0.0};
static const double ctc_v2[] = {-1.9765, -2.458, -1.0193, -0.8795, -1.2578, -1.4727, -1.4637, -1.3663, -0.7004,
                                  -2.3709, -1.549, -1.6205, -2.1855, -0.8298, -1.6253, -1.3681, -2.0866, -0.3245,
                                  -4.0757, -1.9948, -0.8821, -0.9755, -2.2081, -2.3106, -3.3522, -0.1619, -4.0654,
                                  -2.3294, -1.8537, -1.2963, -1.2162, -1.2966, -1.4302, -2.7876, -1.2076, -0.9157,
                                  -2.6165, -1.3316, -2.5716, -0.5336, -4.4199, -1.5964, -0.9198, -0.95, -0.7033,
                                  -1.0905, -2.0502, -3.2115, -3.1041, -0.7429, -1.073, -1.9846, -0.8512, -2.033,
                                  -0.9865, -2.6694, -0.8856, -1.0602, -1.7665, -2.6564, -1.4271, -1.3304, -1.2528,
                                  -1.5611, -0.6737, -1.3853, -3.4942, -1.5627, -1.8173, -1.1947, -1.4192, -1.2281};
static const double ctc_e2[] = {-0.47282424122460737, 0.08560599185312803, 0.36084744499757737,
                                  0.02636792252157938, 0.2842787523044823, 0.22930552370135152,
                                  -0.48473377261080164, -0.028838742364920955, 0.4963867093914209,
                                  -0.2969482408281818, 0.21246032795994024, -0.4118553532317839,
                                  -0.30336064276802766, 0.14492830801797274, 0.19685261056177214,
                                  -0.038419429775104486, 0.12410838780180158, 0.722888707649867,
                                  -0.13232451080389018, -0.7146543052891561, 0.32913738736402487,
                                  -0.40138327625450776, 0.10990927788282716, -0.03763581238630424,
                                  -0.05819107650937822, 0.1065645728946849, 0.017156125450749304,
                                  -0.06548584805401621, 0.1566564637604752, 0.27354202845125036,
                                  -0.2208192265380855, -0.20936661948836272, -0.10203009550268208,
                                  -0.07500044993790222, 0.29891381239614284, -0.1219032248949225,
                                  0.05176822880211697, -0.398265216726644, 0.076413186464504, 0.27009934461708834,
                                  0.012035435768125411, 0.20262465532023405, -0.09491781779137926,
                                  -0.11974240589047636, -0.34264277258942133, 0.21786779280321655,
                                  0.12870915918161313, -0.003931195779204359, 0.03923147170107555,
                                  -0.26296352181316723, 0.3419810338623976, -0.11823520425599007,
                                  0.42690234164608065, 0.13094210500432593, -0.5151185928016994,
                                  -0.0427081300804691, -0.46597509597567754, 0.3188051679705846,
                                  0.17093019879409185, -0.023776437697662786, 0.24000392538573598,
                                  -0.1774163098607211, 0.28570370548029306, -0.34830714998045, 0.0, 0.0, 0.0, 0.0,
                                  -0.1860613349418986, 0.3027947789914377, 0.24190746547966988,
                                  -0.3586263919800986};
static const double ctc_v3[] = {-2.1155, -1.2575, -1.6684, -0.9001, -1.9185, -0.4202, -2.0807, -2.6393, -2.7794,
                                  -1.2069, -1.6407, -0.8098};
static const double ctc_e3[] = {0.12057298798503004, 0.28436404872399684, -0.8114514979714249, 0.4065290048074056,
                                  -0.853172962411124, 0.6569154235911542, 0.12484279165080478, 0.07141123993266678,
                                  0.06207574165094978, 0.29912312531579505, -0.8061556962246889,
                                  0.44494704673394025};
static const double ctc_zero[12];

/* An SPD matrix and PyTorch 1.13's gradient of linalg_cholesky(A) (lower or
 * upper) for an output gradient of ones:
 *   A = torch.tensor([[4., 1., .5], [1., 3., .2], [.5, .2, 2.]], dtype=torch.float64, requires_grad=True)
 *   torch.autograd.grad(torch.linalg.cholesky(A), A, torch.ones(3, 3)) */
#define CHOL_A ((const double[]){4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2})
#define CHOL_G                                                                                                  \
  ((const double[]){0.19844470241382323, 0.14014740282787508, 0.13214757503366403, 0.14014740282787508,       \
                    0.29355563049445194, 0.2917095163880955, 0.13214757503366403, 0.29170951638809556,        \
                    0.3594003669544965})

static const gc_case cases[] = {
    /* ---- reductions ---- */
    {.name = "sum", .graph = G1(C_NONE "  %r : Tensor = aten::sum(%x, %none)\n" RET), .inputs = {"3x4"}},
    {"sum.dim keepdim=False, dims [0, -1]",
     G1(C_NONE C_F C_I("a", 0) C_I("b", -1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                            "  %r : Tensor = aten::sum(%x, %d, %f, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "sum.dim keepdim=True", .graph = G1(C_NONE C_T C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                                       "  %r : Tensor = aten::sum(%x, %d, %t, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "mean", .graph = G1(C_NONE "  %r : Tensor = aten::mean(%x, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "mean.dim", .graph = G1(C_NONE C_F C_I("a", -2) "  %d : int[] = prim::ListConstruct(%a)\n"
                                            "  %r : Tensor = aten::mean(%x, %d, %f, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "mean.dim keepdim", .graph = G1(C_NONE C_T C_I("a", 0) C_I("b", 2) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                                               "  %r : Tensor = aten::mean(%x, %d, %t, %none)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "prod", .graph = G1(C_NONE "  %r : Tensor = aten::prod(%x, %none)\n" RET), .inputs = {"2x3:0.5:1.5"}},
    {.name = "prod.dim_int", .graph = G1(C_NONE C_F C_I("a", 1) "  %r : Tensor = aten::prod(%x, %a, %f, %none)\n" RET),
     .inputs = {"2x3x2:0.5:1.5"}},
    {.name = "prod.dim_int keepdim, negative dim", .graph = G1(C_NONE C_T C_I("a", -1) "  %r : Tensor = aten::prod(%x, %a, %t, %none)\n" RET),
     .inputs = {"3x4:-1.5:1.5"}},
    {.name = "amax", .graph = G1(C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                "  %r : Tensor = aten::amax(%x, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "amin keepdim", .graph = G1(C_T C_I("a", -1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                         "  %r : Tensor = aten::amin(%x, %d, %t)\n" RET),
     .inputs = {"3x4"}},
    {.name = "max", .graph = G1("  %r : Tensor = aten::max(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "min", .graph = G1("  %r : Tensor = aten::min(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "max.dim", .graph = G1(C_F C_I("a", 1) "  %r : Tensor, %i : Tensor = aten::max(%x, %a, %f)\n"
  "  return (%r, %i)\n"), .inputs = {"3x4"}},
    {.name = "min.dim keepdim", .graph = G1(C_T C_I("a", 0) "  %r : Tensor, %i : Tensor = aten::min(%x, %a, %t)\n"
  "  return (%r, %i)\n"), .inputs = {"3x4"}},
    {.name = "var", .graph = G1(C_T "  %r : Tensor = aten::var(%x, %t)\n" RET), .inputs = {"3x4"}},
    {.name = "var.dim biased", .graph = G1(C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                          "  %r : Tensor = aten::var(%x, %d, %f, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "var.correction 2 keepdim", .graph = G1(C_T C_I("a", -1) C_I("c", 2) "  %d : int[] = prim::ListConstruct(%a)\n"
                                                                 "  %r : Tensor = aten::var(%x, %d, %c, %t)\n" RET),
     .inputs = {"3x5"}},
    {.name = "var_mean", .graph = G1(C_T "  %r : Tensor, %m : Tensor = aten::var_mean(%x, %t)\n  return (%r, %m)\n"),
     .inputs = {"3x4"}},
    {.name = "var_mean.dim keepdim", .graph = G1(C_T C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                 "  %r : Tensor, %m : Tensor = aten::var_mean(%x, %d, %f, %t)\n  return (%r, %m)\n"),
     .inputs = {"3x4"}},
    {.name = "var_mean.correction 2", .graph = G1(C_F C_I("a", -1) C_I("c", 2) "  %d : int[] = prim::ListConstruct(%a)\n"
                 "  %r : Tensor, %m : Tensor = aten::var_mean(%x, %d, %c, %f)\n  return (%r, %m)\n"),
     .inputs = {"3x5"}},
    {.name = "std_mean.dim", .graph = G1(C_T C_F C_I("a", 0) "  %d : int[] = prim::ListConstruct(%a)\n"
                 "  %r : Tensor, %m : Tensor = aten::std_mean(%x, %d, %t, %f)\n  return (%r, %m)\n"),
     .inputs = {"3x4"}},
    {.name = "std", .graph = G1(C_F "  %r : Tensor = aten::std(%x, %f)\n" RET), .inputs = {"3x4"}},
    {.name = "std.dim", .graph = G1(C_T C_F C_I("a", 0) "  %d : int[] = prim::ListConstruct(%a)\n"
                                       "  %r : Tensor = aten::std(%x, %d, %t, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "std.correction None", .graph = G1(C_NONE C_F "  %r : Tensor = aten::std(%x, %none, %none, %f)\n" RET), .inputs = {"3x4"}},
    {.name = "logsumexp", .graph = G1(C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                     "  %r : Tensor = aten::logsumexp(%x, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "cumsum", .graph = G1(C_NONE C_I("a", 1) "  %r : Tensor = aten::cumsum(%x, %a, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "cumprod", .graph = G1(C_NONE C_I("a", -1) "  %r : Tensor = aten::cumprod(%x, %a, %none)\n" RET), .inputs = {"3x4:0.5:1.5"}},
    {.name = "softmax", .graph = G1(C_NONE C_I("a", -1) "  %r : Tensor = aten::softmax(%x, %a, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "log_softmax", .graph = G1(C_NONE C_I("a", 0) "  %r : Tensor = aten::log_softmax(%x, %a, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "norm p=2", .graph = G1("  %p : int = prim::Constant[value=2]()\n  %r : Tensor = aten::norm(%x, %p)\n" RET), .inputs = {"3x4"}},
    {.name = "norm p=3 dim", .graph = G1(C_F "  %p : float = prim::Constant[value=3.]()\n" C_I("a", 1)
                        "  %d : int[] = prim::ListConstruct(%a)\n  %r : Tensor = aten::norm(%x, %p, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "norm p=1 dim keepdim", .graph = G1(C_T "  %p : int = prim::Constant[value=1]()\n" C_I("a", 0)
                                "  %d : int[] = prim::ListConstruct(%a)\n  %r : Tensor = aten::norm(%x, %p, %d, %t)\n" RET),
     .inputs = {"3x4"}},
    {.name = "frobenius_norm", .graph = G1(C_F C_I("a", 0) C_I("b", 1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                                      "  %r : Tensor = aten::frobenius_norm(%x, %d, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "linalg_vector_norm inf", .graph = G1(C_NONE C_F "  %p : float = prim::Constant[value=inf]()\n"
                                  "  %r : Tensor = aten::linalg_vector_norm(%x, %p, %none, %f, %none)\n" RET),
     .inputs = {"3x4"}},
    {.name = "layer_norm", .graph = G3(C_T "  %e : float = prim::Constant[value=1.0000000000000001e-05]()\n" C_I("n", 4)
                      "  %s : int[] = prim::ListConstruct(%n)\n"
                      "  %r : Tensor = aten::layer_norm(%x, %s, %y, %z, %e, %t)\n" RET),
     .inputs = {"3x4", "4", "4"}},
    {.name = "layer_norm 2 dims, no weight", .graph = G1(C_NONE C_T "  %e : float = prim::Constant[value=1.0000000000000001e-05]()\n"
                                       C_I("a", 3) C_I("b", 4) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                                       "  %r : Tensor = aten::layer_norm(%x, %s, %none, %none, %e, %t)\n" RET),
     .inputs = {"2x3x4"}},
    /* ---- linear algebra ---- */
    {.name = "mm", .graph = G2("  %r : Tensor = aten::mm(%x, %y)\n" RET), .inputs = {"3x4", "4x2"}},
    {.name = "bmm", .graph = G2("  %r : Tensor = aten::bmm(%x, %y)\n" RET), .inputs = {"2x3x4", "2x4x2"}},
    {.name = "matmul 2x2", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"3x4", "4x2"}},
    {.name = "matmul 1x1", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"4", "4"}},
    {.name = "matmul 1x3", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"4", "2x4x3"}},
    {.name = "matmul 3x1", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"2x3x4", "4"}},
    {.name = "matmul broadcast 3x2", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"2x3x4", "4x5"}},
    {.name = "matmul broadcast batch 4x3", .graph = G2("  %r : Tensor = aten::matmul(%x, %y)\n" RET), .inputs = {"2x1x3x4", "3x4x2"}},
    {.name = "addmm", .graph = G3("  %b : int = prim::Constant[value=2]()\n  %a : float = prim::Constant[value=0.5]()\n"
                 "  %r : Tensor = aten::addmm(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"2", "3x4", "4x2"}},
    {.name = "baddbmm", .graph = G3("  %b : int = prim::Constant[value=1]()\n  %a : int = prim::Constant[value=3]()\n"
                   "  %r : Tensor = aten::baddbmm(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"3x2", "2x3x4", "2x4x2"}},
    {.name = "linear", .graph = G3("  %r : Tensor = aten::linear(%x, %y, %z)\n" RET), .inputs = {"2x3x4", "5x4", "5"}},
    {.name = "linear no bias", .graph = G2(C_NONE "  %r : Tensor = aten::linear(%x, %y, %none)\n" RET), .inputs = {"4", "5x4"}},
    /* scaled_dot_product_attention: fusebox::sdpa_backward */
    {.name = "scaled_dot_product_attention causal, scale",
     .graph = G3(C_NONE C_T C_F "  %p : float = prim::Constant[value=0.]()\n"
                 "  %sc : float = prim::Constant[value=0.7]()\n"
                 "  %r : Tensor = aten::scaled_dot_product_attention(%x, %y, %z, %none, %p, %t, %sc, %f)\n" RET),
     .inputs = {"2x3x4", "2x5x4", "2x5x3"}},
    {.name = "scaled_dot_product_attention gqa",
     .graph = G3(C_NONE C_T C_F "  %p : float = prim::Constant[value=0.]()\n"
                 "  %r : Tensor = aten::scaled_dot_product_attention(%x, %y, %z, %none, %p, %f, %none, %t)\n" RET),
     .inputs = {"1x4x3x2", "1x2x4x2", "1x2x4x3"}},
    /* conv1d/2d.padding: fusebox::conv_padding_backward ("same" with an uneven total) */
    {.name = "conv2d padding='same', even kernel",
     .graph = G3(C_I("a", 1) "  %s : int[] = prim::ListConstruct(%a, %a)\n"
                 "  %pad : str = prim::Constant[value=\"same\"]()\n"
                 "  %r : Tensor = aten::conv2d(%x, %y, %z, %s, %pad, %s, %a)\n" RET),
     .inputs = {"1x2x4x5", "3x2x2x3", "3"}},
    /* convolutions: fusebox::conv_backward and fusebox::convolution_backward (transposed) */
    {.name = "conv3d stride, padding, groups",
     .graph = G3(C_I("a", 1) C_I("b", 2) C_I("c", 0) "  %s : int[] = prim::ListConstruct(%a, %b, %a)\n"
                 "  %p : int[] = prim::ListConstruct(%a, %c, %a)\n  %d : int[] = prim::ListConstruct(%a, %a, %b)\n"
                 "  %r : Tensor = aten::conv3d(%x, %y, %z, %s, %p, %d, %b)\n" RET),
     .inputs = {"1x4x3x4x5", "2x2x2x2x2", "2"}},
    {.name = "conv_transpose2d output_padding >= stride (below the dilation)",
     .graph = G3(C_I("a", 1) C_I("b", 2) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %p : int[] = prim::ListConstruct(%a, %a)\n  %d : int[] = prim::ListConstruct(%b, %a)\n"
                 "  %r : Tensor = aten::conv_transpose2d(%x, %y, %z, %s, %p, %p, %a, %d)\n" RET),
     .inputs = {"2x4x3x3", "4x3x2x3", "3"}},
    {.name = "conv_transpose2d stride 1 (a forward convolution)",
     .graph = G3(C_I("a", 1) "  %s : int[] = prim::ListConstruct(%a, %a)\n"
                 "  %z0 : int = prim::Constant[value=0]()\n"
                 "  %o : int[] = prim::ListConstruct(%z0, %z0)\n"
                 "  %r : Tensor = aten::conv_transpose2d(%x, %y, %z, %s, %s, %o, %a, %s)\n" RET),
     .inputs = {"1x3x4x3", "3x2x3x3", "2"}},
    {.name = "conv_transpose1d groups, output_padding, unbatched",
     .graph = G3(C_I("a", 1) C_I("b", 2) "  %s : int[] = prim::ListConstruct(%b)\n"
                 "  %p : int[] = prim::ListConstruct(%a)\n"
                 "  %r : Tensor = aten::conv_transpose1d(%x, %y, %z, %s, %p, %p, %b, %p)\n" RET),
     .inputs = {"4x5", "4x2x3", "4"}},
    {.name = "convolution transposed 3-D, no bias",
     .graph = G2(C_NONE C_T C_I("a", 1) C_I("b", 2) C_I("c", 0) "  %s : int[] = prim::ListConstruct(%b, %a, %a)\n"
                 "  %p : int[] = prim::ListConstruct(%c, %a, %c)\n  %d : int[] = prim::ListConstruct(%a)\n"
                 "  %o : int[] = prim::ListConstruct(%a, %c, %c)\n"
                 "  %r : Tensor = aten::convolution(%x, %y, %none, %s, %p, %d, %t, %o, %a)\n" RET),
     .inputs = {"1x2x2x3x2", "2x3x2x2x2"}},
    {.name = "_convolution", .graph = G3(C_F C_I("a", 1) C_I("b", 2) "  %s : int[] = prim::ListConstruct(%b)\n"
                                         "  %p : int[] = prim::ListConstruct(%a)\n"
                                         "  %r : Tensor = aten::_convolution(%x, %y, %z, %s, %p, %p, %f, %p, %a, "
                                         "%f, %f, %f, %f)\n" RET),
     .inputs = {"2x3x7", "4x3x3", "4"}},
    /* prelu (finite differences away from the kink at 0) */
    {.name = "prelu per channel", .graph = G2("  %r : Tensor = aten::prelu(%x, %y)\n" RET),
     .inputs = {"2x3x4", "3:0.1:0.5"}},
    {.name = "prelu one 0-d weight", .graph = G2("  %r : Tensor = aten::prelu(%x, %y)\n" RET), .inputs = {"3x4", "-"}},
    {.name = "dot", .graph = G2("  %r : Tensor = aten::dot(%x, %y)\n" RET), .inputs = {"4", "4"}},
    {.name = "mv", .graph = G2("  %r : Tensor = aten::mv(%x, %y)\n" RET), .inputs = {"3x4", "4"}},
    {.name = "outer", .graph = G2("  %r : Tensor = aten::outer(%x, %y)\n" RET), .inputs = {"3", "4"}},
    /* reductions and products of ops/list_reduce.h and list_linalg.h that compose other rows */
    {.name = "nansum dim [1]", .graph = G1(C_NONE C_F C_I("a", 1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                           "  %r : Tensor = aten::nansum(%x, %d, %f, %none)\n" RET),
     .inputs = {"3x4"}},
    {.name = "nansum of everything", .graph = G1(C_NONE C_F "  %r : Tensor = aten::nansum(%x, %none, %f, %none)\n" RET),
     .inputs = {"3x4"}},
    {.name = "nanmean dim [-1] keepdim", .graph = G1(C_NONE C_T C_I("a", -1) "  %d : int[] = prim::ListConstruct(%a)\n"
                                                     "  %r : Tensor = aten::nanmean(%x, %d, %t, %none)\n" RET),
     .inputs = {"3x4"}},
    {.name = "nanmean of everything", .graph = G1(C_NONE C_F "  %r : Tensor = aten::nanmean(%x, %none, %f, %none)\n" RET),
     .inputs = {"2x3x2"}},
    {.name = "aminmax dim 1", .graph = G1(C_F C_I("a", 1) "  %r : Tensor, %i : Tensor = aten::aminmax(%x, %a, %f)\n"
                                          "  return (%r, %i)\n"),
     .inputs = {"3x4"}},
    {.name = "aminmax of everything keepdim", .graph = G1(C_NONE C_T "  %r : Tensor, %i : Tensor = aten::aminmax(%x, %none, %t)\n"
                                                          "  return (%r, %i)\n"),
     .inputs = {"3x4"}},
    {.name = "msort", .graph = G1("  %r : Tensor = aten::msort(%x)\n" RET), .inputs = {"4x3"}},
    {.name = "tensordot one dim", .graph = G2(C_I("a", 2) C_I("b", 0) "  %da : int[] = prim::ListConstruct(%a)\n"
                                              "  %db : int[] = prim::ListConstruct(%b)\n"
                                              "  %r : Tensor = aten::tensordot(%x, %y, %da, %db)\n" RET),
     .inputs = {"2x3x4", "4x3x5"}},
    {.name = "tensordot two dims crossed", .graph = G2(C_I("a", 1) C_I("b", -1) C_I("c", 0)
                                                       "  %da : int[] = prim::ListConstruct(%a, %b)\n"
                                                       "  %db : int[] = prim::ListConstruct(%a, %c)\n"
                                                       "  %r : Tensor = aten::tensordot(%x, %y, %da, %db)\n" RET),
     .inputs = {"2x3x4", "4x3x5"}},
    {.name = "inner", .graph = G2("  %r : Tensor = aten::inner(%x, %y)\n" RET), .inputs = {"2x3x4", "5x4"}},
    {.name = "inner 0-d", .graph = G2("  %r : Tensor = aten::inner(%x, %y)\n" RET), .inputs = {"-", "2x3"}},
    {.name = "addmv beta alpha", .graph = G3(UPS_F("b", "0.5") UPS_F("a", "2.") "  %r : Tensor = aten::addmv(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"1", "3x4", "4"}},
    {.name = "addr beta alpha", .graph = G3(UPS_F("b", "-1.5") UPS_F("a", "0.5") "  %r : Tensor = aten::addr(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"5", "3", "5"}},
    {.name = "addbmm beta alpha", .graph = G3(UPS_F("b", "2.") UPS_F("a", "-1.") "  %r : Tensor = aten::addbmm(%x, %y, %z, %b, %a)\n" RET),
     .inputs = {"2x5", "4x2x3", "4x3x5"}},
    {.name = "linalg_cross broadcast", .graph = G2(C_I("a", -1) "  %r : Tensor = aten::linalg_cross(%x, %y, %a)\n" RET),
     .inputs = {"4x3", "1x3"}},
    {.name = "cross dim None", .graph = G2(C_NONE "  %r : Tensor = aten::cross(%x, %y, %none)\n" RET), .inputs = {"3x4", "3x4"}},
    {.name = "vdot", .graph = G2("  %r : Tensor = aten::vdot(%x, %y)\n" RET), .inputs = {"4", "4"}},
    {.name = "trapz.x 1-D x along dim 0", .graph = G2(C_I("a", 0) "  %r : Tensor = aten::trapz(%x, %y, %a)\n" RET),
     .inputs = {"4x3", "4"}},
    {.name = "trapz.x broadcast x", .graph = G2(C_I("a", -1) "  %r : Tensor = aten::trapz(%x, %y, %a)\n" RET),
     .inputs = {"2x3x4", "3x4"}},
    {.name = "trapezoid.x same shape", .graph = G2(C_I("a", 1) "  %r : Tensor = aten::trapezoid(%x, %y, %a)\n" RET),
     .inputs = {"3x5", "3x5"}},
    {.name = "trapz.dx", .graph = G1(UPS_F("d", "0.5") C_I("a", 1) "  %r : Tensor = aten::trapz(%x, %d, %a)\n" RET),
     .inputs = {"3x4"}},
    {.name = "trapezoid.dx one sample", .graph = G1(C_I("d", 2) C_I("a", 0) "  %r : Tensor = aten::trapezoid(%x, %d, %a)\n" RET),
     .inputs = {"1x4"}},
    {.name = "quantile.scalar linear dim 1",
     .graph = G1(C_F UPS_F("q", "0.3") C_I("a", 1) "  %m : str = prim::Constant[value=\"linear\"]()\n"
                 "  %r : Tensor = aten::quantile(%x, %q, %a, %f, %m)\n" RET),
     .inputs = {"3x6"}},
    {.name = "quantile.scalar midpoint of everything keepdim",
     .graph = G1(C_NONE C_T UPS_F("q", "0.5") "  %m : str = prim::Constant[value=\"midpoint\"]()\n"
                 "  %r : Tensor = aten::quantile(%x, %q, %none, %t, %m)\n" RET),
     .inputs = {"2x4"}},
    {.name = "nanquantile.scalar lower dim 0",
     .graph = G1(C_F UPS_F("q", "0.6") C_I("a", 0) "  %m : str = prim::Constant[value=\"lower\"]()\n"
                 "  %r : Tensor = aten::nanquantile(%x, %q, %a, %f, %m)\n" RET),
     .inputs = {"5x3"}},
    {.name = "renorm p=2 dim 0", .graph = G1(UPS_F("p", "2.") UPS_F("m", "1.") C_I("a", 0)
                                             "  %r : Tensor = aten::renorm(%x, %p, %a, %m)\n" RET),
     .inputs = {"3x4"}},
    {.name = "renorm p=3 dim -1", .graph = G1(UPS_F("p", "3.") UPS_F("m", "0.8") C_I("a", -1)
                                              "  %r : Tensor = aten::renorm(%x, %p, %a, %m)\n" RET),
     .inputs = {"2x3x2"}},
    {.name = "ger", .graph = G2("  %r : Tensor = aten::ger(%x, %y)\n" RET), .inputs = {"3", "4"}},
    /* ---- views and shape ops ---- */
    {.name = "view", .graph = G1(C_I("a", -1) "  %s : int[] = prim::ListConstruct(%a)\n  %r : Tensor = aten::view(%x, %s)\n" RET),
     .inputs = {"3x4"}},
    {.name = "reshape", .graph = G1(C_I("a", 2) C_I("b", -1) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                                            "  %r : Tensor = aten::reshape(%x, %s)\n" RET),
     .inputs = {"2x3x2"}},
    {.name = "view_as", .graph = G2("  %r : Tensor = aten::view_as(%x, %y)\n" RET), .inputs = {"3x4", "12"}},
    {.name = "flatten", .graph = G1(C_I("a", 1) C_I("b", -1) "  %r : Tensor = aten::flatten(%x, %a, %b)\n" RET), .inputs = {"2x3x4"}},
    {.name = "squeeze", .graph = G1("  %r : Tensor = aten::squeeze(%x)\n" RET), .inputs = {"3x1x4"}},
    {.name = "squeeze.dim", .graph = G1(C_I("a", -2) "  %r : Tensor = aten::squeeze(%x, %a)\n" RET), .inputs = {"3x1x4"}},
    {.name = "unsqueeze", .graph = G1(C_I("a", -1) "  %r : Tensor = aten::unsqueeze(%x, %a)\n" RET), .inputs = {"3x4"}},
    {.name = "transpose", .graph = G1(C_I("a", 0) C_I("b", -1) "  %r : Tensor = aten::transpose(%x, %a, %b)\n" RET), .inputs = {"2x3x4"}},
    {.name = "t", .graph = G1("  %r : Tensor = aten::t(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "permute", .graph = G1(C_I("a", 2) C_I("b", 0) C_I("c", 1) "  %d : int[] = prim::ListConstruct(%a, %b, %c)\n"
                                                       "  %r : Tensor = aten::permute(%x, %d)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "expand", .graph = G1(C_F C_I("a", 2) C_I("b", 3) C_I("c", -1) "  %s : int[] = prim::ListConstruct(%a, %b, %c)\n"
                                                           "  %r : Tensor = aten::expand(%x, %s, %f)\n" RET),
     .inputs = {"3x1"}},
    {.name = "expand_as", .graph = G2("  %r : Tensor = aten::expand_as(%x, %y)\n" RET), .inputs = {"1x4", "3x4"}},
    {.name = "contiguous", .graph = G1(C_I("m", 0) "  %r : Tensor = aten::contiguous(%x, %m)\n" RET), .inputs = {"3x4"}},
    {.name = "clone", .graph = G1(C_NONE "  %r : Tensor = aten::clone(%x, %none)\n" RET), .inputs = {"3x4"}},
    {.name = "select", .graph = G1(C_I("a", 1) C_I("i", -1) "  %r : Tensor = aten::select(%x, %a, %i)\n" RET), .inputs = {"3x4"}},
    {.name = "slice", .graph = G1(C_I("a", 1) C_I("s", 1) C_I("e", -1) C_I("k", 2) "  %r : Tensor = aten::slice(%x, %a, %s, %e, %k)\n" RET),
     .inputs = {"3x6"}},
    {.name = "slice None", .graph = G1(C_NONE C_I("a", 0) C_I("k", 1) "  %r : Tensor = aten::slice(%x, %a, %none, %none, %k)\n" RET),
     .inputs = {"3x6"}},
    {.name = "narrow negative start", .graph = G1(C_I("a", 1) C_I("s", -3) C_I("l", 2) "  %r : Tensor = aten::narrow(%x, %a, %s, %l)\n" RET),
     .inputs = {"3x5"}},
    {.name = "flip", .graph = G1(C_I("a", 0) C_I("b", -1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                         "  %r : Tensor = aten::flip(%x, %d)\n" RET),
     .inputs = {"3x4"}},
    {.name = "tril", .graph = G1(C_I("a", 0) "  %r : Tensor = aten::tril(%x, %a)\n" RET), .inputs = {"4x4"}},
    /* ---- the shape family's second batch ---- */
    {.name = "unfold overlapping", .graph = G1(C_I("d", 1) C_I("s", 3) C_I("t", 1) "  %r : Tensor = aten::unfold(%x, %d, %s, %t)\n" RET),
     .inputs = {"3x5"}},
    {.name = "unfold step > size", .graph = G1(C_I("d", -2) C_I("s", 2) C_I("t", 3) "  %r : Tensor = aten::unfold(%x, %d, %s, %t)\n" RET),
     .inputs = {"7x2"}},
    {.name = "unfold 0-d", .graph = G1(C_I("d", 0) C_I("s", 1) C_I("t", 1) "  %r : Tensor = aten::unfold(%x, %d, %s, %t)\n" RET),
     .inputs = {"-"}},
    {.name = "broadcast_to", .graph = G1(C_I("a", 2) C_I("b", 3) C_I("c", 4) "  %s : int[] = prim::ListConstruct(%a, %b, %c)\n"
                                                  "  %r : Tensor = aten::broadcast_to(%x, %s)\n" RET),
     .inputs = {"3x1"}},
    {.name = "atleast_1d 0-d", .graph = G1("  %r : Tensor = aten::atleast_1d(%x)\n" RET), .inputs = {"-"}},
    {.name = "atleast_2d 1-d", .graph = G1("  %r : Tensor = aten::atleast_2d(%x)\n" RET), .inputs = {"4"}},
    {.name = "atleast_3d 2-d", .graph = G1("  %r : Tensor = aten::atleast_3d(%x)\n" RET), .inputs = {"2x3"}},
    {.name = "flipud", .graph = G1("  %r : Tensor = aten::flipud(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "fliplr", .graph = G1("  %r : Tensor = aten::fliplr(%x)\n" RET), .inputs = {"3x4x2"}},
    {.name = "rot90 k=1", .graph = G1(C_I("k", 1) C_I("a", 0) C_I("b", 1) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                      "  %r : Tensor = aten::rot90(%x, %k, %d)\n" RET),
     .inputs = {"3x4"}},
    {.name = "rot90 k=-5 dims [2, 0]", .graph = G1(C_I("k", -5) C_I("a", 2) C_I("b", 0) "  %d : int[] = prim::ListConstruct(%a, %b)\n"
                                                   "  %r : Tensor = aten::rot90(%x, %k, %d)\n" RET),
     .inputs = {"2x3x4"}},
    {.name = "index_fill.int_Scalar", .graph = G2(C_I("d", 1) "  %v : float = prim::Constant[value=1.5]()\n"
                                                  "  %r : Tensor = aten::index_fill(%x, %d, %y, %v)\n" RET),
     .inputs = {"3x4", "3:-4:3:i64"}},
    {.name = "index_fill.int_Tensor, repeated index", .graph = G3(C_I("d", 0) "  %r : Tensor = aten::index_fill(%x, %d, %z, %y)\n" RET),
     .inputs = {"3x4", "-", "4:0:1:i64"}},
    {.name = "masked_scatter", .graph = G3("  %r : Tensor = aten::masked_scatter(%x, %y, %z)\n" RET),
     .inputs = {"3x4", "3x4:0:1:bool", "14"}, .seed = 3},
    {.name = "masked_scatter, self broadcast", .graph = G3("  %r : Tensor = aten::masked_scatter(%x, %y, %z)\n" RET),
     .inputs = {"4", "3x4:0:1:bool", "2x7"}, .seed = 5},
    {.name = "take_along_dim dim 1, broadcast", .graph = G2(C_I("d", 1) "  %r : Tensor = aten::take_along_dim(%x, %y, %d)\n" RET),
     .inputs = {"1x4", "3x5:0:3:i64"}},
    {.name = "take_along_dim flat", .graph = G2(C_NONE "  %r : Tensor = aten::take_along_dim(%x, %y, %none)\n" RET),
     .inputs = {"3x4", "2x5:0:11:i64"}},
    {.name = "kron 2-d x 2-d", .graph = G2("  %r : Tensor = aten::kron(%x, %y)\n" RET), .inputs = {"2x3", "3x2"}},
    {.name = "kron 1-d x 3-d", .graph = G2("  %r : Tensor = aten::kron(%x, %y)\n" RET), .inputs = {"3", "2x1x2"}},
    /* pdist (through aten::_pdist_backward) in each of PyTorch's cases of p; combinations */
    {.name = "pdist p=2", .graph = G1(UPS_F("p", "2.") "  %r : Tensor = aten::pdist(%x, %p)\n" RET), .inputs = {"4x3"}},
    {.name = "pdist p=1", .graph = G1(UPS_F("p", "1.") "  %r : Tensor = aten::pdist(%x, %p)\n" RET), .inputs = {"4x3"}},
    {.name = "pdist p=0.5", .graph = G1(UPS_F("p", "0.5") "  %r : Tensor = aten::pdist(%x, %p)\n" RET),
     .inputs = {"4x3"}},
    {.name = "pdist p=1.5", .graph = G1(UPS_F("p", "1.5") "  %r : Tensor = aten::pdist(%x, %p)\n" RET),
     .inputs = {"3x4"}},
    {.name = "pdist p=3", .graph = G1(UPS_F("p", "3.") "  %r : Tensor = aten::pdist(%x, %p)\n" RET), .inputs = {"4x3"}},
    {.name = "pdist p=inf", .graph = G1(UPS_F("p", "inf") "  %r : Tensor = aten::pdist(%x, %p)\n" RET),
     .inputs = {"4x3"}},
    {.name = "pdist p=0", .graph = G1(UPS_F("p", "0.") "  %r : Tensor = aten::pdist(%x, %p)\n" RET), .inputs = {"3x2"}},
    {.name = "_pdist_forward", .graph = G1(UPS_F("p", "2.") "  %r : Tensor = aten::_pdist_forward(%x, %p)\n" RET),
     .inputs = {"4x2"}},
    {.name = "combinations r=2", .graph = G1(C_F C_I("n", 2) "  %r : Tensor = aten::combinations(%x, %n, %f)\n" RET),
     .inputs = {"4"}},
    {.name = "combinations r=3 with replacement",
     .graph = G1(C_T C_I("n", 3) "  %r : Tensor = aten::combinations(%x, %n, %t)\n" RET), .inputs = {"3"}},
    {.name = "combinations r=0", .graph = G1(C_F C_I("n", 0) "  %r : Tensor = aten::combinations(%x, %n, %f)\n" RET),
     .inputs = {"3"}},
    {.name = "diff n=1", .graph = G1(C_NONE C_I("n", 1) C_I("d", -1) "  %r : Tensor = aten::diff(%x, %n, %d, %none, %none)\n" RET),
     .inputs = {"3x5"}},
    {.name = "diff n=3 dim 0", .graph = G1(C_NONE C_I("n", 3) C_I("d", 0) "  %r : Tensor = aten::diff(%x, %n, %d, %none, %none)\n" RET),
     .inputs = {"5x2"}},
    {.name = "diff n larger than the size", .graph = G1(C_NONE C_I("n", 9) C_I("d", 0) "  %r : Tensor = aten::diff(%x, %n, %d, %none, %none)\n" RET),
     .inputs = {"3x2"}},
    {.name = "diff prepend, append", .graph = G3(C_I("n", 2) C_I("d", 1) "  %r : Tensor = aten::diff(%x, %n, %d, %y, %z)\n" RET),
     .inputs = {"3x4", "3x1", "3x2"}},
    {.name = "take, negative and repeated", .graph = G2("  %r : Tensor = aten::take(%x, %y)\n" RET),
     .inputs = {"3x4", "2x5:-12:11:i64"}},
    {.name = "triu", .graph = G1(C_I("a", 1) "  %r : Tensor = aten::triu(%x, %a)\n" RET), .inputs = {"3x4"}},
    /* ---- indexing, repeated indices accumulate ---- */
    {.name = "index_select", .graph = G2(C_I("a", 1) "  %r : Tensor = aten::index_select(%x, %a, %y)\n" RET), .inputs = {"3x4", "5:0:3:i64"}},
    {.name = "gather", .graph = G2(C_F C_I("a", 1) "  %r : Tensor = aten::gather(%x, %a, %y, %f)\n" RET), .inputs = {"3x4", "3x6:0:3:i64"}},
    {.name = "index", .graph = G2("  %l : Tensor?[] = prim::ListConstruct(%y)\n  %r : Tensor = aten::index(%x, %l)\n" RET),
     .inputs = {"4x3", "6:0:3:i64"}},
    {.name = "embedding", .graph = G2(C_F C_I("p", -1) "  %r : Tensor = aten::embedding(%x, %y, %p, %f, %f)\n" RET),
     .inputs = {"5x3", "2x4:0:4:i64"}},
    {.name = "topk", .graph = G1(C_T C_I("k", 2) C_I("a", 1) "  %r : Tensor, %i : Tensor = aten::topk(%x, %k, %a, %t, %t)\n"
  "  return (%r, %i)\n"),
     .inputs = {"3x5"}},
    {.name = "sort", .graph = G1(C_F C_I("a", 0) "  %r : Tensor, %i : Tensor = aten::sort(%x, %a, %f)\n"
  "  return (%r, %i)\n"), .inputs = {"4x3"}},
    /* ---- one input element per output element (fusebox::*_backward rows) ---- */
    {.name = "constant_pad_nd, a negative pad crops",
     .graph = G1(C_I("a", 1) C_I("b", 2) C_I("c", -1) C_I("v", 0) "  %p : int[] = prim::ListConstruct(%a, %b, %c, %a)\n"
                 "  %r : Tensor = aten::constant_pad_nd(%x, %p, %v)\n" RET),
     .inputs = {"3x4"}},
    {.name = "pad reflect", .graph = G1(C_NONE C_I("a", 2) C_I("b", 1) "  %p : int[] = prim::ListConstruct(%a, %b)\n"
                                        "  %m : str = prim::Constant[value=\"reflect\"]()\n"
                                        "  %r : Tensor = aten::pad(%x, %p, %m, %none)\n" RET),
     .inputs = {"2x4"}},
    {.name = "pad replicate 2-D", .graph = G1(C_NONE C_I("a", 2) C_I("b", 1) "  %p : int[] = prim::ListConstruct(%a, %b, %b, %a)\n"
                                              "  %m : str = prim::Constant[value=\"replicate\"]()\n"
                                              "  %r : Tensor = aten::pad(%x, %p, %m, %none)\n" RET),
     .inputs = {"2x3x3"}},
    {.name = "pad circular", .graph = G1(C_NONE C_I("a", 3) C_I("b", 1) "  %p : int[] = prim::ListConstruct(%a, %b)\n"
                                         "  %m : str = prim::Constant[value=\"circular\"]()\n"
                                         "  %r : Tensor = aten::pad(%x, %p, %m, %none)\n" RET),
     .inputs = {"2x4"}},
    {.name = "repeat with a new leading dim", .graph = G1(C_I("a", 2) C_I("b", 1) C_I("c", 3) "  %p : int[] = prim::ListConstruct(%a, %b, %c)\n"
                                                          "  %r : Tensor = aten::repeat(%x, %p)\n" RET),
     .inputs = {"3x2"}},
    {.name = "roll two dims", .graph = G1(C_I("a", 1) C_I("b", -2) C_I("c", 0) C_I("d", 1) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                                          "  %e : int[] = prim::ListConstruct(%c, %d)\n"
                                          "  %r : Tensor = aten::roll(%x, %s, %e)\n" RET),
     .inputs = {"3x4"}},
    {.name = "roll flattened", .graph = G1(C_I("a", 5) "  %s : int[] = prim::ListConstruct(%a)\n"
                                           "  %e : int[] = prim::ListConstruct()\n"
                                           "  %r : Tensor = aten::roll(%x, %s, %e)\n" RET),
     .inputs = {"3x4"}},
    {.name = "repeat_interleave dim", .graph = G1(C_NONE C_I("k", 3) C_I("a", 1) "  %r : Tensor = aten::repeat_interleave(%x, %k, %a, %none)\n" RET),
     .inputs = {"2x3"}},
    {.name = "repeat_interleave flattened", .graph = G1(C_NONE C_I("k", 2) "  %r : Tensor = aten::repeat_interleave(%x, %k, %none, %none)\n" RET),
     .inputs = {"2x3"}},
    {.name = "glu", .graph = G1(C_I("a", -1) "  %r : Tensor = aten::glu(%x, %a)\n" RET), .inputs = {"3x4"}},
    {.name = "index_put accumulate, values broadcast",
     .graph = G3(C_T "  %l : Tensor?[] = prim::ListConstruct(%z)\n  %r : Tensor = aten::index_put(%x, %l, %y, %t)\n" RET),
     .inputs = {"4x3", "1x3", "5:0:3:i64"}},
    {.name = "index_put overwrite",
     .graph = G3(C_F "  %l : Tensor?[] = prim::ListConstruct(%z)\n  %r : Tensor = aten::index_put(%x, %l, %y, %f)\n" RET),
     .inputs = {"4x3", "2x3", "2:1:2:i64"}},
    {.name = "copy_ broadcast src", .graph = G2(C_F "  %r : Tensor = aten::copy_(%x, %y, %f)\n" RET), .inputs = {"3x4", "4"}},
    {.name = "sum_to_size", .graph = G1(C_I("a", 1) C_I("b", 4) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                                        "  %r : Tensor = aten::sum_to_size(%x, %s)\n" RET),
     .inputs = {"3x4"}},
    /* ---- losses, every reduction ---- */
    {.name = "mse_loss none", .graph = G2(C_I("k", 0) "  %r : Tensor = aten::mse_loss(%x, %y, %k)\n" RET), .inputs = {"3x4", "3x4"}},
    {.name = "mse_loss mean", .graph = G2(C_I("k", 1) "  %r : Tensor = aten::mse_loss(%x, %y, %k)\n" RET), .inputs = {"3x4", "3x4"}},
    {.name = "mse_loss sum", .graph = G2(C_I("k", 2) "  %r : Tensor = aten::mse_loss(%x, %y, %k)\n" RET), .inputs = {"3x4", "3x4"}},
    {.name = "l1_loss mean", .graph = G2(C_I("k", 1) "  %r : Tensor = aten::l1_loss(%x, %y, %k)\n" RET), .inputs = {"3x4", "3x4"}},
    {.name = "smooth_l1_loss sum beta 0.5",
     .graph = G2(C_I("k", 2) "  %b : float = prim::Constant[value=0.5]()\n  %r : Tensor = aten::smooth_l1_loss(%x, %y, %k, %b)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "smooth_l1_loss none beta 0",
     .graph = G2(C_I("k", 0) "  %b : float = prim::Constant[value=0.]()\n  %r : Tensor = aten::smooth_l1_loss(%x, %y, %k, %b)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "huber_loss mean delta 0.7",
     .graph = G2(C_I("k", 1) "  %b : float = prim::Constant[value=0.7]()\n  %r : Tensor = aten::huber_loss(%x, %y, %k, %b)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "binary_cross_entropy_with_logits mean",
     .graph = G2(C_NONE C_I("k", 1) "  %r : Tensor = aten::binary_cross_entropy_with_logits(%x, %y, %none, %none, %k)\n" RET),
     .inputs = {"3x4", "3x4:0:1"}},
    {.name = "binary_cross_entropy_with_logits weight, pos_weight, none",
     /* weights from integers: the harness checks every floating input */
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 0) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %r : Tensor = aten::binary_cross_entropy_with_logits(%x, %y, %w, %w, %k)\n" RET),
     .inputs = {"3x4", "3x4:0:1", "4:1:3:i64"}},
    /* ---- scatter, masked_select ---- */
    /* unique indices per column (two rows of a permutation): the formula
     * gives every src element the gradient of its slot, right only when no
     * two src elements write the same slot */
    {.name = "scatter.src, unique indices",
     .graph = G3(C_F C_I("zero", 0) C_I("two", 2) "  %p : Tensor = aten::argsort(%z, %zero, %f)\n"
                 "  %i : Tensor = aten::narrow(%p, %zero, %zero, %two)\n"
                 "  %r : Tensor = aten::scatter(%x, %zero, %i, %y)\n" RET),
     .inputs = {"3x4", "2x4", "3x4:0:9:i64"}},
    {.name = "scatter.value dim 1",
     .graph = G2(C_I("one", 1) "  %v : float = prim::Constant[value=1.5]()\n"
                 "  %r : Tensor = aten::scatter(%x, %one, %y, %v)\n" RET),
     .inputs = {"3x4", "3x2:0:3:i64"}},
    {.name = "scatter_add, repeated indices",
     .graph = G3(C_I("zero", 0) "  %r : Tensor = aten::scatter_add(%x, %zero, %z, %y)\n" RET),
     .inputs = {"3x4", "4x4", "4x4:0:2:i64"}},
    {.name = "masked_select, mask broadcast", .graph = G2("  %r : Tensor = aten::masked_select(%x, %y)\n" RET),
     .inputs = {"3x4", "4:0:1:bool"}, .seed = 3},
    {.name = "masked_select, self broadcast", .graph = G2("  %r : Tensor = aten::masked_select(%x, %y)\n" RET),
     .inputs = {"4", "3x4:0:1:bool"}, .seed = 5},
    /* ---- dropout (the harness runs every forward with the same seed) ---- */
    {.name = "dropout eval", .graph = G1(C_F "  %p : float = prim::Constant[value=0.4]()\n"
                                         "  %r : Tensor = aten::dropout(%x, %p, %f)\n" RET),
     .inputs = {"3x4"}},
    {.name = "dropout train p=0.4", .graph = G1(C_T "  %p : float = prim::Constant[value=0.4]()\n"
                                                "  %r : Tensor = aten::dropout(%x, %p, %t)\n" RET),
     .inputs = {"6x5:0.5:2"}},
    {.name = "dropout train, p a graph value", .graph = G1(C_T "  %p0 : float = prim::Constant[value=0.2]()\n"
                                                           "  %p : float = aten::mul(%p0, %p0)\n"
                                                           "  %r : Tensor = aten::dropout(%x, %p, %t)\n" RET),
     .inputs = {"6x5:-2:-0.5"}},
    /* ---- normalizations (running stats from integers: no gradient) ---- */
    {.name = "batch_norm eval, running stats",
     .graph = "graph(%x : Tensor, %w : Tensor, %b : Tensor, %mi : Tensor, %vi : Tensor):\n" C_NONE C_F C_T
              C_I("f64", 7) "  %m : Tensor = aten::to(%mi, %f64, %f, %f, %none)\n"
              "  %v : Tensor = aten::to(%vi, %f64, %f, %f, %none)\n"
              "  %mo : float = prim::Constant[value=0.1]()\n  %eps : float = prim::Constant[value=0.001]()\n"
              "  %r : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %f, %mo, %eps, %t)\n" RET,
     .inputs = {"4x3x2", "3", "3", "3:-1:1:i64", "3:1:3:i64"}},
    {.name = "batch_norm train, no running stats, no weight",
     .graph = G1(C_NONE C_T "  %mo : float = prim::Constant[value=0.1]()\n  %eps : float = prim::Constant[value=0.00001]()\n"
                 "  %r : Tensor = aten::batch_norm(%x, %none, %none, %none, %none, %t, %mo, %eps, %t)\n" RET),
     .inputs = {"4x3x2"}},
    {.name = "batch_norm train 2-D, running stats",
     .graph = "graph(%x : Tensor, %w : Tensor, %b : Tensor, %mi : Tensor, %vi : Tensor):\n" C_NONE C_F C_T
              C_I("f64", 7) "  %m : Tensor = aten::to(%mi, %f64, %f, %f, %none)\n"
              "  %v : Tensor = aten::to(%vi, %f64, %f, %f, %none)\n"
              "  %mo : float = prim::Constant[value=0.1]()\n  %eps : float = prim::Constant[value=0.00001]()\n"
              "  %r : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %t, %mo, %eps, %t)\n" RET,
     .inputs = {"5x3", "3", "3", "3:-1:1:i64", "3:1:3:i64"}},
    {.name = "group_norm 2 groups, weight and bias",
     .graph = G3(C_T C_I("g", 2) "  %eps : float = prim::Constant[value=0.00001]()\n"
                 "  %r : Tensor = aten::group_norm(%x, %g, %y, %z, %eps, %t)\n" RET),
     .inputs = {"2x4x3", "4", "4"}},
    {.name = "group_norm 4-D, no weight",
     .graph = G1(C_NONE C_T C_I("g", 3) "  %eps : float = prim::Constant[value=0.00001]()\n"
                 "  %r : Tensor = aten::group_norm(%x, %g, %none, %none, %eps, %t)\n" RET),
     .inputs = {"2x6x2x2"}},
    /* ---- distances ---- */
    {.name = "cdist p=2, batch broadcast", .graph = G2(C_NONE "  %p : float = prim::Constant[value=2.]()\n"
                                                       "  %r : Tensor = aten::cdist(%x, %y, %p, %none)\n" RET),
     .inputs = {"2x3x4", "1x5x4"}},
    {.name = "cdist p=1", .graph = G2(C_NONE "  %p : float = prim::Constant[value=1.]()\n"
                                      "  %r : Tensor = aten::cdist(%x, %y, %p, %none)\n" RET),
     .inputs = {"3x4", "5x4"}},
    {.name = "cdist p=inf", .graph = G2(C_NONE "  %p : float = prim::Constant[value=inf]()\n"
                                        "  %r : Tensor = aten::cdist(%x, %y, %p, %none)\n" RET),
     .inputs = {"3x4", "5x4"}},
    {.name = "cdist p=3", .graph = G2(C_NONE "  %p : float = prim::Constant[value=3.]()\n"
                                      "  %r : Tensor = aten::cdist(%x, %y, %p, %none)\n" RET),
     .inputs = {"3x4", "2x4"}},
    {.name = "cosine_similarity dim 1, broadcast",
     .graph = G2(C_I("d", 1) "  %eps : float = prim::Constant[value=1e-08]()\n"
                 "  %r : Tensor = aten::cosine_similarity(%x, %y, %d, %eps)\n" RET),
     .inputs = {"3x4", "1x4"}},
    {.name = "cosine_similarity dim -1, 3-D",
     .graph = G2(C_I("d", -1) "  %eps : float = prim::Constant[value=1e-08]()\n"
                 "  %r : Tensor = aten::cosine_similarity(%x, %y, %d, %eps)\n" RET),
     .inputs = {"2x3x4", "2x3x4"}},
    /* ---- classification losses ---- */
    {.name = "binary_cross_entropy mean",
     .graph = G2(C_NONE C_I("k", 1) "  %r : Tensor = aten::binary_cross_entropy(%x, %y, %none, %k)\n" RET),
     .inputs = {"3x4:0.1:0.9", "3x4:0:1"}},
    {.name = "binary_cross_entropy weight, none",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 0) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %r : Tensor = aten::binary_cross_entropy(%x, %y, %w, %k)\n" RET),
     .inputs = {"3x4:0.1:0.9", "3x4:0:1", "4:1:3:i64"}},
    {.name = "nll_loss weight, mean, ignore_index",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 1) C_I("ii", 2) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %r : Tensor = aten::nll_loss(%x, %y, %w, %k, %ii)\n" RET),
     .inputs = {"6x5", "6:0:4:i64", "5:1:3:i64"}, .seed = 7},
    {.name = "nll_loss weight, mean from a graph value (known at run time only)",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("one", 1) C_I("ii", 2) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %k : int = aten::mul(%one, %one)\n"
                 "  %r : Tensor = aten::nll_loss(%x, %y, %w, %k, %ii)\n" RET),
     .inputs = {"6x5", "6:0:4:i64", "5:1:3:i64"}, .seed = 7},
    {.name = "nll_loss none from a graph value",
     .graph = G2(C_NONE C_I("zero", 0) C_I("ii", -100) "  %k : int = aten::mul(%zero, %zero)\n"
                 "  %r : Tensor = aten::nll_loss(%x, %y, %none, %k, %ii)\n" RET),
     .inputs = {"4x3", "4:0:2:i64"}},
    {.name = "nll_loss 1-D sum", .graph = G2(C_NONE C_I("k", 2) C_I("ii", -100) "  %r : Tensor = aten::nll_loss(%x, %y, %none, %k, %ii)\n" RET),
     .inputs = {"5", "-:0:4:i64"}},
    {.name = "nll_loss_nd none", .graph = G2(C_NONE C_I("k", 0) C_I("ii", 1) "  %r : Tensor = aten::nll_loss_nd(%x, %y, %none, %k, %ii)\n" RET),
     .inputs = {"2x4x3", "2x3:0:3:i64"}},
    {.name = "cross_entropy_loss weight, mean, ignore_index, label_smoothing",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 1) C_I("ii", 1) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %ls : float = prim::Constant[value=0.1]()\n"
                 "  %r : Tensor = aten::cross_entropy_loss(%x, %y, %w, %k, %ii, %ls)\n" RET),
     .inputs = {"6x5", "6:0:4:i64", "5:1:3:i64"}, .seed = 7},
    {.name = "cross_entropy_loss mean, ignore_index, label_smoothing, no weight",
     .graph = G2(C_NONE C_I("k", 1) C_I("ii", 0) "  %ls : float = prim::Constant[value=0.2]()\n"
                 "  %r : Tensor = aten::cross_entropy_loss(%x, %y, %none, %k, %ii, %ls)\n" RET),
     .inputs = {"6x5", "6:0:4:i64"}, .seed = 7},
    {.name = "cross_entropy_loss nd none, weight",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 0) C_I("ii", -100) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %ls : float = prim::Constant[value=0.3]()\n"
                 "  %r : Tensor = aten::cross_entropy_loss(%x, %y, %w, %k, %ii, %ls)\n" RET),
     .inputs = {"2x4x3", "2x3:0:3:i64", "4:1:3:i64"}},
    {.name = "cross_entropy_loss sum, 1-D", .graph = G2(C_NONE C_I("k", 2) C_I("ii", -100) "  %ls : float = prim::Constant[value=0.]()\n"
                 "  %r : Tensor = aten::cross_entropy_loss(%x, %y, %none, %k, %ii, %ls)\n" RET),
     .inputs = {"5", "-:0:4:i64"}},
    /* ---- views: movedim/moveaxis, swapaxes/swapdims, unflatten, diagonal ---- */
    {.name = "movedim.int 0 -> -1",
     .graph = G1(C_I("a", 0) C_I("b", -1) "  %r : Tensor = aten::movedim(%x, %a, %b)\n" RET), .inputs = {"2x3x4"}},
    {.name = "movedim.intlist [0, 2] -> [2, 0]",
     .graph = G1(C_I("a", 0) C_I("b", 2) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %d : int[] = prim::ListConstruct(%b, %a)\n"
                 "  %r : Tensor = aten::movedim(%x, %s, %d)\n" RET),
     .inputs = {"2x3x4x2"}},
    {.name = "moveaxis.int 1 -> -1",
     .graph = G1(C_I("a", 1) C_I("b", -1) "  %r : Tensor = aten::moveaxis(%x, %a, %b)\n" RET), .inputs = {"3x2x4"}},
    {.name = "moveaxis.intlist [1] -> [0]",
     .graph = G1(C_I("a", 1) C_I("b", 0) "  %s : int[] = prim::ListConstruct(%a)\n"
                 "  %d : int[] = prim::ListConstruct(%b)\n"
                 "  %r : Tensor = aten::moveaxis(%x, %s, %d)\n" RET),
     .inputs = {"3x2x4"}},
    {.name = "swapaxes",
     .graph = G1(C_I("a", 0) C_I("b", -1) "  %r : Tensor = aten::swapaxes(%x, %a, %b)\n" RET), .inputs = {"3x2x2"}},
    {.name = "swapdims",
     .graph = G1(C_I("a", 0) C_I("b", 1) "  %r : Tensor = aten::swapdims(%x, %a, %b)\n" RET), .inputs = {"2x5"}},
    {.name = "unflatten.int dim 1 into [2, -1]",
     .graph = G1(C_I("d", 1) C_I("a", 2) C_I("b", -1) "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::unflatten(%x, %d, %s)\n" RET),
     .inputs = {"3x6"}},
    {.name = "diagonal offset 1 over dims (2, 0)",
     .graph = G1(C_I("o", 1) C_I("a", 2) C_I("b", 0) "  %r : Tensor = aten::diagonal(%x, %o, %a, %b)\n" RET),
     .inputs = {"3x2x4"}},
    {.name = "diagonal offset -1 (dims 0, 1)",
     .graph = G1(C_I("o", -1) C_I("a", 0) C_I("b", 1) "  %r : Tensor = aten::diagonal(%x, %o, %a, %b)\n" RET),
     .inputs = {"4x3"}},
    /* ---- trace, diag, diag_embed, diagflat, einsum diagonals ---- */
    {.name = "trace of a 3x4", .graph = G1("  %r : Tensor = aten::trace(%x)\n" RET), .inputs = {"3x4"}},
    {.name = "diag of a vector, offset 1",
     .graph = G1(C_I("k", 1) "  %r : Tensor = aten::diag(%x, %k)\n" RET), .inputs = {"3"}},
    {.name = "diag of a matrix, offset -1",
     .graph = G1(C_I("k", -1) "  %r : Tensor = aten::diag(%x, %k)\n" RET), .inputs = {"4x3"}},
    {.name = "diag_embed offset -1 into dims (0, 2)",
     .graph = G1(C_I("k", -1) C_I("a", 0) C_I("b", 2) "  %r : Tensor = aten::diag_embed(%x, %k, %a, %b)\n" RET),
     .inputs = {"2x3"}},
    {.name = "diagflat offset 2",
     .graph = G1(C_I("k", 2) "  %r : Tensor = aten::diagflat(%x, %k)\n" RET), .inputs = {"2x2"}},
    {.name = "index_add along dim 1 with a repeated index, alpha 2",
     .graph = "graph(%x : Tensor, %i : Tensor, %s : Tensor):\n"
              "  %d : int = prim::Constant[value=1]()\n"
              "  %a : int = prim::Constant[value=2]()\n"
              "  %r : Tensor = aten::index_add(%x, %d, %i, %s, %a)\n" RET,
     .inputs = {"2x4", "3:0:3:i64", "2x3"}},
    {.name = "rrelu in eval (slope (0.1 + 0.3) / 2)",
     .graph = G1(C_NONE "  %lo : float = prim::Constant[value=0.1]()\n  %hi : float = prim::Constant[value=0.3]()\n"
                 "  %f : bool = prim::Constant[value=0]()\n"
                 "  %r : Tensor = aten::rrelu(%x, %lo, %hi, %f, %none)\n" RET),
     .inputs = {"3x4"}},
    {.name = "bilinear with a bias, a 3-D input",
     .graph = "graph(%x : Tensor, %y : Tensor, %w : Tensor, %b : Tensor):\n"
              "  %r : Tensor = aten::bilinear(%x, %y, %w, %b)\n" RET,
     .inputs = {"2x2x3", "2x2x4", "5x3x4", "5"}},
    {.name = "bilinear without a bias",
     .graph = "graph(%x : Tensor, %y : Tensor, %w : Tensor):\n" C_NONE
              "  %r : Tensor = aten::bilinear(%x, %y, %w, %none)\n" RET,
     .inputs = {"3x2", "3x3", "2x2x3"}},
    {.name = "logaddexp, broadcast", .graph = G2("  %r : Tensor = aten::logaddexp(%x, %y)\n" RET),
     .inputs = {"3x4", "4"}},
    {.name = "logaddexp2", .graph = G2("  %r : Tensor = aten::logaddexp2(%x, %y)\n" RET), .inputs = {"2x3", "2x1"}},
    {.name = "kthvalue k=2 along dim 1",
     .graph = G1(C_I("k", 2) C_I("d", 1) "  %f : bool = prim::Constant[value=0]()\n"
                 "  %r : Tensor, %i : Tensor = aten::kthvalue(%x, %k, %d, %f)\n  return (%r, %i)\n"),
     .inputs = {"3x4"}},
    {.name = "median.dim keepdim",
     .graph = G1(C_I("d", 0) "  %t : bool = prim::Constant[value=1]()\n"
                 "  %r : Tensor, %i : Tensor = aten::median(%x, %d, %t)\n  return (%r, %i)\n"),
     .inputs = {"4x3"}},
    {.name = "median of every element", .graph = G1("  %r : Tensor = aten::median(%x)\n" RET), .inputs = {"3x3"}},
    /* ---- decompositions: inverse, determinants, solve, cholesky ---- */
    {.name = "linalg_inv of a batch", .graph = G1("  %r : Tensor = aten::linalg_inv(%x)\n" RET), .inputs = {"2x3x3"}},
    {.name = "inverse", .graph = G1("  %r : Tensor = aten::inverse(%x)\n" RET), .inputs = {"4x4"}},
    {.name = "det of a batch", .graph = G1("  %r : Tensor = aten::det(%x)\n" RET), .inputs = {"2x3x3"}},
    {.name = "linalg_det", .graph = G1("  %r : Tensor = aten::linalg_det(%x)\n" RET), .inputs = {"3x3"}},
    {.name = "slogdet's logabsdet",
     .graph = G1("  %s : Tensor, %r : Tensor = aten::slogdet(%x)\n  return (%s, %r)\n"), .inputs = {"2x3x3"}},
    {.name = "linalg_solve, a matrix right-hand side with broadcast batch dims",
     .graph = G2("  %t : bool = prim::Constant[value=1]()\n"
                 "  %r : Tensor = aten::linalg_solve(%x, %y, %t)\n" RET),
     .inputs = {"2x3x3", "3x2"}},
    {.name = "linalg_solve, a batch of vectors",
     .graph = G2("  %t : bool = prim::Constant[value=1]()\n"
                 "  %r : Tensor = aten::linalg_solve(%x, %y, %t)\n" RET),
     .inputs = {"2x3x3", "2x3"}},
    {.name = "linalg_norm, ord None over every element",
     .graph = G1(C_NONE "  %f : bool = prim::Constant[value=0]()\n"
                 "  %r : Tensor = aten::linalg_norm(%x, %none, %none, %f, %none)\n" RET),
     .inputs = {"2x3"}},
    {.name = "linalg_norm, ord 3 over dim 1",
     .graph = G1(C_NONE C_I("d", 1) "  %three : float = prim::Constant[value=3.]()\n"
                 "  %t : bool = prim::Constant[value=1]()\n"
                 "  %l : int[] = prim::ListConstruct(%d)\n"
                 "  %r : Tensor = aten::linalg_norm(%x, %three, %l, %t, %none)\n" RET),
     .inputs = {"2x3x2"}},
    {.name = "linalg_matrix_norm.str_ord fro over dims (0, 2)",
     .graph = G1(C_NONE C_I("a", 0) C_I("b", 2) "  %fro : str = prim::Constant[value=\"fro\"]()\n"
                 "  %f : bool = prim::Constant[value=0]()\n"
                 "  %l : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::linalg_matrix_norm(%x, %fro, %l, %f, %none)\n" RET),
     .inputs = {"2x3x2"}},
    /* cholesky: golden (finite differences of A's upper triangle say 0, the gradient is symmetrized) */
    {.name = "linalg_cholesky (lower), PyTorch's gradient",
     .graph = G1("  %f : bool = prim::Constant[value=0]()\n  %r : Tensor = aten::linalg_cholesky(%x, %f)\n" RET),
     .inputs = {"3x3"}, .values = {CHOL_A}, .expect = {CHOL_G}},
    {.name = "cholesky upper, PyTorch's gradient",
     .graph = G1("  %t : bool = prim::Constant[value=1]()\n  %r : Tensor = aten::cholesky(%x, %t)\n" RET),
     .inputs = {"3x3"}, .values = {CHOL_A}, .expect = {CHOL_G}},
    /* ---- upsampling (every mode, .vec and plain overloads), pixel shuffle, adaptive max pooling ---- */
    {.name = "_upsample_nearest_exact2d.vec scale_factors [1.7, 0.6]",
     .graph = G1(C_NONE UPS_F("a", "1.7") UPS_F("b", "0.6") "  %s : float[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::_upsample_nearest_exact2d(%x, %none, %s)\n" RET),
     .inputs = {"1x2x3x5"}},
    {.name = "_upsample_nearest_exact1d size [7]",
     .graph = G1(C_NONE C_I("o", 7) "  %l : int[] = prim::ListConstruct(%o)\n"
                 "  %r : Tensor = aten::_upsample_nearest_exact1d(%x, %l, %none)\n" RET),
     .inputs = {"2x2x3"}},
    {.name = "upsample_nearest2d.vec scale_factors [1.7, 2.0]",
     .graph = G1(C_NONE UPS_F("a", "1.7") UPS_F("b", "2.") "  %s : float[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::upsample_nearest2d(%x, %none, %s)\n" RET),
     .inputs = {"1x2x3x4"}},
    {.name = "upsample_nearest1d size [7]",
     .graph = G1(C_NONE C_I("o", 7) "  %l : int[] = prim::ListConstruct(%o)\n"
                 "  %r : Tensor = aten::upsample_nearest1d(%x, %l, %none)\n" RET),
     .inputs = {"2x2x3"}},
    {.name = "upsample_nearest3d.vec size [3, 4, 5]",
     .graph = G1(C_NONE C_I("a", 3) C_I("b", 4) C_I("c", 5) "  %l : int[] = prim::ListConstruct(%a, %b, %c)\n"
                 "  %r : Tensor = aten::upsample_nearest3d(%x, %l, %none)\n" RET),
     .inputs = {"1x1x2x3x2"}},
    {.name = "upsample_linear1d.vec align_corners, size [7]",
     .graph = G1(C_NONE C_T C_I("o", 7) "  %l : int[] = prim::ListConstruct(%o)\n"
                 "  %r : Tensor = aten::upsample_linear1d(%x, %l, %t, %none)\n" RET),
     .inputs = {"2x2x4"}},
    {.name = "upsample_bilinear2d.vec scale_factors [1.5, 2.5]",
     .graph = G1(C_NONE C_F UPS_F("a", "1.5") UPS_F("b", "2.5") "  %s : float[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::upsample_bilinear2d(%x, %none, %f, %s)\n" RET),
     .inputs = {"1x2x3x4"}},
    {.name = "upsample_bilinear2d align_corners, size [5, 3] (fewer columns)",
     .graph = G1(C_NONE C_T C_I("a", 5) C_I("b", 3) "  %l : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::upsample_bilinear2d(%x, %l, %t, %none, %none)\n" RET),
     .inputs = {"2x1x3x5"}},
    {.name = "upsample_trilinear3d.vec scale_factors [2, 1.5, 1]",
     .graph = G1(C_NONE C_F UPS_F("a", "2.") UPS_F("b", "1.5") UPS_F("c", "1.")
                 "  %s : float[] = prim::ListConstruct(%a, %b, %c)\n"
                 "  %r : Tensor = aten::upsample_trilinear3d(%x, %none, %f, %s)\n" RET),
     .inputs = {"1x1x2x3x2"}},
    {.name = "upsample_bicubic2d.vec size [6, 7]",
     .graph = G1(C_NONE C_F C_I("a", 6) C_I("b", 7) "  %l : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::upsample_bicubic2d(%x, %l, %f, %none)\n" RET),
     .inputs = {"1x2x3x4"}},
    {.name = "upsample_bicubic2d align_corners, size [5, 5], scales_h 2.0",
     .graph = G1(C_NONE C_T C_I("a", 5) C_I("b", 5) UPS_F("sh", "2.") "  %l : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor = aten::upsample_bicubic2d(%x, %l, %t, %sh, %none)\n" RET),
     .inputs = {"1x1x4x3"}},
    {.name = "pixel_shuffle 2",
     .graph = G1(C_I("k", 2) "  %r : Tensor = aten::pixel_shuffle(%x, %k)\n" RET), .inputs = {"2x8x2x3"}},
    {.name = "pixel_unshuffle 2",
     .graph = G1(C_I("k", 2) "  %r : Tensor = aten::pixel_unshuffle(%x, %k)\n" RET), .inputs = {"1x2x4x6"}},
    {.name = "adaptive_max_pool2d [3, 2]",
     .graph = G1(C_I("a", 3) C_I("b", 2) "  %l : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor, %i : Tensor = aten::adaptive_max_pool2d(%x, %l)\n"
                 "  return (%r, %i)\n"),
     .inputs = {"2x3x5x7"}},
    {.name = "adaptive_max_pool2d [4, 5] of a 3-D input (windows overlap)",
     .graph = G1(C_I("a", 4) C_I("b", 5) "  %l : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %r : Tensor, %i : Tensor = aten::adaptive_max_pool2d(%x, %l)\n"
                 "  return (%r, %i)\n"),
     .inputs = {"2x3x3"}},
    {.name = "adaptive_max_pool1d [3]",
     .graph = G1(C_I("a", 3) "  %l : int[] = prim::ListConstruct(%a)\n"
                 "  %r : Tensor, %i : Tensor = aten::adaptive_max_pool1d(%x, %l)\n"
                 "  return (%r, %i)\n"),
     .inputs = {"2x3x8"}},
    /* ---- tile, shrinks, scans ---- */
    {.name = "tile, dims shorter than the rank", .graph = G1(C_I("a", 3) "  %d : int[] = prim::ListConstruct(%a)\n"
                                                             "  %r : Tensor = aten::tile(%x, %d)\n" RET),
     .inputs = {"2x3"}},
    {.name = "tile, dims longer than the rank", .graph = G1(C_I("a", 2) C_I("b", 1) "  %d : int[] = prim::ListConstruct(%a, %b, %a)\n"
                                                            "  %r : Tensor = aten::tile(%x, %d)\n" RET),
     .inputs = {"2x3"}},
    {.name = "hardshrink", .graph = G1("  %l : float = prim::Constant[value=0.7]()\n  %r : Tensor = aten::hardshrink(%x, %l)\n" RET),
     .inputs = {"4x5"}},
    {.name = "softshrink", .graph = G1("  %l : float = prim::Constant[value=0.7]()\n  %r : Tensor = aten::softshrink(%x, %l)\n" RET),
     .inputs = {"4x5"}},
    {.name = "cummax dim 1", .graph = G1(C_I("a", 1) "  %r : Tensor, %i : Tensor = aten::cummax(%x, %a)\n  return (%r, %i)\n"),
     .inputs = {"3x5"}},
    {.name = "cummin dim -2", .graph = G1(C_I("a", -2) "  %r : Tensor, %i : Tensor = aten::cummin(%x, %a)\n  return (%r, %i)\n"),
     .inputs = {"4x2x3"}},
    {.name = "logcumsumexp dim 1", .graph = G1(C_I("a", 1) "  %r : Tensor = aten::logcumsumexp(%x, %a)\n" RET), .inputs = {"3x5:-4:4"}},
    {.name = "logcumsumexp dim 0, 0-d", .graph = G1(C_I("a", 0) "  %r : Tensor = aten::logcumsumexp(%x, %a)\n" RET), .inputs = {"-"}},
    /* ---- embedding_bag: bags [0, 3), [3, 6), [6, 9) of 9 indices, or with include_last_offset [0, 3), [3, 6) ---- */
    {.name = "embedding_bag sum, per_sample_weights",
     .graph = G3(C_NONE C_F C_I("z0", 0) C_I("n", 9) C_I("s", 3) C_I("m", 0)
                 "  %o : Tensor = aten::arange(%z0, %n, %s, %none, %none, %none, %none)\n"
                 "  %r : Tensor, %r1 : Tensor, %r2 : Tensor, %r3 : Tensor = "
                 "aten::embedding_bag(%x, %y, %o, %f, %m, %f, %z, %f, %none)\n" RET4),
     .inputs = {"6x4", "9:0:5:i64", "9"}},
    {.name = "embedding_bag mean, padding_idx 2",
     .graph = G2(C_NONE C_F C_I("z0", 0) C_I("n", 9) C_I("s", 3) C_I("m", 1) C_I("p", 2)
                 "  %o : Tensor = aten::arange(%z0, %n, %s, %none, %none, %none, %none)\n"
                 "  %r : Tensor, %r1 : Tensor, %r2 : Tensor, %r3 : Tensor = "
                 "aten::embedding_bag(%x, %y, %o, %f, %m, %f, %none, %f, %p)\n" RET4),
     .inputs = {"6x4", "9:0:5:i64"}, .seed = 3},
    {.name = "embedding_bag max, include_last_offset",
     .graph = G2(C_NONE C_F C_T C_I("z0", 0) C_I("n", 10) C_I("s", 3) C_I("m", 2)
                 "  %o : Tensor = aten::arange(%z0, %n, %s, %none, %none, %none, %none)\n"
                 "  %r : Tensor, %r1 : Tensor, %r2 : Tensor, %r3 : Tensor = "
                 "aten::embedding_bag(%x, %y, %o, %f, %m, %f, %none, %t)\n" RET4),
     .inputs = {"6x4", "9:0:5:i64"}},
    /* ---- im2col / col2im ---- */
    {.name = "im2col strided, padded, dilated",
     .graph = G1(C_I("a", 2) C_I("b", 3) C_I("one", 1) "  %k : int[] = prim::ListConstruct(%a, %b)\n"
                 "  %d : int[] = prim::ListConstruct(%a, %one)\n  %p : int[] = prim::ListConstruct(%one, %one)\n"
                 "  %r : Tensor = aten::im2col(%x, %k, %d, %p, %a)\n" RET),
     .inputs = {"2x3x5x6"}},
    {.name = "col2im, unbatched, overlapping blocks",
     .graph = G1(C_I("a", 2) C_I("h", 4) C_I("w", 5) C_I("one", 1) C_I("zero", 0) "  %os : int[] = prim::ListConstruct(%h, %w)\n"
                 "  %r : Tensor = aten::col2im(%x, %os, %a, %one, %zero, %one)\n" RET),
     .inputs = {"12x12"}},
    /* ---- distances, ranking and embedding losses ---- */
    {.name = "kl_div mean", .graph = G2(C_F C_I("k", 1) "  %r : Tensor = aten::kl_div(%x, %y, %k, %f)\n" RET),
     .inputs = {"3x4", "3x4:0.1:1"}},
    {.name = "kl_div log_target, none, broadcast", .graph = G2(C_T C_I("k", 0) "  %r : Tensor = aten::kl_div(%x, %y, %k, %t)\n" RET),
     .inputs = {"3x4", "4"}},
    {.name = "kl_div sum", .graph = G2(C_F C_I("k", 2) "  %r : Tensor = aten::kl_div(%x, %y, %k, %f)\n" RET),
     .inputs = {"4", "4:0.1:1"}},
    {.name = "pairwise_distance p=2", .graph = G2(C_F "  %p : float = prim::Constant[value=2.]()\n"
                                                  "  %e : float = prim::Constant[value=1e-06]()\n"
                                                  "  %r : Tensor = aten::pairwise_distance(%x, %y, %p, %e, %f)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "pairwise_distance p=1 keepdim, broadcast", .graph = G2(C_T "  %p : float = prim::Constant[value=1.]()\n"
                                                                     "  %e : float = prim::Constant[value=1e-06]()\n"
                                                                     "  %r : Tensor = aten::pairwise_distance(%x, %y, %p, %e, %t)\n" RET),
     .inputs = {"3x4", "4"}},
    {.name = "pairwise_distance p=3", .graph = G2(C_F "  %p : float = prim::Constant[value=3.]()\n"
                                                  "  %e : float = prim::Constant[value=0.1]()\n"
                                                  "  %r : Tensor = aten::pairwise_distance(%x, %y, %p, %e, %f)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "pairwise_distance p=0.5", .graph = G2(C_F "  %p : float = prim::Constant[value=0.5]()\n"
                                                    "  %e : float = prim::Constant[value=1e-06]()\n"
                                                    "  %r : Tensor = aten::pairwise_distance(%x, %y, %p, %e, %f)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "pairwise_distance p=inf", .graph = G2(C_F "  %p : float = prim::Constant[value=inf]()\n"
                                                    "  %e : float = prim::Constant[value=1e-06]()\n"
                                                    "  %r : Tensor = aten::pairwise_distance(%x, %y, %p, %e, %f)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "pairwise_distance p from a graph value", .graph = G2(C_F "  %p0 : float = prim::Constant[value=1.5]()\n"
                                                                   "  %p : float = aten::mul(%p0, %p0)\n"
                                                                   "  %e : float = prim::Constant[value=1e-06]()\n"
                                                                   "  %r : Tensor = aten::pairwise_distance(%x, %y, %p, %e, %f)\n" RET),
     .inputs = {"3x4", "3x4"}},
    {.name = "triplet_margin_loss mean",
     .graph = G3(C_F C_I("k", 1) "  %m : float = prim::Constant[value=1.]()\n  %p : float = prim::Constant[value=2.]()\n"
                 "  %e : float = prim::Constant[value=1e-06]()\n"
                 "  %r : Tensor = aten::triplet_margin_loss(%x, %y, %z, %m, %p, %e, %f, %k)\n" RET),
     .inputs = {"5x4", "5x4", "5x4"}},
    {.name = "triplet_margin_loss swap, p=1, none",
     .graph = G3(C_T C_I("k", 0) "  %m : float = prim::Constant[value=2.]()\n  %p : float = prim::Constant[value=1.]()\n"
                 "  %e : float = prim::Constant[value=1e-06]()\n"
                 "  %r : Tensor = aten::triplet_margin_loss(%x, %y, %z, %m, %p, %e, %t, %k)\n" RET),
     .inputs = {"6x3", "6x3", "6x3"}, .seed = 5},
    {.name = "margin_ranking_loss sum",
     .graph = G3(C_I("k", 2) "  %m : float = prim::Constant[value=0.3]()\n"
                 "  %r : Tensor = aten::margin_ranking_loss(%x, %y, %z, %m, %k)\n" RET),
     .inputs = {"6", "6", "6:-1:1"}},
    {.name = "soft_margin_loss mean", .graph = G2(C_I("k", 1) "  %r : Tensor = aten::soft_margin_loss(%x, %y, %k)\n" RET),
     .inputs = {"3x4", "3x4:-1:1"}},
    {.name = "hinge_embedding_loss none, target -1, 0, 1",
     .graph = G2(C_NONE C_F C_I("f64", 7) C_I("k", 0) "  %t : Tensor = aten::to(%y, %f64, %f, %f, %none)\n"
                 "  %m : float = prim::Constant[value=1.5]()\n"
                 "  %r : Tensor = aten::hinge_embedding_loss(%x, %t, %m, %k)\n" RET),
     .inputs = {"3x4", "3x4:-1:1:i64"}, .seed = 11},
    {.name = "cosine_embedding_loss mean, target -1, 0, 1",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 1) "  %t : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %m : float = prim::Constant[value=-0.2]()\n"
                 "  %r : Tensor = aten::cosine_embedding_loss(%x, %y, %t, %m, %k)\n" RET),
     .inputs = {"5x4", "5x4", "5:-1:1:i64"}, .seed = 4},
    {.name = "cosine_embedding_loss 0-d target, sum",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 2) "  %t : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %m : float = prim::Constant[value=-0.9]()\n"
                 "  %r : Tensor = aten::cosine_embedding_loss(%x, %y, %t, %m, %k)\n" RET),
     .inputs = {"4", "4", "-:-1:-1:i64"}},
    {.name = "poisson_nll_loss log_input, mean",
     .graph = G2(C_T C_F C_I("k", 1) "  %e : float = prim::Constant[value=1e-08]()\n"
                 "  %r : Tensor = aten::poisson_nll_loss(%x, %y, %t, %f, %e, %k)\n" RET),
     .inputs = {"3x4", "3x4:0:4"}},
    {.name = "poisson_nll_loss rate, full, none",
     .graph = G2(C_T C_F C_I("k", 0) "  %e : float = prim::Constant[value=1e-08]()\n"
                 "  %r : Tensor = aten::poisson_nll_loss(%x, %y, %f, %t, %e, %k)\n" RET),
     .inputs = {"3x4:0.5:3", "3x4:0.2:4"}},
    {.name = "multi_margin_loss p=2, weight, mean",
     .graph = G3(C_NONE C_F C_I("f64", 7) C_I("k", 1) C_I("p", 2) "  %w : Tensor = aten::to(%z, %f64, %f, %f, %none)\n"
                 "  %m : float = prim::Constant[value=0.8]()\n"
                 "  %r : Tensor = aten::multi_margin_loss(%x, %y, %p, %m, %w, %k)\n" RET),
     .inputs = {"4x5", "4:0:4:i64", "5:1:3:i64"}},
    {.name = "multi_margin_loss p=1, none",
     .graph = G2(C_NONE C_I("k", 0) C_I("p", 1) C_I("m", 1) "  %r : Tensor = aten::multi_margin_loss(%x, %y, %p, %m, %none, %k)\n" RET),
     .inputs = {"4x5", "4:0:4:i64"}, .seed = 9},
    {.name = "multilabel_margin_loss sum",
     .graph = G2(C_I("k", 2) "  %r : Tensor = aten::multilabel_margin_loss(%x, %y, %k)\n" RET),
     .inputs = {"3x4", "3x4:-1:3:i64"}},
    {.name = "multilabel_margin_loss_forward none",
     .graph = G2(C_I("k", 0) "  %r : Tensor, %i : Tensor = aten::multilabel_margin_loss_forward(%x, %y, %k)\n  return (%r, %i)\n"),
     .inputs = {"3x4", "3x4:-1:3:i64"}, .seed = 6},
    /* ---- CTC (golden: see ctc_v1 above) ---- */
    {.name = "ctc_loss.IntList mean, targets [[1, 2], [3, 3]]",
     .graph = G1(C_I("two", 2) C_I("one", 1) C_I("three", 3) C_I("five", 5) C_I("four", 4) C_I("z0", 0) C_NONE C_F
                 "  %t0 : int[] = prim::ListConstruct(%one, %two)\n  %t1 : int[] = prim::ListConstruct(%three, %three)\n"
                 "  %tl : int[][] = prim::ListConstruct(%t0, %t1)\n"
                 "  %tg : Tensor = aten::tensor(%tl, %none, %none, %f)\n"
                 "  %il : int[] = prim::ListConstruct(%five, %four)\n  %ll : int[] = prim::ListConstruct(%two, %two)\n"
                 "  %r : Tensor = aten::ctc_loss(%x, %tg, %il, %ll, %z0, %one, %f)\n" RET),
     .inputs = {"5x2x4"}, .values = {ctc_v1}, .expect = {ctc_e1}},
    {.name = "ctc_loss.Tensor sum, blank 3, concatenated targets [0, 1, 2, 2, 1, 0]",
     .graph = G1(C_I("z0", 0) C_I("one", 1) C_I("two", 2) C_I("three", 3) C_I("five", 5) C_I("six", 6) C_NONE C_F
                 "  %tgl : int[] = prim::ListConstruct(%z0, %one, %two, %two, %one, %z0)\n"
                 "  %tg : Tensor = aten::tensor(%tgl, %none, %none, %f)\n"
                 "  %ill : int[] = prim::ListConstruct(%six, %five, %six)\n"
                 "  %il : Tensor = aten::tensor(%ill, %none, %none, %f)\n"
                 "  %tll : int[] = prim::ListConstruct(%two, %two, %two)\n"
                 "  %tl : Tensor = aten::tensor(%tll, %none, %none, %f)\n"
                 "  %r : Tensor = aten::ctc_loss(%x, %tg, %il, %tl, %three, %two, %f)\n" RET),
     .inputs = {"6x3x4"}, .values = {ctc_v2}, .expect = {ctc_e2}},
    {.name = "ctc_loss.Tensor none, unbatched, targets [2, 2], zero_infinity",
     .graph = G1(C_I("z0", 0) C_I("two", 2) C_I("three", 3) C_NONE C_T C_F
                 "  %tgl : int[] = prim::ListConstruct(%two, %two)\n"
                 "  %tg : Tensor = aten::tensor(%tgl, %none, %none, %f)\n"
                 "  %il : Tensor = aten::tensor(%three, %none, %none, %f)\n"
                 "  %tl : Tensor = aten::tensor(%two, %none, %none, %f)\n"
                 "  %r : Tensor = aten::ctc_loss(%x, %tg, %il, %tl, %z0, %z0, %t)\n" RET),
     .inputs = {"3x4"}, .values = {ctc_v3}, .expect = {ctc_e3}},
    {.name = "ctc_loss.Tensor none, unbatched, infinite loss zeroed",
     .graph = G1(C_I("z0", 0) C_I("one", 1) C_I("two", 2) C_NONE C_T C_F
                 "  %tgl : int[] = prim::ListConstruct(%one, %two)\n"
                 "  %tg : Tensor = aten::tensor(%tgl, %none, %none, %f)\n"
                 "  %il : Tensor = aten::tensor(%one, %none, %none, %f)\n"
                 "  %tl : Tensor = aten::tensor(%two, %none, %none, %f)\n"
                 "  %r : Tensor = aten::ctc_loss(%x, %tg, %il, %tl, %z0, %z0, %t)\n" RET),
     .inputs = {"3x4"}, .values = {ctc_v3}, .expect = {ctc_zero}},
    /* ---- kinks, ties and special values: PyTorch 1.13's gradients for an output gradient of ones,
     * from /usr/bin/python3 (torch.ops.aten.<op>(x, ...).backward(ones), x float64) ---- */
    {.name = "hardshrink at +-lambd, NaN, -inf",
     .graph = G1("  %l : float = prim::Constant[value=0.5]()\n  %r : Tensor = aten::hardshrink(%x, %l)\n" RET),
     .inputs = {"6"}, .values = {V_(-0.5, 0.5, 0.25, 1, NAN, -INFINITY)}, .expect = {V_(0, 0, 0, 1, 1, 1)}},
    {.name = "softshrink at +-lambd, NaN, -inf",
     .graph = G1("  %l : float = prim::Constant[value=0.5]()\n  %r : Tensor = aten::softshrink(%x, %l)\n" RET),
     .inputs = {"6"}, .values = {V_(-0.5, 0.5, 0.25, 1, NAN, -INFINITY)}, .expect = {V_(0, 0, 0, 1, 1, 1)}},
    {.name = "cummax ties and NaN", .graph = G1(C_I("a", 0) "  %r : Tensor, %i : Tensor = aten::cummax(%x, %a)\n  return (%r, %i)\n"),
     .inputs = {"7"}, .values = {V_(1, 3, 3, 2, NAN, 5, NAN)}, .expect = {V_(1, 1, 2, 0, 2, 0, 1)}},
    {.name = "cummin ties", .graph = G1(C_I("a", 0) "  %r : Tensor, %i : Tensor = aten::cummin(%x, %a)\n  return (%r, %i)\n"),
     .inputs = {"5"}, .values = {V_(3, 1, 1, 2, 0)}, .expect = {V_(1, 1, 2, 0, 1)}},
    {.name = "logcumsumexp through -inf and inf", .graph = G1(C_I("a", 0) "  %r : Tensor = aten::logcumsumexp(%x, %a)\n" RET),
     .inputs = {"4"}, .values = {V_(-INFINITY, 0, 1, INFINITY)},
     .expect = {V_(NAN, 1.2689414213699952, 0.7310585786300049, NAN)}},
    {.name = "kl_div at target 0 and NaN", .graph = G2(C_F C_I("k", 0) "  %r : Tensor = aten::kl_div(%x, %y, %k, %f)\n" RET),
     .inputs = {"3", "3"}, .values = {V_(0.5, -1, 0.25), V_(0, 0.5, NAN)},
     .expect = {V_(-0.0, -0.5, NAN), V_(NAN, 1.3068528194400546, NAN)}},
    {.name = "poisson_nll_loss full at targets 0, 3, 0.5",
     .graph = G2(C_T C_I("k", 2) "  %e : float = prim::Constant[value=1e-08]()\n"
                 "  %r : Tensor = aten::poisson_nll_loss(%x, %y, %t, %t, %e, %k)\n" RET),
     .inputs = {"3", "3"}, .values = {V_(0.5, 1, 0.25), V_(0, 3, 0.5)},
     .expect = {V_(1.6487212707001282, -0.2817181715409549, 0.7840254166877414), V_(NAN, 0.2652789553347765, -0.25)}},
    {.name = "margin_ranking_loss at the hinge",
     .graph = G3(C_I("k", 0) "  %m : float = prim::Constant[value=0.]()\n"
                 "  %r : Tensor = aten::margin_ranking_loss(%x, %y, %z, %m, %k)\n" RET),
     .inputs = {"3", "3", "3"}, .values = {V_(1, 2, 0), V_(1, 1, 0.5), V_(1, -1, 1)},
     .expect = {V_(-1, 1, -1), V_(1, -1, 1), V_(-0.0, -1, 0.5)}},
};

START_TEST(test_formula) {
  const gc_case *c = &cases[_i];
  char msg[16384];
  ck_assert_msg(gc_check(c, msg, sizeof msg, NULL), "%s", msg);
}
END_TEST


/* ---- the backward rows of ops/list_backward.h against PyTorch ------------------------------ */

static fbx_tensor *arange_t(int ndim, const int64_t *sizes) {
  fbx_tensor *t = NULL;
  OK(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT64, ndim, sizes));
  for (int64_t i = 0; i < t->numel; i++) fbx_tensor_set_f64(t, i, (double)(i + 1));
  return t;
}

static fbx_tensor *long_t(int n, const int64_t *v) {
  fbx_tensor *t = NULL;
  int64_t s[1] = {n};
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 1, s, v));
  return t;
}

static fbx_ivalue ints_iv(int n, const int64_t *v) {
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) OK(fbx_iv_list_push(&l, fbx_iv_int(v[i])));
  return l;
}

/* Run `kind` on args (released here) and compare output 0 with want, within
 * rtol (0: exactly). */
static void check_op_tol(const char *kind, fbx_ivalue *args, int nargs, const double *want, int64_t nwant, double rtol) {
  fbx_sym sym;
  ck_assert_int_eq(fbx_sym_intern(&sym, kind, strlen(kind)), 0);
  const fbx_op *op = NULL;
  OK(fbx_op_resolve(&op, sym, args, nargs));
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS], outs[FBX_SCHEMA_MAX_RETS];
  OK(fbx_op_normalize_args(op, args, nargs, norm));
  for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) outs[i] = fbx_iv_none();
  fbx_kctx ctx = {.op = op, .nargs = op->schema.nargs};
  OK(op->kernel(&ctx, norm, outs));
  ck_assert_int_eq(outs[0].kind, FBX_IV_TENSOR);
  ck_assert_int_eq(outs[0].u.t->numel, nwant);
  for (int64_t i = 0; i < nwant; i++)
    ck_assert_msg(fabs(fbx_tensor_get_f64(outs[0].u.t, i) - want[i]) <= rtol * fabs(want[i]),
                  "%s: element %lld is %.17g, PyTorch %.17g", kind, (long long)i, fbx_tensor_get_f64(outs[0].u.t, i),
                  want[i]);
  for (int i = 0; i < op->schema.nrets; i++) fbx_iv_release(&outs[i]);
  for (int i = 0; i < nargs; i++) fbx_iv_release(&args[i]);
}

static void check_op(const char *kind, fbx_ivalue *args, int nargs, const double *want, int64_t nwant) {
  check_op_tol(kind, args, nargs, want, nwant, 0);
}

/* Expected values printed by /usr/bin/python3 (torch 1.13), e.g.
 *   g = torch.arange(1., 7.).reshape(2, 3)
 *   torch.ops.aten.select_backward(g, [2, 4, 3], 1, -2).flatten().tolist() */
START_TEST(test_backward_ops) {
  OK(fbx_op_table_init());
  {
    int64_t gs[2] = {2, 3}, in[3] = {2, 4, 3};
    static const double want[24] = {0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0};
    fbx_ivalue a[4] = {fbx_iv_tensor(arange_t(2, gs)), ints_iv(3, in), fbx_iv_int(1), fbx_iv_int(-2)};
    check_op("aten::select_backward", a, 4, want, 24);
  }
  { /* slice_backward(arange(1., 5.).reshape(2, 2), [2, 5], 1, 1, 5, 2) */
    int64_t gs[2] = {2, 2}, in[2] = {2, 5};
    static const double want[10] = {0, 1, 0, 2, 0, 0, 3, 0, 4, 0};
    fbx_ivalue a[6] = {fbx_iv_tensor(arange_t(2, gs)), ints_iv(2, in), fbx_iv_int(1), fbx_iv_int(1), fbx_iv_int(5),
                       fbx_iv_int(2)};
    check_op("aten::slice_backward", a, 6, want, 10);
  }
  { /* index_select_backward(arange(1., 9.).reshape(2, 4), [2, 3], 1, tensor([2, 0, 2, 1])) */
    int64_t gs[2] = {2, 4}, in[2] = {2, 3}, idx[4] = {2, 0, 2, 1};
    static const double want[6] = {2, 4, 4, 6, 8, 12};
    fbx_ivalue a[4] = {fbx_iv_tensor(arange_t(2, gs)), ints_iv(2, in), fbx_iv_int(1), fbx_iv_tensor(long_t(4, idx))};
    check_op("aten::index_select_backward", a, 4, want, 6);
  }
  { /* embedding_dense_backward(arange(1., 9.).reshape(4, 2), tensor([1, 3, 1, 0]), 4, 3, True) */
    int64_t gs[2] = {4, 2}, idx[4] = {1, 3, 1, 0};
    static const double want[8] = {7, 8, 3, 4, 0, 0, 0, 0};
    fbx_ivalue a[5] = {fbx_iv_tensor(arange_t(2, gs)), fbx_iv_tensor(long_t(4, idx)), fbx_iv_int(4), fbx_iv_int(3),
                       fbx_iv_bool(true)};
    check_op("aten::embedding_dense_backward", a, 5, want, 8);
  }
  { /* g = arange(1., 7.).reshape(2, 3); idx = tensor([1, 2, 4, 5, 4, 3, 2, 0, 6, 6]); off = tensor([0, 5])
     * _embedding_bag_backward(g, idx, off, tensor([], dtype=long), tensor([5, 5]), tensor([5, 5]), 7, True, 1,
     *                         False, None, -1): mean, scale_grad_by_freq (PyTorch's divisors: see
     * k_index.c); within 1 ulp: PyTorch adds each row with BLAS's axpy, which may fuse the multiply-add */
    int64_t gs[2] = {2, 3}, idx[10] = {1, 2, 4, 5, 4, 3, 2, 0, 6, 6}, off[2] = {0, 5}, bs[2] = {5, 5};
    static const double want[21] = {0.8, 1.0, 1.2000000000000002, 0.2, 0.4, 0.6000000000000001, 0.5,
                                    0.7000000000000001, 0.9000000000000001, 0.4, 0.5, 0.6000000000000001, 0.4, 0.8,
                                    1.2000000000000002, 0.1, 0.2, 0.30000000000000004, 0.8, 1.0, 1.2000000000000002};
    fbx_ivalue a[12] = {fbx_iv_tensor(arange_t(2, gs)), fbx_iv_tensor(long_t(10, idx)), fbx_iv_tensor(long_t(2, off)),
                        fbx_iv_tensor(long_t(0, idx)), fbx_iv_tensor(long_t(2, bs)), fbx_iv_tensor(long_t(2, bs)),
                        fbx_iv_int(7), fbx_iv_bool(true), fbx_iv_int(1), fbx_iv_bool(false), fbx_iv_none(),
                        fbx_iv_int(-1)};
    check_op_tol("aten::_embedding_bag_backward", a, 12, want, 21, 2.3e-16);
  }
  { /* the same, mode sum, per_sample_weights arange(1., 11.), padding_idx 4 */
    int64_t gs[2] = {2, 3}, idx[10] = {1, 2, 4, 5, 4, 3, 2, 0, 6, 6}, off[2] = {0, 5}, zs[2] = {0, 0}, ps[1] = {10};
    static const double want[21] = {32, 40, 48, 1, 2, 3, 30, 39, 48, 24, 30, 36, 0, 0, 0, 4, 8, 12, 76, 95, 114};
    fbx_ivalue a[12] = {fbx_iv_tensor(arange_t(2, gs)), fbx_iv_tensor(long_t(10, idx)), fbx_iv_tensor(long_t(2, off)),
                        fbx_iv_tensor(long_t(0, idx)), fbx_iv_tensor(long_t(2, zs)), fbx_iv_tensor(long_t(2, zs)),
                        fbx_iv_int(7), fbx_iv_bool(false), fbx_iv_int(0), fbx_iv_bool(false),
                        fbx_iv_tensor(arange_t(1, ps)), fbx_iv_int(4)};
    check_op("aten::_embedding_bag_backward", a, 12, want, 21);
  }
  { /* mode max: maximum_indices tensor([[4, 5, 1], [0, 6, 3]]) */
    int64_t gs[2] = {2, 3}, idx[10] = {1, 2, 4, 5, 4, 3, 2, 0, 6, 6}, off[2] = {0, 5}, bs[2] = {5, 5};
    int64_t o2b[10] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, mi[6] = {4, 5, 1, 0, 6, 3}, ms[2] = {2, 3};
    static const double want[21] = {4, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 6, 1, 0, 0, 0, 2, 0, 0, 5, 0};
    fbx_tensor *m = NULL;
    OK(fbx_tensor_from_data(&m, FBX_DTYPE_INT64, 2, ms, mi));
    fbx_ivalue a[12] = {fbx_iv_tensor(arange_t(2, gs)), fbx_iv_tensor(long_t(10, idx)), fbx_iv_tensor(long_t(2, off)),
                        fbx_iv_tensor(long_t(10, o2b)), fbx_iv_tensor(long_t(2, bs)), fbx_iv_tensor(m),
                        fbx_iv_int(7), fbx_iv_bool(false), fbx_iv_int(2), fbx_iv_bool(false), fbx_iv_none(),
                        fbx_iv_int(-1)};
    check_op("aten::_embedding_bag_backward", a, 12, want, 21);
  }
  { /* _embedding_bag_per_sample_weights_backward(g, arange(1., 22.).reshape(7, 3), idx, off, tensor([]), 0, 4) */
    int64_t gs[2] = {2, 3}, ws[2] = {7, 3}, idx[10] = {1, 2, 4, 5, 4, 3, 2, 0, 6, 6}, off[2] = {0, 5};
    static const double want[10] = {32, 50, 0, 104, 0, 167, 122, 32, 302, 302};
    fbx_ivalue a[7] = {fbx_iv_tensor(arange_t(2, gs)), fbx_iv_tensor(arange_t(2, ws)), fbx_iv_tensor(long_t(10, idx)),
                       fbx_iv_tensor(long_t(2, off)), fbx_iv_tensor(long_t(0, idx)), fbx_iv_int(0), fbx_iv_int(4)};
    check_op("aten::_embedding_bag_per_sample_weights_backward", a, 7, want, 10);
  }
  { /* value_selecting_reduction_backward(tensor([5., 7.]), 1, tensor([2, 0]), [2, 3], False) */
    int64_t gs[1] = {2}, idx[2] = {2, 0}, in[2] = {2, 3};
    fbx_tensor *g = arange_t(1, gs);
    fbx_tensor_set_f64(g, 0, 5), fbx_tensor_set_f64(g, 1, 7);
    static const double want[6] = {0, 0, 5, 7, 0, 0};
    fbx_ivalue a[5] = {fbx_iv_tensor(g), fbx_iv_int(1), fbx_iv_tensor(long_t(2, idx)), ints_iv(2, in),
                       fbx_iv_bool(false)};
    check_op("aten::value_selecting_reduction_backward", a, 5, want, 6);
  }
}
END_TEST

/* ---- Tensor[] ops: a small driver ----------------------------------------------------------- */

/* Differentiate the last node of `text` (inputs: tensors in `ins`) for
 * output gradient `gout` (a tensor or a list; the reference is taken), run the backward graph in
 * the interpreter and return the gradient of the node's input 0. */
typedef struct ldrv {
  fbx_graph *fwd, *bwd;
  const fbx_node *node;
  fbx_value *map_from[16], *map_to[16];
  int nmap;
  int saved_input[16];
  int nsaved;
} ldrv;

static fbx_value *ld_map(void *ctx, fbx_value *v);

static fbx_status *ld_fwd_value(void *ctx, const fbx_value *v, fbx_value **out) {
  ldrv *d = ctx;
  for (int i = 0; i < d->nmap; i++)
    if (d->map_from[i] == v) return *out = d->map_to[i], NULL;
  fbx_value *r;
  if (v->node == d->fwd->block->param) {
    r = fbx_graph_add_input(d->bwd, fbx_type_tensor_any(), NULL);
    d->saved_input[d->nsaved++] = v->offset;
  } else {
    fbx_node *m = fbx_node_clone_into(d->bwd->block, v->node, ld_map, d);
    r = m->outputs[v->offset];
  }
  d->map_from[d->nmap] = (fbx_value *)v, d->map_to[d->nmap++] = r;
  *out = r;
  return NULL;
}

static fbx_value *ld_map(void *ctx, fbx_value *v) {
  fbx_value *r = NULL;
  OK(ld_fwd_value(ctx, v, &r));
  return r;
}

static fbx_ivalue list_grad_of(const char *text, fbx_tensor **ins, int nin, fbx_ivalue gout, int which) {
  ldrv d = {0};
  OK(fbx_graph_parse(&d.fwd, text, strlen(text), "<list case>"));
  d.node = fbx_block_last(d.fwd->block);
  d.bwd = fbx_graph_create();
  fbx_type *tt = fbx_type_tensor_any();
  fbx_type *gt = gout.kind == FBX_IV_LIST ? fbx_type_container(d.bwd->arena, FBX_TYPE_LIST, 1, &tt) : tt;
  fbx_value *gv = fbx_graph_add_input(d.bwd, gt, "g");
  fbx_value *gin[FBX_SCHEMA_MAX_ARGS] = {0};
  fbx_grad_env env = {.graph = d.bwd, .block = d.bwd->block, .fwd_value = ld_fwd_value, .ctx = &d};
  OK(fbx_grad_build(&env, d.node, &gv, gin));
  ck_assert(gin[which] != NULL);
  ck_assert_int_eq(fbx_block_add_return(d.bwd->block, gin[which]), 0);
  fbx_ivalue bin[16], bout[1] = {fbx_iv_none()};
  bin[0] = gout;
  for (int s = 0; s < d.nsaved; s++) bin[1 + s] = fbx_iv_tensor(ins[d.saved_input[s]]);
  ck_assert_int_le(d.nsaved, nin);
  fbx_interp *it;
  OK(fbx_interp_create(&it, d.bwd));
  fbx_run_opts opts = {.seed = 1};
  OK(fbx_interp_run(it, bin, 1 + d.nsaved, bout, &opts));
  fbx_interp_destroy(it);
  fbx_iv_release(&gout);
  fbx_graph_destroy(d.bwd);
  fbx_graph_destroy(d.fwd);
  return bout[0];
}

static fbx_ivalue list_grad(const char *text, fbx_tensor **ins, int nin, fbx_ivalue gout) {
  return list_grad_of(text, ins, nin, gout, 0);
}

static void expect_part(const fbx_tensor *got, const fbx_tensor *g, int64_t rows, int64_t cols, int64_t gcols,
                        int64_t col0) {
  ck_assert_int_eq(got->numel, rows * cols);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      ck_assert(fbx_tensor_get_f64(got, r * cols + c) == fbx_tensor_get_f64(g, r * gcols + col0 + c));
}

/* cat along dim 1 of [2, 2] and [2, 3]: each input gets its columns of G;
 * chunk/split of [2, 5] into [2, 2] and [2, 3] pieces: G is their concat. */
START_TEST(test_list_ops) {
  OK(fbx_op_table_init());
  int64_t xs[2] = {2, 2}, ys[2] = {2, 3}, gs[2] = {2, 5};
  fbx_tensor *x = arange_t(2, xs), *y = arange_t(2, ys), *g = arange_t(2, gs);
  fbx_tensor *ins[2] = {x, y};
  fbx_ivalue r = list_grad("graph(%x : Tensor, %y : Tensor):\n"
                           "  %l : Tensor[] = prim::ListConstruct(%x, %y)\n"
                           "  %d : int = prim::Constant[value=-1]()\n"
                           "  %r : Tensor = aten::cat(%l, %d)\n"
                           "  return (%r)\n",
                           ins, 2, fbx_iv_tensor(fbx_tensor_retain(g)));
  ck_assert_int_eq(r.kind, FBX_IV_LIST);
  ck_assert_int_eq(fbx_iv_list_len(&r), 2);
  expect_part(fbx_iv_list_at(&r, 0)->u.t, g, 2, 2, 5, 0);
  expect_part(fbx_iv_list_at(&r, 1)->u.t, g, 2, 3, 5, 2);
  fbx_iv_release(&r);

  /* split_with_sizes [2, 3] along dim 1: grad of self = cat of the pieces */
  fbx_ivalue gl;
  OK(fbx_iv_list_new(&gl, 2));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(fbx_tensor_retain(x))));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(fbx_tensor_retain(y))));
  fbx_tensor *self = arange_t(2, gs);
  fbx_tensor *sins[1] = {self};
  r = list_grad("graph(%x : Tensor):\n"
                "  %a : int = prim::Constant[value=2]()\n"
                "  %b : int = prim::Constant[value=3]()\n"
                "  %s : int[] = prim::ListConstruct(%a, %b)\n"
                "  %d : int = prim::Constant[value=1]()\n"
                "  %r : Tensor[] = aten::split_with_sizes(%x, %s, %d)\n"
                "  return (%r)\n",
                sins, 1, gl);
  ck_assert_int_eq(r.kind, FBX_IV_TENSOR);
  ck_assert_int_eq(r.u.t->ndim, 2);
  ck_assert_int_eq(r.u.t->sizes[1], 5);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t c = 0; c < 5; c++)
      ck_assert(fbx_tensor_get_f64(r.u.t, i * 5 + c) ==
                (c < 2 ? fbx_tensor_get_f64(x, i * 2 + c) : fbx_tensor_get_f64(y, i * 3 + c - 2)));
  fbx_iv_release(&r);

  /* stack along dim 0: its gradient is G unbound */
  int64_t g3s[3] = {2, 2, 2};
  fbx_tensor *g3 = arange_t(3, g3s);
  r = list_grad("graph(%x : Tensor, %y : Tensor):\n"
                "  %l : Tensor[] = prim::ListConstruct(%x, %y)\n"
                "  %d : int = prim::Constant[value=0]()\n"
                "  %r : Tensor = aten::stack(%l, %d)\n"
                "  return (%r)\n",
                (fbx_tensor *[]){x, x}, 2, fbx_iv_tensor(fbx_tensor_retain(g3)));
  ck_assert_int_eq(r.kind, FBX_IV_LIST);
  ck_assert_int_eq(fbx_iv_list_len(&r), 2);
  expect_part(fbx_iv_list_at(&r, 1)->u.t, g3, 1, 4, 4, 4); /* G[1] */
  fbx_iv_release(&r);
  fbx_tensor_release(g3);

  /* tensor_split into 2 sections along dim 1 ([2, 3] and [2, 2]): grad of self = cat of the pieces */
  OK(fbx_iv_list_new(&gl, 2));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(fbx_tensor_retain(y))));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(fbx_tensor_retain(x))));
  r = list_grad("graph(%x : Tensor):\n"
                "  %n : int = prim::Constant[value=2]()\n"
                "  %d : int = prim::Constant[value=1]()\n"
                "  %r : Tensor[] = aten::tensor_split(%x, %n, %d)\n"
                "  return (%r)\n",
                sins, 1, gl);
  ck_assert_int_eq(r.kind, FBX_IV_TENSOR);
  ck_assert_int_eq(r.u.t->sizes[1], 5);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t c = 0; c < 5; c++)
      ck_assert(fbx_tensor_get_f64(r.u.t, i * 5 + c) ==
                (c < 3 ? fbx_tensor_get_f64(y, i * 3 + c) : fbx_tensor_get_f64(x, i * 2 + c - 3)));
  fbx_iv_release(&r);

  /* hstack of [2, 2] and [2, 3] (dim 1): each input gets its columns of G, through
   * fusebox::stack_like_backward */
  r = list_grad("graph(%x : Tensor, %y : Tensor):\n"
                "  %l : Tensor[] = prim::ListConstruct(%x, %y)\n"
                "  %r : Tensor = aten::hstack(%l)\n"
                "  return (%r)\n",
                ins, 2, fbx_iv_tensor(fbx_tensor_retain(g)));
  ck_assert_int_eq(r.kind, FBX_IV_LIST);
  ck_assert_int_eq(fbx_iv_list_len(&r), 2);
  expect_part(fbx_iv_list_at(&r, 0)->u.t, g, 2, 2, 5, 0);
  expect_part(fbx_iv_list_at(&r, 1)->u.t, g, 2, 3, 5, 2);
  fbx_iv_release(&r);

  /* atleast_3d.Sequence of [2, 2] and [2, 3]: gradients [2, 2, 1] and [2, 3, 1] come back in the inputs' sizes */
  int64_t x3s[3] = {2, 2, 1}, y3s[3] = {2, 3, 1};
  fbx_tensor *gx3 = arange_t(3, x3s), *gy3 = arange_t(3, y3s);
  OK(fbx_iv_list_new(&gl, 2));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(gx3)));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(gy3)));
  r = list_grad("graph(%x : Tensor, %y : Tensor):\n"
                "  %l : Tensor[] = prim::ListConstruct(%x, %y)\n"
                "  %r : Tensor[] = aten::atleast_3d(%l)\n"
                "  return (%r)\n",
                ins, 2, gl);
  ck_assert_int_eq(r.kind, FBX_IV_LIST);
  ck_assert_int_eq(fbx_iv_list_len(&r), 2);
  for (int k = 0; k < 2; k++) {
    const fbx_tensor *gk = fbx_iv_list_at(&r, k)->u.t;
    ck_assert_int_eq(gk->ndim, 2);
    ck_assert_int_eq(gk->sizes[1], k ? 3 : 2);
    for (int64_t i = 0; i < gk->numel; i++) ck_assert(fbx_tensor_get_f64(gk, i) == (double)(i + 1));
  }
  fbx_iv_release(&r);

  /* hsplit of [2, 5] at column 3 ([2, 3] and [2, 2]): grad of self = the pieces side by side */
  OK(fbx_iv_list_new(&gl, 2));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(fbx_tensor_retain(y))));
  OK(fbx_iv_list_push(&gl, fbx_iv_tensor(fbx_tensor_retain(x))));
  r = list_grad("graph(%x : Tensor):\n"
                "  %a : int = prim::Constant[value=3]()\n"
                "  %s : int[] = prim::ListConstruct(%a)\n"
                "  %r : Tensor[] = aten::hsplit(%x, %s)\n"
                "  return (%r)\n",
                sins, 1, gl);
  ck_assert_int_eq(r.kind, FBX_IV_TENSOR);
  ck_assert_int_eq(r.u.t->sizes[1], 5);
  for (int64_t i = 0; i < 2; i++)
    for (int64_t c = 0; c < 5; c++)
      ck_assert(fbx_tensor_get_f64(r.u.t, i * 5 + c) ==
                (c < 3 ? fbx_tensor_get_f64(y, i * 3 + c) : fbx_tensor_get_f64(x, i * 2 + c - 3)));
  fbx_iv_release(&r);
  fbx_tensor_release(self);
  fbx_tensor_release(g);
  fbx_tensor_release(y);
  fbx_tensor_release(x);
}
END_TEST

/* einsum: the gradient of the Tensor[] operand, for G = 1, 2, ... and
 * operands 1, 2, ...; expected values from /usr/bin/python3 (torch 1.13):
 *   ts = [torch.arange(1., 1 + n, dtype=torch.float64).reshape(s).requires_grad_() for s in shapes]
 *   r = torch.einsum(eq, *ts); r.backward(torch.arange(1., 1 + r.numel(), dtype=torch.float64).reshape(r.shape))
 *   [t.grad.flatten().tolist() for t in ts] */
static void check_einsum(const char *eq, const int64_t (*shapes)[3], const int *ranks, const int64_t *gsizes, int grank,
                         const double *const *want) {
  char text[512];
  snprintf(text, sizeof text,
           "graph(%%x : Tensor, %%y : Tensor):\n"
           "  %%none : NoneType = prim::Constant()\n"
           "  %%eq : str = prim::Constant[value=\"%s\"]()\n"
           "  %%l : Tensor[] = prim::ListConstruct(%%x, %%y)\n"
           "  %%r : Tensor = aten::einsum(%%eq, %%l, %%none)\n"
           "  return (%%r)\n",
           eq);
  fbx_tensor *ins[2] = {arange_t(ranks[0], shapes[0]), arange_t(ranks[1], shapes[1])};
  fbx_ivalue r = list_grad_of(text, ins, 2, fbx_iv_tensor(arange_t(grank, gsizes)), 1);
  ck_assert_int_eq(r.kind, FBX_IV_LIST);
  ck_assert_int_eq(fbx_iv_list_len(&r), 2);
  for (int k = 0; k < 2; k++) {
    const fbx_tensor *g = fbx_iv_list_at(&r, k)->u.t;
    ck_assert_int_eq(g->ndim, ins[k]->ndim);
    ck_assert_int_eq(g->numel, ins[k]->numel);
    for (int64_t i = 0; i < g->numel; i++)
      ck_assert_msg(fbx_tensor_get_f64(g, i) == want[k][i], "einsum %s operand %d element %lld: %g, PyTorch %g", eq, k,
                    (long long)i, fbx_tensor_get_f64(g, i), want[k][i]);
  }
  fbx_iv_release(&r);
  fbx_tensor_release(ins[0]);
  fbx_tensor_release(ins[1]);
}

START_TEST(test_einsum) {
  OK(fbx_op_table_init());
  {
    const int64_t sh[2][3] = {{2, 3}, {3, 2}}, gs[2] = {2, 2};
    const double a[] = {5, 11, 17, 11, 25, 39}, b[] = {13, 18, 17, 24, 21, 30};
    check_einsum("ij,jk->ik", sh, (int[]){2, 2}, gs, 2, (const double *[]){a, b});
  }
  { /* implicit output: b appears twice, so it is summed (output "ik") */
    const int64_t sh[2][3] = {{2, 2, 3}, {2, 3, 2}}, gs[2] = {2, 2};
    const double a[] = {5, 11, 17, 11, 25, 39, 23, 29, 35, 53, 67, 81};
    const double b[] = {13, 18, 17, 24, 21, 30, 37, 54, 41, 60, 45, 66};
    check_einsum("bij,bjk", sh, (int[]){3, 3}, gs, 2, (const double *[]){a, b});
  }
  { /* i only in the first operand: broadcast back over it */
    const int64_t sh[2][3] = {{2, 3}, {2}}, gs[2] = {3, 2};
    const double a[] = {5, 11, 17, 5, 11, 17}, b[] = {71, 92};
    check_einsum("ij,k->jk", sh, (int[]){2, 1}, gs, 2, (const double *[]){a, b});
  }
  { /* a diagonal: the first operand's gradient lies on its diagonal (fusebox::einsum_diag_backward) */
    const int64_t sh[2][3] = {{2, 2, 2}, {2, 2, 3}}, gs[2] = {2, 3};
    const double a[] = {14, 0, 0, 32, 122, 0, 0, 167}, b[] = {1, 2, 3, 4, 8, 12, 20, 25, 30, 32, 40, 48};
    check_einsum("bii,bij->bj", sh, (int[]){3, 3}, gs, 2, (const double *[]){a, b});
  }
  { /* the repeated letter is not the operand's first dim */
    const int64_t sh[2][3] = {{2, 3, 2}, {3}}, gs[1] = {2};
    const double a[] = {1, 0, 2, 0, 3, 0, 0, 2, 0, 4, 0, 6}, b[] = {17, 23, 29};
    check_einsum("iji,j->i", sh, (int[]){3, 1}, gs, 1, (const double *[]){a, b});
  }
  { /* implicit: both operands are traces, the output a scalar */
    const int64_t sh[2][3] = {{3, 3}, {2, 2}}, gs[1] = {0};
    const double a[] = {5, 0, 0, 0, 5, 0, 0, 0, 5}, b[] = {15, 0, 0, 15};
    check_einsum("ii,jj", sh, (int[]){2, 2}, gs, 0, (const double *[]){a, b});
  }
}
END_TEST

/* The gradient of a Tensor[] op on the list of arange tensors of `shapes`
 * (1, 2, ...; ranks 0-2) for the output gradient 1, 2, ... of shape gsizes,
 * against PyTorch 1.13's (want[k]: tensor k's gradient, flattened), from
 *   ts = [torch.arange(1., 1 + n, dtype=torch.float64).reshape(s).requires_grad_() for s in shapes]
 *   r = op(ts); r.backward(torch.arange(1., 1 + r.numel(), dtype=torch.float64).reshape(r.shape)) */
static void check_list_op(const char *op, int n, const int64_t (*shapes)[2], const int *ranks, int grank,
                          const int64_t *gsizes, const double *const *want) {
  static const char *names[] = {"x", "y", "z", "w"};
  char text[1024];
  int len = snprintf(text, sizeof text, "graph(");
  for (int k = 0; k < n; k++) len += snprintf(text + len, sizeof text - (size_t)len, "%s%%%s : Tensor", k ? ", " : "", names[k]);
  len += snprintf(text + len, sizeof text - (size_t)len, "):\n  %%l : Tensor[] = prim::ListConstruct(");
  for (int k = 0; k < n; k++) len += snprintf(text + len, sizeof text - (size_t)len, "%s%%%s", k ? ", " : "", names[k]);
  snprintf(text + len, sizeof text - (size_t)len, ")\n  %%r : Tensor = %s(%%l)\n  return (%%r)\n", op);
  fbx_tensor *ins[4];
  for (int k = 0; k < n; k++) ins[k] = arange_t(ranks[k], shapes[k]);
  fbx_ivalue r = list_grad(text, ins, n, fbx_iv_tensor(arange_t(grank, gsizes)));
  ck_assert_int_eq(r.kind, FBX_IV_LIST);
  ck_assert_int_eq(fbx_iv_list_len(&r), n);
  for (int k = 0; k < n; k++) {
    const fbx_tensor *g = fbx_iv_list_at(&r, k)->u.t;
    ck_assert_int_eq(g->ndim, ins[k]->ndim);
    ck_assert_int_eq(g->numel, ins[k]->numel);
    for (int i = 0; i < g->ndim; i++) ck_assert_int_eq(g->sizes[i], ins[k]->sizes[i]);
    for (int64_t i = 0; i < g->numel; i++)
      ck_assert_msg(fbx_tensor_get_f64(g, i) == want[k][i], "%s: tensor %d element %lld is %g, PyTorch %g", op, k,
                    (long long)i, fbx_tensor_get_f64(g, i), want[k][i]);
  }
  fbx_iv_release(&r);
  for (int k = 0; k < n; k++) fbx_tensor_release(ins[k]);
}

/* block_diag, cartesian_prod, linalg_multi_dot and chain_matmul: their
 * gradient helpers (fusebox::block_diag_backward, cartesian_prod_backward,
 * multi_dot_backward) against PyTorch's gradients. */
START_TEST(test_list_op_grads) {
  OK(fbx_op_table_init());
  /* block_diag of [2, 2], [3] (a row) and [1, 2]: a [4, 7] result */
  check_list_op("aten::block_diag", 3, (const int64_t[][2]){{2, 2}, {3}, {1, 2}}, (const int[]){2, 1, 2}, 2,
                (const int64_t[]){4, 7},
                (const double *const[]){V_(1, 2, 8, 9), V_(17, 18, 19), V_(27, 28)});
  check_list_op("aten::cartesian_prod", 2, (const int64_t[][2]){{2}, {3}}, (const int[]){1, 1}, 2, (const int64_t[]){6, 2},
                (const double *const[]){V_(9, 27), V_(10, 14, 18)});
  check_list_op("aten::cartesian_prod", 1, (const int64_t[][2]){{3}}, (const int[]){1}, 1, (const int64_t[]){3},
                (const double *const[]){V_(1, 2, 3)});
  /* 1-d ends: a 0-d result */
  check_list_op("aten::linalg_multi_dot", 4, (const int64_t[][2]){{3}, {3, 2}, {2, 2}, {2}}, (const int[]){1, 2, 2, 1}, 0,
                (const int64_t[]){0},
                (const double *const[]){V_(27, 59, 91), V_(5, 11, 10, 22, 15, 33), V_(22, 44, 28, 56), V_(106, 156)});
  check_list_op("aten::linalg_multi_dot", 2, (const int64_t[][2]){{2, 3}, {3, 2}}, (const int[]){2, 2}, 2,
                (const int64_t[]){2, 2},
                (const double *const[]){V_(5, 11, 17, 11, 25, 39), V_(13, 18, 17, 24, 21, 30)});
  check_list_op("aten::chain_matmul", 3, (const int64_t[][2]){{2, 3}, {3, 2}, {2, 1}}, (const int[]){2, 2, 2}, 2,
                (const int64_t[]){2, 1},
                (const double *const[]){V_(5, 11, 17, 10, 22, 34), V_(9, 18, 12, 24, 15, 30), V_(120, 156)});
  check_list_op("aten::chain_matmul", 1, (const int64_t[][2]){{2, 3}}, (const int[]){2}, 2, (const int64_t[]){2, 3},
                (const double *const[]){V_(1, 2, 3, 4, 5, 6)});
}
END_TEST

/* add/sub's default alpha: `aten::mul(%grad, 1)` is dropped when the
 * gradient's dtype is known floating, kept when it is unknown. */
START_TEST(test_mul_by_one_dropped) {
  static const char *typed = "graph(%x : Double(3, 4), %y : Double(3, 4)):\n"
                             "  %a : int = prim::Constant[value=1]()\n"
                             "  %r : Double(3, 4) = aten::sub(%x, %y, %a)\n"
                             "  return (%r)\n";
  static const char *untyped = "graph(%x : Tensor, %y : Tensor):\n"
                               "  %a : int = prim::Constant[value=1]()\n"
                               "  %r : Tensor = aten::add(%x, %y, %a)\n"
                               "  return (%r)\n";
  gc_case c = {.name = "sub alpha 1, typed", .graph = typed, .inputs = {"3x4", "3x4"}};
  gc_info info;
  char msg[16384];
  ck_assert_msg(gc_check(&c, msg, sizeof msg, &info), "%s", msg);
  ck_assert_msg(!strstr(info.backward, "aten::mul"), "%s", info.backward);
  ck_assert_msg(strstr(info.backward, "aten::neg"), "%s", info.backward);
  c = (gc_case){.name = "add alpha 1, untyped", .graph = untyped, .inputs = {"3x4", "3x4"}};
  ck_assert_msg(gc_check(&c, msg, sizeof msg, &info), "%s", msg);
  ck_assert_msg(strstr(info.backward, "aten::mul"), "%s", info.backward);
}
END_TEST

int main(void) {
  Suite *s = suite_create("grad_ops");
  TCase *tc = tcase_create("formulas");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_formula, 0, (int)(sizeof cases / sizeof cases[0]));
  suite_add_tcase(s, tc);
  TCase *tk = tcase_create("kernels and lists");
  tcase_add_test(tk, test_backward_ops);
  tcase_add_test(tk, test_list_ops);
  tcase_add_test(tk, test_einsum);
  tcase_add_test(tk, test_list_op_grads);
  tcase_add_test(tk, test_mul_by_one_dropped);
  suite_add_tcase(s, tk);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
