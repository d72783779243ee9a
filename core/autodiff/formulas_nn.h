/* Gradient formulas as data: the rows of ops/list_nn.h (pooling,
 * recurrent cells, instance_norm, prelu) and native_dropout. Format and rules:
 * formula.c. Uses the pointwise file's constants (FBX_GF_CONSTS_).
 *
 * Pooling gradients (2-D and 3-D, FBX_GFN_POOLS_) are PyTorch's backward
 * ops (max_pool recomputes its indices with max_pool_with_indices, as
 * PyTorch's max_pool runs that op and keeps them). The cells recompute their two products and gates from
 * the saved inputs (PyTorch differentiates their decomposition the same
 * way) and give every input its gradient: d gates = the chain rule through
 * the gate nonlinearities, then d input = dG @ w_ih, d w_ih = dG^T @ input,
 * d b_ih = sum(dG, 0), and the same for the hidden side. instance_norm and
 * native_dropout go through one backward op each (ops/list_nn.h), and so do
 * the whole-sequence layers (rnn_tanh, rnn_relu, gru, lstm:
 * fusebox::rnn_seq_backward, which recomputes the forward).
 * adaptive_max_pool's gradient is its backward op with the forward's
 * indices (adaptive_max_pool1d's through unsqueeze/squeeze, as PyTorch's
 * composite); every upsample row's is its _backward op with the input's
 * sizes; pixel_shuffle and pixel_unshuffle are each other's gradient. */
#ifndef FBX_AUTODIFF_FORMULAS_NN_H
#define FBX_AUTODIFF_FORMULAS_NN_H

#define FBX_GFN_POOL_ARGS_ "%self : Tensor, %kernel_size : int[], %stride : int[], %padding : int[]"
#define FBX_GFN_CELL_ARGS_(hx) \
  "%input : Tensor, %hx : " hx ", %w_ih : Tensor, %w_hh : Tensor, %b_ih : Tensor?, %b_hh : Tensor?"
/* The two products of a cell: %gi = input @ w_ih^T + b_ih, %gh = h @ w_hh^T + b_hh. */
#define FBX_GFN_PRODUCTS_(h)                                          \
  "  %gi : Tensor = aten::linear(%input, %w_ih, %b_ih)\n"             \
  "  %gh : Tensor = aten::linear(" h ", %w_hh, %b_hh)\n"
/* From %dgi and %dgh (the gradients of %gi and %gh): the inputs' and
 * weights' gradients, %g_hl the hidden state's through w_hh. */
#define FBX_GFN_CELL_TAIL_(dgi, dgh, h)                               \
  "  %l0 : int[] = prim::ListConstruct(%i0)\n"                        \
  "  %g_input : Tensor = aten::mm(" dgi ", %w_ih)\n"                  \
  "  %dgi_t : Tensor = aten::t(" dgi ")\n"                            \
  "  %g_w_ih : Tensor = aten::mm(%dgi_t, %input)\n"                   \
  "  %g_b_ih : Tensor = aten::sum(" dgi ", %l0, %false, %none)\n"     \
  "  %g_hl : Tensor = aten::mm(" dgh ", %w_hh)\n"                     \
  "  %dgh_t : Tensor = aten::t(" dgh ")\n"                            \
  "  %g_w_hh : Tensor = aten::mm(%dgh_t, " h ")\n"                    \
  "  %g_b_hh : Tensor = aten::sum(" dgh ", %l0, %false, %none)\n"
/* %s<x> = x * (1 - x): sigmoid's derivative from its output */
#define FBX_GFN_DSIG_(x)                                              \
  "  %om" x " : Tensor = aten::rsub(%" x ", %f1, %i1)\n"              \
  "  %s" x " : Tensor = aten::mul(%" x ", %om" x ")\n"
/* %t<x> = 1 - x^2: tanh's derivative from its output */
#define FBX_GFN_DTANH_(x)                                             \
  "  %sq" x " : Tensor = aten::mul(%" x ", %" x ")\n"                 \
  "  %t" x " : Tensor = aten::rsub(%sq" x ", %f1, %i1)\n"
#define FBX_GFN_RNN_(dpre)                                                                                 \
  FBX_GF_(FBX_GFN_CELL_ARGS_("Tensor") ", %result : Tensor, %grad : Tensor",                                \
          dpre FBX_GFN_CELL_TAIL_("%dpre", "%dpre", "%hx"),                                                  \
          "%g_input, %g_hl, %g_w_ih, %g_w_hh, %g_b_ih, %g_b_hh")

/* Whole-sequence layers: one backward op for all of them (mode: 0 rnn_tanh,
 * 1 rnn_relu, 2 gru, 3 lstm), which takes the states as lists. */
/* .input: (input, hx, params, flags..., batch_first); .data: (data,
 * batch_sizes, hx, params, flags...) */
#define FBX_GFN_SEQ_ARGS_(hx, packed)                                                                          \
  "%input : Tensor, " packed "%hx : " hx ", %params : Tensor[], %has_biases : bool, %num_layers : int, "       \
  "%dropout : float, %train : bool, %bidirectional : bool"
#define FBX_GFN_SEQ_IN_ ", %batch_first : bool"
#define FBX_GFN_SEQ_PK_ "%batch_sizes : Tensor, "
#define FBX_GFN_SEQ_CALL_(mode, hl, bsz, bf)                                                                   \
  "  %mode : int = prim::Constant[value=" mode "]()\n"                                                        \
  "  %g_input : Tensor, %g_hl : Tensor[], %g_params : Tensor[] = fusebox::rnn_seq_backward(%grad0, %gs, "     \
  "%input, " bsz ", " hl ", %params, %mode, %has_biases, %num_layers, %dropout, %train, %bidirectional, " bf ")\n"
/* rnn_tanh, rnn_relu, gru: (output, h_n); hx is one tensor */
#define FBX_GFN_SEQ1_(mode, packed, tail, bsz, bf, rets)                                                       \
  FBX_GF_(FBX_GFN_SEQ_ARGS_("Tensor", packed) tail ", %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
                                                   "%grad1 : Tensor",                                          \
          "  %gs : Tensor[] = prim::ListConstruct(%grad1)\n"                                                   \
          "  %hl : Tensor[] = prim::ListConstruct(%hx)\n" FBX_GFN_SEQ_CALL_(mode, "%hl", bsz, bf)              \
          "  %g_hx : Tensor = prim::ListUnpack(%g_hl)\n",                                                      \
          rets)
#define FBX_GFN_SEQ1_IN_(mode)                                                                                 \
  FBX_GFN_SEQ1_(mode, "", FBX_GFN_SEQ_IN_, "%none", "%batch_first",                                            \
                "%g_input, %g_hx, %g_params, %none, %none, %none, %none, %none, %none")
#define FBX_GFN_SEQ1_PK_(mode)                                                                                 \
  FBX_GFN_SEQ1_(mode, FBX_GFN_SEQ_PK_, "", "%batch_sizes", "%false",                                           \
                "%g_input, %none, %g_hx, %g_params, %none, %none, %none, %none, %none")
/* lstm: (output, h_n, c_n); hx is [h, c] and its gradient the list [d h, d c] */
#define FBX_GFN_LSTM_(packed, tail, bsz, bf, rets)                                                             \
  FBX_GF_(FBX_GFN_SEQ_ARGS_("Tensor[]", packed) tail ", %result0 : Tensor, %result1 : Tensor, "                \
                                                     "%result2 : Tensor, %grad0 : Tensor, %grad1 : Tensor, "   \
                                                     "%grad2 : Tensor",                                        \
          "  %gs : Tensor[] = prim::ListConstruct(%grad1, %grad2)\n" FBX_GFN_SEQ_CALL_("3", "%hx", bsz, bf),   \
          rets)
/* Upsampling: the op's backward with the input's sizes. .vec rows take
 * (input, output_size?, [align_corners,] scale_factors?), the others (self,
 * output_size, [align_corners,] one scale per dim); `al` is
 * ", %align_corners" for the linear and cubic modes, empty for nearest;
 * `nones` the None gradients of the arguments after the tensor. */
#define FBX_GFN_UPS_VEC_(op, al_param, al, nones)                                                            \
  FBX_GF_("%input : Tensor, %output_size : int[]?" al_param ", %scale_factors : float[]?, %result : Tensor, " \
          "%grad : Tensor",                                                                                 \
          "  %s : int[] = aten::size(%input)\n"                                                             \
          "  %g : Tensor = aten::" op "_backward(%grad, %output_size, %s" al ", %scale_factors)\n",           \
          "%g" nones)
#define FBX_GFN_UPS_(op, al_param, al, scales_param, scales, nones)                                         \
  FBX_GF_("%self : Tensor, %output_size : int[]" al_param scales_param ", %result : Tensor, %grad : Tensor", \
          "  %s : int[] = aten::size(%self)\n"                                                              \
          "  %g : Tensor = aten::" op "_backward(%grad, %output_size, %s" al scales ")\n",                    \
          "%g" nones)
#define FBX_GFN_AL_P_ ", %align_corners : bool"
#define FBX_GFN_AL_ ", %align_corners"
#define FBX_GFN_S1_P_ ", %scales : float?"
#define FBX_GFN_S1_ ", %scales"
#define FBX_GFN_S2_P_ ", %scales_h : float?, %scales_w : float?"
#define FBX_GFN_S2_ ", %scales_h, %scales_w"
#define FBX_GFN_S3_P_ ", %scales_d : float?, %scales_h : float?, %scales_w : float?"
#define FBX_GFN_S3_ ", %scales_d, %scales_h, %scales_w"
#define FBX_GFN_N2_ ", %none, %none"
#define FBX_GFN_N3_ ", %none, %none, %none"
#define FBX_GFN_N4_ ", %none, %none, %none, %none"
#define FBX_GFN_N5_ ", %none, %none, %none, %none, %none"
/* pixel_shuffle and pixel_unshuffle: each one's gradient is the other. */
#define FBX_GFN_SHUFFLE_(arg, inverse)                                                                       \
  FBX_GF_("%self : Tensor, %" arg " : int, %result : Tensor, %grad : Tensor",                               \
          "  %g : Tensor = aten::" inverse "(%grad, %" arg ")\n", "%g, %none")

/* The pooling rows of one dimension n (2 or 3): each gradient is the row's
 * backward op (max_pool recomputes its indices, as PyTorch's max_pool runs
 * max_pool_with_indices and keeps them). */
#define FBX_GFN_POOLS_(G, n)                                                                                  \
  G(max_pool##n##d,                                                                                           \
    FBX_GF_(FBX_GFN_POOL_ARGS_ ", %dilation : int[], %ceil_mode : bool, %result : Tensor, %grad : Tensor",    \
            "  %r : Tensor, %idx : Tensor = aten::max_pool" #n "d_with_indices(%self, %kernel_size, %stride, " \
            "%padding, %dilation, %ceil_mode)\n"                                                              \
            "  %g : Tensor = aten::max_pool" #n "d_with_indices_backward(%grad, %self, %kernel_size, "         \
            "%stride, %padding, %dilation, %ceil_mode, %idx)\n",                                              \
            "%g, %none, %none, %none, %none, %none"))                                                         \
  G(max_pool##n##d_with_indices,                                                                              \
    FBX_GF_(FBX_GFN_POOL_ARGS_ ", %dilation : int[], %ceil_mode : bool, %result0 : Tensor, "                  \
                               "%result1 : Tensor, %grad0 : Tensor, %grad1 : Tensor",                         \
            "  %g : Tensor = aten::max_pool" #n "d_with_indices_backward(%grad0, %self, %kernel_size, "        \
            "%stride, %padding, %dilation, %ceil_mode, %result1)\n",                                          \
            "%g, %none, %none, %none, %none, %none"))                                                         \
  G(avg_pool##n##d,                                                                                           \
    FBX_GF_(FBX_GFN_POOL_ARGS_ ", %ceil_mode : bool, %count_include_pad : bool, %divisor_override : int?, "   \
                               "%result : Tensor, %grad : Tensor",                                            \
            "  %g : Tensor = aten::avg_pool" #n "d_backward(%grad, %self, %kernel_size, %stride, %padding, "   \
            "%ceil_mode, %count_include_pad, %divisor_override)\n",                                           \
            "%g, %none, %none, %none, %none, %none, %none"))                                                  \
  G(adaptive_avg_pool##n##d, FBX_GFN_ADAPTIVE_AVG_(n))                                                        \
  G(_adaptive_avg_pool##n##d, FBX_GFN_ADAPTIVE_AVG_(n))                                                       \
  G(adaptive_max_pool##n##d,                                                                                  \
    FBX_GF_("%self : Tensor, %output_size : int[], %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "   \
            "%grad1 : Tensor",                                                                                \
            "  %g : Tensor = aten::adaptive_max_pool" #n "d_backward(%grad0, %self, %result1)\n", "%g, %none"))
#define FBX_GFN_ADAPTIVE_AVG_(n)                                                                              \
  FBX_GF_("%self : Tensor, %output_size : int[], %result : Tensor, %grad : Tensor",                           \
          "  %g : Tensor = aten::_adaptive_avg_pool" #n "d_backward(%grad, %self)\n", "%g, %none")

#define FBX_GFN_GRID_SAMPLER_                                                                                 \
  FBX_GF_("%input : Tensor, %grid : Tensor, %interpolation_mode : int, %padding_mode : int, "                 \
          "%align_corners : bool, %result : Tensor, %grad : Tensor",                                          \
          "  %gi : Tensor, %gg : Tensor = fusebox::grid_sampler_backward(%grad, %input, %grid, "               \
          "%interpolation_mode, %padding_mode, %align_corners)\n",                                            \
          "%gi, %gg, %none, %none, %none")

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_FORMULAS_NN(G)                                                                               \
  FBX_GFN_POOLS_(G, 2)                                                                                            \
  FBX_GFN_POOLS_(G, 3)                                                                                            \
  G(max_pool1d,                                                                                               \
    FBX_GF_(FBX_GFN_POOL_ARGS_ ", %dilation : int[], %ceil_mode : bool, %result : Tensor, %grad : Tensor",    \
            "  %g : Tensor = fusebox::max_pool1d_backward(%grad, %self, %kernel_size, %stride, %padding, "     \
            "%dilation, %ceil_mode)\n",                                                                      \
            "%g, %none, %none, %none, %none, %none"))                                                         \
  G(avg_pool1d,                                                                                               \
    FBX_GF_(FBX_GFN_POOL_ARGS_ ", %ceil_mode : bool, %count_include_pad : bool, %result : Tensor, "           \
                               "%grad : Tensor",                                                              \
            "  %g : Tensor = fusebox::avg_pool1d_backward(%grad, %self, %kernel_size, %stride, %padding, "     \
            "%ceil_mode, %count_include_pad)\n",                                                             \
            "%g, %none, %none, %none, %none, %none"))                                                         \
  /* F.grid_sample and F.affine_grid: their backward ops (grid_sampler's for either rank) */                      \
  G(grid_sampler, FBX_GFN_GRID_SAMPLER_)                                                                          \
  G(grid_sampler_2d, FBX_GFN_GRID_SAMPLER_)                                                                       \
  G(grid_sampler_3d, FBX_GFN_GRID_SAMPLER_)                                                                       \
  G(affine_grid_generator,                                                                                        \
    FBX_GF_("%theta : Tensor, %size : int[], %align_corners : bool, %result : Tensor, %grad : Tensor",            \
            "  %g : Tensor = aten::affine_grid_generator_backward(%grad, %size, %align_corners)\n",               \
            "%g, %none, %none"))                                                                                  \
  G(instance_norm,                                                                                            \
    FBX_GF_("%input : Tensor, %weight : Tensor?, %bias : Tensor?, %running_mean : Tensor?, "                  \
            "%running_var : Tensor?, %use_input_stats : bool, %momentum : float, %eps : float, "              \
            "%cudnn_enabled : bool, %result : Tensor, %grad : Tensor",                                        \
            "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::instance_norm_backward(%grad, %input, "    \
            "%weight, %running_mean, %running_var, %use_input_stats, %eps)\n",                                \
            "%gi, %gw, %gb, %none, %none, %none, %none, %none, %none"))                                       \
  /* PyTorch's derivatives.yaml: grad * mask * (train ? 1 / (1 - p) : 1), train None counting as false */    \
  G(native_dropout,                                                                                           \
    FBX_GF_("%input : Tensor, %p : float, %train : bool?, %result0 : Tensor, %result1 : Tensor, "             \
            "%grad0 : Tensor, %grad1 : Tensor",                                                               \
            "  %s : float = fusebox::dropout_scale(%p, %train)\n"                                             \
            "  %g : Tensor = aten::native_dropout_backward(%grad0, %result1, %s)\n",                          \
            "%g, %none, %none"))                                                                              \
  /* PyTorch's derivatives.yaml: both gradients from prelu_backward */                                        \
  G(prelu, FBX_GF_("%self : Tensor, %weight : Tensor, %result : Tensor, %grad : Tensor",                        \
                   "  %gs : Tensor, %gw : Tensor = aten::prelu_backward(%grad, %self, %weight)\n", "%gs, %gw")) \
  G(rnn_tanh_cell, FBX_GFN_RNN_(FBX_GFN_DTANH_("result") "  %dpre : Tensor = aten::mul(%grad, %tresult)\n"))   \
  G(rnn_relu_cell, FBX_GFN_RNN_("  %m : Tensor = aten::gt(%result, %i0)\n"                                    \
                                "  %dpre : Tensor = aten::where(%m, %grad, %f0)\n"))                          \
  /* gru: r, z, n = sigmoid(i_r + h_r), sigmoid(i_z + h_z), tanh(i_n + r h_n); h' = n + z (hx - n) */         \
  G(gru_cell,                                                                                                 \
    FBX_GF_(FBX_GFN_CELL_ARGS_("Tensor") ", %result : Tensor, %grad : Tensor",                                \
            "  %three : int = prim::Constant[value=3]()\n" FBX_GFN_PRODUCTS_("%hx")                           \
            "  %ic : Tensor[] = aten::chunk(%gi, %three, %i1)\n"                                              \
            "  %i_r : Tensor, %i_z : Tensor, %i_n : Tensor = prim::ListUnpack(%ic)\n"                         \
            "  %hc : Tensor[] = aten::chunk(%gh, %three, %i1)\n"                                              \
            "  %h_r : Tensor, %h_z : Tensor, %h_n : Tensor = prim::ListUnpack(%hc)\n"                         \
            "  %pr : Tensor = aten::add(%i_r, %h_r, %i1)\n"                                                   \
            "  %r : Tensor = aten::sigmoid(%pr)\n"                                                            \
            "  %pz : Tensor = aten::add(%i_z, %h_z, %i1)\n"                                                   \
            "  %z : Tensor = aten::sigmoid(%pz)\n"                                                            \
            "  %rh : Tensor = aten::mul(%r, %h_n)\n"                                                          \
            "  %pn : Tensor = aten::add(%i_n, %rh, %i1)\n"                                                    \
            "  %n : Tensor = aten::tanh(%pn)\n"                                                               \
            "  %hmn : Tensor = aten::sub(%hx, %n, %i1)\n"                                                     \
            "  %dz : Tensor = aten::mul(%grad, %hmn)\n" FBX_GFN_DSIG_("z") FBX_GFN_DTANH_("n") FBX_GFN_DSIG_("r") \
            "  %dn : Tensor = aten::mul(%grad, %omz)\n"                                                       \
            "  %ghx0 : Tensor = aten::mul(%grad, %z)\n"                                                       \
            "  %dpn : Tensor = aten::mul(%dn, %tn)\n"                                                         \
            "  %dhn : Tensor = aten::mul(%dpn, %r)\n"                                                         \
            "  %dr : Tensor = aten::mul(%dpn, %h_n)\n"                                                        \
            "  %dpr : Tensor = aten::mul(%dr, %sr)\n"                                                         \
            "  %dpz : Tensor = aten::mul(%dz, %sz)\n"                                                         \
            "  %li : Tensor[] = prim::ListConstruct(%dpr, %dpz, %dpn)\n"                                      \
            "  %dgi : Tensor = aten::cat(%li, %i1)\n"                                                         \
            "  %lh : Tensor[] = prim::ListConstruct(%dpr, %dpz, %dhn)\n"                                      \
            "  %dgh : Tensor = aten::cat(%lh, %i1)\n" FBX_GFN_CELL_TAIL_("%dgi", "%dgh", "%hx")                               \
            "  %g_hx : Tensor = aten::add(%ghx0, %g_hl, %i1)\n",                                              \
            "%g_input, %g_hx, %g_w_ih, %g_w_hh, %g_b_ih, %g_b_hh"))                                           \
  /* lstm: i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the gates' chunks;          \
   * c' = f c + i g, h' = o tanh(c'); hx's gradient is the list [d h, d c] */            \
  G(lstm_cell,                                                                                                \
    FBX_GF_(FBX_GFN_CELL_ARGS_("Tensor[]") ", %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "        \
                                           "%grad1 : Tensor",                                                 \
            "  %four : int = prim::Constant[value=4]()\n"                                                     \
            "  %h : Tensor, %c : Tensor = prim::ListUnpack(%hx)\n" FBX_GFN_PRODUCTS_("%h")                    \
            "  %gates : Tensor = aten::add(%gi, %gh, %i1)\n"                                                  \
            "  %gc : Tensor[] = aten::chunk(%gates, %four, %i1)\n"                                            \
            "  %pi : Tensor, %pf : Tensor, %pg : Tensor, %po : Tensor = prim::ListUnpack(%gc)\n"              \
            "  %ig : Tensor = aten::sigmoid(%pi)\n"                                                           \
            "  %fg : Tensor = aten::sigmoid(%pf)\n"                                                           \
            "  %gg : Tensor = aten::tanh(%pg)\n"                                                              \
            "  %og : Tensor = aten::sigmoid(%po)\n"                                                           \
            "  %tcy : Tensor = aten::tanh(%result1)\n" FBX_GFN_DTANH_("tcy") FBX_GFN_DSIG_("ig")              \
                FBX_GFN_DSIG_("fg") FBX_GFN_DTANH_("gg") FBX_GFN_DSIG_("og")                                  \
            "  %dog : Tensor = aten::mul(%grad0, %tcy)\n"                                                     \
            "  %dc0 : Tensor = aten::mul(%grad0, %og)\n"                                                      \
            "  %dc1 : Tensor = aten::mul(%dc0, %ttcy)\n"                                                      \
            "  %dcy : Tensor = aten::add(%grad1, %dc1, %i1)\n"                                                \
            "  %dig : Tensor = aten::mul(%dcy, %gg)\n"                                                        \
            "  %dfg : Tensor = aten::mul(%dcy, %c)\n"                                                         \
            "  %dgg : Tensor = aten::mul(%dcy, %ig)\n"                                                        \
            "  %g_c : Tensor = aten::mul(%dcy, %fg)\n"                                                        \
            "  %dpi : Tensor = aten::mul(%dig, %sig)\n"                                                       \
            "  %dpf : Tensor = aten::mul(%dfg, %sfg)\n"                                                       \
            "  %dpg : Tensor = aten::mul(%dgg, %tgg)\n"                                                       \
            "  %dpo : Tensor = aten::mul(%dog, %sog)\n"                                                       \
            "  %ld : Tensor[] = prim::ListConstruct(%dpi, %dpf, %dpg, %dpo)\n"                                \
            "  %dgi : Tensor = aten::cat(%ld, %i1)\n" FBX_GFN_CELL_TAIL_("%dgi", "%dgi", "%h")                               \
            "  %g_hx : Tensor[] = prim::ListConstruct(%g_hl, %g_c)\n",                                        \
            "%g_input, %g_hx, %g_w_ih, %g_w_hh, %g_b_ih, %g_b_hh"))                                           \
  G(rnn_tanh_input, FBX_GFN_SEQ1_IN_("0"))                                                                    \
  G(rnn_relu_input, FBX_GFN_SEQ1_IN_("1"))                                                                    \
  G(gru_input, FBX_GFN_SEQ1_IN_("2"))                                                                         \
  G(lstm_input, FBX_GFN_LSTM_("", FBX_GFN_SEQ_IN_, "%none", "%batch_first",                                   \
                              "%g_input, %g_hl, %g_params, %none, %none, %none, %none, %none, %none"))        \
  G(_pack_padded_sequence,                                                                                     \
    FBX_GF_("%input : Tensor, %lengths : Tensor, %batch_first : bool, %result0 : Tensor, %result1 : Tensor, "  \
            "%grad0 : Tensor, %grad1 : Tensor",                                                               \
            "  %sizes : int[] = aten::size(%input)\n"                                                         \
            "  %g : Tensor = aten::_pack_padded_sequence_backward(%grad0, %sizes, %result1, %batch_first)\n",  \
            "%g, %none, %none"))                                                                              \
  G(_pad_packed_sequence,                                                                                      \
    FBX_GF_("%data : Tensor, %batch_sizes : Tensor, %batch_first : bool, %padding_value : Scalar, "            \
            "%total_length : int, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, %grad1 : Tensor",    \
            "  %g : Tensor = fusebox::pad_packed_backward(%grad0, %batch_sizes, %batch_first)\n",             \
            "%g, %none, %none, %none, %none"))                                                                \
  G(rnn_tanh_data, FBX_GFN_SEQ1_PK_("0"))                                                                     \
  G(rnn_relu_data, FBX_GFN_SEQ1_PK_("1"))                                                                     \
  G(gru_data, FBX_GFN_SEQ1_PK_("2"))                                                                          \
  G(lstm_data, FBX_GFN_LSTM_(FBX_GFN_SEQ_PK_, "", "%batch_sizes", "%false",                                   \
                             "%g_input, %none, %g_hl, %g_params, %none, %none, %none, %none, %none")) \
  /* PyTorch's composite: the 2-D op on [.., C, 1, L] */                                                      \
  G(adaptive_max_pool1d,                                                                                      \
    FBX_GF_("%self : Tensor, %output_size : int[], %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "   \
            "%grad1 : Tensor",                                                                                \
            "  %m2 : int = prim::Constant[value=-2]()\n"                                                      \
            "  %g2 : Tensor = aten::unsqueeze(%grad0, %m2)\n"                                                 \
            "  %x2 : Tensor = aten::unsqueeze(%self, %m2)\n"                                                  \
            "  %i2 : Tensor = aten::unsqueeze(%result1, %m2)\n"                                               \
            "  %gx : Tensor = aten::adaptive_max_pool2d_backward(%g2, %x2, %i2)\n"                            \
            "  %g : Tensor = aten::squeeze(%gx, %m2)\n",                                                      \
            "%g, %none"))                                                                                     \
  G(pixel_shuffle, FBX_GFN_SHUFFLE_("upscale_factor", "pixel_unshuffle"))                                     \
  G(pixel_unshuffle, FBX_GFN_SHUFFLE_("downscale_factor", "pixel_shuffle"))                                   \
  G(upsample_nearest1d_vec, FBX_GFN_UPS_VEC_("upsample_nearest1d", "", "", FBX_GFN_N2_))                      \
  G(upsample_nearest2d_vec, FBX_GFN_UPS_VEC_("upsample_nearest2d", "", "", FBX_GFN_N2_))                      \
  G(upsample_nearest3d_vec, FBX_GFN_UPS_VEC_("upsample_nearest3d", "", "", FBX_GFN_N2_))                      \
  G(upsample_nearest_exact1d_vec, FBX_GFN_UPS_VEC_("_upsample_nearest_exact1d", "", "", FBX_GFN_N2_))        \
  G(upsample_nearest_exact2d_vec, FBX_GFN_UPS_VEC_("_upsample_nearest_exact2d", "", "", FBX_GFN_N2_))        \
  G(upsample_nearest_exact3d_vec, FBX_GFN_UPS_VEC_("_upsample_nearest_exact3d", "", "", FBX_GFN_N2_))        \
  G(upsample_linear1d_vec, FBX_GFN_UPS_VEC_("upsample_linear1d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_N3_))     \
  G(upsample_bilinear2d_vec, FBX_GFN_UPS_VEC_("upsample_bilinear2d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_N3_)) \
  G(upsample_trilinear3d_vec,                                                                                 \
    FBX_GFN_UPS_VEC_("upsample_trilinear3d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_N3_))                        \
  G(upsample_bicubic2d_vec, FBX_GFN_UPS_VEC_("upsample_bicubic2d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_N3_))   \
  G(upsample_nearest1d, FBX_GFN_UPS_("upsample_nearest1d", "", "", FBX_GFN_S1_P_, FBX_GFN_S1_, FBX_GFN_N2_))   \
  G(upsample_nearest2d, FBX_GFN_UPS_("upsample_nearest2d", "", "", FBX_GFN_S2_P_, FBX_GFN_S2_, FBX_GFN_N3_))   \
  G(upsample_nearest3d, FBX_GFN_UPS_("upsample_nearest3d", "", "", FBX_GFN_S3_P_, FBX_GFN_S3_, FBX_GFN_N4_))   \
  G(upsample_nearest_exact1d,                                                                                \
    FBX_GFN_UPS_("_upsample_nearest_exact1d", "", "", FBX_GFN_S1_P_, FBX_GFN_S1_, FBX_GFN_N2_))              \
  G(upsample_nearest_exact2d,                                                                                \
    FBX_GFN_UPS_("_upsample_nearest_exact2d", "", "", FBX_GFN_S2_P_, FBX_GFN_S2_, FBX_GFN_N3_))              \
  G(upsample_nearest_exact3d,                                                                                \
    FBX_GFN_UPS_("_upsample_nearest_exact3d", "", "", FBX_GFN_S3_P_, FBX_GFN_S3_, FBX_GFN_N4_))              \
  G(upsample_linear1d,                                                                                        \
    FBX_GFN_UPS_("upsample_linear1d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_S1_P_, FBX_GFN_S1_, FBX_GFN_N3_))    \
  G(upsample_bilinear2d,                                                                                      \
    FBX_GFN_UPS_("upsample_bilinear2d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_S2_P_, FBX_GFN_S2_, FBX_GFN_N4_))  \
  G(upsample_trilinear3d,                                                                                     \
    FBX_GFN_UPS_("upsample_trilinear3d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_S3_P_, FBX_GFN_S3_, FBX_GFN_N5_)) \
  G(upsample_bicubic2d,                                                                                       \
    FBX_GFN_UPS_("upsample_bicubic2d", FBX_GFN_AL_P_, FBX_GFN_AL_, FBX_GFN_S2_P_, FBX_GFN_S2_, FBX_GFN_N4_))

#endif
