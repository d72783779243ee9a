/* Op table rows: pointwise ops. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_POINTWISE_H
#define FBX_OPS_LIST_POINTWISE_H

#define FBX_OPS_POINTWISE(X)

#endif
