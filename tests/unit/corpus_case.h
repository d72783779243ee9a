/* Reading the conformance corpus (tests/corpus/cases/NAME/, see
 * tests/corpus/README.md) and comparing results with PyTorch's, for the unit
 * tests that run it: test_conformance, test_legacy_corpus,
 * test_autodiff_corpus, test_autodiff_graph, test_te_corpus and
 * test_nvf_corpus.
 *
 * A case holds graph.ir; args, one graph input per line (a .npy file of the
 * case, or a scalar literal: None, true, false, an integer, a float);
 * out0.npy... (the outputs flattened depth-first); optionally tol
 * ("rtol atol"), grad_outK.npy (the gradient fed to flattened output K) and
 * grad_<input>.npy (PyTorch's gradient of the graph input named <input>).
 * .npy files go through fbx_npy_read_file, which turns fortran-order arrays
 * into tensors with transposed strides.
 *
 * Comparison rules (outputs and gradients alike): dtype and shape must be
 * equal; floating values must be NaN exactly where PyTorch has NaN, equal
 * where either is infinite, and otherwise within atol + rtol * |PyTorch|;
 * other dtypes must be equal. A `why` strbuf gets the first problem
 * appended; it is left untouched when everything matches.
 *
 * Failures of the case files themselves (an unreadable .npy) are reported
 * through `why` too, so a test can print them per case and go on. */
#ifndef FBX_CORPUS_CASE_H
#define FBX_CORPUS_CASE_H
#include <stdbool.h>

#include "base/strbuf.h"
#include "ops/ivalue.h"

/* Sorted names of the case directories that hold a graph.ir: those of
 * tests/corpus/cases/ and the module cases of tests/corpus/modules/ (named
 * mod_*, less the ones tests/corpus/modules_pending.txt lists as pending); FBX_CORPUS_ONLY=TEXT keeps
 * only the names that contain TEXT. Returns their
 * count and sets *names (free with cc_free_names). Fails the running Check
 * test when the cases directory is missing. */
int cc_list(char ***names);
void cc_free_names(char **names, int n);
/* FBX_CORPUS_ONLY is set: cc_list gives a subset (minimum-count checks are skipped). */
bool cc_list_filtered(void);

/* tests/corpus/cases/NAME/FILE; one of 8 rotating static buffers. */
const char *cc_path(const char *name, const char *file);
bool cc_has_file(const char *name, const char *file);
/* The case has at least one grad_<input>.npy (PyTorch gradients of inputs)
 * and its backward is not pending (a "mod_NAME backward ..." line of
 * tests/corpus/modules_pending.txt). */
bool cc_has_input_grads(const char *name);

/* The args lines, trimmed, empty ones dropped; -1 when there is no args
 * file. Free with cc_free_lines. */
int cc_args_lines(const char *name, char **lines, int cap);
void cc_free_lines(char **lines, int n);
/* An args line names a .npy file of the case (else it is a scalar literal). */
bool cc_arg_is_npy(const char *line);
/* A scalar literal as a value; false when it is none of the forms above. */
bool cc_parse_scalar(const char *s, fbx_ivalue *out);
/* The case's inputs into in[0..cap); returns how many, or -1 with why
 * ("no args file", "input K: ...", "args line K: cannot read '...'").
 * On -1 nothing is left to release. */
int cc_load_inputs(const char *name, fbx_ivalue *in, int cap, fbx_strbuf *why);

typedef struct cc_tol {
  double rtol, atol;
  bool from_file; /* the case's tol file gave them */
} cc_tol;

/* The case's tol file, from_file false when it is missing or malformed. */
cc_tol cc_read_tol(const char *name);
/* Tolerance for an output of dtype d: the file's, else the dtype's default
 * (float32 1e-5/1e-6, float64 1e-12, float16 1e-3, bfloat16 1e-2, exact
 * otherwise). */
cc_tol cc_output_tol(cc_tol file, fbx_dtype d);
/* Tolerance for a gradient of dtype d: 10x the output tolerance, but at
 * least rtol 1e-4 / atol 1e-5 (float64: 1e-9 / 1e-10), since backward graphs
 * sum in other orders than PyTorch's kernels. */
cc_tol cc_grad_tol(cc_tol file, fbx_dtype d);

/* got against PyTorch's want under tolerance t (the rules above). */
bool cc_compare(const fbx_tensor *got, const fbx_tensor *want, cc_tol t, fbx_strbuf *why);

/* How many outK.npy the case has. */
int cc_count_outputs(const char *name);
/* outs (nouts graph outputs, flattened depth-first; ints, floats and bools
 * as 0-dim int64/float64/bool tensors) against outK.npy under
 * cc_output_tol. */
bool cc_compare_outputs(const char *name, const fbx_ivalue *outs, int nouts, fbx_strbuf *why);

/* grad_outK.npy for K < n into gout[K] (None where the file is missing,
 * defined[K] says which); returns how many were read, or -1 with why. */
int cc_load_grad_outputs(const char *name, fbx_ivalue *gout, bool *defined, int n, fbx_strbuf *why);

/* fusebox's gradient `grad` of graph input `input` against
 * grad_<input>.npy under cc_grad_tol. Without that file PyTorch has no
 * gradient: grad must be absent (not a tensor) or all zeros. *compared is
 * set when a file was compared. */
bool cc_check_input_grad(const char *name, const char *input, const fbx_ivalue *grad, bool *compared,
                         fbx_strbuf *why);

/* The case through the profiling executor under `fuser` (a name or path):
 * after profiling_runs profiling runs (0: FUSEBOX_PROFILING_RUNS=0, optimized
 * from the first run), three runs whose last outputs must equal PyTorch's;
 * a case whose optimized graph has groups must have run kernels; no compile
 * and no run may fail. NULL on success, else why (fbx_free it). Adds the
 * kernel runs and the groups to *kernel_runs and *groups. */
char *cc_fused_forward(const char *name, const char *fuser, int profiling_runs, int64_t *kernel_runs, int64_t *groups);
/* Forward + backward (three times) under `fuser`: the input gradients must
 * equal PyTorch's; no compile or run may fail. Adds the backward kernel runs
 * to *bw_kernel_runs. NULL on success, else why. */
char *cc_fused_backward(const char *name, const char *fuser, int64_t *bw_kernel_runs);

#endif
