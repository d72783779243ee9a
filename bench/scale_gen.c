/* scale_gen: writes the graphs of bench/scale.sh (issue #12).
 *
 *   scale_gen chain|wide N DIR
 *
 * writes DIR/graph.ir, a TorchScript-IR graph of about N nodes, and
 * DIR/x.npy, its one input (16 float32 values in (-1, 1)).
 *
 *   chain  one long dependence chain: sigmoid, mul by x, tanh, add x, ...
 *          (every node differentiable, values stay bounded)
 *   wide   N/3 products of x with distinct float constants (i + 0.5), summed by a
 *          balanced tree of adds: N/3 constants, N/3 muls, N/3 adds
 *
 * Nothing here depends on fusebox; it only prints text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 16

static int write_npy(const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  char hdr[128];
  int len = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }", NX);
  /* magic (6) + version (2) + header length (2) + header, a multiple of 64 */
  int total = 10 + len + 1;
  int pad = (64 - total % 64) % 64;
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  uint16_t hl = (uint16_t)(len + pad + 1);
  unsigned char hlb[2] = {(unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
  fwrite(hlb, 1, 2, f);
  fwrite(hdr, 1, (size_t)len, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  for (int i = 0; i < NX; i++) {
    float v = (float)(i - NX / 2) / (float)NX; /* little-endian hosts only */
    fwrite(&v, sizeof v, 1, f);
  }
  return fclose(f);
}

static void chain(FILE *f, long n) {
  fprintf(f, "  %%one : int = prim::Constant[value=1]()\n");
  const char *prev = "x.1";
  char pbuf[32], cur[32];
  for (long i = 0; i < n - 1; i++) {
    snprintf(cur, sizeof cur, "v%ld", i);
    switch (i % 4) {
    case 0: fprintf(f, "  %%%s : Tensor = aten::sigmoid(%%%s)\n", cur, prev); break;
    case 1: fprintf(f, "  %%%s : Tensor = aten::mul(%%%s, %%x.1)\n", cur, prev); break;
    case 2: fprintf(f, "  %%%s : Tensor = aten::tanh(%%%s)\n", cur, prev); break;
    default: fprintf(f, "  %%%s : Tensor = aten::add(%%%s, %%x.1, %%one)\n", cur, prev); break;
    }
    memcpy(pbuf, cur, sizeof cur);
    prev = pbuf;
  }
  fprintf(f, "  return (%%%s)\n", prev);
}

static void wide(FILE *f, long n) {
  long m = n / 3 > 1 ? n / 3 : 2;
  fprintf(f, "  %%one : int = prim::Constant[value=1]()\n");
  for (long i = 0; i < m; i++) {
    fprintf(f, "  %%c%ld : float = prim::Constant[value=%ld.5]()\n", i, i);
    fprintf(f, "  %%m%ld : Tensor = aten::mul(%%x.1, %%c%ld)\n", i, i);
  }
  /* the tree: level k sums pairs of level k-1 (an odd one out moves up) */
  long width = m, level = 0;
  while (width > 1) {
    long next = 0;
    for (long i = 0; i + 1 < width; i += 2, next++) {
      if (level == 0)
        fprintf(f, "  %%s1_%ld : Tensor = aten::add(%%m%ld, %%m%ld, %%one)\n", next, i, i + 1);
      else
        fprintf(f, "  %%s%ld_%ld : Tensor = aten::add(%%s%ld_%ld, %%s%ld_%ld, %%one)\n", level + 1, next, level, i,
                level, i + 1);
    }
    if (width % 2) {
      if (level == 0)
        fprintf(f, "  %%s1_%ld : Tensor = aten::mul(%%m%ld, %%one)\n", next, width - 1);
      else
        fprintf(f, "  %%s%ld_%ld : Tensor = aten::mul(%%s%ld_%ld, %%one)\n", level + 1, next, level, width - 1);
      next++;
    }
    width = next;
    level++;
  }
  fprintf(f, "  return (%%s%ld_0)\n", level);
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "chain") && strcmp(argv[1], "wide"))) {
    fprintf(stderr, "usage: scale_gen chain|wide N DIR\n");
    return 2;
  }
  char *end;
  long n = strtol(argv[2], &end, 10);
  if (*end || n < 4 || n > 100000000) {
    fprintf(stderr, "scale_gen: N must be an integer in [4, 1e8], not '%s'\n", argv[2]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/x.npy", argv[3]);
  if (write_npy(path)) {
    perror(path);
    return 1;
  }
  snprintf(path, sizeof path, "%s/graph.ir", argv[3]);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "graph(%%x.1 : Tensor):\n");
  if (!strcmp(argv[1], "chain"))
    chain(f, n);
  else
    wide(f, n);
  if (fclose(f)) {
    perror(path);
    return 1;
  }
  return 0;
}
