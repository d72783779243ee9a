/* The TorchScript-IR parser: structure of parsed graphs, allocation-failure
 * injection, and speed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "ir/text.h"

static fbx_graph *parse_ok(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "t.ir");
  ck_assert_msg(st == NULL, "parse failed: %s", fbx_status_message(st));
  ck_assert_ptr_nonnull(g);
  return g;
}

static fbx_value *val(const fbx_graph *g, const char *name) {
  fbx_value *v = fbx_graph_find_value(g, name);
  ck_assert_msg(v != NULL, "no value %%%s", name);
  return v;
}

static fbx_node *nth_node(const fbx_block *b, int k) {
  fbx_node *n = fbx_block_first(b);
  for (int i = 0; i < k && n; i++) n = n->next == b->ret ? NULL : n->next;
  ck_assert_ptr_nonnull(n);
  return n;
}

static fbx_sym sym(const char *s) {
  fbx_sym k;
  ck_assert_int_eq(fbx_sym_intern(&k, s, strlen(s)), 0);
  return k;
}

static char *type_str(const fbx_type *t) {
  fbx_strbuf b = {0};
  fbx_type_print(&b, t);
  return fbx_strbuf_take(&b);
}

static const char *TYPES_GRAPH =
    "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
    "      %y : Long(*, 4),\n"
    "      %z : Float(requires_grad=1, device=cuda:0),\n"
    "      %w : FloatTensor(requires_grad=0),\n"
    "      %v : Tensor(2, 3),\n"
    "      %u : Double(SS(-2), 3)[Undefined],\n"
    "      %n : int,\n"
    "      %f : float,\n"
    "      %b : bool,\n"
    "      %s : str,\n"
    "      %none : NoneType,\n"
    "      %d : Device,\n"
    "      %num : number,\n"
    "      %sc : Scalar,\n"
    "      %li : int[],\n"
    "      %ot : Tensor?,\n"
    "      %olt : Tensor?[],\n"
    "      %lo : int[]?,\n"
    "      %tup : (Tensor, int),\n"
    "      %e : (),\n"
    "      %dict : Dict(str, Tensor),\n"
    "      %fut : Future[int],\n"
    "      %un : Union(int, float),\n"
    "      %cls : __torch__.foo.Bar,\n"
    "      %nt : NamedTuple(a : int, b : Tensor)):\n"
    "  return (%x.1)\n";

START_TEST(test_types) {
  fbx_graph *g = parse_ok(TYPES_GRAPH);
  ck_assert_int_eq(fbx_graph_ninputs(g), 25);
  const fbx_type *t = val(g, "x.1")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_TENSOR);
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(t->rank, 2);
  ck_assert_int_eq(t->sizes[0], 2);
  ck_assert_int_eq(t->sizes[1], 3);
  ck_assert_ptr_nonnull(t->strides);
  ck_assert_int_eq(t->strides[0], 3);
  ck_assert_int_eq(t->strides[1], 1);
  ck_assert_int_eq(t->requires_grad, 0);
  ck_assert_str_eq(t->device, "cpu");
  ck_assert(fbx_type_tensor_complete(t));

  t = val(g, "y")->type;
  ck_assert_int_eq(t->dtype, FBX_DTYPE_INT64);
  ck_assert_int_eq(t->rank, 2);
  ck_assert_int_eq(t->sizes[0], FBX_SIZE_UNKNOWN);
  ck_assert_ptr_null(t->strides);
  ck_assert_int_eq(t->requires_grad, -1);
  ck_assert_ptr_null(t->device);

  t = val(g, "z")->type;
  ck_assert_int_eq(t->rank, 0);
  ck_assert_int_eq(t->requires_grad, 1);
  ck_assert_str_eq(t->device, "cuda:0");

  t = val(g, "w")->type;
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(t->rank, -1);
  ck_assert_int_eq(t->requires_grad, 0);

  t = val(g, "v")->type;
  ck_assert_int_eq(t->dtype, FBX_DTYPE_UNDEFINED);
  ck_assert_int_eq(t->rank, 2);

  t = val(g, "u")->type;
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT64);
  ck_assert_int_eq(t->sizes[0], -2);
  ck_assert_int_eq(t->undefined, 1);

  ck_assert_ptr_eq(val(g, "n")->type, fbx_type_simple(FBX_TYPE_INT));
  ck_assert_ptr_eq(val(g, "f")->type, fbx_type_simple(FBX_TYPE_FLOAT));
  ck_assert_ptr_eq(val(g, "b")->type, fbx_type_simple(FBX_TYPE_BOOL));
  ck_assert_ptr_eq(val(g, "s")->type, fbx_type_simple(FBX_TYPE_STR));
  ck_assert_ptr_eq(val(g, "none")->type, fbx_type_simple(FBX_TYPE_NONE));
  ck_assert_ptr_eq(val(g, "d")->type, fbx_type_simple(FBX_TYPE_DEVICE));
  ck_assert_ptr_eq(val(g, "num")->type, fbx_type_simple(FBX_TYPE_NUMBER));
  t = val(g, "sc")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_NAMED);
  ck_assert_str_eq(t->name, "Scalar");

  t = val(g, "li")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_LIST);
  ck_assert_int_eq(t->elems[0]->kind, FBX_TYPE_INT);
  t = val(g, "ot")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_OPTIONAL);
  ck_assert_int_eq(t->elems[0]->kind, FBX_TYPE_TENSOR);
  t = val(g, "olt")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_LIST);
  ck_assert_int_eq(t->elems[0]->kind, FBX_TYPE_OPTIONAL);
  t = val(g, "lo")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_OPTIONAL);
  ck_assert_int_eq(t->elems[0]->kind, FBX_TYPE_LIST);
  t = val(g, "tup")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_TUPLE);
  ck_assert_int_eq(t->nelems, 2);
  ck_assert_int_eq(t->elems[1]->kind, FBX_TYPE_INT);
  t = val(g, "e")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_TUPLE);
  ck_assert_int_eq(t->nelems, 0);
  t = val(g, "dict")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_DICT);
  ck_assert_int_eq(t->elems[0]->kind, FBX_TYPE_STR);
  ck_assert_int_eq(t->elems[1]->kind, FBX_TYPE_TENSOR);
  t = val(g, "fut")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_NAMED);
  ck_assert_int_eq(t->nelems, 1);
  t = val(g, "un")->type;
  ck_assert_int_eq(t->kind, FBX_TYPE_NAMED);
  ck_assert(t->parenthesized);
  ck_assert_str_eq(t->name, "Union");
  ck_assert_int_eq(t->nelems, 2);
  t = val(g, "cls")->type;
  ck_assert_str_eq(t->name, "__torch__.foo.Bar");
  t = val(g, "nt")->type;
  ck_assert_int_eq(t->nelems, 2);
  ck_assert(fbx_type_contains_tensor(t));

  char *s = fbx_graph_print(g);
  ck_assert_str_eq(s, TYPES_GRAPH);
  fbx_free(s);
  fbx_graph_destroy(g);
}
END_TEST

/* parse(print(t)) gives back t (each type once as a graph input). */
START_TEST(test_type_roundtrip) {
  static const char *const types[] = {
      "Tensor", "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)", "Long(*, 4)",
      "Float(requires_grad=0, device=cpu)", "FloatTensor(requires_grad=0)", "Half(1, 1)", "BFloat16()",
      "Bool(0, strides=[1])", "Tensor(2, 3)", "Float(SS(-2), SS(-3), 4)", "Tensor[Undefined]",
      "Float(2)[Undefined]", "int", "float", "bool", "str", "NoneType", "Device", "number", "Scalar",
      "Layout", "ScalarType", "MemoryFormat", "Generator", "Any", "Storage", "Stream", "complex", "t",
      "int[]", "Tensor?", "Tensor?[]", "int[]?", "(Tensor, int)", "()", "Dict(str, Tensor)",
      "Future[int]", "Future(int)", "Union(int, float)", "__torch__.foo.Bar",
      "NamedTuple(a : int, b : Float(2))", "Enum<__torch__.Color>", "((int, int), Tensor[][])?",
      "Byte(1)", "Char(1)", "Short(1)", "Int(1)", "Double(1)", "Tensor()",
  };
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    char text[512];
    snprintf(text, sizeof text, "graph(%%x : %s):\n  return (%%x)\n", types[i]);
    fbx_graph *g = parse_ok(text);
    char *s = type_str(fbx_graph_input(g, 0)->type);
    ck_assert_str_eq(s, types[i]);
    fbx_graph *g2 = NULL;
    char text2[512];
    snprintf(text2, sizeof text2, "graph(%%x : %s):\n  return (%%x)\n", s);
    fbx_status *st = fbx_graph_parse(&g2, text2, strlen(text2), "t2");
    ck_assert_msg(!st, "%s", fbx_status_message(st));
    ck_assert_msg(fbx_type_equal(fbx_graph_input(g, 0)->type, fbx_graph_input(g2, 0)->type), "type %s", types[i]);
    fbx_free(s);
    fbx_graph_destroy(g);
    fbx_graph_destroy(g2);
  }
}
END_TEST

static const char *ATTRS_GRAPH =
    "graph():\n"
    "  %i : int = prim::Constant[value=-3]()\n"
    "  %b : bool = prim::Constant[value=1]()\n"
    "  %f : float = prim::Constant[value=1.0000000000000001e-05]()\n"
    "  %f1 : float = prim::Constant[value=1.]()\n"
    "  %fn : float = prim::Constant[value=-inf]()\n"
    "  %fnan : float = prim::Constant[value=nan]()\n"
    "  %fbig : float = prim::Constant[value=10000000000]()\n"
    "  %s : str = prim::Constant[value=\"say \\\"hi\\\"\\n\\t\\\\ \\001\"]()\n"
    "  %dev : Device = prim::Constant[value=\"cuda:0\"]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %is : int[] = prim::Constant[value=[1, -2]]()\n"
    "  %fs : float[] = prim::Constant[value=[1., 2.5]]()\n"
    "  %ss : str[] = prim::Constant[value=[\"a\", \"b\"]]()\n"
    "  %empty : int[] = prim::Constant[value=annotate(List[int], [])]()\n"
    "  %emptyf : float[] = prim::Constant[value=annotate(List[float], [])]()\n"
    "  %emptys : str[] = prim::Constant[value=annotate(List[str], [])]()\n"
    "  %t0 : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()\n"
    "  %t1 : Double(requires_grad=0, device=cpu) = prim::Constant[value={2.5}]()\n"
    "  %t2 : Tensor = prim::Constant[value=<Tensor>]()\n"
    "  %t3 : Long(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2  3 [ CPULongType{3} ]]()\n"
    "  %t4 : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 0.5000  1.5000 [ CPUFloatType{2} ]]()\n"
    "  %t5 : Float(0, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=[ CPUFloatType{0} ]]()\n"
    /* a frozen module's weight as PyTorch 1.13 prints it: the first value
     * negative, so no blank after '=' */
    "  %t6 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::Constant[value=-0.5717  0.5188  0.4822 "
    "-0.4880  0.2820 -0.3953 [ CPUFloatType{2,3} ]]()\n"
    "  %t7 : Long(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=-1  2 [ CPULongType{2} ]]()\n"
    "  %p : Tensor = prim::profile[profiled_type=Float(2, strides=[1], requires_grad=0, device=cpu), seen_none=0](%t4)\n"
    "  %q : Float(2), %ok : bool = prim::TypeCheck[types=[Float(2, requires_grad=0, device=cpu), Tensor]](%t4)\n"
    "  %q2 : bool = prim::TypeCheck[types=[]]()\n"
    "  return (%i)\n";

START_TEST(test_attrs) {
  fbx_graph *g = parse_ok(ATTRS_GRAPH);
  const fbx_attr *a;
  int64_t iv;
  double fv;
  ck_assert(fbx_value_const_int(val(g, "i"), &iv));
  ck_assert_int_eq(iv, -3);
  ck_assert(fbx_value_const_int(val(g, "b"), &iv));
  ck_assert_int_eq(iv, 1);
  ck_assert(fbx_value_const_float(val(g, "f"), &fv));
  ck_assert(fv == 1e-5);
  ck_assert(fbx_value_const_float(val(g, "f1"), &fv));
  ck_assert(fv == 1.0);
  ck_assert(fbx_value_const_float(val(g, "fn"), &fv));
  ck_assert(isinf(fv) && fv < 0);
  ck_assert(fbx_value_const_float(val(g, "fnan"), &fv));
  ck_assert(isnan(fv));
  a = fbx_node_attr(val(g, "fbig")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_FLOAT); /* printed without '.', still a float */
  ck_assert(a->u.f == 1e10);
  a = fbx_node_attr(val(g, "s")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_STR);
  ck_assert_str_eq(a->u.s, "say \"hi\"\n\t\\ \001");
  a = fbx_node_attr(val(g, "dev")->node, FBX_SYM_attr_value);
  ck_assert_str_eq(a->u.s, "cuda:0");
  ck_assert(fbx_value_is_none(val(g, "none")));
  ck_assert_int_eq(val(g, "none")->node->nattrs, 0);
  a = fbx_node_attr(val(g, "is")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_INTS);
  ck_assert_int_eq(a->n, 2);
  ck_assert_int_eq(a->u.is[1], -2);
  a = fbx_node_attr(val(g, "fs")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_FLOATS);
  ck_assert(a->u.fs[0] == 1.0 && a->u.fs[1] == 2.5);
  a = fbx_node_attr(val(g, "ss")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_STRS);
  ck_assert_str_eq(a->u.ss[1], "b");
  a = fbx_node_attr(val(g, "empty")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_INTS);
  ck_assert_int_eq(a->n, 0);
  ck_assert_int_eq(fbx_node_attr(val(g, "emptyf")->node, FBX_SYM_attr_value)->kind, FBX_ATTR_FLOATS);
  ck_assert_int_eq(fbx_node_attr(val(g, "emptys")->node, FBX_SYM_attr_value)->kind, FBX_ATTR_STRS);

  a = fbx_node_attr(val(g, "t0")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_TENSOR);
  ck_assert_int_eq(a->u.t->dtype, FBX_DTYPE_INT64);
  ck_assert_int_eq(a->u.t->spelling, 0);
  ck_assert_int_eq(*(int64_t *)a->u.t->data, 2);
  a = fbx_node_attr(val(g, "t1")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->u.t->dtype, FBX_DTYPE_FLOAT64);
  ck_assert(*(double *)a->u.t->data == 2.5);
  a = fbx_node_attr(val(g, "t2")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->u.t->spelling, 1);
  ck_assert_ptr_null(a->u.t->data);
  a = fbx_node_attr(val(g, "t3")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->u.t->spelling, 2);
  ck_assert_int_eq(a->u.t->dtype, FBX_DTYPE_INT64);
  ck_assert_int_eq(a->u.t->rank, 1);
  ck_assert_int_eq(a->u.t->sizes[0], 3);
  ck_assert_int_eq(((int64_t *)a->u.t->data)[2], 3);
  a = fbx_node_attr(val(g, "t4")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->u.t->dtype, FBX_DTYPE_FLOAT32);
  ck_assert(((float *)a->u.t->data)[1] == 1.5f);
  a = fbx_node_attr(val(g, "t5")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->u.t->sizes[0], 0);
  a = fbx_node_attr(val(g, "t6")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(a->kind, FBX_ATTR_TENSOR);
  ck_assert_int_eq(a->u.t->rank, 2);
  ck_assert_int_eq(a->u.t->sizes[1], 3);
  ck_assert(((float *)a->u.t->data)[0] == -0.5717f && ((float *)a->u.t->data)[3] == -0.4880f &&
            ((float *)a->u.t->data)[5] == -0.3953f);
  a = fbx_node_attr(val(g, "t7")->node, FBX_SYM_attr_value);
  ck_assert_int_eq(((int64_t *)a->u.t->data)[0], -1);

  fbx_node *prof = val(g, "p")->node;
  a = fbx_node_attr(prof, sym("profiled_type"));
  ck_assert_int_eq(a->kind, FBX_ATTR_TYPE);
  ck_assert_int_eq(a->u.ty->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(fbx_node_attr(prof, sym("seen_none"))->kind, FBX_ATTR_INT);
  ck_assert_int_eq(prof->attrs[0].name, sym("profiled_type")); /* stored order */
  fbx_node *tc = val(g, "q")->node;
  ck_assert_int_eq(tc->noutputs, 2);
  a = fbx_node_attr(tc, sym("types"));
  ck_assert_int_eq(a->kind, FBX_ATTR_TYPE);
  ck_assert_int_eq(a->u.ty->kind, FBX_TYPE_TUPLE);
  ck_assert_int_eq(a->u.ty->nelems, 2);
  a = fbx_node_attr(val(g, "q2")->node, sym("types"));
  ck_assert_int_eq(a->kind, FBX_ATTR_TYPE);
  ck_assert_int_eq(a->u.ty->nelems, 0);

  char *s = fbx_graph_print(g);
  ck_assert_str_eq(s, ATTRS_GRAPH);
  fbx_free(s);
  fbx_graph_destroy(g);
}
END_TEST

static const char *CONTROL_GRAPH =
    "graph(%x.1 : Tensor,\n"
    "      %n : int,\n"
    "      %c : bool,\n"
    "      %t.1 : (Tensor, Tensor)):\n"
    "  %true : bool = prim::Constant[value=1]() # corpus.py:7:4\n"
    "  %acc.1 : int = prim::Constant[value=0]()\n"
    "  %z : Tensor = prim::If(%c) # corpus.py:5:4\n"
    "    block0():\n"
    "      %7 : Tensor = aten::neg(%x.1) # corpus.py:6:8\n"
    "      -> (%7)\n"
    "    block1():\n"
    "      -> (%x.1)\n"
    "  %r : int, %y : Tensor = prim::Loop(%n, %true, %acc.1, %z)\n"
    "    block0(%i.1 : int, %acc.3 : int, %y.3 : Tensor):\n"
    "      %acc.5 : int = aten::add(%acc.3, %i.1)\n"
    "      %y.5 : Tensor = prim::If(%c)\n"
    "        block0():\n"
    "          %y.7 : Tensor = aten::relu(%y.3)\n"
    "          -> (%y.7)\n"
    "        block1():\n"
    "          -> (%y.3)\n"
    "       = prim::Print(%acc.5)\n"
    "      -> (%true, %acc.5, %y.5)\n"
    "  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t.1)\n"
    "  return (%r, %y)\n";

START_TEST(test_blocks) {
  const char *text = CONTROL_GRAPH;
  fbx_graph *g = parse_ok(text);
  ck_assert_int_eq(fbx_graph_ninputs(g), 4);
  fbx_node *ifn = val(g, "z")->node;
  ck_assert_int_eq(ifn->kind, FBX_SYM_prim_If);
  ck_assert_int_eq(ifn->nblocks, 2);
  ck_assert_int_eq(fbx_block_nreturns(ifn->blocks[0]), 1);
  ck_assert_str_eq(fbx_block_return(ifn->blocks[0], 0)->name, "7");
  ck_assert_ptr_eq(fbx_block_return(ifn->blocks[1], 0), val(g, "x.1"));
  ck_assert_str_eq(ifn->srcloc, "corpus.py:5:4");
  ck_assert_str_eq(fbx_block_first(ifn->blocks[0])->srcloc, "corpus.py:6:8");
  ck_assert_ptr_eq(fbx_block_first(ifn->blocks[0])->owner->owning, ifn);

  fbx_node *loop = val(g, "r")->node;
  ck_assert_int_eq(loop->kind, FBX_SYM_prim_Loop);
  ck_assert_int_eq(loop->noutputs, 2);
  ck_assert_int_eq(loop->ninputs, 4);
  fbx_block *body = loop->blocks[0];
  ck_assert_int_eq(fbx_block_nparams(body), 3);
  ck_assert_str_eq(fbx_block_param(body, 0)->name, "i.1");
  ck_assert_int_eq(fbx_block_param(body, 1)->type->kind, FBX_TYPE_INT);
  ck_assert_int_eq(fbx_block_nreturns(body), 3);
  fbx_node *inner_if = nth_node(body, 1);
  ck_assert_int_eq(inner_if->kind, FBX_SYM_prim_If);
  ck_assert_int_eq(inner_if->blocks[0]->owning->owner->owning->kind, FBX_SYM_prim_Loop);
  fbx_node *pr = nth_node(body, 2);
  ck_assert_int_eq(pr->kind, FBX_SYM_prim_Print);
  ck_assert_int_eq(pr->noutputs, 0);
  ck_assert_int_eq(pr->ninputs, 1);
  fbx_node *unpack = val(g, "a")->node;
  ck_assert_int_eq(unpack->noutputs, 2);
  ck_assert_ptr_eq(unpack->outputs[1], val(g, "b"));
  ck_assert_int_eq(fbx_graph_count_nodes(g), 10);
  /* uses were recorded */
  ck_assert_int_eq(val(g, "c")->nuses, 2);
  ck_assert_int_eq(val(g, "true")->nuses, 2);

  char *s = fbx_graph_print(g);
  ck_assert_str_eq(s, text);
  fbx_free(s);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(test_names) {
  fbx_graph *g = parse_ok(
      "graph(%self : __torch__.M,\n"
      "      %x.1_grad : Tensor):\n"
      "  %17 : int = prim::Constant[value=1]()\n"
      "  %_x.2.3 : Tensor = aten::mul(%x.1_grad, %17)\n"
      "  return (%_x.2.3)\n");
  ck_assert_str_eq(fbx_graph_input(g, 1)->name, "x.1_grad");
  ck_assert_ptr_nonnull(fbx_graph_find_value(g, "_x.2.3"));
  /* numeric names advance the fresh-name counter */
  ck_assert_uint_ge(g->next_name, 18);
  fbx_node *n = fbx_node_create(g, FBX_SYM_prim_Constant, 1);
  ck_assert_ptr_nonnull(n);
  ck_assert_ptr_null(fbx_graph_find_value(g, n->outputs[0]->name));
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(test_zero_output_spellings) {
  /* Both `= kind(...)` (PyTorch) and a bare `kind(...)` are accepted. */
  fbx_graph *g = parse_ok(
      "graph(%m : str):\n"
      "  %none : NoneType = prim::Constant()\n"
      "   = prim::RaiseException(%m, %none) # corpus.py:9:4\n"
      "  prim::Print(%m)\n"
      "  return ()\n");
  fbx_node *r = nth_node(g->block, 1);
  ck_assert_int_eq(r->kind, FBX_SYM_prim_RaiseException);
  ck_assert_str_eq(r->srcloc, "corpus.py:9:4");
  ck_assert_int_eq(nth_node(g->block, 2)->kind, FBX_SYM_prim_Print);
  ck_assert_int_eq(fbx_graph_noutputs(g), 0);
  fbx_graph_destroy(g);
}
END_TEST

static const char *GROUPS_GRAPH =
    "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
    "      %c : bool):\n"
    "  %g : Float(2, 3) = prim::TensorExprGroup_0(%x.1)\n"
    "  %h : Float(2, 3) = prim::If(%c)\n"
    "    block0():\n"
    "      %d : Float(2, 3) = prim::DifferentiableGraph_1(%g)\n"
    "      -> (%d)\n"
    "    block1():\n"
    "      -> (%g)\n"
    "  %k : Float(2, 3) = fusebox::FusionGroup_2[symbolic_shape_inputs=[-2]](%h, %g)\n"
    "  %plain : Tensor = aten::_foo_3(%k)\n"
    "  return (%plain)\n"
    "with prim::TensorExprGroup_0 = graph(%0 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
    "  %1 : Float(2, 3) = aten::relu(%0)\n"
    "  %2 : Float(2, 3) = prim::FusionGroup_0(%1)\n"
    "  return (%2)\n"
    "with prim::FusionGroup_0 = graph(%0 : Float(2, 3)):\n"
    "  %1 : Float(2, 3) = aten::neg(%0)\n"
    "  return (%1)\n"
    "with prim::DifferentiableGraph_1 = graph(%0 : Float(2, 3)):\n"
    "  %1 : Float(2, 3) = aten::sigmoid(%0)\n"
    "  return (%1)\n"
    "with fusebox::FusionGroup_2 = graph(%0 : Float(2, 3),\n"
    "      %1 : Float(2, 3)):\n"
    "  %2 : Float(2, 3) = aten::mul(%0, %1)\n"
    "  return (%2)\n";

START_TEST(test_groups) {
  fbx_graph *g = parse_ok(GROUPS_GRAPH);
  fbx_node *te = val(g, "g")->node;
  ck_assert_int_eq(te->kind, FBX_SYM_prim_TensorExprGroup);
  fbx_graph *sub = fbx_node_subgraph(te);
  ck_assert_ptr_nonnull(sub);
  ck_assert_ptr_eq(sub->parent, g);
  ck_assert_int_eq(fbx_graph_ninputs(sub), 1);
  fbx_node *nested = nth_node(sub->block, 1);
  ck_assert_int_eq(nested->kind, FBX_SYM_prim_FusionGroup);
  ck_assert_ptr_nonnull(fbx_node_subgraph(nested));
  ck_assert_int_eq(fbx_block_first(fbx_node_subgraph(nested)->block)->kind, sym("aten::neg"));
  fbx_node *dg = val(g, "d")->node;
  ck_assert_int_eq(dg->kind, FBX_SYM_prim_DifferentiableGraph);
  ck_assert_int_eq(fbx_block_first(fbx_node_subgraph(dg)->block)->kind, sym("aten::sigmoid"));
  fbx_node *fg = val(g, "k")->node;
  ck_assert_int_eq(fg->kind, FBX_SYM_fusebox_FusionGroup);
  ck_assert_int_eq(fg->nattrs, 2);
  ck_assert_int_eq(fbx_node_attr(fg, sym("symbolic_shape_inputs"))->u.is[0], -2);
  ck_assert_int_eq(fbx_graph_ninputs(fbx_node_subgraph(fg)), 2);
  /* no `with` section: the whole name is the kind */
  fbx_node *plain = val(g, "plain")->node;
  ck_assert_int_eq(plain->kind, sym("aten::_foo_3"));
  ck_assert_ptr_null(fbx_node_subgraph(plain));

  char *s = fbx_graph_print(g);
  ck_assert_str_eq(s, GROUPS_GRAPH);
  fbx_free(s);
  fbx_strbuf b = {0};
  fbx_node_print_line(&b, val(g, "k")->node);
  ck_assert_str_eq(b.data, "%k : Float(2, 3) = fusebox::FusionGroup[symbolic_shape_inputs=[-2], Subgraph=<Graph>](%h, %g)");
  fbx_strbuf_free(&b);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(test_print_line_and_double) {
  fbx_graph *g = parse_ok(
      "graph(%x.1 : Tensor):\n"
      "  %2 : int = prim::Constant[value=1]()\n"
      "  %y : Tensor = aten::add(%x.1, %x.1, %2) # m.py:3:8\n"
      "  return (%y)\n");
  fbx_strbuf b = {0};
  fbx_node_print_line(&b, val(g, "y")->node);
  ck_assert_str_eq(b.data, "%y : Tensor = aten::add(%x.1, %x.1, %2) # m.py:3:8");
  fbx_strbuf_free(&b);
  fbx_graph_destroy(g);

  static const struct {
    double v;
    const char *s;
  } cases[] = {
      {1.0, "1."},       {0.5, "0.5"},     {1e-5, "1.0000000000000001e-05"},
      {-3.0, "-3."},     {-0.0, "-0."},    {0.0, "0."},
      {0.1, "0.10000000000000001"},        {1e10, "10000000000"},
      {9999999999.0, "9999999999."},       {1e20, "1e+20"},
      {5e-324, "4.9406564584124654e-324"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    fbx_strbuf d = {0};
    fbx_print_double(&d, cases[i].v);
    ck_assert_str_eq(d.data, cases[i].s);
    fbx_strbuf_free(&d);
  }
  fbx_strbuf d = {0};
  fbx_print_double(&d, INFINITY);
  fbx_print_double(&d, -INFINITY);
  fbx_print_double(&d, NAN);
  ck_assert_str_eq(d.data, "inf-infnan");
  fbx_strbuf_free(&d);
}
END_TEST

START_TEST(test_whitespace_and_comments) {
  /* Parsing is by structure: odd indentation, blank and comment-only lines,
   * CRLF line ends and one-line input lists are fine. */
  fbx_graph *g = parse_ok(
      "# a comment before the graph\r\n"
      "graph(%x : Tensor, %y : Tensor):\r\n"
      "\r\n"
      "      # a comment line\r\n"
      "%z : Tensor = aten::mul(%x, %y) # f.py:1:2\r\n"
      "  %c : bool = prim::Constant[value=0]()\n"
      "  %w : Tensor = prim::If(%c)\n"
      "  block0():\n"
      "  -> (%z)\n"
      "        block1():\n"
      " -> (%y)\n"
      "  return (%w)   \n"
      "\n# trailing comment\n");
  ck_assert_str_eq(val(g, "z")->node->srcloc, "f.py:1:2");
  char *s = fbx_graph_print(g);
  ck_assert_str_eq(s,
                   "graph(%x : Tensor,\n"
                   "      %y : Tensor):\n"
                   "  %z : Tensor = aten::mul(%x, %y) # f.py:1:2\n"
                   "  %c : bool = prim::Constant[value=0]()\n"
                   "  %w : Tensor = prim::If(%c)\n"
                   "    block0():\n"
                   "      -> (%z)\n"
                   "    block1():\n"
                   "      -> (%y)\n"
                   "  return (%w)\n");
  fbx_free(s);
  fbx_graph_destroy(g);
  g = parse_ok("graph():\n  return ()\n");
  ck_assert_int_eq(fbx_graph_ninputs(g), 0);
  s = fbx_graph_print(g);
  ck_assert_str_eq(s, "graph():\n  return ()\n");
  fbx_free(s);
  fbx_graph_destroy(g);
}
END_TEST

/* Fail the n-th allocation for n = 0, 1, ... until parsing succeeds: every
 * failure must be FBX_ERR_NOMEM, with no leak (ASan) and no crash. */
START_TEST(test_alloc_failures) {
  const char *const graphs[] = {GROUPS_GRAPH, ATTRS_GRAPH, TYPES_GRAPH, CONTROL_GRAPH};
  for (size_t k = 0; k < sizeof graphs / sizeof *graphs; k++) {
    const char *text = graphs[k];
    long n;
    for (n = 0; n < 100000; n++) {
      fbx_graph *g = NULL;
      fbx_alloc_fail_after(n);
      fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "oom.ir");
      long failures = fbx_alloc_failures();
      fbx_alloc_fail_after(-1);
      if (!st) {
        ck_assert_ptr_nonnull(g);
        char *s = fbx_graph_print(g);
        ck_assert_str_eq(s, text);
        fbx_free(s);
        fbx_graph_destroy(g);
        if (failures == 0) break;
        continue;
      }
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "n=%ld: %s", n, fbx_status_message(st));
      ck_assert_ptr_null(g);
      fbx_status_free(st);
    }
    ck_assert_int_gt(n, 3);
    /* The printer fails cleanly too. */
    fbx_graph *g = parse_ok(text);
    for (long m = 0;; m++) {
      fbx_alloc_fail_after(m);
      char *s = fbx_graph_print(g);
      long failures = fbx_alloc_failures();
      fbx_alloc_fail_after(-1);
      if (s) {
        ck_assert_str_eq(s, text);
        fbx_free(s);
        if (!failures) break;
      }
    }
    fbx_graph_destroy(g);
  }
}
END_TEST

/* A ~1 MB graph parses in linear time. */
START_TEST(test_speed) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n      %n : int):\n");
  fbx_strbuf_puts(&b, "  %one : int = prim::Constant[value=1]()\n");
  fbx_strbuf_puts(&b, "  %true : bool = prim::Constant[value=1]()\n");
  const char *prev = "x.1";
  char name[32], pname[32];
  int i = 0;
  while (b.len < (1u << 20)) {
    snprintf(name, sizeof name, "v%d.1", i);
    if (i % 50 == 49) {
      fbx_strbuf_printf(&b,
                        "  %%%s : Tensor = prim::Loop(%%n, %%true, %%%s) # corpus.py:%d:4\n"
                        "    block0(%%i%d : int, %%a%d : Tensor):\n"
                        "      %%b%d : Tensor = aten::mul(%%a%d, %%a%d) # corpus.py:%d:8\n"
                        "      -> (%%true, %%b%d)\n",
                        name, prev, i, i, i, i, i, i, i, i);
    } else {
      fbx_strbuf_printf(&b, "  %%%s : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%%%s, %%%s, %%one) # corpus.py:%d:8\n",
                        name, prev, prev, i);
    }
    snprintf(pname, sizeof pname, "%s", name);
    prev = pname;
    i++;
  }
  fbx_strbuf_printf(&b, "  return (%%%s)\n", prev);
  ck_assert(!b.oom);
  fbx_graph *g = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fbx_status *st = fbx_graph_parse(&g, b.data, b.len, "big.ir");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("test_speed: parsed %zu bytes (%d nodes) in %.1f ms\n", b.len, fbx_graph_count_nodes(g), ms);
  char *s = fbx_graph_print(g);
  ck_assert_str_eq(s, b.data);
  fbx_free(s);
  fbx_graph_destroy(g);
  fbx_strbuf_free(&b);
}
END_TEST

/* A long flat block (~10 MB, 85k nodes) stays linear: appending nodes must
 * not renumber the block over and over. */
START_TEST(test_speed_flat) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
                      "  %one : int = prim::Constant[value=1]()\n  %v0 : Tensor = aten::neg(%x)\n");
  int n = 1;
  for (; b.len < (10u << 20); n++)
    fbx_strbuf_printf(&b, "  %%v%d : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::add(%%v%d, %%x, "
                      "%%one) # corpus.py:%d:8\n", n, n - 1, n);
  fbx_strbuf_printf(&b, "  return (%%v%d)\n", n - 1);
  ck_assert(!b.oom);
  fbx_graph *g = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fbx_status *st = fbx_graph_parse(&g, b.data, b.len, "flat.ir");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("test_speed_flat: parsed %zu bytes (%d nodes in one block) in %.1f ms\n", b.len, n, ms);
  /* printed, not asserted: bench/scale watches the per-node cost */
  fbx_graph_destroy(g);
  fbx_strbuf_free(&b);
}
END_TEST

START_TEST(test_parse_file) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, "/nonexistent/dir/x.ir");
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_IO);
  ck_assert_ptr_null(g);
  fbx_status_free(st);
  char path[] = "/tmp/fbx_parse_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs("graph(%x : Tensor):\n  return (%x)\n", f);
  fclose(f);
  st = fbx_graph_parse_file(&g, path);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_graph_destroy(g);
  remove(path);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("parse");
  TCase *tc = tcase_create("parse");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_types);
  tcase_add_test(tc, test_type_roundtrip);
  tcase_add_test(tc, test_attrs);
  tcase_add_test(tc, test_blocks);
  tcase_add_test(tc, test_names);
  tcase_add_test(tc, test_zero_output_spellings);
  tcase_add_test(tc, test_groups);
  tcase_add_test(tc, test_print_line_and_double);
  tcase_add_test(tc, test_whitespace_and_comments);
  tcase_add_test(tc, test_alloc_failures);
  tcase_add_test(tc, test_speed);
  tcase_add_test(tc, test_speed_flat);
  tcase_add_test(tc, test_parse_file);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
