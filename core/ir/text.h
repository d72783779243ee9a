/* TorchScript IR text: the parser and the printer.
 *
 * The format is what PyTorch prints for `torch.jit.script(fn).graph`:
 *
 *   graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
 *         %n : int):
 *     %2 : int = prim::Constant[value=1]()
 *     %y : Tensor = aten::add(%x.1, %x.1, %2) # model.py:3:8
 *     %z : Tensor = prim::If(%c)
 *       block0():
 *         -> (%y)
 *       block1():
 *         -> (%x.1)
 *     return (%z)
 *
 * followed, when nodes carry subgraphs, by `with prim::FusionGroup_0 = graph(...)`
 * sections. The printer writes the same format, and
 * print(parse(print(g))) == print(g) holds for every graph.
 *
 *   fbx_graph *g;
 *   fbx_status *st = fbx_graph_parse(&g, text, len, "model.ir");
 *   if (st) { puts(fbx_status_message(st)); ... }   // "model.ir:3:17: unknown value %q\n  <line>\n  ^"
 *   char *s = fbx_graph_print(g);
 *   fbx_free(s);
 */
#ifndef FBX_IR_TEXT_H
#define FBX_IR_TEXT_H
#include <stddef.h>

#include "base/status.h"
#include "base/strbuf.h"
#include "ir/graph.h"

/* Parse text[0..len) (need not be NUL-terminated). `filename` names the
 * source in error messages ("file:line:col: message", then the offending
 * line and a caret). Never crashes on any input. */
fbx_status *fbx_graph_parse(fbx_graph **out, const char *text, size_t len, const char *filename);
/* Read and parse a file. */
fbx_status *fbx_graph_parse_file(fbx_graph **out, const char *path);

/* The whole graph as text (free with fbx_free); NULL when out of memory. */
char *fbx_graph_print(const fbx_graph *g);
void fbx_graph_print_to(fbx_strbuf *b, const fbx_graph *g);
/* One node as its line would print, without indentation, blocks or newline
 * (for error messages: "%y : Tensor = aten::add(%x.1, %x.1, %2)"). */
void fbx_node_print_line(fbx_strbuf *b, const fbx_node *n);
/* Append a double the way TorchScript prints float attributes ("1.", "0.5",
 * "1.0000000000000001e-05", "inf", "-inf", "nan"). */
void fbx_print_double(fbx_strbuf *b, double v);

#endif
