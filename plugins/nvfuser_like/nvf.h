/* The nvfuser_like fuser's internal interface (plugin-private).
 *
 *   fusion.h/.c        the fusion IR: tensor views, iteration domains, exprs
 *   partition.c        fusion groups: pointwise + reductions + normalizations
 *   sched.h            segments and schedulers (kinds, parameters)
 *   sched_pointwise.c  the pointwise scheduler
 *   sched_reduction.c  reduction scheduler (inner: a work-group per row,
 *                      outer: a thread per kept element)
 *   sched_persistent.c persistent normalization (rows kept in local memory)
 *   kir.h, lower.c     kernel IR and the lowering shared by the schedulers
 *   print.c            kernel IR -> OpenCL C / CUDA C through the kit dialects
 *   plugin.c           the ABI table, environment, run through nvf_rt.h
 */
#ifndef NVF_H
#define NVF_H
#include "fusion.h"
#include "kir.h"
#include "sched.h"

extern const fbxp_host_api *nvf_host;

fbxp_status *nvf_partition(void *state, const fbxp_graph *g, fbxp_proposals *p);

#endif
