/* The IR verifier: runs after every pass in tests and debug builds.
 *
 * Checks: every value is defined before each use and in scope (definitions
 * dominate uses, across nested blocks); use lists match the inputs exactly;
 * node/block ownership links are consistent; prim::If has a bool condition,
 * two parameterless blocks each returning as many values as it outputs;
 * prim::Loop has (max_trip_count: int, start_cond: bool, carried...) inputs,
 * one block with (iter: int, carried...) params returning (cond: bool,
 * carried...), and one output per carried value; prim::Constant has no
 * inputs, one output, and an attribute that fits its type; types are set and
 * tensor types are well formed; value names are unique; subgraphs of group
 * nodes verify too and have as many inputs/outputs as the node.
 *
 *   fbx_status *st = fbx_graph_verify(g);   // NULL when the graph is valid
 */
#ifndef FBX_IR_VERIFY_H
#define FBX_IR_VERIFY_H
#include "base/status.h"
#include "ir/graph.h"

fbx_status *fbx_graph_verify(const fbx_graph *g);

#endif
