/* The state of one forward/backward split (differentiate.c), shared with
 * the save-versus-recompute choice (recompute.c). Internal to core/autodiff. */
#ifndef FBX_AUTODIFF_SPLIT_H
#define FBX_AUTODIFF_SPLIT_H
#include <stdbool.h>

#include "autodiff/autodiff.h"
#include "base/ptrmap.h"
#include "base/strmap.h"

typedef struct fbx_split {
  const fbx_graph *S;
  fbx_graph *F;      /* NULL when respecializing */
  fbx_value **f_of;  /* S value id -> F value */
  int nreal;         /* S's output count */
  fbx_graph *B;
  bool *rg;          /* S value id -> requires grad */
  fbx_value **grad;  /* S value id -> its gradient in B, or NULL */
  fbx_ptrmap saved_of; /* S value -> B input */
  fbx_ptrmap const_of; /* S value -> B constant */
  fbx_strmap b_names; /* the names set_unique_name gave in B (B's other values are numbered) */
  fbx_saved_ref *saved;
  int nsaved, cap_saved;
  bool fixed_saved;  /* respecializing: only base's saved values exist */
  /* recomputation (recompute.c) */
  bool recompute;    /* values may be recomputed in B instead of saved */
  bool *cheap;       /* S value id -> a cheap pointwise function of S's inputs and constants */
  bool *exact;       /* S value id -> cheap, and made of correctly rounded ops only (same bits anywhere) */
  fbx_ptrmap recomputed_of; /* S value -> its recomputation in B */
  fbx_node *rc_last; /* the last recomputed node in B (they lead B, in S's order) */
  int nrecomputed;   /* saved values replaced by recomputation */
  int nrecompute_nodes; /* nodes B computes again */
} fbx_split;

/* The B value standing for forward value v (differentiate.c): a copy of a
 * constant, or a saved value (made a B input on first use). */
fbx_status *fbx_split_fwd_value(void *ctx, const fbx_value *v, fbx_value **out);

/* recompute.c */
/* Find S's cheap values (d->cheap, d->exact), when d->recompute. */
fbx_status *fbx_split_recompute_init(fbx_split *d);
/* After B is built: replace B's reads of saved values by recomputation
 * where that moves fewer bytes (the rule is in recompute.c). */
fbx_status *fbx_split_recompute_saved(fbx_split *d);
/* Respecializing: v is not saved; recompute it from the saved values if it
 * can be. *out is NULL when it cannot. */
fbx_status *fbx_split_recompute_missing(fbx_split *d, const fbx_value *v, fbx_value **out);
void fbx_split_recompute_free(fbx_split *d);

#endif
