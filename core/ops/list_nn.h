/* Op table rows: what scripted torch.nn modules call beyond the core
 * families — pooling, recurrent cells, instance norm — and the backward ops
 * their gradients use. (See ops/optable.h for the columns.) Schemas are
 * PyTorch 1.13's.
 *
 * Pooling (k_pool.c): max_pool2d, max_pool2d_with_indices (indices are
 * flat positions h * W + w within each plane, as PyTorch's), avg_pool2d,
 * adaptive_avg_pool2d (and _adaptive_avg_pool2d), the backward ops
 * max_pool2d_with_indices_backward, avg_pool2d_backward and
 * _adaptive_avg_pool2d_backward, and the same rows in 3-D (max_pool3d, ...,
 * adaptive_avg_pool3d; indices (d * H + h) * W + w). Inputs [C, *sp] or
 * [N, C, *sp], floating point (avg_pool integers too; adaptive_avg_pool
 * every floating dtype; 3-D no bfloat16, as PyTorch's CPU); an empty
 * stride means stride = kernel_size; windows and
 * output sizes (ceil_mode, padding, dilation, count_include_pad,
 * divisor_override) follow PyTorch's CPU kernels, NaN wins a max window.
 * max_pool1d and avg_pool1d ([C, L] or [N, C, L]) are the 2-D ops on the
 * input with a size-1 height, as PyTorch computes them; their gradients are
 * fusebox::max_pool1d_backward(grad, self, kernel_size, stride, padding,
 * dilation, ceil_mode) and fusebox::avg_pool1d_backward(grad, self,
 * kernel_size, stride, padding, ceil_mode, count_include_pad), the 2-D
 * backward ops the same way (max recomputes its indices).
 *
 * Adaptive max pooling (k_pool.c): adaptive_max_pool2d(self, output_size)
 * -> (values, indices) over [C, H, W] or [N, C, H, W] (and
 * adaptive_max_pool3d over [C, D, H, W] or [N, C, D, H, W]), the max pool's
 * rules over PyTorch's adaptive windows [floor(o * in / out), ceil((o + 1)
 * * in / out)); adaptive_max_pool1d on [C, L] or [N, C, L] is the 2-D op on
 * [.., C, 1, L] (PyTorch's composite, indices w); their gradient
 * adaptive_max_pool{2,3}d_backward(grad_output, self, indices) adds each
 * output's gradient at its index (1-D: through unsqueeze and squeeze, as
 * PyTorch differentiates the composite). float32, float64, and in 2-D
 * bfloat16.
 *
 * Upsampling (k_upsample.c, one kernel for every row): upsample_nearest1d,
 * _nearest2d, _nearest3d, _upsample_nearest_exact{1,2,3}d (F.interpolate's
 * mode="nearest-exact"), _linear1d, _bilinear2d, _trilinear3d,
 * _bicubic2d and their _backward ops, each in the .vec overload (sizes or
 * scale factors, exactly one; what a scripted F.interpolate and
 * nn.Upsample call) and the plain one (sizes and a scale per dim); the
 * input is [N, C, *spatial] with exactly 1, 2 or 3 spatial dims. PyTorch
 * 1.13's CPU index arithmetic (k_upsample.c has the rules): float32,
 * float64, bfloat16 and float16 (computed in float32; PyTorch's CPU has no
 * float16 upsampling), nearest also uint8. Each gradient is the op's
 * _backward with the input's sizes.
 * Grid sampling (k_grid.c): grid_sampler (either rank), grid_sampler_2d and
 * _3d (F.grid_sample: bilinear/trilinear, nearest, bicubic in 2-D; zeros,
 * border and reflection padding; PyTorch 1.13's CPU coordinate arithmetic)
 * and their backward ops -> (d input, d grid), whose gradient formula is
 * fusebox::grid_sampler_backward(grad_output, input, grid,
 * interpolation_mode, padding_mode, align_corners) for every rank;
 * affine_grid_generator (F.affine_grid, 2-D and 3-D) and its backward.
 * float32 and float64 (affine grids: every floating dtype).
 *
 * pixel_shuffle(self, upscale_factor) and pixel_unshuffle(self,
 * downscale_factor) (k_upsample.c): [*, C r^2, H, W] <-> [*, C, H r, W r],
 * any dtype; each one's gradient is the other.
 *
 * Recurrent cells (k_rnn.c): rnn_tanh_cell, rnn_relu_cell, gru_cell,
 * lstm_cell on [B, I] inputs and [B, H] states: the two products through
 * linear's kernel (BLAS), the gate arithmetic in double per element.
 *
 * Whole-sequence recurrent layers (k_rnnseq.c): rnn_tanh, rnn_relu, gru,
 * lstm (.input overloads: what scripted nn.RNN, nn.GRU, nn.LSTM call; all
 * layers and both directions in one op, batch_first or time-major; .data
 * overloads: a packed sequence's data [N, I] and batch_sizes), and their
 * gradient:
 *
 *   fusebox::rnn_seq_backward(grad_output, grad_state, input, batch_sizes?,
 *   hx, params, mode, has_biases, num_layers, dropout, train,
 *   bidirectional, batch_first) -> (d input, d hx, d params)
 *       batch_sizes: None, or a packed sequence's (input is its data);
 *       mode 0 rnn_tanh, 1 rnn_relu, 2 gru, 3 lstm; grad_state the final
 *       states' gradients and hx the forward's initial states, each [h]
 *       or, for lstm, [h, c]; d hx is a list like them, d params one
 *       gradient per params entry. Recomputes the forward and runs back
 *       through time.
 *
 * Packed sequences (k_packed.c): _pack_padded_sequence,
 * _pad_packed_sequence (what pack_padded_sequence and pad_packed_sequence
 * call), _pack_padded_sequence_backward, and fusebox::pad_packed_backward
 * (grad, batch_sizes, batch_first), _pad_packed_sequence's gradient: the
 * padded gradient's rows that held data, packed again.
 *
 * Normalization (k_nnorm.c): instance_norm (batch_norm's kernel on the
 * input viewed as [1, N * C, ...], as PyTorch computes it; running
 * statistics are read, never updated, as for batch_norm);
 * native_batch_norm_backward (PyTorch's op: the statistics it is given,
 * save_mean/save_invstd when train, else the running ones); and two helpers
 * gradient formulas use when a flag is known only at run time:
 *
 *   fusebox::batch_norm_backward(grad, input, weight?, running_mean?,
 *   running_var?, training, eps) -> (d input, d weight, d bias)
 *       batch_norm's gradients; the batch statistics are taken again from
 *       the input when training (or when a running statistic is None),
 *       else the running ones are used. d weight is None when weight is
 *       None; d bias is always computed (in weight's dtype, else the
 *       input's).
 *   fusebox::instance_norm_backward(grad, input, weight?, running_mean?,
 *   running_var?, use_input_stats, eps) -> (d input, d weight, d bias)
 *       the same per (sample, channel) plane; d weight and d bias summed
 *       over the batch.
 *   fusebox::dropout_backward(grad, result, p, train) -> Tensor
 *       aten::dropout's gradient: grad when !train, else grad / (1 - p)
 *       where result is nonzero and 0 elsewhere (0 everywhere for p == 1).
 *   fusebox::dropout_scale(p, train?) -> float
 *       the scale native_dropout's gradient applies to grad * mask:
 *       1 / (1 - p) when train is true (0 for p == 1), 1 when train is
 *       false or None (PyTorch 1.13's derivatives.yaml, None included).
 * aten::native_dropout_backward(grad, mask, scale) is grad * mask * scale.
 *
 * PReLU (k_prelu.c): prelu(self, weight) = self > 0 ? self : weight * self,
 * weight 0-d or 1-D of one element (every element) or of self.size(1)
 * elements (one per channel, dim 1; a 1-D self has one channel), float32,
 * float64 or bfloat16 as on PyTorch's CPU; its gradient is PyTorch's
 * prelu_backward(grad_output, self, weight) -> (d self, d weight): grad
 * where self > 0, else weight * grad; d weight sums self * grad where self
 * <= 0 over everything but the channel, in weight's shape.
 */
#ifndef FBX_OPS_LIST_NN_H
#define FBX_OPS_LIST_NN_H

#define FBX_NN_CMP_ FBX_OPCAT_COMPOSITE
/* An upsample row: every one runs fbx_k_upsample, which reads the mode from the name. */
#define FBX_NN_UPS_(X, id, schema) X(id, schema, FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_upsample)

#define FBX_OPS_NN(X)                                                                                              \
  /* ---- pooling (k_pool.c) --------------------------------------------------------------------- */            \
  X(max_pool2d,                                                                                                   \
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "   \
    "bool ceil_mode=False) -> Tensor",                                                                            \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_max_pool2d)                                                  \
  X(max_pool2d_with_indices,                                                                                      \
    "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "         \
    "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",                                               \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_max_pool2d)                                               \
  X(avg_pool2d,                                                                                                   \
    "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, " \
    "bool count_include_pad=True, int? divisor_override=None) -> Tensor",                                         \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_avg_pool2d)                                                  \
  X(max_pool2d_with_indices_backward,                                                                             \
    "aten::max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "  \
    "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",                                 \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_max_pool2d_backward)                                        \
  X(avg_pool2d_backward,                                                                                          \
    "aten::avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "              \
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",                   \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_avg_pool2d_backward)                                        \
  X(adaptive_avg_pool2d_backward, "aten::_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_avg_pool2d_backward)                               \
  X(max_pool3d,                                                                                                   \
    "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, "   \
    "bool ceil_mode=False) -> Tensor",                                                                            \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_max_pool2d)                                                 \
  X(max_pool3d_with_indices,                                                                                      \
    "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "         \
    "int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",                                               \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_max_pool2d)                                               \
  X(max_pool3d_with_indices_backward,                                                                             \
    "aten::max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, " \
    "int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor",                                 \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_max_pool2d_backward)                                        \
  X(avg_pool3d,                                                                                                   \
    "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, "\
    "bool count_include_pad=True, int? divisor_override=None) -> Tensor",                                         \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_avg_pool2d)                                                 \
  X(avg_pool3d_backward,                                                                                          \
    "aten::avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "              \
    "int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",                   \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_avg_pool2d_backward)                                        \
  X(adaptive_avg_pool2d, "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",               \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_avg_pool)                                          \
  X(_adaptive_avg_pool2d, "aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",             \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_avg_pool)                                          \
  X(adaptive_avg_pool3d, "aten::adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor",                  \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_avg_pool)                                          \
  X(_adaptive_avg_pool3d, "aten::_adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor",                \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_avg_pool)                                          \
  X(adaptive_avg_pool3d_backward,                                                                                 \
    "aten::_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor",                             \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_avg_pool2d_backward)                               \
  X(max_pool1d,                                                                                                   \
    "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], " \
    "bool ceil_mode=False) -> Tensor",                                                                            \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pool1d)                                                      \
  X(avg_pool1d,                                                                                                   \
    "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, " \
    "bool count_include_pad=True) -> Tensor",                                                                     \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pool1d)                                                      \
  X(fbx_max_pool1d_backward,                                                                                      \
    "fusebox::max_pool1d_backward(Tensor grad, Tensor self, int[1] kernel_size, int[1] stride, int[1] padding, "  \
    "int[1] dilation, bool ceil_mode) -> Tensor",                                                                 \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pool1d)                                                      \
  X(fbx_avg_pool1d_backward,                                                                                      \
    "fusebox::avg_pool1d_backward(Tensor grad, Tensor self, int[1] kernel_size, int[1] stride, int[1] padding, "  \
    "bool ceil_mode, bool count_include_pad) -> Tensor",                                                          \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pool1d)                                                      \
  /* ---- adaptive max pooling (k_pool.c) -------------------------------------------------------- */           \
  X(adaptive_max_pool2d, "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",          \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_adaptive_max_pool2d)                                      \
  X(adaptive_max_pool1d, "aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",          \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_adaptive_max_pool2d)                                      \
  X(adaptive_max_pool2d_backward,                                                                                 \
    "aten::adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor", FBX_NN_CMP_,   \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_max_pool2d_backward)                                            \
  X(adaptive_max_pool3d, "aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",        \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_adaptive_max_pool2d)                                      \
  X(adaptive_max_pool3d_backward,                                                                                 \
    "aten::adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor", FBX_NN_CMP_, \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_adaptive_max_pool2d_backward)                                            \
  /* ---- grid sampling and affine grids (k_grid.c) ---------------------------------------------- */             \
  X(grid_sampler,                                                                                                 \
    "aten::grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) " \
    "-> Tensor", FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_grid_sampler)                                  \
  X(grid_sampler_2d,                                                                                              \
    "aten::grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "                 \
    "bool align_corners) -> Tensor", FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_grid_sampler)              \
  X(grid_sampler_3d,                                                                                              \
    "aten::grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "                 \
    "bool align_corners) -> Tensor", FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_grid_sampler)              \
  X(grid_sampler_2d_backward,                                                                                     \
    "aten::grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "      \
    "int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)",                             \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_grid_sampler_backward)                                    \
  X(grid_sampler_3d_backward,                                                                                     \
    "aten::grid_sampler_3d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "      \
    "int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)",                             \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_grid_sampler_backward)                                    \
  X(fbx_grid_sampler_backward,                                                                                    \
    "fusebox::grid_sampler_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "      \
    "int padding_mode, bool align_corners) -> (Tensor, Tensor)",                                                  \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_grid_sampler_backward)                                    \
  X(affine_grid_generator, "aten::affine_grid_generator(Tensor theta, int[] size, bool align_corners) -> Tensor", \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_affine_grid)                                                \
  X(affine_grid_generator_backward,                                                                               \
    "aten::affine_grid_generator_backward(Tensor grad, int[] size, bool align_corners) -> Tensor",                \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_affine_grid_backward)                                       \
  /* ---- upsampling and pixel shuffle (k_upsample.c) ---------------------------------------------- */           \
  FBX_NN_UPS_(X, upsample_nearest1d_vec,                                                                          \
              "aten::upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
  FBX_NN_UPS_(X, upsample_nearest1d,                                                                              \
              "aten::upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor")        \
  FBX_NN_UPS_(X, upsample_nearest2d_vec,                                                                          \
              "aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
  FBX_NN_UPS_(X, upsample_nearest2d,                                                                              \
              "aten::upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "                \
              "float? scales_w=None) -> Tensor")                                                                  \
  FBX_NN_UPS_(X, upsample_nearest3d_vec,                                                                          \
              "aten::upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor") \
  FBX_NN_UPS_(X, upsample_nearest3d,                                                                              \
              "aten::upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, "                \
              "float? scales_h=None, float? scales_w=None) -> Tensor")                                            \
  FBX_NN_UPS_(X, upsample_nearest_exact1d_vec,                                                                    \
              "aten::_upsample_nearest_exact1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "   \
              "-> Tensor")                                                                                        \
  FBX_NN_UPS_(X, upsample_nearest_exact1d,                                                                        \
              "aten::_upsample_nearest_exact1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor")  \
  FBX_NN_UPS_(X, upsample_nearest_exact2d_vec,                                                                    \
              "aten::_upsample_nearest_exact2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "   \
              "-> Tensor")                                                                                        \
  FBX_NN_UPS_(X, upsample_nearest_exact2d,                                                                        \
              "aten::_upsample_nearest_exact2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "          \
              "float? scales_w=None) -> Tensor")                                                                  \
  FBX_NN_UPS_(X, upsample_nearest_exact3d_vec,                                                                    \
              "aten::_upsample_nearest_exact3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "   \
              "-> Tensor")                                                                                        \
  FBX_NN_UPS_(X, upsample_nearest_exact3d,                                                                        \
              "aten::_upsample_nearest_exact3d(Tensor self, SymInt[3] output_size, float? scales_d=None, "          \
              "float? scales_h=None, float? scales_w=None) -> Tensor")                                            \
  FBX_NN_UPS_(X, upsample_linear1d_vec,                                                                           \
              "aten::upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "              \
              "float[]? scale_factors) -> Tensor")                                                                \
  FBX_NN_UPS_(X, upsample_linear1d,                                                                               \
              "aten::upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, "                   \
              "float? scales=None) -> Tensor")                                                                    \
  FBX_NN_UPS_(X, upsample_bilinear2d_vec,                                                                         \
              "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "            \
              "float[]? scale_factors) -> Tensor")                                                                \
  FBX_NN_UPS_(X, upsample_bilinear2d,                                                                             \
              "aten::upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "                 \
              "float? scales_h=None, float? scales_w=None) -> Tensor")                                            \
  FBX_NN_UPS_(X, upsample_trilinear3d_vec,                                                                        \
              "aten::upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "           \
              "float[]? scale_factors) -> Tensor")                                                                \
  FBX_NN_UPS_(X, upsample_trilinear3d,                                                                            \
              "aten::upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, "                \
              "float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor")                      \
  FBX_NN_UPS_(X, upsample_bicubic2d_vec,                                                                          \
              "aten::upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "             \
              "float[]? scale_factors) -> Tensor")                                                                \
  FBX_NN_UPS_(X, upsample_bicubic2d,                                                                              \
              "aten::upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, "                  \
              "float? scales_h=None, float? scales_w=None) -> Tensor")                                            \
  FBX_NN_UPS_(X, upsample_nearest1d_backward_vec,                                                                 \
              "aten::upsample_nearest1d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                  \
              "SymInt[] input_size, float[]? scale_factors) -> Tensor")                                           \
  FBX_NN_UPS_(X, upsample_nearest1d_backward,                                                                     \
              "aten::upsample_nearest1d_backward(Tensor grad_output, SymInt[1] output_size, SymInt[3] input_size, " \
              "float? scales=None) -> Tensor")                                                                    \
  FBX_NN_UPS_(X, upsample_nearest2d_backward_vec,                                                                 \
              "aten::upsample_nearest2d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                  \
              "SymInt[] input_size, float[]? scale_factors) -> Tensor")                                           \
  FBX_NN_UPS_(X, upsample_nearest2d_backward,                                                                     \
              "aten::upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, " \
              "float? scales_h=None, float? scales_w=None) -> Tensor")                                            \
  FBX_NN_UPS_(X, upsample_nearest3d_backward_vec,                                                                 \
              "aten::upsample_nearest3d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                  \
              "SymInt[] input_size, float[]? scale_factors) -> Tensor")                                           \
  FBX_NN_UPS_(X, upsample_nearest3d_backward,                                                                     \
              "aten::upsample_nearest3d_backward(Tensor grad_output, SymInt[3] output_size, SymInt[5] input_size, " \
              "float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor")                      \
  FBX_NN_UPS_(X, upsample_nearest_exact1d_backward_vec,                                                           \
              "aten::_upsample_nearest_exact1d_backward.vec(Tensor grad_output, SymInt[]? output_size, "            \
              "SymInt[] input_size, float[]? scale_factors) -> Tensor")                                           \
  FBX_NN_UPS_(X, upsample_nearest_exact1d_backward,                                                               \
              "aten::_upsample_nearest_exact1d_backward(Tensor grad_output, SymInt[1] output_size, "                \
              "SymInt[3] input_size, float? scales=None) -> Tensor")                                              \
  FBX_NN_UPS_(X, upsample_nearest_exact2d_backward_vec,                                                           \
              "aten::_upsample_nearest_exact2d_backward.vec(Tensor grad_output, SymInt[]? output_size, "            \
              "SymInt[] input_size, float[]? scale_factors) -> Tensor")                                           \
  FBX_NN_UPS_(X, upsample_nearest_exact2d_backward,                                                               \
              "aten::_upsample_nearest_exact2d_backward(Tensor grad_output, SymInt[2] output_size, "                \
              "SymInt[4] input_size, float? scales_h=None, float? scales_w=None) -> Tensor")                      \
  FBX_NN_UPS_(X, upsample_nearest_exact3d_backward_vec,                                                           \
              "aten::_upsample_nearest_exact3d_backward.vec(Tensor grad_output, SymInt[]? output_size, "            \
              "SymInt[] input_size, float[]? scale_factors) -> Tensor")                                           \
  FBX_NN_UPS_(X, upsample_nearest_exact3d_backward,                                                               \
              "aten::_upsample_nearest_exact3d_backward(Tensor grad_output, SymInt[3] output_size, "                \
              "SymInt[5] input_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor")  \
  FBX_NN_UPS_(X, upsample_linear1d_backward_vec,                                                                  \
              "aten::upsample_linear1d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                   \
              "SymInt[] input_size, bool align_corners, float[]? scale_factors) -> Tensor")                       \
  FBX_NN_UPS_(X, upsample_linear1d_backward,                                                                      \
              "aten::upsample_linear1d_backward(Tensor grad_output, SymInt[1] output_size, SymInt[3] input_size, "  \
              "bool align_corners, float? scales=None) -> Tensor")                                                \
  FBX_NN_UPS_(X, upsample_bilinear2d_backward_vec,                                                                \
              "aten::upsample_bilinear2d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                 \
              "SymInt[] input_size, bool align_corners, float[]? scale_factors) -> Tensor")                       \
  FBX_NN_UPS_(X, upsample_bilinear2d_backward,                                                                    \
              "aten::upsample_bilinear2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, " \
              "bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor")                        \
  FBX_NN_UPS_(X, upsample_trilinear3d_backward_vec,                                                               \
              "aten::upsample_trilinear3d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                \
              "SymInt[] input_size, bool align_corners, float[]? scale_factors) -> Tensor")                       \
  FBX_NN_UPS_(X, upsample_trilinear3d_backward,                                                                   \
              "aten::upsample_trilinear3d_backward(Tensor grad_output, SymInt[3] output_size, "                    \
              "SymInt[5] input_size, bool align_corners, float? scales_d=None, float? scales_h=None, "             \
              "float? scales_w=None) -> Tensor")                                                                  \
  FBX_NN_UPS_(X, upsample_bicubic2d_backward_vec,                                                                 \
              "aten::upsample_bicubic2d_backward.vec(Tensor grad_output, SymInt[]? output_size, "                  \
              "SymInt[] input_size, bool align_corners, float[]? scale_factors) -> Tensor")                       \
  FBX_NN_UPS_(X, upsample_bicubic2d_backward,                                                                     \
              "aten::upsample_bicubic2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, " \
              "bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor")                        \
  X(pixel_shuffle, "aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", FBX_OPCAT_SHAPE, FBX_DT_SAME, \
    FBX_SH_CUSTOM, 0, fbx_k_pixel_shuffle)                                                                        \
  X(pixel_unshuffle, "aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor", FBX_OPCAT_SHAPE,        \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pixel_shuffle)                                                           \
  /* ---- recurrent cells (k_rnn.c) -------------------------------------------------------------- */            \
  X(rnn_tanh_cell,                                                                                                \
    "aten::rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "                  \
    "Tensor? b_hh=None) -> Tensor",                                                                               \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_cell)                                                    \
  X(rnn_relu_cell,                                                                                                \
    "aten::rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "                  \
    "Tensor? b_hh=None) -> Tensor",                                                                               \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_cell)                                                    \
  X(gru_cell,                                                                                                     \
    "aten::gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "    \
    "-> Tensor",                                                                                                  \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_cell)                                                    \
  X(lstm_cell,                                                                                                    \
    "aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "                    \
    "Tensor? b_hh=None) -> (Tensor, Tensor)",                                                                     \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_cell)                                                    \
  /* ---- whole-sequence recurrent layers (k_rnnseq.c) ------------------------------------------- */           \
  X(rnn_tanh_input,                                                                                               \
    "aten::rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "            \
    "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",                       \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(rnn_relu_input,                                                                                               \
    "aten::rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "            \
    "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",                       \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(gru_input,                                                                                                    \
    "aten::gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "                 \
    "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",                       \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(lstm_input,                                                                                                   \
    "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, "              \
    "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)",               \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(rnn_tanh_data,                                                                                                \
    "aten::rnn_tanh.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, "          \
    "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",                         \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(rnn_relu_data,                                                                                                \
    "aten::rnn_relu.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, "          \
    "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",                         \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(gru_data,                                                                                                     \
    "aten::gru.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, "               \
    "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",                         \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(lstm_data,                                                                                                    \
    "aten::lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, "            \
    "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)",                 \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rnn_seq)                                                     \
  X(fbx_rnn_seq_backward,                                                                                         \
    "fusebox::rnn_seq_backward(Tensor grad_output, Tensor[] grad_state, Tensor input, Tensor? batch_sizes, "      \
    "Tensor[] hx, Tensor[] params, int mode, bool has_biases, int num_layers, float dropout, bool train, "         \
    "bool bidirectional, bool batch_first) -> (Tensor, Tensor[], Tensor[])",                                      \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_rnn_seq_backward)                                      \
  /* ---- packed sequences (k_packed.c) ---------------------------------------------------------- */           \
  X(_pack_padded_sequence,                                                                                        \
    "aten::_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)",            \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k__pack_padded_sequence)                                     \
  X(_pad_packed_sequence,                                                                                         \
    "aten::_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, "        \
    "int total_length) -> (Tensor, Tensor)",                                                                      \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k__pad_packed_sequence)                                      \
  X(_pack_padded_sequence_backward,                                                                               \
    "aten::_pack_padded_sequence_backward(Tensor grad, int[] input_size, Tensor batch_sizes, bool batch_first) "  \
    "-> Tensor",                                                                                                  \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k__pack_padded_sequence_backward)                              \
  X(fbx_pad_packed_backward,                                                                                      \
    "fusebox::pad_packed_backward(Tensor grad, Tensor batch_sizes, bool batch_first) -> Tensor",                  \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_pad_packed_backward)                                     \
  /* ---- normalization (k_nnorm.c) -------------------------------------------------------------- */           \
  X(instance_norm,                                                                                                \
    "aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, " \
    "bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",                             \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_instance_norm)                                                 \
  X(native_batch_norm_backward,                                                                                   \
    "aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "      \
    "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) "   \
    "-> (Tensor, Tensor, Tensor)",                                                                                \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_native_batch_norm_backward)                               \
  X(fbx_batch_norm_backward,                                                                                      \
    "fusebox::batch_norm_backward(Tensor grad, Tensor input, Tensor? weight, Tensor? running_mean, "              \
    "Tensor? running_var, bool training, float eps) -> (Tensor, Tensor, Tensor)",                                 \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_batch_norm_backward)                                  \
  X(fbx_instance_norm_backward,                                                                                   \
    "fusebox::instance_norm_backward(Tensor grad, Tensor input, Tensor? weight, Tensor? running_mean, "           \
    "Tensor? running_var, bool use_input_stats, float eps) -> (Tensor, Tensor, Tensor)",                          \
    FBX_NN_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_batch_norm_backward)                                  \
  X(fbx_dropout_backward, "fusebox::dropout_backward(Tensor grad, Tensor result, float p, bool train) -> Tensor",  \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_fbx_dropout_backward)                                         \
  X(fbx_dropout_scale, "fusebox::dropout_scale(float p, bool? train) -> float", FBX_OPCAT_SCALAR, FBX_DT_NONE,     \
    FBX_SH_NONE, 0, fbx_k_fbx_dropout_scale)                                                                      \
  X(native_dropout_backward, "aten::native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor", \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_native_dropout_backward)                                      \
  /* ---- parametric ReLU (k_prelu.c) ------------------------------------------------------------ */            \
  X(prelu, "aten::prelu(Tensor self, Tensor weight) -> Tensor", FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0,          \
    fbx_k_prelu)                                                                                                  \
  X(prelu_backward, "aten::prelu_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)",    \
    FBX_NN_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_prelu_backward)

#endif
