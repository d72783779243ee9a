/* The printer: round trips over every graph PyTorch printed for the corpus
 * (parse -> print -> parse -> print, both prints byte-identical, and the
 * first print byte-identical to PyTorch's own text), plus graphs built in C. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "ir/text.h"
#include "testutil.h"

enum { MIN_GRAPHS = 20, MAX_FILES = 4096 };

typedef struct file_list {
  char *paths[MAX_FILES];
  int n;
} file_list;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add_path(file_list *fl, const char *p) {
  if (fl->n < MAX_FILES) fl->paths[fl->n++] = strdup(p);
}

/* Files dir/NAME.ir, or dir/SUB/graph.ir when `sub_graph` is set. */
static void collect(file_list *fl, const char *rel, int sub_graph) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", tu_src_path(rel));
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[8192];
    struct stat st;
    if (sub_graph) {
      snprintf(p, sizeof p, "%s/%s/graph.ir", dir, e->d_name);
      if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) add_path(fl, p);
    } else {
      size_t n = strlen(e->d_name);
      if (n > 3 && !strcmp(e->d_name + n - 3, ".ir")) {
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        add_path(fl, p);
      }
    }
  }
  closedir(d);
}

/* Line number of the first difference, for messages. */
static int first_diff_line(const char *a, const char *b, const char **la, const char **lb) {
  int line = 1;
  const char *sa = a, *sb = b;
  while (*a && *a == *b) {
    if (*a == '\n') {
      line++;
      sa = a + 1;
      sb = b + 1;
    }
    a++, b++;
  }
  *la = sa;
  *lb = sb;
  return line;
}

START_TEST(test_corpus_roundtrip) {
  file_list *fl = calloc(1, sizeof *fl);
  collect(fl, "tests/corpus/graphs", 0);
  collect(fl, "tests/corpus/cases", 1);
  collect(fl, "examples", 0);
  qsort(fl->paths, (size_t)fl->n, sizeof fl->paths[0], cmp_str);
  int identical = 0, stable = 0;
  for (int i = 0; i < fl->n; i++) {
    const char *path = fl->paths[i];
    size_t len;
    char *text = tu_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    fbx_graph *g = NULL, *g2 = NULL;
    fbx_status *st = fbx_graph_parse(&g, text, len, path);
    ck_assert_msg(!st, "%s", fbx_status_message(st));
    char *p1 = fbx_graph_print(g);
    ck_assert_ptr_nonnull(p1);
    st = fbx_graph_parse(&g2, p1, strlen(p1), "print1");
    ck_assert_msg(!st, "%s: re-parsing the print failed: %s", path, fbx_status_message(st));
    char *p2 = fbx_graph_print(g2);
    ck_assert_msg(!strcmp(p1, p2), "%s: print(parse(print(g))) != print(g)", path);
    stable++;
    if (!strcmp(p1, text)) {
      identical++;
    } else {
      const char *la, *lb;
      int line = first_diff_line(p1, text, &la, &lb);
      ck_abort_msg("%s: the print differs from PyTorch's text at line %d:\n  ours:    %.*s\n  pytorch: %.*s", path,
                   line, (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
    }
    /* A deep copy prints the same. */
    fbx_graph *c = fbx_graph_clone(g);
    ck_assert_ptr_nonnull(c);
    char *pc = fbx_graph_print(c);
    ck_assert_msg(!strcmp(pc, p1), "%s: clone prints differently", path);
    fbx_free(pc);
    fbx_graph_destroy(c);
    fbx_free(p1);
    fbx_free(p2);
    fbx_graph_destroy(g);
    fbx_graph_destroy(g2);
    free(text);
  }
  printf("test_print: %d graphs round-tripped, %d byte-identical to PyTorch's text\n", stable, identical);
  ck_assert_msg(fl->n >= MIN_GRAPHS, "only %d corpus graphs found (want at least %d)", fl->n, MIN_GRAPHS);
  for (int i = 0; i < fl->n; i++) free(fl->paths[i]);
  free(fl);
}
END_TEST

/* A graph built through the C API (fresh names, every attribute kind)
 * prints in the format and reads back to the same print. */
START_TEST(test_built_graph) {
  fbx_graph *g = fbx_graph_create();
  ck_assert_ptr_nonnull(g);
  int64_t sizes[] = {2, 3}, strides[] = {3, 1};
  fbx_type *ft = fbx_type_tensor(g->arena, FBX_DTYPE_FLOAT32, 2, sizes, strides, 0, "cpu");
  fbx_value *x = fbx_graph_add_input(g, ft, "x.1");
  fbx_value *n = fbx_graph_add_input(g, fbx_type_simple(FBX_TYPE_INT), NULL);
  fbx_value *one = fbx_insert_const_int(g->block, NULL, 1);
  fbx_value *half = fbx_insert_const_float(g->block, NULL, 0.5);
  fbx_value *t = fbx_insert_const_bool(g->block, NULL, true);
  fbx_value *none = fbx_insert_const_none(g->block, NULL);
  (void)none;
  fbx_sym k_add, k_foo, a_s, a_is, a_fs, a_ss, a_t, a_ty, a_big;
  fbx_sym_intern(&k_add, "aten::add", 9);
  fbx_sym_intern(&k_foo, "fusebox::foo", 12);
  fbx_sym_intern(&a_s, "s", 1);
  fbx_sym_intern(&a_is, "is", 2);
  fbx_sym_intern(&a_fs, "fs", 2);
  fbx_sym_intern(&a_ss, "ss", 2);
  fbx_sym_intern(&a_t, "t", 1);
  fbx_sym_intern(&a_ty, "ty", 2);
  fbx_sym_intern(&a_big, "big", 3);
  fbx_node *add = fbx_node_create(g, k_add, 1);
  fbx_node_add_input(add, x);
  fbx_node_add_input(add, x);
  fbx_node_add_input(add, one);
  fbx_node_append(g->block, add);
  add->srcloc = "m.py:1:2";
  fbx_node *foo = fbx_node_create(g, k_foo, 2);
  fbx_node_add_input(foo, add->outputs[0]);
  fbx_node_add_input(foo, half);
  fbx_node_set_s(foo, a_s, "quote\" back\\ nl\n tab\t bell\a high\xc3\xa9");
  int64_t is[] = {1, -2, 3};
  double fs[] = {1.0, -0.0, 1e-5, 1e300};
  const char *ss[] = {"a", ""};
  fbx_node_set_is(foo, a_is, is, 3);
  fbx_node_set_fs(foo, a_fs, fs, 4);
  fbx_node_set_ss(foo, a_ss, ss, 2);
  int64_t tsz[] = {2, 2};
  float tdata[] = {1.5f, -2.0f, 0.25f, 1e-8f};
  fbx_tensor_const tc = {FBX_DTYPE_FLOAT32, 2, tsz, tdata, 0, NULL};
  fbx_node_set_t(foo, a_t, &tc);
  fbx_node_set_ty(foo, a_ty, ft);
  fbx_node_set_f(foo, a_big, 12345678901.0);
  fbx_node_append(g->block, foo);
  fbx_node *loop = fbx_node_create(g, FBX_SYM_prim_Loop, 0);
  fbx_node_add_input(loop, n);
  fbx_node_add_input(loop, t);
  fbx_node_add_input(loop, foo->outputs[0]);
  fbx_value *lout = fbx_node_add_output(loop, fbx_type_tensor_any());
  fbx_node_append(g->block, loop);
  fbx_block *body = fbx_node_add_block(loop);
  fbx_block_add_param(body, fbx_type_simple(FBX_TYPE_INT), NULL);
  fbx_value *carried = fbx_block_add_param(body, fbx_type_tensor_any(), NULL);
  fbx_block_add_return(body, t);
  fbx_block_add_return(body, carried);
  fbx_block_add_return(g->block, lout);
  fbx_block_add_return(g->block, foo->outputs[1]);

  char *p1 = fbx_graph_print(g);
  ck_assert_ptr_nonnull(p1);
  ck_assert_ptr_nonnull(strstr(p1, "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n      %0 : int):\n"));
  ck_assert_ptr_nonnull(strstr(p1, "= aten::add(%x.1, %x.1, %1) # m.py:1:2\n"));
  ck_assert_ptr_nonnull(strstr(p1, "s=\"quote\\\" back\\\\ nl\\n tab\\t bell\\a high\\303\\251\""));
  ck_assert_ptr_nonnull(strstr(p1, "is=[1, -2, 3], fs=[1., -0., 1.0000000000000001e-05, 1.0000000000000001e+300]"));
  ck_assert_ptr_nonnull(strstr(p1, "ss=[\"a\", \"\"]"));
  ck_assert_ptr_nonnull(strstr(p1, "t= 1.5  -2  0.25  9.99999994e-09 [ CPUFloatType{2,2} ]"));
  ck_assert_ptr_nonnull(strstr(p1, "ty=Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"));
  ck_assert_ptr_nonnull(strstr(p1, "big=12345678901]"));
  ck_assert_ptr_nonnull(strstr(p1, "prim::Constant[value=0.5]()"));
  ck_assert_ptr_nonnull(strstr(p1, " : NoneType = prim::Constant()\n"));
  ck_assert_ptr_nonnull(strstr(p1, "    block0(%"));
  fbx_graph *g2 = NULL;
  fbx_status *st = fbx_graph_parse(&g2, p1, strlen(p1), "built");
  ck_assert_msg(!st, "%s\n%s", fbx_status_message(st), p1);
  char *p2 = fbx_graph_print(g2);
  ck_assert_str_eq(p1, p2);
  /* the tensor constant's data survived */
  fbx_node *foo2 = fbx_graph_find_value(g2, foo->outputs[0]->name)->node;
  const fbx_attr *at = fbx_node_attr(foo2, a_t);
  ck_assert_int_eq(at->u.t->rank, 2);
  ck_assert(((float *)at->u.t->data)[3] == 1e-8f);
  fbx_free(p1);
  fbx_free(p2);
  fbx_graph_destroy(g);
  fbx_graph_destroy(g2);
}
END_TEST

/* fbx_graph_print_to appends; groups made with fbx_graph_create_group print
 * as `with` sections. */
START_TEST(test_group_print) {
  const char *text =
      "graph(%x : Float(2, 3),\n"
      "      %y : Float(2, 3)):\n"
      "  %a : Float(2, 3) = aten::mul(%x, %y)\n"
      "  %b : Float(2, 3) = aten::relu(%a)\n"
      "  %c : Float(2, 3) = aten::neg(%b)\n"
      "  return (%c)\n";
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "g.ir");
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  fbx_node *nodes[2] = {fbx_block_first(g->block), fbx_block_first(g->block)->next};
  fbx_node *grp = fbx_graph_create_group(g, FBX_SYM_prim_TensorExprGroup, nodes, 2);
  ck_assert_ptr_nonnull(grp);
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "# header\n");
  fbx_graph_print_to(&b, g);
  ck_assert(!strncmp(b.data, "# header\ngraph(", 15));
  ck_assert_ptr_nonnull(strstr(b.data, " = prim::TensorExprGroup_0(%x, %y)\n"));
  ck_assert_ptr_nonnull(strstr(b.data, "\nwith prim::TensorExprGroup_0 = graph(%"));
  fbx_graph *g2 = NULL;
  st = fbx_graph_parse(&g2, b.data + 9, b.len - 9, "g2");
  ck_assert_msg(!st, "%s\n%s", fbx_status_message(st), b.data);
  char *p2 = fbx_graph_print(g2);
  ck_assert_str_eq(p2, b.data + 9);
  ck_assert_int_eq(fbx_block_first(g2->block)->kind, FBX_SYM_prim_TensorExprGroup);
  fbx_free(p2);
  fbx_strbuf_free(&b);
  fbx_graph_destroy(g);
  fbx_graph_destroy(g2);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("print");
  TCase *tc = tcase_create("print");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_corpus_roundtrip);
  tcase_add_test(tc, test_built_graph);
  tcase_add_test(tc, test_group_print);
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
