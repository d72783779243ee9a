/* Helpers shared by the `fusebox` subcommands that run graphs (run, explain,
 * bench, plugin-check): graph inputs from the command line or made up at
 * random, fuser selection, timing, and comparing outputs with a reference.
 * Implemented in tools/cmd_inputs.c (named cmd_* so that the tools glob in
 * CMakeLists.txt builds it). */
#ifndef FBX_TOOLS_INPUTS_H
#define FBX_TOOLS_INPUTS_H
#include <stdbool.h>
#include <stdint.h>

#include <fusebox/tensor.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "host/host.h"
#include "ir/graph.h"
#include "ops/ivalue.h"

/* The text of --input help shared by the commands. */
#define FBX_CLI_INPUT_HELP                                                                 \
  "  --input [NAME=]X  one graph input: a .npy file, a scalar literal 3, 0.5, true,\n"  \
  "                    false, None, a string 'tanh' (bare text for a str input), or a\n"  \
  "                    list [1, 2] / [a.npy, b.npy] (Tensor[]). NAME is the input's name\n" \
  "                    in the graph (x.1) or its base (x) when that is unambiguous;\n"    \
  "                    inputs without a name fill the remaining ones in graph order.\n"

/* Read one --input value: a .npy file or a literal (3, 0.5, true, None,
 * 'text', [1, 2], [a.npy, b.npy]). */
fbx_status *fbx_cli_load_value(const char *text, fbx_ivalue *out);
/* Fill vals[0..ninputs(g)) from --input arguments (named ones first, then
 * positional ones in graph order); every input must be given exactly once.
 * On error the values already loaded are left in vals (release them). */
fbx_status *fbx_cli_gather_inputs(const fbx_graph *g, char **args, int nargs, fbx_ivalue *vals);
/* Random inputs (--random): every graph input must be a tensor whose IR type
 * gives its dtype and all sizes (Float(4, 8)); values uniform in [-1, 1)
 * for floating dtypes, 0..9 for integers, 0/1 for bool; contiguous. */
fbx_status *fbx_cli_random_inputs(const fbx_graph *g, uint64_t seed, fbx_ivalue *vals);

/* The sizes of --random inputs (--shape [NAME=]D0,D1,...). A shape without
 * a name is the default for every tensor input whose IR type does not give
 * all sizes (`Tensor`, `Float(*, 8)`); a named one sets that input's sizes
 * whatever its type says. The dtype stays the IR type's, float32 where the
 * type has none. */
typedef struct fbx_cli_shape {
  const char *name; /* NULL for the default; else not NUL-terminated, name_len chars */
  size_t name_len;
  int rank;
  int64_t sizes[FBX_MAX_DIMS];
} fbx_cli_shape;
/* Parse one --shape value: a comma list of 1 to FBX_MAX_DIMS sizes >= 0,
 * optionally NAME= in front; at most 2^40 elements. The name points into
 * text. False (and *out unspecified) when malformed. */
bool fbx_cli_parse_shape(const char *text, fbx_cli_shape *out);
/* As fbx_cli_random_inputs, with shapes[0..nshapes) giving sizes; a named
 * shape must name a graph input (its full name or unambiguous base) and
 * each input may be named once. */
fbx_status *fbx_cli_random_inputs_shaped(const fbx_graph *g, uint64_t seed, const fbx_cli_shape *shapes, int nshapes,
                                         fbx_ivalue *vals);

/* --random with some inputs given: the named --input values (a positional
 * one is an error), and random values (as fbx_cli_random_inputs_shaped) for
 * every input not named — scalars, lists and strings must be named. */
fbx_status *fbx_cli_mixed_inputs(const fbx_graph *g, char **args, int nargs, uint64_t seed,
                                 const fbx_cli_shape *shapes, int nshapes, fbx_ivalue *vals);

/* Load a fuser by selection name or path; `none` (or NULL) gives NULL. */
fbx_status *fbx_cli_load_fuser(const char *name, fbx_fuser **out);

double fbx_cli_now_ms(void);
/* Median of v[0..n) (sorts v). */
double fbx_cli_median(double *v, int n);

/* Inputs the graph may write (issue #12): mask[i] is set for each input that
 * an in-place op (aten::relu_, copy_, ...), a list mutation or unknown code
 * could reach, by the type-based alias analysis of core/passes
 * (fbx_graph_mutation_mask: writing a tensor in place may write any tensor,
 * since it may be a view of one). Returns how many are set. */
int fbx_cli_written_inputs(const fbx_graph *g, bool *mask);
/* out[i] = a deep copy of vals[i] (tensors with their sizes and strides,
 * lists and tuples copied down to their tensors) where mask[i], else a new
 * reference to vals[i]; mask NULL copies nothing. Release out[0..n) after
 * the run. Commands that run a graph more than once give every run fresh
 * copies of what it writes, so that run k does not see run k-1's writes. */
fbx_status *fbx_cli_fresh_inputs(const fbx_ivalue *vals, const bool *mask, int n, fbx_ivalue *out);

/* Flatten tuples and lists depth-first into out[0..cap); returns the count
 * (which may exceed cap: then only cap were stored). Borrowed values. */
int fbx_cli_flatten(const fbx_ivalue *v, int n, fbx_ivalue *out, int cap);

/* How far `got` is from `want` (ngot and nwant values, flattened): the largest
 * absolute and relative (|a-b| / max(|b|, tiny)) differences over all
 * numbers; NaN against NaN and equal infinities count as equal. Returns
 * false (and says why) when the structure, dtypes or shapes differ, or when
 * a NaN or infinity does not match. */
bool fbx_cli_max_error(const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, double *max_abs,
                       double *max_rel, fbx_strbuf *why);

/* Tolerance check in the corpus's convention: |a - b| <= atol + rtol * |b|
 * per element, NaN equal to NaN, infinities equal; integers and bools
 * exact. rtol/atol < 0 picks the per-dtype default (float32 1e-5 1e-6,
 * float16 1e-3 1e-3, bfloat16 1e-2 1e-2, float64 1e-12 1e-12). Returns false
 * with the first problem appended to *why. Values are flattened first; int,
 * float and bool scalars are compared as PyTorch's 0-d arrays would be. */
bool fbx_cli_allclose(const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, double rtol, double atol,
                      fbx_strbuf *why);

/* A whole decimal integer >= lo (for --iters, --seed, ...). */
bool fbx_cli_parse_int(const char *s, long long lo, long long *out);

#endif
