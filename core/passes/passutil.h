/* Helpers shared by the passes (internal to core/passes). */
#ifndef FBX_PASSES_PASSUTIL_H
#define FBX_PASSES_PASSUTIL_H
#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/graph.h"

/* n->kind spelled `ns::name`? (string compare: the op table will give us
 * enum kinds; until then passes name ops by their TorchScript spelling). */
bool fbx_passutil_kind_is(const fbx_node *n, const char *kind);

/* Start of every pass entry: false (and *changed = false, and a log line)
 * when FUSEBOX_DISABLE_PASSES names the pass. */
bool fbx_passutil_enter(const char *pass, bool *changed);

/* Move every use of `from` to `to`; FBX_ERR_NOMEM (some uses moved, the graph
 * still valid) when a use list could not grow. */
fbx_status *fbx_passutil_replace_uses(fbx_value *from, fbx_value *to);

/* "5", "12": a name the graph made up, not one from the source. */
bool fbx_passutil_is_numeric_name(const char *name);

/* Does any output of n have a use? */
bool fbx_passutil_has_uses(const fbx_node *n);

/* Attributes of a and b equal (same names, kinds, payloads; floats by bits;
 * tensors equal only when their data is known and equal; subgraphs never). */
bool fbx_passutil_attrs_equal(const fbx_node *a, const fbx_node *b);
uint64_t fbx_passutil_attrs_hash(const fbx_node *n);
/* For constants: same output type and equal attributes. */
bool fbx_passutil_consts_equal(const fbx_node *a, const fbx_node *b);

/* The element a prim::TupleIndex(prim::TupleConstruct(...), const i) or an
 * aten::__getitem__(prim::ListConstruct(...), const i) of a never-mutated list
 * selects, or NULL. */
fbx_value *fbx_passutil_fold_index(const fbx_node *n);

/* Insert a constant before pos (in pos's block). Return NULL on OOM. */
fbx_value *fbx_passutil_const_str(fbx_node *pos, const char *s, bool device);
fbx_value *fbx_passutil_const_ints(fbx_node *pos, const int64_t *v, int count);

#endif
