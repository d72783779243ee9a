/* Segments and schedulers.
 *
 * The segmenter (lower.c, nvf_segment) splits a fusion into segments that
 * one kernel each can run: expressions in order, each in the first segment
 * after its producers' whose reductions reduce the same axes (a reduction
 * over other axes starts a new segment). Values that cross segments are
 * materialized in temporary device buffers.
 *
 * A segment's scheduler is picked by its shape (nvf_sched_pick):
 *   pointwise   no reduction: the axes flattened, `vec` consecutive
 *               elements per thread (4 when every tensor is contiguous in
 *               the flattened order and the count divides, else 1), a
 *               predicate for the tail;
 *   reduction   inner (the reduced axes are the innermost): one work-group
 *               per row, threads strided over the row, a tree in local
 *               memory; outer: one thread per kept element, a serial loop;
 *               on a CPU device (PoCL) an inner reduction is given a row
 *               per work-item too, its loop in steps of 8 lanes with an
 *               accumulator each (vectorized by the device's compiler),
 *               the lanes combined at the end; in OpenCL C, when every
 *               op has a vector form (fbxk_op_vectorizable) and the row is
 *               contiguous, the row's values are float16/double16 vectors
 *               (vload16, vector exp), the accumulators 8 lanes as before;
 *   persistent  inner reductions whose results the row uses again
 *               (softmax, layer norm): one work-group per row, values the
 *               later phases need kept in local memory, so the row is read
 *               once; every reduction and the epilogue in one kernel.
 * The kernel is keyed by (scheduler, parameters, fusion): explain prints all.
 */
#ifndef NVF_SCHED_H
#define NVF_SCHED_H
#include "fusion.h"
#include "kir.h"

typedef enum nvf_sched_kind { NVF_SCHED_POINTWISE, NVF_SCHED_REDUCTION, NVF_SCHED_PERSISTENT } nvf_sched_kind;

typedef struct nvf_params {
  nvf_sched_kind kind;
  /* pointwise */
  int64_t numel;
  int vec;
  int dense; /* every tensor indexed by the flat index */
  int64_t pw_chunk; /* > 0: a CPU device, dense: a work-item loops over this many flat elements */
  int64_t pw_row; /* > 0: a CPU device, not dense: a work-item loops over the innermost axis (this long) */
  int vload; /* CUDA, dense float32, vec 4: a thread's 4 consecutive elements in one 16-byte load or store */
  /* reduction / persistent */
  unsigned rmask; /* reduced axes */
  int inner;
  int64_t rows, row_len;
  int nphases;
  int cpu_row;  /* an inner reduction given a row per work-item (a CPU device) */
  int lanes;    /* cpu_row: the row loop in steps of `lanes` independent accumulators */
  int vrow;     /* cpu_row, OpenCL: the row's values as vectors of vrow lanes (0: scalars) */
  int64_t local_bytes; /* persistent: bytes of rows kept in local memory (cpu_row: private arrays) */
  int regs; /* inner, CUDA: a thread's share of the row is `regs` elements (j = tid + k * block, k < regs),
               in an unrolled loop; kept rows are registers (p<t>[k]), not shared memory */
  int out_rows; /* persistent, cpu_row: kept rows held in an output's row instead (c->row_home) */
  int stream;   /* persistent, vector rows: the last phase's outputs written past the cache (FBXK_VSTORE_NT) */
  int nan_blind; /* maxima/minima taken without the NaN test (c->nan_blind: softmax's max) */
  /* launch */
  int block;
  int64_t groups;
} nvf_params;

#define NVF_MAX_SEGS 16
#define NVF_LANES 8
#define NVF_VROW 16 /* a CPU row's vector width: two AVX2 registers of float32, two exp chains interleaved */
#define NVF_CPU_PRIVATE (128 * 1024) /* bytes of private rows a CPU work-group keeps at most */
#define NVF_CUDA_ROW_REGS 16 /* an inner row on CUDA: at most this many elements per thread for the unrolled form */
#define NVF_PW_CHUNK 1024 /* flat elements per work-item of a dense pointwise kernel on a CPU device */

typedef struct nvf_segment {
  int nexprs;
  int *exprs;   /* in order */
  unsigned rmask;
  nvf_params p;
  nvf_kernel_ir k;
} nvf_segment;

typedef struct nvf_plan {
  const nvf_fusion *f;
  int nsegs;
  nvf_segment seg[NVF_MAX_SEGS];
  int *seg_of_expr; /* f->nexpr */
  int *materialize; /* per TV: 1 when a kernel writes it to device memory (outputs, crossing values) */
  int persist_limit; /* bytes of local memory a persistent kernel may keep */
  int disable_vec, disable_persist, disable_vload;
  int cpu_rows; /* a CPU device: a reduction row per work-item, no barriers */
  int64_t stream_bytes; /* a kernel reading and writing at least this much streams its outputs (0: never) */
} nvf_plan;

/* lower.c */
fbxp_status *nvf_segment_fusion(nvf_plan *pl, const nvf_fusion *f);
void nvf_plan_free(nvf_plan *pl);
/* Pick and run the scheduler of segment s, lowering it to s->k in dialect d. */
fbxp_status *nvf_schedule_segment(nvf_plan *pl, int s, fbxk_dialect d);
/* one line: "persistent(inner, rows=4, row=1024, block=256, phases=3, local=8192 B)" */
void nvf_params_print(const nvf_params *p, fbxk_buf *b);

/* The shared lowering context the schedulers use (lower.c). */
typedef struct nvf_lctx {
  nvf_plan *pl;
  const nvf_fusion *f;
  int s;
  nvf_kernel_ir *k;
  unsigned char *avail;   /* per TV: 0 no, 1 kernel scope, 2 loop scope */
  int *level;             /* per TV */
  unsigned char *persist; /* per TV */
  int *row_home;          /* per TV kept: -1 its own array, else the output TV whose row holds it */
  int *holds;             /* per TV: the kept TV whose row it holds (row_home's inverse), -1 */
  int *param_of;          /* per TV: kernel parameter index, -1 */
  unsigned char *nan_blind; /* per TV: a max/min whose NaN test no output can see (sched_reduction.c) */
  unsigned rmask;
  int scope;              /* 1 kernel, 2 loop */
  int vw;                 /* in a vector row loop: its width (values varying along the row are vectors) */
  int phase;              /* the row phase being emitted */
  const char *flat;       /* pointwise dense: the flat index every full contiguous tensor uses */
  const char *row_index;  /* persistent: the index of a row element ("j") */
  int nq;                 /* temporaries of nvf_emit_axes */
  char (*names)[64];      /* per TV: its value's C expression */
  char idxbuf[3][64];
} nvf_lctx;

fbxp_status *nvf_lctx_init(nvf_lctx *c, nvf_plan *pl, int s, fbxk_dialect d);
void nvf_lctx_free(nvf_lctx *c);
int nvf_in_seg(const nvf_lctx *c, int tv);     /* defined by an expression of this segment */
int nvf_uniform(const nvf_lctx *c, int tv);    /* does not vary along the reduced axes */
/* Declare the index variable of each axis in mask from flat index `flat`. */
void nvf_emit_axes(nvf_lctx *c, unsigned mask, const char *flat);
/* The value of tv here (emitting what it needs); its C name. */
const char *nvf_emit_value(nvf_lctx *c, int tv);
/* Offset of tv's element at the current axis indices. */
void nvf_offset(nvf_lctx *c, int tv, fbxk_buf *b);
/* A kept value's place in its home output row (c->row_home) at the current
 * indices: "T8 + (off)" for a vector access, "T8[off]" otherwise (a new
 * string, NULL when out of memory). */
char *nvf_home_addr(nvf_lctx *c, int tv, int vec);
/* Store tv's value to its buffer at the current indices. */
void nvf_emit_store(nvf_lctx *c, int tv);
void nvf_scope_exit(nvf_lctx *c); /* loop-scope values are gone */
int nvf_tv_flat(const nvf_lctx *c, int tv);     /* every axis, contiguous in axis order */
int nvf_tv_axisless(const nvf_lctx *c, int tv); /* varies along no axis */
int64_t nvf_tv_axis_stride(const nvf_lctx *c, int t, int axis); /* element stride along axis; 0: not on it */
int nvf_is_vec(const nvf_lctx *c, int t); /* a vector value here (a vector row loop, varies along the row) */
/* the dialect's index expressions (copied) */
const char *nvf_idx(nvf_lctx *c, int which); /* 0 global id, 1 local id, 2 group id */

/* sched_*.c */
void nvf_sched_pointwise_params(nvf_lctx *c);
fbxp_status *nvf_sched_pointwise_lower(nvf_lctx *c);
void nvf_sched_reduction_params(nvf_lctx *c);
fbxp_status *nvf_sched_reduction_lower(nvf_lctx *c);
/* a reduction's combination of x and y in dtype dt's compute representation */
void nvf_print_combine(fbxk_buf *b, nvf_red red, int dt, fbxk_dialect d, const char *x, const char *y);
/* persistent: decides which values stay in local memory (c->persist) and the kind */
void nvf_sched_persistent_decide(nvf_lctx *c);

#endif
