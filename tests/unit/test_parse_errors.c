/* Malformed TorchScript IR: each input must fail with a precise message at
 * the right line:col, followed by the offending line and a caret. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/text.h"

typedef struct err_case {
  const char *text;
  int line, col;
  const char *msg; /* substring of the message */
  fbx_code code;   /* 0: FBX_ERR_PARSE */
} err_case;

#define GWITH(body) "graph(%x : Tensor):\n" body

/* Most rows leave `code` out (FBX_ERR_PARSE). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const err_case cases[] = {
    /* empty and missing graph( */
    {"", 1, 1, "empty input: expected 'graph('"},
    {"   \n\n", 1, 1, "empty input"},
    {"grph(%x : Tensor):\n  return (%x)\n", 1, 1, "expected 'graph(' to start a graph, found 'grph'"},
    {"graph %x : Tensor):\n  return (%x)\n", 1, 6, "expected '(' after 'graph', found whitespace"},
    /* truncated input at various points */
    {"graph(%x : Tensor", 1, 18, "unexpected end of input in the graph's input list (missing ')')"},
    {"graph(%x : Tensor,\n      %y : Float(2, 3", 2, 22, "unexpected end of input in tensor type 'Float('"},
    {"graph(%x : Tensor,\n      %y : ", 2, 11, "unexpected end of input: expected a type"},
    {GWITH("  %y : Tensor = aten::relu(%x"), 2, 30, "unexpected end of input in the input list of aten::relu"},
    {GWITH("  %y : Tensor = aten::relu(%x)\n"), 2, 31, "the graph has no 'return (...)'"},
    {GWITH("  %y : Tensor = aten::foo[a=1, b="), 2, 34, "unexpected end of input: expected a value for attribute 'b'"},
    {GWITH("  %y : Tensor = aten::foo[a=1"), 2, 30, "unexpected end of input in the attribute list of aten::foo"},
    {GWITH("  %y : Tensor = prim::If(%x)\n    block0():\n      -> (%x)\n    block1():\n"), 5, 14,
     "unexpected end of input in block1 of prim::If (missing '-> (...)')"},
    {GWITH("  %s : str = prim::Constant[value=\"abc"), 2, 35, "unterminated string literal"},
    {GWITH("  %y : Tensor = aten::relu(%x)\n  return (%y\n"), 3, 13, "unexpected end of input in the graph's return list"},
    {GWITH("  %y : Tensor"), 2, 14, "unexpected end of input after the outputs of a node"},
    /* names and scopes */
    {GWITH("  %y : Tensor = aten::relu(%q)\n  return (%y)\n"), 2, 28, "unknown value %q"},
    {GWITH("  %y : Tensor = aten::relu(%x)\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n"), 3, 3,
     "duplicate definition of value %y (first defined on line 2)"},
    {"graph(%x : Tensor, %c : bool):\n  %y : Tensor = prim::If(%c)\n    block0():\n      %z : Tensor = aten::neg(%x)\n"
     "      -> (%z)\n    block1():\n      -> (%x)\n  return (%z)\n",
     8, 11, "unknown value %z here: it is defined on line 4 inside a block"},
    {GWITH("  %z : Tensor = aten::foo(%z)\n  return (%z)\n"), 2, 27, "unknown value %z here: it is an output of the node"},
    {"graph(%x-1 : Tensor):\n  return (%x-1)\n", 1, 9, "invalid character '-' in value name '%x'"},
    {"graph(% : Tensor):\n  return ()\n", 1, 8, "expected a value name after '%'"},
    /* brackets */
    {GWITH("  %y : Tensor = aten::relu(%x))\n  return (%y)\n"), 2, 31, "expected a node or 'return (...)', found ')'"},
    {GWITH("  %y : Tensor = aten::add[alpha=1(%x)\n  return (%y)\n"), 2, 34,
     "expected ',' or ']' in the attribute list of aten::add, found '('"},
    {GWITH("  %y : Tensor = aten::relu(%x, %x\n  return (%y)\n"), 3, 3,
     "expected ',' or ')' in the input list of aten::relu, found 'return'"},
    /* types and dtypes */
    {"graph(%x : Flaot(2, 3)):\n  return (%x)\n", 1, 12, "unknown tensor dtype 'Flaot'"},
    {"graph(%x : Tensr):\n  return (%x)\n", 1, 12, "unknown type 'Tensr' (did you mean Tensor?)"},
    {"graph(%x : Tensor, %n : innt):\n  return (%x)\n", 1, 25, "unknown type 'innt' (did you mean int?)"},
    {"graph(%x : Tensor, %n : Foo):\n  return (%x)\n", 1, 25, "unknown type 'Foo' (expected Tensor"},
    {"graph(%x : Tensor, %n : Foo(int)):\n  return (%x)\n", 1, 25, "unknown type 'Foo'"},
    {"graph(%x : Tensor, %n : Tensor?[]?, %m : Optinal(int)):\n  return (%x)\n", 1, 42, "unknown type 'Optinal'"},
    {"graph(%x : Float(2, x)):\n  return (%x)\n", 1, 21, "malformed tensor type: expected a size"},
    {"graph(%x : ComplexFloat(2, 3)):\n  return (%x)\n", 1, 12, "unsupported dtype 'ComplexFloat'", FBX_ERR_UNSUPPORTED},
    {"graph(%x : 123):\n  return (%x)\n", 1, 12, "expected a type, found '123'"},
    {"graph(%x : Long(-3)):\n  return (%x)\n", 1, 17, "size -3 is negative"},
    {"graph(%x : Float(2, 3, strides=[1])):\n  return (%x)\n", 1, 12, "strides has 1 entries but the type has rank 2"},
    {"graph(%x : Float(2, foo=1)):\n  return (%x)\n", 1, 21, "unknown property 'foo'"},
    {"graph(%x : FloatTensor(2)):\n  return (%x)\n", 1, 24, "sizes are not allowed in 'FloatTensor(...)'"},
    {"graph(%x : Dict(str)):\n  return (%x)\n", 1, 12, "Dict type needs a key and a value type"},
    /* attribute values */
    {GWITH("  %y : Tensor = aten::foo[alpha=@](%x)\n  return (%y)\n"), 2, 33, "bad attribute value for 'alpha'"},
    {GWITH("  %s : str = prim::Constant[value=\"a\\qb\"]()\n  return (%s)\n"), 2, 37,
     "invalid escape sequence '\\q' in string literal"},
    {GWITH("  %s : str = prim::Constant[value=\"\\777\"]()\n  return (%s)\n"), 2, 36, "octal escape '\\777' is out of range"},
    {GWITH("  %s : str = prim::Constant[value=\"abc]()\n  return (%s)\n"), 2, 35, "unterminated string literal (end of line"},
    {GWITH("  %i : int = prim::Constant[value=99999999999999999999]()\n  return (%i)\n"), 2, 35,
     "integer literal '99999999999999999999' is out of range"},
    {GWITH("  %i : int = prim::Constant[value=-9223372036854775809]()\n  return (%i)\n"), 2, 35, "out of range"},
    {GWITH("  %y : float = prim::Constant[value=1.5e999]()\n  return (%y)\n"), 2, 37, "float literal '1.5e999' is out of range"},
    {GWITH("  %y : Tensor = aten::foo[a=1.5.3](%x)\n  return (%y)\n"), 2, 29, "malformed number '1.5.3'"},
    {GWITH("  %y : Tensor = aten::foo[a=1, a=2](%x)\n  return (%y)\n"), 2, 32, "duplicate attribute 'a'"},
    {GWITH("  %y : Tensor = aten::foo[Subgraph=<Graph>](%x)\n  return (%y)\n"), 2, 27,
     "a Subgraph attribute cannot be written inline"},
    {GWITH("  %y : Tensor = prim::Constant[value= 1  2 [ CPULongType{3} ]]()\n  return (%y)\n"), 2, 44,
     "inline tensor constant has 2 values but its shape needs 3", FBX_ERR_UNSUPPORTED},
    {GWITH("  %y : Tensor = prim::Constant[value= 1  2  3  4 [ CPUComplexFloatType{2} ]]()\n  return (%y)\n"), 2, 55,
     "unsupported dtype 'ComplexFloat' in tensor constant", FBX_ERR_UNSUPPORTED},
    {GWITH("  %y : Tensor = prim::Constant[value= (1,.,.) =  1 [ CPULongType{1,1,1} ]]()\n  return (%y)\n"), 2, 39,
     "unsupported inline tensor printout", FBX_ERR_UNSUPPORTED},
    {GWITH("  %y : Tensor[] = prim::Constant[value=[<Tensors>]]()\n  return (%y)\n"), 2, 41,
     "unsupported attribute value: a list of tensors", FBX_ERR_UNSUPPORTED},
    {GWITH("  %y : Tensor = aten::foo[a=[[1, 2]], b=(1, [2)](%x)\n  return (%y)\n"), 2, 47,
     "unbalanced ')' in an attribute value"},
    {GWITH("  %y : Tensor = aten::foo[a=1,](%x)\n  return (%y)\n"), 2, 31, "expected an attribute name"},
    /* node shape */
    {GWITH("  %y : Tensor = relu(%x)\n  return (%y)\n"), 2, 17, "expected an operator kind of the form 'namespace::name'"},
    {GWITH("  %y : Tensor aten::relu(%x)\n  return (%y)\n"), 2, 15, "expected ',' or '=' after the type of output %y"},
    {GWITH("  %a, %b : Tensor = prim::TupleUnpack(%x)\n  return (%a)\n"), 2, 5, "output %a has no type"},
    /* blocks */
    {"graph(%x : Tensor, %c : bool):\n  %y : Tensor = prim::If(%c)\n    block0():\n      -> (%x)\n  return (%y)\n", 2,
     17, "prim::If must have exactly 2 blocks, found 1"},
    {"graph(%x : Tensor, %n : int, %c : bool):\n  %y : Tensor = prim::Loop(%n, %c, %x)\n    block0(%i : int, %a : "
     "Tensor):\n      -> (%c, %a)\n    block1(%j : int, %b : Tensor):\n      -> (%c, %b)\n  return (%y)\n",
     2, 17, "prim::Loop must have exactly 1 block, found 2"},
    {"graph(%x : Tensor, %c : bool):\n  %y : Tensor = prim::If(%c)\n    block0():\n      -> (%x, %x)\n    block1():\n"
     "      -> (%x)\n  return (%y)\n",
     4, 7, "block0 of prim::If returns 2 values but the node has 1 output"},
    {"graph(%x : Tensor, %n : int, %c : bool):\n  %y : Tensor = prim::Loop(%n, %c, %x)\n    block0(%i : int, %a : "
     "Tensor):\n      -> (%a)\n  return (%y)\n",
     4, 7, "block0 of prim::Loop returns 1 value but needs 2"},
    {"graph(%x : Tensor, %n : int, %c : bool):\n  %y : Tensor = prim::Loop(%n, %c, %x)\n    block0(%i : int):\n"
     "      -> (%c, %x)\n  return (%y)\n",
     3, 5, "block0 of prim::Loop has 1 parameter but needs 2"},
    {GWITH("  %y : Tensor = prim::If(%x)\n    block1():\n      -> (%x)\n  return (%y)\n"), 3, 5,
     "expected block0 of prim::If, found block1"},
    {GWITH("  %y : Tensor = aten::relu(%x)\n  -> (%y)\n"), 3, 3, "expected a node or 'return (...)', found '-'"},
    {"graph(%x : Tensor, %c : bool):\n  %y : Tensor = prim::If(%c)\n    block0():\n      return (%x)\n", 4, 7,
     "expected a node or '-> (...)' in block0 of prim::If, found 'return'"},
    /* after the graph, `with` sections */
    {GWITH("  return (%x)\ngarbage here\n"), 3, 1, "unexpected 'garbage' after the end of the graph"},
    {GWITH("  return (%x)\n  \t%z : Tensor = aten::relu(%x)\n"), 3, 4, "unexpected '%z' after the end of the graph"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x)\n  return (%y)\nwith prim::FusionGroup_1 = graph(%0 : Tensor):\n"
           "  return (%0)\n"),
     4, 6, "`with prim::FusionGroup_1` section does not match any group node"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x)\n  return (%y)\nwith prim::FusionGroup_0 = graph(%0 : Tensor):\n"
           "  return (%0)\nwith prim::FusionGroup_0 = graph(%0 : Tensor):\n  return (%0)\n"),
     6, 6, "duplicate `with prim::FusionGroup_0` section"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x, %x)\n  return (%y)\nwith prim::FusionGroup_0 = graph(%0 : Tensor):\n"
           "  return (%0)\n"),
     2, 17, "group prim::FusionGroup_0 has 2 inputs but its subgraph (the `with` section on line 4) takes 1"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x)\n  return (%y)\nwith prim::FusionGroup_0 = graph(%0 : Tensor):\n"
           "  return (%0, %0)\n"),
     2, 17, "has 1 output but its subgraph (the `with` section on line 4) returns 2"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x)\n  %z : Tensor = prim::FusionGroup_0(%y)\n  return (%z)\n"
           "with prim::FusionGroup_0 = graph(%0 : Tensor):\n  return (%0)\n"),
     3, 17, "group prim::FusionGroup_0 is used by more than one node"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x)\n  return (%y)\nwith prim::FusionGroup_0 = graph(%0 : Tensor):\n"
           "  %1 : Tensor = aten::relu(%0)\n"),
     5, 31, "the graph has no 'return (...)'"},
    {GWITH("  %y : Tensor = prim::FusionGroup_0(%x)\n  %z : Tensor = prim::FusionGroup_1(%y)\n  return (%z)\n"
           "with prim::FusionGroup_0 = graph(%0 : Tensor):\n  return (%0)\n"),
     3, 17, "has no `with prim::FusionGroup_1 = graph(...)` section"},
    {GWITH("  return (%x)\nwith aten::foo = graph():\n  return ()\n"), 3, 6,
     "`with aten::foo` section does not match any group node"},
};

static void check_case(const err_case *c, int i) {
  fbx_graph *g = (fbx_graph *)1;
  fbx_status *st = fbx_graph_parse(&g, c->text, strlen(c->text), "bad.ir");
  ck_assert_msg(st != NULL, "case %d parsed but should fail:\n%s", i, c->text);
  ck_assert_ptr_null(g);
  const char *m = fbx_status_message(st);
  fbx_code want = c->code ? c->code : FBX_ERR_PARSE;
  ck_assert_msg(fbx_status_code(st) == want, "case %d: code %s, want %s: %s", i, fbx_code_name(fbx_status_code(st)),
                fbx_code_name(want), m);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "bad.ir:%d:%d: ", c->line, c->col);
  ck_assert_msg(!strncmp(m, prefix, strlen(prefix)), "case %d: want position %s, got: %s", i, prefix, m);
  ck_assert_msg(strstr(m, c->msg) != NULL, "case %d: message lacks \"%s\": %s", i, c->msg, m);
  /* "...message\n<line>\n<spaces>^" with the caret under the column */
  const char *nl1 = strchr(m, '\n');
  ck_assert_msg(nl1 != NULL, "case %d: no source line: %s", i, m);
  const char *nl2 = strchr(nl1 + 1, '\n');
  ck_assert_msg(nl2 != NULL, "case %d: no caret line: %s", i, m);
  const char *caret = nl2 + 1;
  ck_assert_msg(strchr(caret, '\n') == NULL && caret[strlen(caret) - 1] == '^', "case %d: bad caret line: %s", i, m);
  ck_assert_msg((int)strlen(caret) == c->col, "case %d: caret at column %d, want %d:\n%s", i, (int)strlen(caret), c->col, m);
  for (const char *q = caret; *q != '^'; q++) ck_assert(*q == ' ' || *q == '\t');
  /* the shown line is the offending line of the input */
  int line = 1;
  const char *ls = c->text;
  for (const char *q = c->text; *q && line < c->line; q++)
    if (*q == '\n') line++, ls = q + 1;
  size_t shown = (size_t)(nl2 - nl1 - 1);
  ck_assert_msg(!strncmp(nl1 + 1, ls, shown), "case %d: shown line is not line %d: %s", i, c->line, m);
  fbx_status_free(st);
}

START_TEST(test_error_table) {
  int n = (int)(sizeof cases / sizeof *cases);
  ck_assert_int_ge(n, 35);
  for (int i = 0; i < n; i++) check_case(&cases[i], i);
  printf("test_parse_errors: %d malformed inputs checked\n", n);
}
END_TEST

/* Every prefix of a valid graph fails cleanly (or parses), never crashes. */
START_TEST(test_truncations) {
  const char *text =
      "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
      "      %c : bool):\n"
      "  %s : str = prim::Constant[value=\"a\\n\\\"b\\\"\"]()\n"
      "  %l : float[] = prim::Constant[value=[1., 2.5]]()\n"
      "  %t : Long(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2  3 [ CPULongType{3} ]]()\n"
      "  %y : Tensor = prim::If(%c) # f.py:1:2\n"
      "    block0():\n"
      "      %z : Tensor = prim::FusionGroup_0(%x.1)\n"
      "      -> (%z)\n"
      "    block1():\n"
      "      -> (%x.1)\n"
      "  return (%y)\n"
      "with prim::FusionGroup_0 = graph(%0 : Float(2, 3)):\n"
      "  %1 : (Tensor, int)?[] = aten::foo[types=[Float(2), int]](%0)\n"
      "  return (%0)\n";
  size_t len = strlen(text);
  int ok = 0;
  for (size_t n = 0; n <= len; n++) {
    char *buf = malloc(n ? n : 1); /* exactly n bytes: ASan catches overreads */
    memcpy(buf, text, n);
    fbx_graph *g = NULL;
    fbx_status *st = fbx_graph_parse(&g, buf, n, "trunc.ir");
    if (st) {
      ck_assert_int_ne(fbx_status_code(st), FBX_ERR_NOMEM);
      ck_assert_ptr_nonnull(strchr(fbx_status_message(st), '^'));
      fbx_status_free(st);
    } else {
      ok++;
      fbx_graph_destroy(g);
    }
    free(buf);
  }
  ck_assert_int_ge(ok, 1);
}
END_TEST

START_TEST(test_deep_nesting) {
  /* Deep types and deep blocks stop at the nesting limit, not the stack. */
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "graph(%x : ");
  for (int i = 0; i < 100000; i++) fbx_strbuf_putc(&b, '(');
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, b.data, b.len, "deep.ir");
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "nesting too deep"));
  fbx_status_free(st);
  fbx_strbuf_free(&b);

  fbx_strbuf_puts(&b, "graph(%c : bool):\n");
  for (int i = 0; i < 1000; i++) fbx_strbuf_printf(&b, "  %%y%d : Tensor = prim::If(%%c)\n block0():\n", i);
  st = fbx_graph_parse(&g, b.data, b.len, "deep.ir");
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "nesting too deep"));
  fbx_status_free(st);
  fbx_strbuf_free(&b);

  /* with sections nested inside each other */
  fbx_strbuf_puts(&b, "graph(%x : Tensor):\n  %y : Tensor = prim::G_0(%x)\n  return (%y)\n");
  for (int i = 0; i < 1000; i++)
    fbx_strbuf_puts(&b, "with prim::G_0 = graph(%x : Tensor):\n  %y : Tensor = prim::G_0(%x)\n  return (%y)\n");
  st = fbx_graph_parse(&g, b.data, b.len, "deep.ir");
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "nesting too deep"));
  fbx_status_free(st);
  fbx_strbuf_free(&b);
}
END_TEST

START_TEST(test_long_line_and_tabs) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "graph(%x : Tensor):\n\t%y : Tensor = aten::foo[");
  for (int i = 0; i < 300; i++) fbx_strbuf_printf(&b, "a%d=1, ", i);
  fbx_strbuf_puts(&b, "zz=?](%x)\n  return (%y)\n");
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, b.data, b.len, "long.ir");
  ck_assert_ptr_nonnull(st);
  const char *m = fbx_status_message(st);
  ck_assert_ptr_nonnull(strstr(m, "bad attribute value for 'zz'"));
  const char *nl1 = strchr(m, '\n'), *nl2 = strchr(nl1 + 1, '\n');
  ck_assert_int_le((int)(nl2 - nl1 - 1), 210); /* truncated around the column */
  ck_assert_ptr_nonnull(strstr(nl1, "zz=?"));
  ck_assert(!strncmp(nl1 + 1, "...", 3));
  /* the caret is under the '?' */
  const char *caret = nl2 + 1;
  const char *q = strstr(nl1 + 1, "zz=?");
  ck_assert_int_eq((int)(strlen(caret) - 1), (int)(q + 3 - (nl1 + 1)));
  fbx_status_free(st);
  fbx_strbuf_free(&b);

  /* Tabs stay tabs in the caret line, so the caret lines up in a terminal. */
  const char *t = "graph(%x : Tensor):\n\t\t%y : Tensor = aten::relu(%q)\n  return (%y)\n";
  st = fbx_graph_parse(&g, t, strlen(t), "tab.ir");
  m = fbx_status_message(st);
  ck_assert_str_eq(m, "tab.ir:2:28: unknown value %q (used before it is defined, or never defined)\n"
                      "\t\t%y : Tensor = aten::relu(%q)\n"
                      "\t\t                         ^");
  fbx_status_free(st);
}
END_TEST

START_TEST(test_too_large_and_nul) {
  /* The size check happens before anything past the first line is read. */
  char *buf = calloc(1, 8192);
  memcpy(buf, "graph(%x : Tensor):\n", 20);
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, buf, (size_t)300 << 20, "huge.ir");
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "input is too large"));
  ck_assert_ptr_null(g);
  fbx_status_free(st);
  free(buf);
  /* NUL bytes are just bad input */
  static const char nul[] = "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\0\n  return (%y)\n";
  st = fbx_graph_parse(&g, nul, sizeof nul - 1, "nul.ir");
  ck_assert_ptr_nonnull(st);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "byte 0x00"));
  fbx_status_free(st);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("parse_errors");
  TCase *tc = tcase_create("errors");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_error_table);
  tcase_add_test(tc, test_truncations);
  tcase_add_test(tc, test_deep_nesting);
  tcase_add_test(tc, test_long_line_and_tabs);
  tcase_add_test(tc, test_too_large_and_nul);
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
