/* The kernel IR as OpenCL C or CUDA C: one printer, the kit's dialect table
 * says how the two differ (qualifiers, index expressions, barriers, local
 * memory, type names); the kit's prelude comes first. */
#include <stdio.h>

#include "nvf.h"

/* CUDA, a block of whole warps: each warp combines its 32 values with
 * shuffles (5 steps, no shared memory), lane 0 of each writes its warp's
 * result to r[warp], and after one barrier every thread combines the n / 32
 * warp results in warp order (the same value in every thread, without a
 * broadcast); a second barrier before r is written again. Two barriers
 * where the tree takes log2(n) + 2. */
static void print_warp_reduce(fbxk_printer *p, const nvf_knode *n) {
  char x[64];
  fbxk_buf b = {0};
  /* every lane shuffles (into a temporary: the combination may be a select) */
  nvf_print_combine(&b, (nvf_red)n->red, n->dtype, p->dialect, n->a, "sh");
  char *comb = fbxk_take(&b);
  fbxk_p_line(p, "for (int o = 16; o > 0; o >>= 1) {");
  p->indent++;
  fbxk_p_line(p, "const %s sh = __shfl_xor_sync(0xffffffffu, %s, o);", fbxk_compute_type(n->dtype, p->dialect), n->a);
  fbxk_p_line(p, "%s = %s;", n->a, comb ? comb : "0");
  p->indent--;
  fbxk_p_line(p, "}");
  fbxk_free(comb);
  fbxk_p_line(p, "if ((%s & 31) == 0) %s[%s >> 5] = %s;", n->c, n->b, n->c, n->a);
  fbxk_p_barrier(p);
  fbxk_p_line(p, "%s = %s[0];", n->a, n->b);
  snprintf(x, sizeof x, "%s[w]", n->b);
  b = (fbxk_buf){0};
  nvf_print_combine(&b, (nvf_red)n->red, n->dtype, p->dialect, n->a, x);
  comb = fbxk_take(&b);
  fbxk_p_line(p, "for (int w = 1; w < %lld; w++) %s = %s;", (long long)n->n / 32, n->a, comb ? comb : "0");
  fbxk_free(comb);
  fbxk_p_barrier(p); /* the array is reused by the next reduction of the same expression only */
}

static void print_block(fbxk_printer *p, const nvf_knode *n) {
  for (; n; n = n->next) {
    switch (n->kind) {
      case NVF_K_STMT: fbxk_p_line(p, "%s", n->a); break;
      case NVF_K_FOR:
        fbxk_p_for(p, NULL, n->a, n->b, n->c, n->d);
        print_block(p, n->body);
        fbxk_p_close(p);
        break;
      case NVF_K_IF:
        fbxk_p_open(p, "if (%s)", n->a);
        print_block(p, n->body);
        fbxk_p_close(p);
        break;
      case NVF_K_BARRIER: fbxk_p_barrier(p); break;
      case NVF_K_LOCAL:
        fbxk_p_line(p, "%s%s %s[%lld];", p->d->shared ? p->d->shared : "", fbxk_compute_type(n->dtype, p->dialect), n->a,
                    (long long)n->n);
        break;
      case NVF_K_PRIVATE:
        fbxk_p_line(p, "%s %s[%lld];", fbxk_compute_type(n->dtype, p->dialect), n->a, (long long)n->n);
        break;
      case NVF_K_BLOCK_REDUCE: {
        if (p->dialect == FBXK_CUDA && n->n >= 64 && n->n % 32 == 0) {
          print_warp_reduce(p, n);
          break;
        }
        /* a tree over local memory: n->n (a power of two) partial results */
        fbxk_p_line(p, "%s[%s] = %s;", n->b, n->c, n->a);
        fbxk_p_barrier(p);
        fbxk_p_printf(p, "%*sfor (int64_t s = %lld; s > 0; s >>= 1) {\n", 2 * p->indent, "", (long long)n->n / 2);
        p->indent++;
        char x[64], y[64];
        snprintf(x, sizeof x, "%s[%s]", n->b, n->c);
        snprintf(y, sizeof y, "%s[%s + s]", n->b, n->c);
        fbxk_buf b = {0};
        nvf_print_combine(&b, (nvf_red)n->red, n->dtype, p->dialect, x, y);
        char *comb = fbxk_take(&b);
        fbxk_p_line(p, "if (%s < s) %s = %s;", n->c, x, comb ? comb : "0");
        fbxk_free(comb);
        fbxk_p_barrier(p);
        fbxk_p_close(p);
        fbxk_p_line(p, "%s = %s[0];", n->a, n->b);
        fbxk_p_barrier(p); /* the array is reused by the next reduction of the same expression only */
        break;
      }
    }
  }
}

char *nvf_print(const nvf_kernel_ir *k) {
  fbxk_printer p;
  fbxk_p_init(&p, k->dialect);
  fbxk_p_puts(&p, fbxk_prelude(k->dialect));
  fbxk_p_puts(&p, "\n");
  fbxk_p_kernel_begin(&p, k->name, k->params, k->nparams);
  print_block(&p, k->root.body);
  fbxk_p_close(&p);
  return fbxk_p_take(&p);
}
