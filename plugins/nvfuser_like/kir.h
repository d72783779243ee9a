/* The kernel IR: what a scheduler's kernel is before it is text.
 *
 * A tree of statements: loops (var, begin, end, step), predicates (if),
 * straight-line statements, block barriers, local/shared arrays and block
 * reductions (a tree over a local array with barriers, printed by print.c).
 * Thread and block indices are the dialect's, read from the kit's printer.
 * Expressions inside statements are text already printed through the kit for
 * the kernel's dialect (lowering runs once per dialect): the op templates,
 * casts, loads and stores are the kit's, so the IR keeps structure, not
 * expression trees.
 */
#ifndef NVF_KIR_H
#define NVF_KIR_H
#include <fusebox/kit/kit.h>

typedef enum nvf_kkind {
  NVF_K_STMT,        /* a: one statement */
  NVF_K_FOR,         /* a: var, b: begin, c: end, d: step; body */
  NVF_K_IF,          /* a: condition; body */
  NVF_K_BARRIER,     /* a block barrier */
  NVF_K_LOCAL,       /* a: name, dtype (compute type), n elements of local/shared memory */
  NVF_K_BLOCK_REDUCE, /* a: accumulator var, b: local array (n = block size), c: thread index; red, dtype */
  NVF_K_PRIVATE      /* a: name, dtype (compute type), n elements of a thread's own memory */
} nvf_kkind;

typedef struct nvf_knode {
  nvf_kkind kind;
  char *a, *b, *c, *d;
  int dtype, red;
  int64_t n;
  struct nvf_knode *body, *next;
  struct nvf_knode *all; /* every node of the kernel, for freeing */
} nvf_knode;

#define NVF_MAX_PARAMS 96
#define NVF_KDEPTH 16

typedef struct nvf_kernel_ir {
  fbxk_dialect dialect;
  char name[48];
  int nparams;
  fbxk_param params[NVF_MAX_PARAMS];
  char pname[NVF_MAX_PARAMS][16];
  nvf_knode root;             /* its body is the kernel's */
  nvf_knode *all;
  nvf_knode *tail[NVF_KDEPTH]; /* the open blocks' last nodes */
  nvf_knode *open[NVF_KDEPTH];
  int depth;
  int oom;
} nvf_kernel_ir;

void nvf_kir_init(nvf_kernel_ir *k, fbxk_dialect d, const char *name);
void nvf_kir_free(nvf_kernel_ir *k);
/* Append a node to the open block; FOR and IF open their body (nvf_kir_close). */
nvf_knode *nvf_kir_add(nvf_kernel_ir *k, nvf_kkind kind, const char *a, const char *b, const char *c, const char *d);
void nvf_kir_stmt(nvf_kernel_ir *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void nvf_kir_close(nvf_kernel_ir *k);
/* The source (fbxk_alloc'd; NULL: out of memory): prelude, kernel. */
char *nvf_print(const nvf_kernel_ir *k);

#endif
